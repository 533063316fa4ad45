"""Pane 7: run and time the graph's kernels (the ``run`` message: each kernel alone, in the graph, in
the script's own calls; bytes, bandwidth and FLOP/s with their sources)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from textual import on

from inductor_step.tui.panes.base import Detail, StagePane, T
from inductor_step.tui.state import OpenKernel
from inductor_step.tui.cells import Whole
from inductor_step.tui.table import NameColumn, Names, Table
from inductor_step.session.fusion import wrapped
from inductor_step.session.text import RUN_COLUMNS, run_cells, run_kernel_label, run_kernel_text, run_summary
from inductor_step.session.links import related
from inductor_step.session.trust import kernels_unreliable

COLUMNS = RUN_COLUMNS
#: columns only a CUDA run fills (on CPU they would be columns of "-")
GPU_ONLY = ("in graph ms", "in script ms")
STYLES = {"kernel": "bold", "backend": "magenta"}
#: the cells marked ``!`` (in red) when the run's kernel times are not reliable (session.trust.kernels_unreliable)
UNRELIABLE_MARKED = ("median ms [p20-p80]", "share", "GB/s", "% peak BW", "TFLOP/s")
#: columns of figures: never cut ("!13.1%" among many "!6.7%" read "….1%"), their column as wide as the widest
FIGURES = ("median ms [p20-p80]", "share", "GB/s", "% peak BW", "in graph ms", "in script ms", "TFLOP/s")


def _slowest_first(k: dict[str, Any]) -> tuple[bool, float]:
    """Sort key: slowest kernel first; calls with no time (a collective) last."""
    med = k.median_ms
    return (not isinstance(med, (int, float)), -(med if isinstance(med, (int, float)) else 0.0))


class RunPane(StagePane):
    stage = "run"
    title = "7 Run"
    columns = COLUMNS

    def __init__(self) -> None:
        super().__init__()
        #: each graph's timing (its run record) this pane has put on screen: a live timing's first showing
        #: opens at its slowest kernel (row 0) instead of the selected buffer's kernel
        self._seen: dict[str | None, Any] = {}

    def on_mount(self) -> None:
        pass  # columns depend on the run's device: set at each fill

    def data(self) -> dict[str, Any] | None:
        v = self.app.view
        return self.app.session.runs.get(v.graph) if v.graph else None

    def stamp(self, data: dict[str, Any] | None) -> Any:
        # the run held while it is the one shown, so that a new run cannot take its id and look unchanged: a timing
        # or its progress (routes.on_run's refresh) then fills the table once, with no forced second fill
        self._held = data
        return (self.app.view.graph, id(data), self.app.session.run_status.message)

    def _gpu(self, data: dict[str, Any] | None) -> bool:
        dev = (data.device if data is not None else None) or self.app.session.header.device or "cuda"
        return str(dev).startswith("cuda")

    def labels(self, data: dict[str, Any] | None) -> list[str]:
        ks = (data.kernels if data is not None else None) or []
        has_bound = any(k.bound for k in ks)
        return [c for c in COLUMNS if (self._gpu(data) or c not in GPU_ONLY) and (has_bound or c != "bound")]

    def kernels(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        return self.app.session.cache.get(("run_sorted", id(data)), (data,),
                                          lambda: sorted(data.kernels or [], key=_slowest_first))

    def _fused(self, data: dict[str, Any]) -> dict[str, list[str]]:
        codegen = self.app.session.stop_for(self.app.view.graph, "codegen")
        return {k.name: k.fused_nodes or [] for k in (codegen.kernels if codegen is not None else None) or []}

    def rows(self, data: dict[str, Any]) -> tuple[Sequence[str], Callable[[int], tuple]]:
        ks = self.kernels(data)
        labels = self.labels(data)
        fused = self._fused(data)

        bad = kernels_unreliable(data)

        def row(i: int) -> tuple:
            c = run_cells(ks[i])
            c["fused nodes"] = ", ".join(fused.get(ks[i].name) or [])
            if bad:  # the time and what is derived from it: marked, not shown as if fine
                for label in UNRELIABLE_MARKED:
                    if c.get(label, "-") != "-" and isinstance(ks[i].median_ms, (int, float)):
                        c[label] = "!" + c[label]
            return tuple((Whole if label in FIGURES else T)(
                c[label], "red" if bad and label in UNRELIABLE_MARKED and c[label].startswith("!")
                else STYLES.get(label, "")) for label in labels)
        return [f"{i}:{k.name}" for i, k in enumerate(ks)], row

    def names(self, data: dict[str, Any], keys: tuple[str, ...]) -> dict[int, NameColumn]:
        """The kernel column (:meth:`StagePane.names`): each timed call's kernel, slowest first."""
        ks = self.kernels(data)
        return {0: NameColumn(lambda: [run_kernel_label(k) for k in ks], lambda i: T(run_kernel_label(ks[i])))}

    #: the run shown last and its kernel column (:meth:`names`), whose cuts are kept while the run is the same
    _names: tuple[Any, Names] | None = None

    def cached_names(self, data: dict[str, Any], keys: tuple[str, ...]) -> Names:
        """:meth:`names` of run ``data``, the same object while ``data`` is (its cuts are kept with it)."""
        if self._names is None or self._names[0] is not data:
            self._names = (data, Names(self.names(data, keys)))
        return self._names[1]

    def fill(self, data: dict[str, Any] | None) -> None:
        table = self.table
        labels = self.labels(data)
        table.add_columns(*labels)
        # the kernel names give up cells before the times, share and bandwidth (the full name is below)
        table.fit(0, labels.index("% peak BW"))
        if data is None or data.error:
            table.clear()
            self.apply(self.empty(data))
            return
        keys, row = self.rows(data)
        table.set_rows(keys, row, names=self.cached_names(data, tuple(keys)))
        if not keys:
            self.apply(Detail(run_summary(self.app.view.graph, data, *self._shapes()), "text"))

    def _shapes(self) -> tuple[list[dict[str, Any]] | None, list[dict[str, Any]]]:
        """The shown graph's dynamic symbols (its dynamo stop's ``symbols``) and its post-grad graph's
        placeholders, which name the sizes it was timed at."""
        key = self.app.view.graph or ""
        dyn = self.app.session.stop_for(key, "dynamo")
        aot = self.app.session.stop_for(key, "aot")
        graph = aot.post_grad if aot is not None else None
        ph = [n for n in (graph.nodes if graph is not None else None) or [] if n.op == "placeholder"]
        return (dyn.symbols if dyn is not None and isinstance(dyn.symbols, list) else None), ph

    def empty(self, data: dict[str, Any] | None) -> Detail:
        if data and data.error:  # the error wrapped at the view's width: at 80 columns it was cut mid-sentence
            width = self.code.size.width or 80
            head = wrapped(f"# timing failed: {data.error}", max(30, width - 8))
            return Detail(f"{head}\n\n{data.traceback or ''}", "pytb")
        status = self.app.session.run_status.message
        key = self.app.view.graph
        dyn = self.app.session.stop_for(key, "dynamo") if key else None
        if dyn is not None and dyn.backend:  # no Inductor output to time: r times the others
            return Detail(f"# {key}: Dynamo handed this graph to backend {dyn.backend!r}, not Inductor:\n# no compiled "
                          "code of Inductor's to time (r times the graphs Inductor compiled)"
                          + (f"\n# {status}" if status else ""))
        if not self.app.live:
            return Detail("# this recorded session has no timing for this graph")
        return Detail("# press r to run and time every compiled graph:\n# the whole compiled graph against eager,"
                      "\n# and each kernel on its own" + (f"\n# {status}" if status else ""))

    def detail(self, data: dict[str, Any], row: int) -> Detail | None:
        ks = self.kernels(data)
        if not 0 <= row < len(ks):
            return None
        summary = self.app.session.cache.get(("run_summary", id(data)), (data,),
                                             lambda: run_summary(self.app.view.graph, data, *self._shapes()))
        k = ks[row]
        text = run_kernel_text(k, self._fused(data).get(k["name"]), self._gpu(data), summary)
        bad = kernels_unreliable(data)
        if bad and isinstance(k.median_ms, (int, float)):  # under the name: before the figures it judges
            head, _, rest = text.partition("\n")
            text = f"{head}\n! NOT RELIABLE (this time, its share, GB/s and TFLOP/s): {bad}\n{rest}"
        return Detail(text, "text")

    def follow_selection(self, data: dict[str, Any] | None) -> None:
        """As every pane: the cursor on the selected buffer's kernel; except that a timing that came while
        the script lives (``r``), shown for the first time, opens at its slowest kernel, whose buffer
        becomes the selection (the status line says so): the table is sorted slowest first and the row of
        the selected buffer's kernel was often below the screen's edge."""
        graph = self.app.view.graph
        first = data is not None and self._seen.get(graph) is not data
        if data is not None:
            self._seen[graph] = data
        table = self.table
        if first and self.app.live and table.row_count:
            ks = self.kernels(data)
            owned = self.buffers_of(data, 0)
            if owned:  # said as a selection: the run's own status ("timed 1 of 1 graph(s)") stays before it
                self.app.select(owned[0], f"selected {owned[0]}: slowest first, {ks[0].name}")
                self._picked = (owned[0], 0, table.row_keys)
            if table.cursor_row != 0:
                table.move_cursor(row=0)
        super().follow_selection(data)

    def row_for(self, data: dict[str, Any], buffer: str) -> int | None:
        kernels = set(related(self.links, "buffers", buffer, "kernels"))
        return next((i for i, k in enumerate(self.kernels(data)) if k["name"] in kernels), None)

    def buffers_of(self, data: dict[str, Any], row: int) -> list[str]:
        ks = self.kernels(data)
        if not 0 <= row < len(ks):
            return []
        return related(self.links, "kernels", ks[row]["name"], "buffers")

    @on(Table.RowSelected, "#table-run")
    def _enter(self, event: Table.RowSelected) -> None:
        """Enter on a timed kernel: its code in the codegen pane."""
        data = self.data()
        ks = self.kernels(data) if data else []
        if 0 <= event.cursor_row < len(ks):
            bufs = self.buffers_of(data, event.cursor_row)
            self.post_message(OpenKernel(ks[event.cursor_row]["name"], bufs[0] if bufs else None))
