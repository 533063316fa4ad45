"""Pane M: where the bytes go: the viewed graph's planned peak, the buffers live there (largest first)
and, for a forward, what it saves for the backward (:mod:`inductor_step.session.memory`).

A buffer row is linked like any buffer: the cursor on it selects it, so panes 3-8 follow; Enter opens pane 3 at it.
"""

from __future__ import annotations

from typing import Any

from textual import on

from inductor_step.session import memory as mem
from inductor_step.session.memory_saved import saved_for_backward
from inductor_step.session.paths import short_path
from inductor_step.tui.panes.base import Detail, T
from inductor_step.tui.panes.sections import SectionPane
from inductor_step.tui.table import Prose, Table

COLUMNS = ("buffer", "bytes", "how", "lifetime (wrapper lines)", "FX node · user line")


def _lifetime(b: mem.MemBuffer) -> str:
    end = "returned" if b.returned else (f"del {b.freed}" if b.freed else "to the end")
    return f"{b.line}-{end}"


class MemoryPane(SectionPane):
    stage = "memory"
    title = "M Memory"
    columns = COLUMNS
    fit = ((4,), 4)  # the FX node and user line give up cells: buffer, bytes and lifetime stay on screen
    figure_width = 9

    def data(self) -> dict[str, Any] | None:
        """The viewed graph's plan and saved tensors, computed once per codegen and AOT stops."""
        s, key = self.app.session, self.app.view.graph
        if not key or s.stop_for(key, "codegen") is None:
            return None
        bkey = mem_backward(key)
        parts = (s.stop_for(key, "codegen"), s.stop_for(key, "aot"), s.stop_for(bkey, "aot") if bkey else None)

        def build() -> dict[str, Any]:
            p = mem.plan(s, key)
            return {"key": key, "plan": p, "saved": saved_for_backward(s, key, p)}
        return s.cache.get(("memory", key), parts, build)

    def stamp(self, data: dict[str, Any] | None) -> Any:
        return super().stamp(data) if data is None else (self.app.view.graph, id(data))

    def items(self, data: dict[str, Any]) -> list[tuple[str, Any]]:
        """(section, row): ("head", (title, count, what)), ("peak", MemBuffer), ("saved", SavedTensor)."""
        p, sv = data["plan"], data["saved"]
        out: list[tuple[str, Any]] = []
        if p is not None:
            at = f"at {p.peak_buffer}, line {p.peak_line}" if p.peak_buffer else "nothing allocated"
            hw = (f"; {mem.fmt_bytes(p.high_water)} above the call's start (frees {mem.fmt_bytes(p.released)} "
                  "of saved activations)") if p.released else ""
            out.append(("head", ("PEAK", mem.fmt_bytes(p.peak), f"planned peak {at}{hw}; "
                                 f"{len(p.live_at_peak)} buffers, largest first (planned, not measured)")))
            out += [("peak", p.buffers[n]) for n in p.live_at_peak if n in p.buffers]
        if sv is not None and sv.tensors:
            out.append(("head", ("SAVED", mem.fmt_bytes(sv.storage_bytes),
                                 f"saved for backward: {len(sv.tensors)} tensors, largest first; {len(sv.recomputed)} "
                                 "nodes recomputed")))
            out += [("saved", t) for t in sv.tensors]
        return out

    def row_context(self, data: dict[str, Any]) -> Any:
        return data.get("plan"), self.app.session.links(data["key"]).get("buffers") or {}, self.app.session.script_dir

    def item_key(self, kind: str, r: Any) -> str:
        return getattr(r, "name", None) or getattr(r, "buffer", None) or getattr(r, "fx_node", None) or ""

    def item_row(self, kind: str, r: Any, ctx: Any) -> tuple:
        p, links, sd = ctx

        def where(name: str | None, fx: str | None, line: str | None) -> str:
            lb = links.get(name or "") or {}
            fx = fx or next(iter(lb.get("fx_nodes") or []), "")
            line = line or next(iter(lb.get("user_lines") or []), "")
            return f"{fx} · {short_path(line, sd) or line}" if line else (fx or "")

        if kind == "peak":
            return (T(r.name, "bold"), T(f"{mem.fmt_bytes(r.bytes):>9}", "yellow"), T(r.how), T(_lifetime(r)),
                    Prose(where(r.name, None, None)))
        return (T(r.buffer or r.backward_name, "bold"), T(f"{mem.fmt_bytes(r.bytes):>9}", "yellow"),
                T("input" if r.is_input else "saved"),
                T(_lifetime(p.buffers[r.storage]) if p is not None and r.storage in p.buffers
                  and p.buffers[r.storage].how != "input" else "the caller's"), Prose(where(r.storage, r.fx_node,
                                                                                      r.user_line)))

    def _buffer(self, item: tuple[str, Any]) -> str | None:
        kind, r = item
        name = r.name if kind == "peak" else (r.storage if kind == "saved" else None)
        links = self.app.session.links(self.app.view.graph).get("buffers") or {}
        return name if name and (name in links or name.startswith("buf")) else None

    def row_for(self, data: dict[str, Any], buffer: str) -> int | None:
        for i, it in enumerate(self.items(data)):
            if it[0] != "head" and self._buffer(it) == buffer:
                return i
        return None

    def buffers_of(self, data: dict[str, Any], row: int) -> list[str]:
        items = self.items(data)
        b = self._buffer(items[row]) if 0 <= row < len(items) else None
        return [b] if b else []

    def empty(self, data: dict[str, Any] | None) -> Detail:
        return Detail(f"# {data['key'] if data else 'this graph'}: no memory plan (no Python wrapper recorded: a C++ "
                      "wrapper or an AOTInductor compile)")

    def detail(self, data: dict[str, Any], row: int) -> Detail | None:
        items = self.items(data)
        if not 0 <= row < len(items):
            return None
        kind, r = items[row]
        p, sv = data["plan"], data["saved"]
        if kind == "head" and r[0] == "SAVED":
            return Detail(saved_text(sv), "text")
        if kind == "head":
            return Detail(plan_text(p), "text")
        if kind == "peak":
            return Detail(buffer_text(p, r.name), "text")
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
        b = self._buffer(items[row]) if 0 <= row < len(items) else None
        if b:
            self.app.open_in_pane(self.app.view.graph, "lowering", b, [b])


