"""The diff's compile-time level: two graphs' compile times per stage, with the change.

Each graph's time comes from its session's ``compile_time`` messages (session.compile_time.graph_times: torch's
``dynamo_timed`` events, the pauses at our stops and our hooks taken out).  One change per stage either graph
spent time in (or a cache hit skipped), the total first; the level counts as changed when the total moved by
more than :data:`inductor_step.session.diff.model.TIME_CHANGE` or a cache verdict differs.
"""

from __future__ import annotations

from typing import Any

from inductor_step.session.diff.model import TIME_CHANGE, Change, DiffSide, Level


def graph_compile_time(session: Any, key: str) -> Any:
    """Graph ``key``'s :class:`inductor_step.session.compile_time.GraphTime` in ``session``, None when it has none
    (recorded before ``INDUCTOR_STEP_COMPILE_TIME=off``, or compiled by another backend)."""
    from inductor_step.session.compile_time import graph_times  # noqa: PLC0415

    msgs = getattr(session, "compile_times", None)
    if not msgs:
        return None
    cache = getattr(session, "cache", None)
    if cache is not None and hasattr(cache, "get"):
        try:
            times = cache.get(("diff_ctime", len(msgs)), (), lambda: graph_times(session))
        except TypeError:
            times = graph_times(session)
    else:
        times = graph_times(session)
    return times.get(key)


def _side(g: Any, stage: str) -> float | str | None:
    if g is None:
        return None
    if stage == "total":
        return g.total_ms
    return "cache hit" if stage in g.skipped() else g.stages.get(stage)


def change_text(va: float | str | None, vb: float | str | None) -> str:
    """``12.0 ms -> 30.5 ms (+154%)``; a side a cache skipped reads "cache hit", a side with no time "-"."""
    from inductor_step.session.compile_time import fmt_time  # noqa: PLC0415

    fa = va if isinstance(va, str) else fmt_time(va)
    fb = vb if isinstance(vb, str) else fmt_time(vb)
    pct = f" ({(vb - va) / va * 100:+.0f}%)" if isinstance(va, float) and va and isinstance(vb, float) else ""
    return f"{fa} -> {fb}{pct}"


def diff_compile_time(a: DiffSide, b: DiffSide, level: Level) -> None:
    """Fill ``level`` (key "ctime") with graph ``a``'s and ``b``'s compile times, stage by stage."""
    from inductor_step.session.compile_time import LABELS, ORDER, fmt_time  # noqa: PLC0415

    ga, gb = a.compile_time, b.compile_time
    if ga is None and gb is None:
        level.missing = ("neither graph has compile times (a session recorded before inductor-step measured them, "
                         "or with INDUCTOR_STEP_COMPILE_TIME=off)")
        return
    level.informational = True
    level.notes.append(f"the compile's own time {change_text(_side(ga, 'total'), _side(gb, 'total'))}: torch's "
                       f"dynamo_timed events, the pauses at inductor-step's stops and its hooks taken out")
    for side, g, other in (("A", ga, a), ("B", gb, b)):
        if g is None:
            level.flagged = True
            level.notes.append(
                f"{side} has no compile of its own of this graph: " + (
                    "its session measured compile times, so it was compiled with another (an AOTAutograd cache hit "
                    "loads a backward with its forward) or not at all" if other.compile_times_measured else
                    "its session was recorded before inductor-step measured them, or with "
                    "INDUCTOR_STEP_COMPILE_TIME=off"))
    if ga is not None and gb is not None and ga.total_ms and abs(gb.total_ms - ga.total_ms) / ga.total_ms > TIME_CHANGE:
        level.flagged = True
    for stage in ["total"] + ORDER:
        va, vb = _side(ga, stage), _side(gb, stage)
        if not (isinstance(va, float) or isinstance(vb, float)) and not (va or vb):
            continue
        kind = "changed" if va is not None and vb is not None else ("added" if va is None else "removed")
        label = "whole compile" if stage == "total" else LABELS.get(stage, stage)
        top = [(g.events.get(stage) or []) if g else [] for g in (ga, gb)] if stage != "total" else [[], []]
        text = "\n".join(f"{side}: " + ", ".join(f"{n} {fmt_time(ms)}" for n, ms in sorted(ev, key=lambda x: -x[1])[:4])
                         for side, ev in zip("AB", top) if ev)
        level.changes.append(Change(kind, stage, stage, f"{change_text(va, vb)} · {label}", text=text))
    ca, cb = (ga.cache if ga else {}), (gb.cache if gb else {})
    for which in sorted(set(ca) | set(cb)):
        sa, sb = (ca.get(which) or {}).get("status"), (cb.get(which) or {}).get("status")
        if sa != sb:
            level.flagged = True
            reason = (cb.get(which) or {}).get("reason") or (ca.get(which) or {}).get("reason")
            level.changes.append(Change("changed", f"{which} cache", f"{which} cache",
                                        f"{sa or '-'} -> {sb or '-'}" + (f" ({reason})" if reason else "")))
