"""Pane T: where the compile's own time went: graphs, kernels and user lines ranked by compile time
(:mod:`inductor_step.session.compile_time`), each with its stages, cache verdicts and where the number came from.

Enter on a graph: that graph in pane 1; on a kernel: its code in pane 6; on a user line: its first FX node in
pane 2 (a frame's tracing: pane 1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import on

from inductor_step.session import compile_time as ct
from inductor_step.session.format import GraphKey
from inductor_step.session.links import related
from inductor_step.tui.panes.base import Detail, T
from inductor_step.session.paths import short_path
from inductor_step.tui.panes.sections import SectionPane
from inductor_step.tui.table import Prose, Table

COLUMNS = ("compile time of", "graph", "time", "where it went · cache")
_SECTIONS = (("graphs", "GRAPHS", "each graph's compile, pauses at our stops and our hooks taken out"),
             ("kernels", "KERNELS", "each kernel's compile in the compile workers (C++ build, Triton incl. ptxas)"),
             ("lines", "USER LINES", "lowering time per line (its post-grad FX nodes), Dynamo's tracing per frame"))


@dataclass(frozen=True, eq=False)
class CompileTimes:
    """The pane's data: ``rankings`` (:func:`inductor_step.session.compile_time.rankings`: ``graphs``, ``kernels``,
    ``lines`` -> their :class:`~inductor_step.session.compile_time.Rank` rows, slowest first), ``times`` each graph's
    compile time (:class:`~inductor_step.session.compile_time.GraphTime`, ms, from the session's compile_time
    messages), ``key`` what they were computed from (how many compile_time messages and stops)."""

    rankings: dict[str, list[ct.Rank]]
    times: dict[str, ct.GraphTime]
    key: tuple[int, int]


class CompileTimePane(SectionPane):
    stage = "ctime"
    title = "T Compile time"
    columns = COLUMNS
    fit = ((0, 3), 3)  # names and notes give up cells, the widest first: the time stays on screen

    def data(self) -> CompileTimes | None:
        """The rankings, computed once per set of compile_time messages (and codegen stops: the links)."""
        s = self.app.session
        key = (len(s.compile_times), len(s.stops))
        return s.cache.get(("ctime", key), (), lambda: CompileTimes(ct.rankings(s), ct.graph_times(s), key))

    def stamp(self, data: CompileTimes | None) -> Any:
        # no compile finished yet: the text shows the viewed graph's time so far, so it follows the view too
        return (data.key if data else None), None if (data and data.times) else self.app.view.graph

    def items(self, data: CompileTimes) -> list[tuple[str, Any]]:
        """(section, row) per table row; section heads are ("head", (title, count, what))."""
        out: list[tuple[str, Any]] = []
        for name, title, what in _SECTIONS:
            rows = data.rankings[name]
            if rows:
                out.append(("head", (title, f"{len(rows)}", what)))
                out += [(name, r) for r in rows]
        return out

    def row_context(self, data: CompileTimes) -> Any:
        return self.app.session.script_dir

    def item_key(self, kind: str, r: Any) -> str:
        return r.label

    def item_row(self, kind: str, r: Any, sd: Any) -> tuple:
        label = r.label
        if r.what == "line" and r.line:
            label = "lowering " + (short_path(r.line, sd) or r.line)
        missing = r.ms is None
        graph = "" if r.graph == r.label else (r.graph or "")  # a graph's row names it once
        return (T(label, "bold"), T(graph), T(f"{ct.fmt_time(r.ms):>9}", "red" if missing else "yellow"),
                Prose(r.note))  # (cut at its end at 80 columns: "most in kernels 5.2 s; fx_g…")

    def row_named(self, data: CompileTimes, name: str) -> int | None:
        for i, (k, r) in enumerate(self.items(data)):
            if k != "head" and name in (r.label, r.kernel, r.graph):
                return i
        return None

    def empty(self, data: CompileTimes | None) -> Detail:
        if self.app.live:
            key = self.app.view.graph
            so_far = ct.bar_times(self.app.session, key) if key else {}
            text = ["# compile times arrive as each compile finishes:",
                    "# a frame's Dynamo and forward compile, then its backward at .backward()"]
            if so_far:  # the paused compile's own time up to its latest stop (the stage bar's, at 120+ columns)
                text += ["", f"# {key} so far (the time paused at our stops not counted):"]
                text += [f"  {stage:<11} {t}" for stage, t in so_far.items()]
            return Detail("\n".join(text))
        why = [h for h in self.app.session.header.hooks or [] if str(h).startswith("compile time:")]
        if why:  # tracer.compile_time could not hook torch here: its own words
            return Detail("# no compile times: " + "; ".join(str(h).removeprefix("compile time: ") for h in why))
        return Detail("# this session has no compile times: it was recorded before inductor-step measured them, "
                      "or nothing compiled")

    def detail(self, data: CompileTimes, row: int) -> Detail | None:
        items = self.items(data)
        if not 0 <= row < len(items):
            return None
        kind, r = items[row]
        if kind == "head":
            return Detail(self._overview(data), "text")
        if kind == "graphs":
            return Detail(self._graph_text(data.times[r.graph], data.times), "text")
        if kind == "kernels":
            g = data.times.get(r.graph)
            k = g.kernel(r.kernel) if g else None
            text = [f"# {r.kernel} ({r.graph}): compiled in {ct.fmt_time(r.ms)}", ""]
            text += [f"{key:<15} {v}" for key, v in (k or {}).items() if key != "name"]
            return Detail("\n".join(text), "text")
        src = (self.app.session.links(r.graph).user_source or {}).get(r.line or "") if r.line else None
        text = [f"# {r.label} ({r.graph}): {ct.fmt_time(r.ms)}", f"# {r.note}", ""]
        if r.what == "line":
            text.append("# each post-grad FX node's time in GraphLowering.run_node (its lowering, and any "
                        "autotuning it ran), summed over the nodes whose stack trace ends at this line")
        return Detail("\n".join(text) + ("\n" + src if src else ""), "text")

    def _overview(self, data: CompileTimes) -> str:
        t = ct.totals(self.app.session)
        return "\n".join([
            f"# the compile's own time: {ct.fmt_time(t['total_ms'])} over {len(data.times)} graph(s)",
            f"# torch's wall time of these compiles: {ct.fmt_time(t['wall_ms'])}",
            f"#   minus paused at inductor-step's stops: {ct.fmt_time(t['paused_ms'])}",
            f"#   minus inductor-step's capture hooks:   {ct.fmt_time(t['ours_ms'])}",
            "# source: torch's dynamo_timed events (ChromiumEventLogger start/end); our clock (time.time_ns) for "
            "the stops, our hooks and each C++ kernel's build",
        ])

    def _graph_text(self, g: ct.GraphTime, times: dict[str, ct.GraphTime]) -> str:
        out = [f"# {g.key}: {ct.fmt_time(g.total_ms)} of compile ({g.compiles} compile event(s))",
               f"# wall {ct.fmt_time(g.wall_ms)} - paused {ct.fmt_time(g.paused_ms)} - our hooks "
               f"{ct.fmt_time(g.ours_ms)}; stages under a named stage: {g.named_share() * 100:.0f}%", ""]
        for stage, label, ms, note in ct.stage_rows(g):
            pct = f"{ms / g.total_ms * 100:5.1f}%" if ms is not None and g.total_ms else "      "
            out.append(f"{stage:<11} {ct.fmt_time(ms) if ms is not None else note:>10} {pct}  {label}")
            if ms is not None and note:
                out.append(f"{'':<30}{note}")
        if g.cache:
            out += ["", "caches (torch's verdicts):"]
            out += [f"  {c.cache}: {c.status}" + (f" ({c.reason})" if c.reason else "") for c in g.cache_verdicts()]
        f = g.traced()
        if f is not None:
            out += ["", f"frame: {f.function} ({f.file}:{f.line}), Dynamo tracing {ct.fmt_time(f.tracing_ms)}"]
        whole = ct.frame_of(times, g.key)
        if whole is not None:  # DDP parts, subgraphs, a backward: each its own events, adding up to the compile's
            out += ["", f"one of {len(whole.graphs)} graphs of compile {whole.compile_id} (each its own events):",
                    f"  {whole.text()}"]
            if g.key.endswith(ct.FRAME):
                out.append(f"  {g.key}: {ct.FRAME_NOTE}")
        return "\n".join(out)

    _said = ""  # the status line Enter left on a row that opens nothing: cleared when the cursor moves on

    @on(Table.RowHighlighted, "#table-ctime")
    def _moved(self, event: Table.RowHighlighted) -> None:
        if self._said and self.app._status_extra == self._said:
            self.app.set_status("")
        self._said = ""

    @on(Table.RowSelected, "#table-ctime")
    def _enter(self, event: Table.RowSelected) -> None:
        """Enter: a graph -> pane 1 of it; a kernel -> its code in pane 6; a user line -> its first FX node
        in pane 2; a frame's tracing -> pane 1."""
        data = self.data()
        items = self.items(data) if data else []
        row = self.table.cursor_row
        if not 0 <= row < len(items) or items[row][0] == "head":
            return
        kind, r = items[row]
        app = self.app
        if r.graph and r.graph.endswith(ct.FRAME):  # a frame's own time: its first part
            r = ct.Rank(r.what, r.label, r.ms, r.note, graph=next(
                (k for k in data.times if GraphKey.parse(k).compile_id == GraphKey.parse(r.graph).compile_id
                 and k in app.session.by_graph),
                r.graph))
        if not r.graph or r.graph not in app.session.by_graph:
            g = data.times.get(r.graph or "") if data else None
            frame = g.traced() if g else None
            where = f" ({frame.function}, {ct._short(frame.file)}:{frame.line})" if frame else ""
            if ct.no_graph_note(app.session, r.graph or ""):  # not a cache hit, with caches off
                self._said = (f"{r.graph.split(' ', 1)[0]}{where}: Dynamo traced this frame and made no Inductor "
                              "graph of it (nothing to compile: it runs as Python), so no pane shows it")
            elif g is not None and g.skipped():
                self._said = f"{r.graph}: a cache hit (caches on) skipped our stops: no pane shows this graph"
            else:
                self._said = f"{r.graph}: no stop of this graph in the session"
            app.set_status(self._said)
            return
        links = app.session.links(r.graph)
        if kind == "kernels" and r.kernel:
            bufs = related(links, "kernels", r.kernel, "buffers")
            app.open_in_pane(r.graph, "codegen", r.kernel, bufs)
        elif r.what == "line" and r.line:
            nodes = ct.line_nodes(links, r.line)
            bufs = related(links, "fx_nodes", nodes[0], "buffers") if nodes else []
            app.open_in_pane(r.graph, "aot", nodes[0] if nodes else "", bufs)
        else:
            app.open_in_pane(r.graph, "dynamo", "", [])
