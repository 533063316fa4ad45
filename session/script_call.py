"""The script's compiled call timed whole (a ``run`` message's ``script_call``), as lines for pane 7, headless and exports."""

from __future__ import annotations

from typing import Any

from inductor_step.session.trust import not_reliable

#: a graph whose compiled time is over this many times its whole call's (which runs it, plus guards and wrappers)
#: cannot be right: beside two busy loops BERT's graph read 284 ms against its call's 0.41 ms (BENCHMARKS.md)
CALL_BELOW_GRAPH = 1.5


def _tag(fig: dict[str, Any], which: str) -> str:
    """The tag beside the script call's ``which`` figure (``"compiled"``, ``"eager"``): why it is not reliable
    (:func:`inductor_step.session.trust.not_reliable`, from the figure's own verdicts and rounds), "" when it is."""
    bad = not_reliable((fig.get("verdicts") or {}).get(which),
                       fig.get("rounds_stable") if which == "compiled" else None)
    return f" {bad}" if bad else ""


def script_call_lines(run: dict[str, Any]) -> list[str]:
    """``run["script_call"]`` (tracer.timing.script_call.time_call) as lines: the callable torch.compile returned,
    compiled against ``torch.compiler.set_stance("force_eager")`` in ms with their speedup and verdicts, and
    what was timed; or why it is missing.  ``[]`` where the run has none (a backward graph runs outside every
    call; sessions recorded before this figure)."""
    fig = run.get("script_call")
    if not isinstance(fig, dict):
        return []
    name = fig.get("name") or "?"
    graphs = fig.get("graphs") or []
    others = f"; its call also runs {', '.join(g for g in graphs if g != _label(run))}" if len(graphs) > 1 else ""
    if fig.get("missing") or not isinstance(fig.get("compiled_ms"), (int, float)):
        return [f"script's call   {name}: not timed: {fig.get('missing') or 'no figure'}"]
    c, e = fig["compiled_ms"], fig.get("eager_ms")
    out = [f"script's call   {name}, whole: compiled {c:.4f} ms{_tag(fig, 'compiled')}, "
           + (f"eager {e:.4f} ms{_tag(fig, 'eager')}, speedup {e / c:.2f}x"
              + (" (from times not reliable)" if _tag(fig, "compiled") or _tag(fig, "eager") else "")
              if isinstance(e, (int, float)) and c > 0 else "eager not timed")
           + f" ({fig.get('calls', '?')} call(s) by the script{others})"]
    if fig.get("how"):
        out.append(f"  script's call: {fig['how']}")
    g = run.get("compiled_ms")
    if isinstance(g, (int, float)) and c > 0 and g > CALL_BELOW_GRAPH * c:
        out.append(f"  they disagree: this graph alone read {g:.4f} ms, {g / c:.1f}x the whole call that runs it: "
                   "at least one of the two is wrong (timed apart: the graph in the timing worker, the call in the "
                   "script's process; on a busy machine one may have waited for a core); press r to time again")
    return out



def _label(run: dict[str, Any]) -> str:
    return f"{run.get('compile_id')} {run.get('graph_kind')}"
