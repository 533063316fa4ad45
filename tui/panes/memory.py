"""Pane M: where the bytes go: the viewed graph's planned peak, the buffers live there (largest first)
and, for a forward, what it saves for the backward (:mod:`inductor_step.session.memory`).

A buffer row is linked like any buffer: the cursor on it selects it, so panes 3-8 follow; Enter opens pane 3 at it.
"""

from __future__ import annotations

from typing import Any

from textual import on

from inductor_step.session import memory as mem
from inductor_step.session import memory_whatif as mw
from inductor_step.session.format import CMD_WHAT_IF, split_part, split_variant
from inductor_step.session.format.messages import Run
from inductor_step.session.format.records import as_record
from inductor_step.session.memory_view import MemoryView, forward_backward, memory_view
from inductor_step.session.paths import short_path
from inductor_step.tui.panes.base import Detail, T
from inductor_step.tui.panes.sections import SectionPane
from inductor_step.tui.table import Prose, Table

COLUMNS = ("buffer", "bytes", "how", "lifetime (wrapper lines)", "FX node · user line")


NOT_PLANNED = ("not planned yet: the wrapper, written at codegen, decides which buffers reuse a freed one's storage, "
               "which are written in place and where each is deleted; until then, what the earlier stops know")


def _pct(pair: tuple[Any, Any], prefix: str = "") -> str:
    a, b = pair
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or not a:
        return ""
    return f"{prefix}{(b - a) / a * 100:+.0f}%"


def _lifetime(b: mem.MemBuffer) -> str:
    end = "returned" if b.returned else (f"del {b.freed}" if b.freed else "to the end")
    return f"{b.line}-{end}"