def mem_backward(key: str) -> str | None:
    """The backward's key of a forward graph ``key``; None for any other graph."""
    from inductor_step.session.memory_saved import backward_key  # noqa: PLC0415

    return backward_key(key) if " forward" in key else None


def plan_text(p: mem.Plan) -> str:
    """The plan's overview and its timeline: live bytes after each statement, over the kernels in order."""
    out = [f"# {p.key}: planned peak {mem.fmt_bytes(p.peak)} of the graph's own buffers"
           + (f" at line {p.peak_line} ({p.peak_buffer}), for kernel {p.peak_kernel}" if p.peak_buffer else ""),
           f"# inputs (held by the caller): {mem.fmt_bytes(p.inputs_bytes)} over {len(p.inputs)}; peak + inputs "
           f"{mem.fmt_bytes((p.inputs_bytes or 0) + p.peak)}; outputs {mem.fmt_bytes(p.outputs_bytes)}",
           f"# {p.source}", f"# {p.estimate}"]
    if p.released or p.released_outputs:
        out.append(f"# above the call's start: {mem.fmt_bytes(p.high_water)} (line {p.high_water_line}): the graph frees "
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


def saved_text(sv: Any) -> str:
    """What the forward saves (total, inputs apart) and what the backward recomputes."""
    out = [f"# {sv.forward} saves {len(sv.tensors)} tensors for {sv.backward}: {mem.fmt_bytes(sv.storage_bytes)} "
           f"in distinct storages ({mem.fmt_bytes(sv.total_bytes)} summed over the tensors, views included; "
           f"{mem.fmt_bytes(sv.inputs_bytes)} of them graph inputs)",
           f"# {sv.user_outputs} user output(s) returned before them; from the AOT stops' post-grad graphs and the "
           "wrapper's return (planned, not measured)", "",
           f"# recomputed in the backward ({len(sv.recomputed)} nodes): {sv.recompute_how}"]
    out += [f"  {n:<24} {t:<36} {u or ''}" for n, t, u in sv.recomputed]
    return "\n".join(out)
