"""A graph's memory in words (no torch, no Textual): its plan (session.memory) and saved tensors (session.memory_saved) as the one-line summary, the linked view's line, the headless lines, the diff's line and REPORT.md's section."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inductor_step.session.memory import ESTIMATE, SOURCE, Plan, fmt_bytes, plan
from inductor_step.session.memory_saved import saved_for_backward

#: what "above the call's start" is (Plan.high_water), in words
HIGH_WATER = ("above the call's start: the most bytes allocated beyond those resident when the call began (the "
              "graph's own buffers, less the saved activations a backward frees by del), what "
              "torch.cuda.max_memory_allocated() minus memory_allocated() before one call measures")


@dataclass
class GraphMemory:
    """A graph's memory: its :class:`Plan` (None without a Python wrapper) and, for a forward, what it saves for
    the backward (session.memory_saved.Saved)."""

    key: str
    plan: Plan | None
    saved: Any  # session.memory_saved.Saved | None
    #: the peak the timing worker measured (tracer.timing.memory.measured_peak, bytes), None where not measured
    measured: int | None = None
    #: the run's whole ``memory`` dict (tracer.timing.memory.measured_peak: ``source``, ``eager``, ``eager_saved``)
    run_memory: dict[str, Any] | None = None

    def summary(self) -> str:
        """One line: ``[0/0] forward planned peak 12.3 MB at buf7 (triton_poi_...), 4 buffers live; saved for
        backward 8.1 MB (12 tensors)`` (planned from the wrapper; not measured)."""
        p, s = self.plan, self.saved
        if p is None:
            text = f"{self.key}: no plan (no Python wrapper recorded)"
        else:
            at = f" at {p.peak_buffer}" + (f" ({p.peak_kernel})" if p.peak_kernel else "") if p.peak_buffer else ""
            text = f"{self.key} planned peak {fmt_bytes(p.peak)}{at}, {len(p.live_at_peak)} buffers live"
            if p.inputs_bytes:
                text += f", inputs {fmt_bytes(p.inputs_bytes)}"
            if p.inductor_estimate is not None:
                text += f" (Inductor's estimate {fmt_bytes(p.inductor_estimate)})"
            if self.measured is not None:
                text += (f"; measured {fmt_bytes(self.measured)} ({short_source(self.run_memory)}, one call in the "
                         f"timing worker, {self.measured / p.peak if p.peak else 0:.3f} of the planned peak)")
            text += eager_peak_note(self.run_memory)
            if p.released or p.released_outputs:
                text += (f"; {fmt_bytes(p.high_water)} above the call's start (its del frees "
                         f"{fmt_bytes(p.released)} of saved activations"
                         + (f"; {fmt_bytes(p.high_water_outputs_dropped)} where the caller dropped the outputs also "
                            f"saved, {fmt_bytes(p.released_outputs)}" if p.released_outputs else "") + ")")
        if s is not None and s.tensors:
            text += (f"; saved for backward {fmt_bytes(s.storage_bytes)} ({len(s.tensors)} tensors"
                     + (f", {fmt_bytes(s.inputs_bytes)} of them inputs" if s.inputs_bytes else "") + ")")
            text += "; " + eager_saved_note(self.run_memory)
        return text


def short_source(memory: dict[str, Any] | None) -> str:
    """Where a measured peak came from, in a few words: ``CUDA allocator`` or ``CPU profiler memory events``."""
    src = str((memory or {}).get("source") or (memory or {}).get("how") or "")
    return "CPU profiler memory events" if src.startswith("torch.profiler") else "CUDA allocator" if src else "?"


def eager_peak_note(memory: dict[str, Any] | None) -> str:
    """``; eager 32.8 kB for the same graph (CPU profiler memory events)`` from a run's ``memory["eager"]``
    (tracer.timing.memory.eager_peak), ``; eager peak not measured (why)``, or "" where the run has none."""
    e = (memory or {}).get("eager")
    if not isinstance(e, dict):
        return ""
    if isinstance(e.get("peak_bytes"), int):
        return f"; eager {fmt_bytes(e['peak_bytes'])} for the same graph ({short_source(e)})"
    return f"; eager peak not measured ({e.get('not_measured') or 'no reason recorded'})"


def eager_saved_note(memory: dict[str, Any] | None) -> str:
    """``eager autograd saves 18.4 kB in 2 storages (parameters 32.8 kB, graph inputs 4.1 kB apart;
    saved_tensors_hooks on Dynamo's graph)`` (bytes of distinct storages) from a run's ``memory["eager_saved"]`` (tracer.timing.memory.eager_saved), or why not."""
    e = (memory or {}).get("eager_saved")
    if not isinstance(e, dict):
        if memory is None:
            return "eager autograd's saved bytes not measured (the run stage measures them: --run, or r)"
        if "eager" not in memory:
            return "eager autograd's saved bytes not measured (this recording's timing predates them)"
        return "eager autograd's saved bytes not measured (the timing ran no training forward of Dynamo's graph)"
    if not isinstance(e.get("storage_bytes"), int):
        return f"eager autograd's saved bytes not measured ({e.get('not_measured') or 'no reason recorded'})"
    return (f"eager autograd saves {fmt_bytes(e['storage_bytes'])} in {e.get('storages')} storages (parameters "
            f"{fmt_bytes(e.get('params_bytes'))}, graph inputs {fmt_bytes(e.get('inputs_bytes'))} apart; "
            "saved_tensors_hooks on Dynamo's graph)")


def measured_lines(memory: dict[str, Any] | None) -> list[str]:
    """The compiled and the eager peak in full (pane M's overview): each figure with its source and how it was
    taken, or ``not measured (why)``; [] where the graph was not timed."""
    if not memory:
        return []
    out = []
    if isinstance(memory.get("peak_bytes"), int):
        out.append(f"measured (compiled): {fmt_bytes(memory['peak_bytes'])} ({memory['peak_bytes']} bytes; "
                   f"{memory.get('how') or memory.get('source', '')})")
    elif memory.get("not_measured"):
        out.append(f"measured (compiled): not measured ({memory['not_measured']})")
    e = memory.get("eager")
    if isinstance(e, dict) and isinstance(e.get("peak_bytes"), int):
        out.append(f"measured (eager, same graph): {fmt_bytes(e['peak_bytes'])} ({e['peak_bytes']} bytes; "
                   f"{e.get('how', '')}; {e.get('source', '')})")
    elif isinstance(e, dict):
        out.append(f"measured (eager, same graph): not measured ({e.get('not_measured')})")
    return out


def graph_memory(session: Any, key: str) -> GraphMemory:
    """:class:`GraphMemory` of graph ``key`` (session.store.Store ``session``)."""
    p = plan(session, key)
    run = (getattr(session, "runs", {}) or {}).get(key) or {}
    rm = run.get("memory") if isinstance(run.get("memory"), dict) else None
    measured = (rm or {}).get("peak_bytes")
    return GraphMemory(key, p, saved_for_backward(session, key, p), measured if isinstance(measured, int) else None,
                       rm)


def buffer_line(p: Plan | None, name: str) -> str:
    """One line on buffer ``name`` for the linked view (pane 8): its bytes, how it got its storage, its lifetime in
    wrapper lines and whether it is live at the planned peak; "" when the plan does not hold it."""
    b = p.buffers.get(name) if p is not None else None
    if p is None or b is None:
        return ""
    own = p.buffers.get(b.storage, b)
    end = "returned" if own.returned else (f"del at {own.freed}" if own.freed else "to the end")
    how = b.how if b.storage == b.name else f"{b.how} of {b.storage}'s storage"
    live = "yes" if b.storage in p.live_at_peak else "no"
    return (f"# memory: {name} {fmt_bytes(own.bytes)} ({how}), wrapper lines {b.line}-{end}; live at the planned "
            f"peak ({fmt_bytes(p.peak)} at {p.peak_buffer}): {live} (pane M; planned from the wrapper, not measured)")


def summary_lines(session: Any) -> list[str]:
    """``memory: <GraphMemory.summary>`` per graph with a plan, for --headless (planned; not measured), then
    ``memory: what if ...`` per memory setting's variant (session.memory_whatif)."""
    from inductor_step.session.memory_whatif import lines  # noqa: PLC0415 - it imports this module

    out = []
    for key in getattr(session, "graphs", []):
        gm = graph_memory(session, key)
        if gm.plan is not None:
            out.append("memory: " + gm.summary())
    return out + ["memory: " + x for x in lines(session)]


def _changes(a: GraphMemory, b: GraphMemory) -> list[str]:
    """What moved between two plans: allocations and reuses counted, where the peak is, the saved tensors by their
    FX node (comparable across two compiles of one model, unlike ``bufN`` names)."""
    pa, pb = a.plan, b.plan
    assert pa is not None and pb is not None
    out = []
    for label, how in (("allocations", ("allocated", "extern")), ("reuses", ("reuse",))):
        na = sum(1 for x in pa.buffers.values() if x.how in how)
        nb = sum(1 for x in pb.buffers.values() if x.how in how)
        if na != nb:
            out.append(f"{label} {na} -> {nb}")
    if (pa.peak_buffer, pa.peak_kernel) != (pb.peak_buffer, pb.peak_kernel):
        out.append(f"peak at {pa.peak_buffer or '-'} ({pa.peak_kernel or '-'}) -> {pb.peak_buffer or '-'} "
                   f"({pb.peak_kernel or '-'})")
    if pa.high_water != pb.high_water and (pa.released or pb.released):
        out.append(f"above the call's start {fmt_bytes(pa.high_water)} -> {fmt_bytes(pb.high_water)}")
    ta = {t.fx_node: t.bytes for t in (a.saved.tensors if a.saved is not None else [])}
    tb = {t.fx_node: t.bytes for t in (b.saved.tensors if b.saved is not None else [])}
    gone = [f"-{n} {fmt_bytes(ta[n])}" for n in ta if n not in tb]
    new = [f"+{n} {fmt_bytes(tb[n])}" for n in tb if n not in ta]
    if gone or new:
        more = len(gone) + len(new) - 6
        out.append(f"saved {len(ta)} -> {len(tb)} tensors: " + ", ".join((new + gone)[:6])
                   + (f", {more} more" if more > 0 else ""))
    return out


def figures(gm: GraphMemory | None) -> dict[str, int | None]:
    """A graph's memory figures in bytes, None where not known: ``planned`` (the plan's peak), ``saved`` (the
    distinct storages a forward saves for its backward, planned), ``measured`` (the compiled call's peak, timing
    worker), ``eager`` (eager's peak for the same graph) and ``eager_saved`` (eager autograd's saved storages)."""
    rm = (gm.run_memory if gm is not None else None) or {}
    e, es = rm.get("eager"), rm.get("eager_saved")
    sv = gm.saved if gm is not None else None
    return {"planned": gm.plan.peak if gm is not None and gm.plan is not None else None,
            "saved": sv.storage_bytes if sv is not None and sv.tensors else None,
            "measured": gm.measured if gm is not None else None,
            "eager": e.get("peak_bytes") if isinstance(e, dict) and isinstance(e.get("peak_bytes"), int) else None,
            "eager_saved": es.get("storage_bytes") if isinstance(es, dict)
            and isinstance(es.get("storage_bytes"), int) else None}


def pair_text(a: int | None, b: int | None) -> str:
    """``2.2 MB in both``, ``262.1 kB -> 393.2 kB (+50%)``, ``? -> 393.2 kB`` (``?``: not known on that side)."""
    if a == b:
        return f"{fmt_bytes(a)} in both"
    if a is not None and b is not None and fmt_bytes(a) == fmt_bytes(b):  # too close for the short form
        return f"{fmt_bytes(a)} -> {fmt_bytes(b)} ({b - a:+d} B)"
    pct = f" ({(b - a) / a * 100:+.0f}%)" if a and b is not None else ""
    return f"{fmt_bytes(a)} -> {fmt_bytes(b)}{pct}"


def _ratio(x: int | None, of: int | None) -> str:
    return f"x{x / of:.2f}" if x is not None and of else "?"


def _measured_text(a: GraphMemory, b: GraphMemory, fa: dict[str, int | None], fb: dict[str, int | None]) -> str:
    """The measured half of the diff's line: the compiled peak, eager's peak and eager autograd's saved bytes of A
    and B with where they came from; "" where neither side was measured."""
    if all(fa[k] is None and fb[k] is None for k in ("measured", "eager", "eager_saved")):
        return ""
    text = f"measured peak {pair_text(fa['measured'], fb['measured'])}, eager's {pair_text(fa['eager'], fb['eager'])}"
    if fa["eager_saved"] is not None or fb["eager_saved"] is not None:
        text += f"; eager autograd saves {pair_text(fa['eager_saved'], fb['eager_saved'])}"
    srcs = sorted({short_source(m) for m in (a.run_memory, b.run_memory) if m and short_source(m) != "?"})
    return text + f" ({' / '.join(srcs) or 'timing worker'}, one call each in the timing worker)"


def _against_eager(fa: dict[str, int | None], fb: dict[str, int | None]) -> list[str]:
    """What moved against eager: the compiled peak over eager's, the saved bytes over eager autograd's (A -> B)."""
    out = []
    for label, x, of in (("compiled peak against eager's", "measured", "eager"),
                         ("saved for backward against eager autograd's", "saved", "eager_saved")):
        ra, rb = _ratio(fa[x], fa[of]), _ratio(fb[x], fb[of])
        if ra != rb and "?" not in (ra, rb):
            out.append(f"{label} {ra} -> {rb}")
    return out


def diff_note(a: GraphMemory | None, b: GraphMemory | None, always: bool = False) -> str:
    """The diff's line on two graphs' memory: ``memory: planned peak 1.0 kB -> 2.1 kB (+100%); saved for backward
    ...`` and, where the timing worker measured either side, ``measured peak ..., eager's ...; eager autograd saves
    ...`` (:func:`figures`), then ``what changed: allocations 7 -> 5, saved 5 -> 4 tensors: -mul_2 16.4 kB,
    compiled peak against eager's x0.67 -> x1.00`` when a figure differs; "" when all agree (``always``: then
    ``memory: planned peak 1.0 kB in both ...``) or a side has no plan."""
    if a is None or b is None or a.plan is None or b.plan is None:
        return ""
    fa, fb = figures(a), figures(b)
    pa, pb, sa, sb = fa["planned"], fb["planned"], fa["saved"], fb["saved"]
    measured = _measured_text(a, b, fa, fb)
    how = " (planned from the wrappers' allocations" + ("" if measured else "; not measured") + ")"
    tail = f"; {measured}" if measured else ""
    if fa == fb:
        if not always:
            return ""
        saved = f"; saved for backward {fmt_bytes(sa)}" if sa is not None else ""
        return f"memory: planned peak {fmt_bytes(pa)}{saved} in both{how}{tail}"
    text = f"memory: planned peak {pair_text(pa, pb)}"
    if sa is not None or sb is not None:
        text += f"; saved for backward {fmt_bytes(sa)} -> {fmt_bytes(sb)}"
    changes = _changes(a, b) + _against_eager(fa, fb)
    return text + how + tail + (f"; what changed: {'; '.join(changes)}" if changes else "")


def report_section(session: Any) -> str:
    """REPORT.md's "## Memory" section: per graph the planned peak, where, what is live, inputs and what a forward
    saves for its backward (its largest saved tensors with their user lines); "" when no graph has a plan."""
    rows, saved, measured = [], [], []
    for key in getattr(session, "graphs", []):
        p = plan(session, key)
        if p is None:
            continue
        rm = ((getattr(session, "runs", {}) or {}).get(key) or {}).get("memory")
        rm = rm if isinstance(rm, dict) else None
        if rm:
            measured.append(f"- `{key}`: " + "; ".join(measured_lines(rm)))
        live = ", ".join(f"{n} {fmt_bytes(p.buffers[n].bytes)}" for n in p.live_at_peak[:3] if n in p.buffers)
        rows.append(f"| `{key}` | {fmt_bytes(p.peak)} | {fmt_bytes(p.high_water)} | `{p.peak_buffer or '-'}` "
                    f"(`{p.peak_kernel or '-'}`) | {len(p.live_at_peak)}: {live} | {fmt_bytes(p.inputs_bytes)} |")
        sv = saved_for_backward(session, key, p)
        if sv is not None and sv.tensors:
            top = "; ".join(f"`{t.fx_node}` {fmt_bytes(t.bytes)}" + (f" ({t.user_line.rsplit('/', 1)[-1]})"
                                                                       if t.user_line else "") for t in sv.tensors[:3])
            saved.append(f"- `{key}` saves {fmt_bytes(sv.storage_bytes)} for its backward ({len(sv.tensors)} "
                         f"tensors, {fmt_bytes(sv.inputs_bytes)} of them graph inputs); largest: {top}; "
                         f"{len(sv.recomputed)} nodes recomputed in the backward; {eager_saved_note(rm)}")
    if not rows:
        return ""
    from inductor_step.session.memory_whatif import report_lines  # noqa: PLC0415 - it imports this module

    return "\n".join(["## Memory", "", f"{SOURCE}. {ESTIMATE}.", "",
                      "| graph | planned peak | above the call's start | at (kernel) | live there, largest first | "
                      "inputs |", "|---|---|---|---|---|---|", *rows, "", HIGH_WATER + ".", "",
                      *(["Measured by the timing worker, one call each (compiled, and eager for the same graph):", "",
                         *measured, ""] if measured else []), *saved,
                      *report_lines(session), ""])