class MemoryPane(SectionPane):
    stage = "memory"
    title = "M Memory"
    columns = COLUMNS
    fit = ((4,), 4)  # the FX node and user line give up cells: buffer, bytes and lifetime stay on screen
    figure_width = 9

    def data(self) -> MemoryView | None:
        """The viewed graph's plan and saved tensors (computed once per codegen and AOT stops and the variants'
        runs); before codegen what is known: the lowering stop's buffers, the AOT stops' saved tensors."""
        s, key = self.app.session, self.app.view.graph
        if not key or not any(s.stop_for(key, st) for st in ("codegen", "lowering", "aot")):
            return None
        bkey = forward_backward(key)
        variants = [g for g in s.graphs if split_variant(g)[1] and split_variant(g)[0] in (key, bkey)]
        parts = (s.stop_for(key, "codegen"), s.stop_for(key, "lowering"), s.stop_for(key, "aot"),
                 s.stop_for(bkey, "aot") if bkey else None, *[s.stop_for(v, "codegen") for v in variants],
                 *[s.runs.get(k) for k in (key, bkey, *variants) if k])
        return s.cache.get(("memory", key), parts, lambda: memory_view(s, key))

    def stamp(self, data: MemoryView | None) -> Any:
        return super().stamp(data) if data is None else (self.app.view.graph, id(data))

    def items(self, data: MemoryView) -> list[tuple[str, Any]]:
        """(section, row): ("head", (title, figure, what)), ("peak", MemBuffer), ("lowered", MemBuffer),
        ("saved", SavedTensor), ("change", SettingRow)."""
        p, sv = data.plan, data.saved
        out: list[tuple[str, Any]] = []
        if p is not None:
            at = f"at {p.peak_buffer}, line {p.peak_line}" if p.peak_buffer else "nothing allocated"
            hw = (f"; {mem.fmt_bytes(p.high_water)} above the call's start (frees {mem.fmt_bytes(p.released)} "
                  "of saved activations)") if p.released else ""
            out.append(("head", ("PEAK", mem.fmt_bytes(p.peak), f"planned peak {at}{hw}; "
                                 f"{len(p.live_at_peak)} buffers, largest first (planned, not measured)")))
            out += [("peak", p.buffers[n]) for n in p.live_at_peak if n in p.buffers]
        else:
            out.append(("head", ("PEAK", "not yet", NOT_PLANNED)))
            if data.lowered:
                out.append(("head", ("LOWERED", mem.fmt_bytes(sum(b.bytes or 0 for b in data.lowered)),
                                     f"{len(data.lowered)} buffers as lowered, largest first: each one's bytes "
                                     "from its layout (the sum if none were reused or freed)")))
                out += [("lowered", b) for b in data.lowered]
        if sv is not None and sv.tensors:
            out.append(("head", ("SAVED", mem.fmt_bytes(sv.storage_bytes),
                                 f"saved for backward: {len(sv.tensors)} tensors, largest first; {len(sv.recomputed)} "
                                 "nodes recomputed")))
            out += [("saved", t) for t in sv.tensors]
        elif sv is not None and sv.note:
            out.append(("head", ("SAVED", "not yet", sv.note)))
        out.append(("head", ("CHANGE", "", "settings that trade memory for time: Enter runs one as a what-if, "
                                           "compiled and timed beside this graph")))
        out += [("change", c) for c in data.change]
        return out

    def row_context(self, data: MemoryView) -> Any:
        return data.plan, self.app.session.links(data.key).buffers or {}, self.app.session.script_dir

    def item_key(self, kind: str, r: Any) -> str:
        return getattr(r, "name", None) or getattr(r, "buffer", None) or getattr(r, "fx_node", None) or ""

    def item_row(self, kind: str, r: Any, ctx: Any) -> tuple:
        p, links, sd = ctx

        def where(name: str | None, fx: str | None, line: str | None) -> str:
            lb = links.get(name or "")
            fx = fx or next(iter((lb.fx_nodes if lb else None) or []), "")
            line = line or next(iter((lb.user_lines if lb else None) or []), "")
            return f"{fx} · {short_path(line, sd) or line}" if line else (fx or "")

        if kind in ("peak", "lowered"):
            return (T(r.name, "bold"), T(f"{mem.fmt_bytes(r.bytes):>9}", "yellow"), T(r.how),
                    T(_lifetime(r) if kind == "peak" else "at codegen"), Prose(where(r.name, None, None)))
        if kind == "change":
            st, why, pr = r.setting, r.why_not, r.priced
            fig = _pct(pr.saved if st.applies == "training" else pr.peak) if pr else ""
            return (T(f"{st.name}={st.value}", "bold"), T(f"{fig:>9}", "yellow"),
                    T("priced" if pr else ("not here" if why else "Enter")),
                    T(_pct(pr.ms, "time ") + (" !" if pr.time_note else ""), "red" if pr.time_note else "")
                    if pr else T(""),
                    Prose(pr.line().split(": ", 1)[1] if pr else (why or st.trades)))
        return (T(r.buffer or r.backward_name, "bold"), T(f"{mem.fmt_bytes(r.bytes):>9}", "yellow"),
                T("input" if r.is_input else "saved"),
                T(_lifetime(p.buffers[r.storage]) if p is not None and r.storage in p.buffers
                  and p.buffers[r.storage].how != "input" else "the caller's"), Prose(where(r.storage, r.fx_node,
                                                                                      r.user_line)))

    def _buffer(self, item: tuple[str, Any]) -> str | None:
        kind, r = item
        name = r.name if kind in ("peak", "lowered") else (r.storage if kind == "saved" else None)
        links = self.app.session.links(self.app.view.graph).buffers or {}
        return name if name and (name in links or name.startswith("buf")) else None

    def row_for(self, data: MemoryView, buffer: str) -> int | None:
        for i, it in enumerate(self.items(data)):
            if it[0] != "head" and self._buffer(it) == buffer:
                return i
        return None

    def buffers_of(self, data: MemoryView, row: int) -> list[str]:
        items = self.items(data)
        b = self._buffer(items[row]) if 0 <= row < len(items) else None
        return [b] if b else []

    def empty(self, data: MemoryView | None) -> Detail:  # never: the CHANGE section is always there
        return Detail(f"# {data.key if data else 'this graph'}: no memory plan (no Python wrapper recorded: a C++ "
                      "wrapper or an AOTInductor compile)")

    def detail(self, data: MemoryView, row: int) -> Detail | None:
        items = self.items(data)
        if not 0 <= row < len(items):
            return None
        kind, r = items[row]
        p, sv = data.plan, data.saved
        def measured() -> dict[str, Any] | None:  # the run's measured peak (tracer.timing.memory), where it was timed
            return as_record(self.app.session.runs.get(data.key) or {}, Run).memory

        if kind == "head" and r[0] == "SAVED":
            return Detail(saved_text(sv, measured())
                          if sv is not None and sv.tensors else f"# {r[2]}", "text")
        if kind == "head" and r[0] == "CHANGE" or kind == "change":
            return Detail(change_text(data, r.setting if kind == "change" else None), "text")
        if kind == "head" and p is None:
            return Detail(f"# {data.key}: {NOT_PLANNED}\n# {r[2]}", "text")
        if kind == "head":
            return Detail(plan_text(p, measured()), "text")
        if kind == "peak":
            return Detail(buffer_text(p, r.name), "text")
        if kind == "lowered":
            return Detail(f"# {r.name}: {mem.fmt_bytes(r.bytes)} ({r.bytes} bytes) as lowered; {r.source}\n"
                          f"# size {r.size} stride {r.stride} dtype {r.dtype}\n# {NOT_PLANNED}", "text")
        text = [f"# saved for backward: {r.fx_node} (backward placeholder {r.backward_name}) "
                f"{mem.fmt_bytes(r.bytes)} {r.dtype} {list(r.shape)}",
                f"# held in wrapper buffer {r.buffer or '?'} (storage {r.storage or '?'})"
                + ("; a graph input: held by the caller anyway" if r.is_input else ""),
                f"# user line: {r.user_line or '-'}", ""]
        if p is not None and r.storage in p.buffers:
            text.append(buffer_text(p, r.storage))
        return Detail("\n".join(text), "text")

    @on(Table.RowSelected, "#table-memory")
    def _enter(self, event: Table.RowSelected) -> None:
        """Enter on a buffer: pane 3 (IR) at it."""
        data = self.data()
        items = self.items(data) if data else []
        row = self.table.cursor_row
        if 0 <= row < len(items) and items[row][0] == "change":
            self.run_setting(items[row][1].setting, items[row][1].why_not)
            return
        b = self._buffer(items[row]) if 0 <= row < len(items) else None
        if b:
            self.app.open_in_pane(self.app.view.graph, "lowering", b, [b])

    def run_setting(self, st: mw.MemorySetting, why: str) -> None:
        """Enter on a setting: the live agent recompiles the viewed graph with it (tracer.whatif) and times both;
        the diff of the two opens when the variant is compiled, and this pane prices it."""
        app, key = self.app, split_variant(self.app.view.graph or "")[0]
        if why:
            app.say(f"{st.name}={st.value}: {why}", "warning")
        elif app.agent is None or not app.agent.alive:
            app.say("what if needs the live script's agent (a recorded session cannot recompile): run "
                    f"inductor-step --headless --run --what-if {st.name}={st.value} SCRIPT", "warning")
        else:
            cid, kind = key.split(" ", 1)
            kind, part = split_part(kind)
            app.agent.send(CMD_WHAT_IF, compile_id=cid, graph_kind=kind, settings={st.name: st.value}, run=True,
                           **({"part": part} if part else {}))
            app.session.note_run_status(f"what if: recompiling {key} with {st.name}={st.value}…")
            app.say(f"what if: recompiling {key} with {st.name}={st.value}; the diff of the two opens when it is "
                    "compiled, and this row prices it once both are timed")


