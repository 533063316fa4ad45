"""Pane 9: where the time goes and what to change: the roofline per kernel, wasted time by
user line and missed fusions priced (:mod:`inductor_step.session.ledger`), over every timed graph.

Enter on a kernel or a line: that kernel's code in pane 6; on a missed fusion: pane 4 with the ``f``
answer for the producer and consumer nodes.  ``u``: ``ncu``'s speed-of-light summary of the kernel
under the cursor, where ``ncu`` can run (else one line why)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, ClassVar, Sequence

from textual import on

from inductor_step.live.children import run_ncu
from inductor_step.session import ledger
from inductor_step.session.format.messages import Header, KernelResources, Run
from inductor_step.session.format.records import as_record
from inductor_step.session.format.types import LinkBuffer, LinkSchedulerNode
from inductor_step.session.fusion_fix import LIBRARY_CALL, fix_text, is_library
from inductor_step.session.ledger import FusionRow, LineRow, RooflineRow
from inductor_step.session.links import entry, related
from inductor_step.session.trust import not_reliable_lines, unreliable_runs
from inductor_step.tui.keys import LEDGER_BINDINGS
from inductor_step.tui.panes.base import Detail, StagePane, T
from inductor_step.session.paths import code_label, short_path
from inductor_step.tui.table import Table

COLUMNS = ("ledger item", "graph", "wasted ms", "% of roof", "measured ms", "roofline ms", "bound / cost", "why")
HEAD = "bold reverse"


def _short(graph: str) -> str:
    return graph.replace(" forward", " fwd").replace(" backward", " bwd").replace(" inference", " inf")


@dataclass(frozen=True, eq=False)
class Ledgers:
    """The pane's data: the three ledgers over every timed graph (:mod:`inductor_step.session.ledger`) and the roofs
    they were priced against; ``pending`` while they are computed in a thread.  Compared by identity (the pane's
    caches are keyed by it)."""

    roof: Sequence[RooflineRow] = ()
    lines: Sequence[LineRow] = ()
    fusions: Sequence[FusionRow] = ()
    roofs: str = ""
    pending: bool = False


class LedgerPane(StagePane):
    stage = "ledger"
    title = "9 Ledger"
    columns = COLUMNS
    BINDINGS = LEDGER_BINDINGS

    #: above this many timed kernel calls the ledgers are computed in a thread (a 7,796-buffer graph: ~1 s)
    SYNC_MAX_KERNELS: ClassVar[int] = 300
    _EMPTY: ClassVar[Ledgers] = Ledgers()

    def __init__(self) -> None:
        super().__init__()
        self._ledger: tuple[tuple[int, ...], Ledgers] | None = None
        self._computing: tuple[int, ...] | None = None

    def _compute(self) -> Ledgers:
        s = self.app.session
        return Ledgers(ledger.roofline_rows(s), ledger.line_rows(s), ledger.fusion_rows(s), ledger.roofs_text(s))

    def data(self) -> Ledgers | None:
        """The three ledgers over every timed graph, computed once per set of run messages (in a thread
        when the runs are large; meanwhile the pane says so)."""
        runs = tuple(self.app.session.runs.values())
        if not runs:
            return self._EMPTY
        key = tuple(id(r) for r in runs)
        if self._ledger is not None and self._ledger[0] == key:
            return self._ledger[1]
        if sum(len(as_record(r, Run).kernels or []) for r in runs) <= self.SYNC_MAX_KERNELS:
            self._ledger = (key, self._compute())
            return self._ledger[1]
        if self._computing != key:
            self._computing = key
            app = self.app

            def work() -> None:
                result = self._compute()

                def done() -> None:
                    self._ledger, self._computing = (key, result), None
                    if app.view.stage == self.stage:
                        self.show(force=True)
                app.call_from_thread(done)
            app.run_worker(work, thread=True, group="ledger", exclusive=True)
        return replace(self._EMPTY, pending=True)

    def stamp(self, data: Ledgers | None) -> Any:
        return (id(data), self.app.session.run_status.message)

    def items(self, data: Ledgers) -> list[tuple[str, Any]]:
        """(section, row) per table row; section heads are ("head", title)."""
        def cached() -> list[tuple[str, Any]]:
            out: list[tuple[str, Any]] = []
            if not data.roof:
                return out
            bad = not_reliable_lines(self.app.session)  # the run's verdict, above every ranking
            if bad:
                # its graph, short as the rows' ("[0/0] fwd": "[0/0] forward" read "[0/…rward" at 80 columns), or how many
                which = _short(bad[1].split(":")[0]) if len(bad) == 2 else f"{len(bad) - 1} graphs"
                out.append(("head", ("! TIMES NOT RELIABLE", which, bad[0])))
            out.append(("head", ("ROOFLINE PER KERNEL", f"{len(data.roof)} calls",
                                 "kernel calls, most wasted first")))
            out += [("roof", r) for r in data.roof]
            out.append(("head", ("WASTED BY USER LINE", f"{len(data.lines)} lines",
                                 f"user lines, most wasted first; {ledger.SPLIT_RULE}")))
            out += [("line", r) for r in data.lines]
            act = [r for r in data.fusions if not r.library]
            lib = [r for r in data.fusions if r.library]
            out.append(("head", ("MISSED FUSIONS", f"{len(act)} buffers",
                                 "buffers written by one kernel and read back by another that Inductor could have "
                                 "fused; a setting to try first, then costliest")))
            out += [("fusion", r) for r in act]
            if lib:  # fusions Inductor could never make, apart, the reason said once
                out.append(("head", ("NEVER FUSABLE AS COMPILED", f"{len(lib)} buffers", LIBRARY_CALL)))
                out += [("fusion", r) for r in lib]
            return out
        return self.cached_index(data, "ledger_items", lambda: {"items": cached()})["items"]

    def rows(self, data: Ledgers) -> tuple[Sequence[str], Callable[[int], tuple]]:
        items = self.items(data)
        f = ledger.fmt
        sd = self.app.session.script_dir
        bad = unreliable_runs(self.app.session.runs)  # the run's verdict beside each ranked kernel

        def row(i: int) -> tuple:
            kind, r = items[i]
            if kind == "head":
                return (T(r[0], HEAD), T(r[1], HEAD)) + tuple(T("", HEAD) for _ in COLUMNS[2:])
            if kind == "roof":
                return (T(r.name + (f" (call {r.call})" if r.call > 1 else ""), "bold"), T(_short(r.graph)),
                        T(f(r.wasted_ms), "yellow"),
                        T(f(r.pct_of_roof, ".1f") + ("!" if r.over_roof else ""), "red" if r.over_roof else ""),
                        T(f(r.measured_ms)), T(f(r.roofline_ms)),
                        T(r.bound or "-"), T(("NOT RELIABLE · " if r.graph in bad else "")
                                                 + (r.over_roof or r.missing or r.gb_source)))
            if kind == "line":
                return (T(short_path(r.line, sd), "bold"), T(f"{len(r.kernels)} kernels"), T(f(r.wasted_ms), "yellow"),
                        T(f(100 * r.roofline_ms / r.measured_ms, ".1f") if r.measured_ms else "-"),
                        T(f(r.measured_ms)), T(f(r.roofline_ms)),
                        T(("eager " + f(r.eager_ms)) if r.eager_ms is not None else "eager -",
                          ("yellow" if r.unreliable else "bold red") if r.slower_than_eager else ""),
                        T(("NOT RELIABLE (timing contended or unsettled): " if r.unreliable else "")
                          + "; ".join(r.kernels)))
            why = (f"library call: {next(k for k in (r.producer, r.consumer) if is_library(k)).split('#')[0]}"
                   if r.library else f"{fix_text(r)}; {r.verdict}")
            return (T(f"{r.buffer}: {r.producer} -> {r.consumer}", "bold"), T(_short(r.graph)),
                    T("-"), T("-"), T("-"), T("-"),
                    T(f"{f(r.bytes, ',d')} B, {f(r.cost_ms)} ms", "yellow"), T(why))
        return [f"{i}:{k}" for i, (k, _r) in enumerate(items)], row

    def fill(self, data: Ledgers | None) -> None:
        # item names (kernels, file:line) give up cells so the times stay on screen (the reason column is last)
        self.table.fit(0, 4)
        super().fill(data)

    def empty(self, data: Ledgers | None) -> Detail:
        if data and data.pending:
            return Detail("# computing the ledgers (every timed kernel's roofline, every user line, every round trip)…")
        if self.app.live:
            status = self.app.session.run_status.message
            return Detail("# the ledger fills when timing is done: press r to run and time every compiled graph"
                          + (f"\n# {status}" if status else ""))
        return Detail("# this recorded session has no timing: record it with --run (or press r in a live session)")

    def detail(self, data: Ledgers, row: int) -> Detail | None:
        items = self.items(data)
        if not 0 <= row < len(items):
            return None
        kind, r = items[row]
        f = ledger.fmt
        if kind == "head":
            text = [f"# {r[0]}: {r[1]}, {r[2]}", "", f"measured: {ledger.MEASURED}", f"split by line: {ledger.SPLIT_RULE}",
                    "eager: each line's post-grad FX nodes run alone (torch.fx.Interpreter, run.eager_nodes_ms); a line "
                    "slower than eager is shown in red", "", data.roofs]
        elif kind == "roof":
            text = [f"# {r.graph} {r.name} (call {r.call}, {r.backend})",
                    f"measured          {f(r.measured_ms)} ms", f"    {ledger.MEASURED}",
                    f"bytes             {f(r.gb, '.6g')} GB", f"    {r.gb_source}",
                    f"FLOPs             {f(r.flops, '.6g')}", f"    {r.flops_source}",
                    f"intensity         {f(r.intensity, '.3g')} FLOP/byte",
                    f"memory roof       {f(r.bw_gbps, '.1f')} GB/s", f"    {r.bw_source}",
                    f"compute roof      {f(r.tflops_peak, '.4g')} TFLOP/s", f"    {r.tflops_source}",
                    f"bytes / bandwidth {f(r.memory_ms)} ms",
                    f"FLOPs / peak      {f(r.compute_ms)} ms",
                    f"roofline time     {f(r.roofline_ms)} ms   (the larger: bound by {r.bound or '-'})",
                    f"% of roof         {f(r.pct_of_roof, '.1f')}%   (roofline / measured)",
                    f"wasted            {f(r.wasted_ms)} ms   (measured - roofline)",
                    f"eager             {f(r.eager_ms)} ms", f"    {r.eager_source}"]
            if r.over_roof:
                text.append(f"! {r.over_roof}")
            if r.missing:
                text.append(f"no roofline: {r.missing}")
            res = self._resources(r)
            if res:
                text += ["", "resources (the compiled Triton binary):"] + res
            text += ["", "Enter: the kernel's code in pane 6 · u: ncu's speed-of-light summary"]
        elif kind == "line":
            text = [f"# {code_label(r.line, self.app.session.script_dir)}", f"measured {f(r.measured_ms)} ms · roofline {f(r.roofline_ms)} ms · "
                    f"wasted {f(r.wasted_ms)} ms" + (f" · {f(r.unpriced_ms)} ms in kernels with no roofline"
                                                     if r.unpriced_ms else ""),
                    (f"eager {f(r.eager_ms)} ms ({r.eager_source})" + ("  SLOWER THAN EAGER" if r.slower_than_eager
                                                                      else "")
                     if r.eager_ms is not None else f"eager: {r.eager_missing}"),
                    *([f"! timing NOT RELIABLE: {r.unreliable}"] if r.unreliable else []),
                    f"split: {ledger.SPLIT_RULE}", "", "kernels:"] + \
                ["  " + k for k in r.kernels] + \
                (["", "not timed (left out of the sums above):"] + ["  " + u for u in r.untimed]
                 if r.untimed else [])
            src = (self.app.session.links(r.targets[0][0]).user_source or {}).get(r.line) \
                if r.targets else None
            if src:
                text += ["", src]
            text += ["", "Enter: the first kernel's code in pane 6"]
        else:
            text = [f"# {r.graph} {r.buffer}: {r.producer} writes it, {r.consumer} reads it back",
                    f"bytes round-tripped   {f(r.bytes, ',d')} B   ({r.bytes_source})",
                    f"cost                  {f(r.cost_ms)} ms at {f(r.bw_gbps, '.1f')} GB/s   ({r.bw_source})",
                    f"producer's lines      {', '.join(self._short(r.producer_lines)) or '-'}",
                    f"consumer's lines      {', '.join(self._short(r.consumer_lines)) or '-'}"]
            if r.stays:
                text.append(f"the write stays even if fused: {r.stays} (the read back is what fusing saves)")
            text += ["", f"why not fused: {r.verdict}"] + ["  " + x for x in r.log]
            if not r.library:
                text.append(f"what would make it fuse: {fix_text(r)}")
            text += ["", f"Enter: pane 4, f for {r.nodes[0]} and {r.nodes[1]}"]
        return Detail("\n".join(text), "text")

    def _short(self, lines: Sequence[str]) -> list[str]:
        sd = self.app.session.script_dir
        return [short_path(x, sd) or x for x in lines]

    def _resources(self, r: RooflineRow) -> list[str]:
        run = as_record(self.app.session.runs.get(r.graph) or {}, Run)
        k = next((k for k in run.kernels or [] if k.name == r.name and (k.call or 1) == r.call), None)
        if not (k and k.resources):
            return [] if not str(run.device or "").startswith("cuda") else \
                ["  not recorded (a library call, or a session from before resources were read)"]
        res = as_record(k.resources, KernelResources)
        if res.missing:
            return ["  " + res.missing]
        return [f"  config {res.config} num_warps={res.num_warps} num_stages={res.num_stages}",
                f"  registers/thread {res.n_regs} · spills {res.n_spills} · shared {res.shared} B",
                f"  occupancy {ledger.fmt(res.occupancy, '.0%')} ({res.blocks_per_sm} blocks/SM, "
                f"limited by {res.limiter}; {res.blocks_by})",
                f"  grid {res.grid} = {res.blocks} blocks · waves {ledger.fmt(res.waves, '.2f')}"
                f"   ({res.grid_source})", f"  from {res.source}"]

    def target(self) -> tuple[str, Any] | None:
        data = self.data()
        if data is None or not self.table.row_count:
            return None
        items = self.items(data)
        row = self.table.cursor_row
        return items[row] if 0 <= row < len(items) else None

    @on(Table.RowSelected, "#table-ledger")
    def _enter(self, event: Table.RowSelected) -> None:
        """Enter: a kernel or line -> the kernel in pane 6; a missed fusion -> pane 4's f view of the pair."""
        t = self.target()
        if t is None or t[0] == "head":
            return
        kind, r = t
        app = self.app
        if kind == "fusion":
            links = app.session.links(r.graph)
            a = as_record(entry(links, "buffers", r.buffer), LinkBuffer).fused_node or r.nodes[0]
            b = as_record(entry(links, "scheduler_nodes", r.nodes[1]), LinkSchedulerNode).fused_node or r.nodes[1]
            # the consumer's buffers as the selection: pane 4 opens on the consumer's row, and its detail is the pair's
            consumer_bufs = related(links, "scheduler_nodes", r.nodes[1], "buffers")
            app.open_in_pane(r.graph, "scheduling", b, consumer_bufs or [r.buffer])
            app.call_after_refresh(lambda: app.pane("scheduling").show_pair(
                a, b, asking=f"from the ledger: {r.buffer} round-trips memory between these nodes' kernels"))
            app.set_status(f"fusion pair {a} and {b} ({r.buffer}): answer below")
            return
        graph, name = (r.graph, r.name) if kind == "roof" else r.targets[0]
        bufs = related(app.session.links(graph), "kernels", name, "buffers")
        app.open_in_pane(graph, "codegen", name, bufs)

    def show(self, force: bool = False) -> None:
        super().show(force)
        self.offer_ncu()

    def offer_ncu(self) -> None:
        """The footer offers u only where ncu can profile: a CUDA session; u still answers
        elsewhere, saying why not."""
        cuda = str(as_record(self.app.session.header or {}, Header).device or "").startswith("cuda")
        got = self._bindings.key_to_bindings.get("u") or []
        if got and got[0].show != cuda:
            self._bindings.key_to_bindings["u"] = [replace(b, show=cuda) for b in got]
            self.app.refresh_bindings()

    def action_ncu(self) -> None:
        """u: ncu's speed-of-light summary of the kernel under the cursor, or one line why not."""
        t = self.target()
        app = self.app
        header = as_record(app.session.header or {}, Header)
        device = str(header.device or "")
        if not device.startswith("cuda"):
            app.say(f"ncu: it profiles CUDA kernels; this session ran on {device or 'an unknown device'}", "warning")
            return
        if t is None or t[0] not in ("roof", "line"):
            app.say("ncu: put the cursor on a kernel (or a line) first")
            return
        graph, name = (t[1].graph, t[1].name) if t[0] == "roof" else t[1].targets[0]
        run = as_record(app.session.runs.get(graph) or {}, Run)
        cmd, why = ledger.ncu_command(name, run.device or header.device, app.script or header.script,
                                      app.script_args or header.argv or [], app.python)
        if cmd is None:
            app.say(f"ncu: {why}", "warning")
            return
        app.say(f"ncu: profiling {name} (re-runs the script under ncu; this takes a while)…")

        def work() -> None:
            text = run_ncu(cmd, name, cwd=None if app.live else header.cwd)
            app.call_from_thread(lambda: self.apply(Detail(text, "text")))
        app.run_worker(work, thread=True, group="ncu", exclusive=True)