def plan_text(p: mem.Plan, measured: dict[str, Any] | None = None) -> str:
    """The plan's overview and its timeline: live bytes after each statement, over the kernels in order;
    ``measured`` the run's ``memory`` (tracer.timing.memory.measured_peak) where the graph was timed."""
    out = [f"# {p.key}: planned peak {mem.fmt_bytes(p.peak)} of the graph's own buffers"
           + (f" at line {p.peak_line} ({p.peak_buffer}), for kernel {p.peak_kernel}" if p.peak_buffer else ""),
           f"# inputs (held by the caller): {mem.fmt_bytes(p.inputs_bytes)} over {len(p.inputs)}; peak + inputs "
           f"{mem.fmt_bytes((p.inputs_bytes or 0) + p.peak)}; outputs {mem.fmt_bytes(p.outputs_bytes)}",
           f"# {p.source}", f"# {p.estimate}"]
    from inductor_step.session.memory_text import measured_lines  # noqa: PLC0415

    out += [f"# {x}" for x in measured_lines(measured)]
    if p.released or p.released_outputs:
        out.append(f"# above the call's start: {mem.fmt_bytes(p.high_water)} (line {p.high_water_line}): the graph "
                   "frees "
                   f"{mem.fmt_bytes(p.released)} of inputs only it holds ({', '.join(p.freed_inputs[:6])}"
                   f"{', ...' if len(p.freed_inputs) > 6 else ''}): {p.freed_inputs_how}")
    if p.released_outputs:
        out.append(f"# {mem.fmt_bytes(p.high_water_outputs_dropped)} above the start where the caller dropped the "
                   f"forward's outputs that are also saved ({mem.fmt_bytes(p.released_outputs)}, e.g. logits when "
                   "only the loss is kept): then the backward frees those too")
    out += [f"# note: {n}" for n in p.notes] + ["", "# line  live after   step"]
    top = max(p.peak, 1)
    for i, s in enumerate(p.steps):
        bar = "#" * int(20 * s.live / top)
        mark = "  <- peak" if i == p.peak_step else ""
        freed = f"  (inputs freed {mem.fmt_bytes(s.released)})" if s.released else ""
        out.append(f"{s.line:>6}  {mem.fmt_bytes(s.live):>10}  {bar:<20} {s.what:<7} {s.name}{mark}{freed}")
    return "\n".join(out)


def buffer_text(p: mem.Plan, name: str) -> str:
    """One buffer's size, layout, lifetime statements and whether it is live at the peak."""
    b = p.buffers.get(name)
    if b is None:
        return f"# {name}: not in the plan"
    out = [f"# {b.name}: {mem.fmt_bytes(b.bytes)} ({b.bytes} bytes), {b.how}; {b.source}",
           f"# size {b.size} stride {b.stride} dtype {b.dtype}",
           f"# live at the peak: {'yes' if b.name in p.live_at_peak else 'no'}"
           + ("; returned (an output)" if b.returned else ""), "", "# wrapper line  event"]
    out += [f"{ln:>14}  {what}" for ln, what in b.events]
    if b.freed:
        out.append(f"{b.freed:>14}  freed")
    return "\n".join(out)


def saved_text(sv: Any, measured: dict[str, Any] | None = None) -> str:
    """What the forward saves (total, inputs apart), against what eager autograd saves for the same graph (the run's
    ``memory["eager_saved"]``, tracer.timing.memory.eager_saved), and what the backward recomputes."""
    from inductor_step.session.memory_text import eager_saved_note  # noqa: PLC0415

    out = [f"# {sv.forward} saves {len(sv.tensors)} tensors for {sv.backward}: {mem.fmt_bytes(sv.storage_bytes)} "
           f"in distinct storages ({mem.fmt_bytes(sv.total_bytes)} summed over the tensors, views included; "
           f"{mem.fmt_bytes(sv.inputs_bytes)} of them graph inputs)",
           f"# {sv.user_outputs} user output(s) returned before them; from the AOT stops' post-grad graphs and the "
           "wrapper's return (planned, not measured)",
           f"# against eager: {eager_saved_note(measured if isinstance(measured, dict) else None)} (measured)", "",
           f"# recomputed in the backward ({len(sv.recomputed)} nodes): {sv.recompute_how}"]
    out += [f"  {n:<24} {t:<36} {u or ''}" for n, t, u in sv.recomputed]
    return "\n".join(out)


def change_text(data: MemoryView, only: Any = None) -> str:
    """The settings that trade memory for time, each with what it trades and, where its variant was compiled, its
    figures against this graph's (``only``: that setting alone)."""
    out = [f"# what to change in {data.key}: Enter on a setting recompiles this graph with it (what-if) and times "
           "both; the diff of the two opens when it is compiled", f"# {mw.SOURCE}", ""]
    for st, why, pr in ((c.setting, c.why_not, c.priced) for c in data.change):
        if only is not None and st is not only:
            continue
        out += [f"{st.name}={st.value}  ({st.config})", f"  trades: {st.trades}"]
        out += [f"  cannot run here: {why}"] if why else []
        out += [f"  {pr.line()}"] if pr else ["  not compiled yet"]
        out += [f"  the times are not reliable: {pr.time_note}"] if pr and pr.time_note else []
        out.append("")
    return "\n".join(out)
