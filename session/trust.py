"""Whether a timed figure can be trusted, said beside it: a run's verdict and a comparison's machine check.

The tracer judges every CPU figure it times (tracer.timing.contention: the run-queue wait of its threads per
round; the rounds' agreement): a ``run`` message carries ``reliable``/``unreliable``/``verdicts`` (sessions
recorded before ``settled``, ``contended``, ``graph_rounds.rounds_stable`` and ``warnings``).
:func:`unreliable` turns either into one line; every view that shows a time from the run (pane 7, the ledger,
the diff, the what-if result, the headless line, REPORT.md) puts it beside the figure.

:func:`machine_moved` compares two runs of one graph (an original and its what-if variant, or two sessions):
when the eager reference -- which no Inductor setting changes -- moved by as much as the compiled time, the
machine moved, not the setting.
"""

from __future__ import annotations

from typing import Any

from inductor_step.session.format import GraphKey

AGAIN = "press r to time again"
#: eager moved by at least this factor (either way) and the compiled time by no more than twice as much
#: (in log terms): the machine's change, not the setting's
EAGER_MOVED = 1.25


def unreliable(run: dict[str, Any] | None) -> str | None:
    """One line saying why ``run``'s times are not reliable (ending in :data:`AGAIN`), None when they are
    (or the run failed: its error says so)."""
    if not run or run.get("error"):
        return None
    if run.get("unreliable"):
        return str(run["unreliable"])
    legacy = (run.get("reliable") is False or run.get("settled") is False or run.get("contended")
              or (run.get("graph_rounds") or {}).get("rounds_stable") is False)
    if not legacy:
        return None
    warns = run.get("warnings") or []
    why = warns[0] if warns else "the compiled graph's timing rounds never agreed"
    return f"{why}; {AGAIN}"


def verdict_word(run: dict[str, Any] | None) -> str:
    """``"reliable"``, ``"NOT RELIABLE"`` or ``"not judged"`` (no run, a GPU run with no rounds)."""
    if not run or run.get("error"):
        return "not judged"
    if unreliable(run):
        return "NOT RELIABLE"
    return "reliable" if (run.get("reliable") or run.get("settled")) else "not judged"


def unreliable_runs(runs: dict[str, dict[str, Any]]) -> dict[str, str]:
    """{graph key: :func:`unreliable` line} over a session's runs, in order."""
    return {k: why for k, r in runs.items() if (why := unreliable(r))}


def tag(run: dict[str, Any] | None, short: bool = False) -> str:
    """``"  [NOT RELIABLE: ...]"`` beside a figure, ``""`` when the run is reliable."""
    why = unreliable(run)
    if not why:
        return ""
    return "  [NOT RELIABLE: press r to time again]" if short else f"  [NOT RELIABLE: {why}]"


def _ratio(a: Any, b: Any) -> float | None:
    return (b / a) if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a > 0 and b > 0 else None


def machine_moved(before: dict[str, Any] | None, after: dict[str, Any] | None) -> str | None:
    """A sentence when the eager time moved from ``before`` to ``after`` (two runs of one graph) by at least
    :data:`EAGER_MOVED` and the compiled time by no more than that again: the machine changed between the two
    timings, so the compiled change is not the setting's.  None when eager held still (or is missing)."""
    import math  # noqa: PLC0415

    e, c = _ratio((before or {}).get("eager_ms"), (after or {}).get("eager_ms")), \
        _ratio((before or {}).get("compiled_ms"), (after or {}).get("compiled_ms"))
    if e is None or c is None or max(e, 1 / e) < EAGER_MOVED:
        return None
    # compiled moved in the same direction and by no more than about the eager's factor (squared): the machine
    if (e > 1) == (c > 1) and abs(math.log(c)) <= 2 * abs(math.log(e)) + math.log(EAGER_MOVED):
        return (f"the machine moved, not the setting: the eager reference, which no Inductor setting changes, went "
                f"{before['eager_ms']:.4f} -> {after['eager_ms']:.4f} ms ({e:.2f}x) while the compiled graph went "
                f"{c:.2f}x; {AGAIN} (both sides are timed round by round)")
    return (f"the eager reference moved too ({e:.2f}x, no Inductor setting changes it): part of the compiled "
            f"change ({c:.2f}x) is the machine's; {AGAIN}")


#: the rounds' original / variant ratios spread wider than this factor (largest / smallest): no effect is said
EFFECT_SPREAD = 3.0
#: the per-round ratios' median and the medians' ratio point opposite ways by more than this: no effect is said
EFFECT_DISAGREE = 1.05


def setting_effect(il: dict[str, Any]) -> tuple[float | None, str]:
    """A what-if's interleaved rounds (``il``: :class:`session.format.Interleaved`) -> ``(effect, why_not)``: the
    setting's effect (original / variant, the median of each round's ratio), or None and why it cannot be judged: the rounds' ratios spread wider than :data:`EFFECT_SPREAD`, or the effect points the other way
    from the medians' own ratio (original median / variant median).  ``(None, "")`` where nothing was timed."""
    import math  # noqa: PLC0415

    ratios = [o / v for o, v in zip(il.get("original_rounds_ms") or [], il.get("variant_rounds_ms") or [])
              if isinstance(o, (int, float)) and isinstance(v, (int, float)) and o > 0 and v > 0]
    eff = il.get("speedup_vs_original")
    eff = eff if isinstance(eff, (int, float)) and eff > 0 else None
    om, vm = il.get("original_ms"), il.get("variant_ms")
    med = om / vm if isinstance(om, (int, float)) and isinstance(vm, (int, float)) and om > 0 and vm > 0 else None
    if eff is None:
        return None, ""
    no = "the setting's effect cannot be judged from these rounds"
    if ratios and max(ratios) / min(ratios) > EFFECT_SPREAD:
        return None, (f"{no}: they disagree (original / variant per round from {min(ratios):.3g} to "
                      f"{max(ratios):.3g})")
    if med is not None and (eff - 1) * (med - 1) < 0 and max(abs(math.log(eff)), abs(math.log(med))) > \
            math.log(EFFECT_DISAGREE):
        return None, f"{no}: the rounds' ratios ({eff:.2f}x) and the medians ({med:.2f}x) point opposite ways"
    return eff, ""


def interleaved_text(run: dict[str, Any] | None) -> str | None:
    """A what-if variant's interleaved timing (``run["interleaved"]``: the variant, the original and eager
    timed round by round in one process, :func:`tracer.whatif.interleaved_rounds`) in one line."""
    il = (run or {}).get("interleaved") or {}
    if not il:
        return None
    if il.get("unavailable"):
        return f"interleaved timing: {il['unavailable']}"
    f = lambda k: f"{il[k]:.4f} ms" if isinstance(il.get(k), (int, float)) else "-"  # noqa: E731
    out = (f"timed round by round in one process ({il.get('rounds')} rounds): variant {f('variant_ms')}, original "
           f"{f('original_ms')}, eager {f('eager_ms')}")
    effect, why_not = setting_effect(il)
    if effect is not None:
        out += f"; the setting's effect {effect:.2f}x (original / variant)"
    elif why_not:
        out += f"; {why_not}" + (f"; {AGAIN}" if il.get("reliable") is not False else "")
    if il.get("reliable") is False:
        out += (f"  [NOT RELIABLE: the threads waited for a core {100 * (il.get('wait_share') or 0):.0f}% of the "
                f"time in these rounds; {AGAIN}]")
    return out


__all__ = ["AGAIN", "not_reliable_lines", "report_lines", "EAGER_MOVED", "interleaved_text", "machine_moved", "tag", "unreliable", "unreliable_runs",
           "verdict_word", "setting_effect"]


def not_reliable(verdict: dict[str, Any] | None, rounds_stable: bool | None = None) -> str:
    """Why one timed figure is not reliable, as the figure's tag says it: ``"NOT RELIABLE (its threads waited for a
    core 41% of the time)"`` when its ``verdict`` (a run's ``verdicts[which]``, tracer.timing.contention.judge)
    says so, ``"NOT RELIABLE (the rounds did not agree)"`` when ``rounds_stable`` is False (the compiled graph's
    rounds, tracer.timing), else ``""``."""
    if verdict and verdict.get("reliable") is False:
        return f"NOT RELIABLE (its threads waited for a core {100 * (verdict.get('wait_share') or 0):.0f}% of the time)"
    if rounds_stable is False:
        return "NOT RELIABLE (the rounds did not agree)"
    return ""


def figure_tag(run: dict[str, Any] | None, which: str) -> str:
    """The verdict beside one figure of ``run`` (``which``: ``"compiled"``, ``"eager"``, ``"kernels"``), for
    pane 7: ``"  NOT RELIABLE (its threads waited for a core 41% of the time)"`` (:func:`not_reliable`),
    ``"  (reliable: waited 0.3%)"``, or, for a run recorded before per-figure verdicts, the run's own judgement;
    ``""`` where none was made."""
    v = ((run or {}).get("verdicts") or {}).get(which)
    bad = not_reliable(v, (run or {}).get("graph_rounds", {}).get("rounds_stable") if which == "compiled" else None)
    if bad:
        return f"  {bad}"
    if v and v.get("reliable"):
        return f"  (reliable: its threads waited for a core {100 * (v.get('wait_share') or 0):.1f}% of the time)"
    if not v and unreliable(run):
        return "  NOT RELIABLE"
    return ""


def kernels_unreliable(run: dict[str, Any] | None) -> str | None:
    """Why ``run``'s per-kernel times (each kernel timed alone, the ``kernels`` rows) are not reliable, or None:
    their own verdict (``verdicts["kernels"]``, tracer.timing.contention.judge) said so, the run's times did not
    settle (``gap_cause == "unsettled"``), or a run recorded before per-figure verdicts was judged not reliable as
    a whole (:func:`unreliable`).  The share, GB/s and TFLOP/s of each row are derived from these times."""
    if not run or run.get("error"):
        return None
    v = (run.get("verdicts") or {}).get("kernels")
    if v and v.get("reliable") is False:
        return str(v.get("text") or "kernel times not reliable: other processes held the cores")
    if run.get("gap_cause") == "unsettled":
        return "the times did not settle (rounds disagreed or other processes competed for the cores)"
    if not v:
        return unreliable(run)
    return None


def not_reliable_lines(session: Any) -> list[str]:
    """The ledger's first lines (pane 9, the headless summary, REPORT.md): one saying how many timed graphs were
    judged not reliable and what that means for its rankings, then one per such graph; empty when none was."""
    timed = {k: r for k, r in session.runs.items() if not r.get("error") and r.get("kernels")}
    bad = unreliable_runs(timed)
    if not bad:
        return []
    return [f"times NOT RELIABLE for {len(bad)} of {len(timed)} timed graph(s): the rankings and any "
            f"'slower than eager' below may be the machine's noise, not the code's; {AGAIN}"] + \
        [f"{k}: {why}" for k, why in bad.items()]


def report_lines(runs: dict[str, dict[str, Any]]) -> list[str]:
    """REPORT.md's lines under its run table (``runs``: graph key -> run, variants under their own keys): the
    reason for each time judged not reliable, then each what-if variant against its original (the interleaved
    rounds, the eager reference's move, static shapes)."""
    from inductor_step.session.whatif import judgement_lines  # noqa: PLC0415

    out: list[str] = []
    bad = unreliable_runs(runs)
    if bad:
        out += ["Times judged **not reliable** (measured while timing: the timing threads' wait for a core, the "
                "rounds' agreement); time them again before acting on them:"]
        out += [f"- `{k}`: {why}" for k, why in bad.items()] + [""]
    for key, r in runs.items():
        base = str(GraphKey.parse(key).original)
        if base != key and base in runs:
            lines = [x for x in judgement_lines(runs[base], r) if "timing NOT RELIABLE" not in x]
            if lines:
                out += [f"`{key}` against `{base}`:"] + [f"- {x}" for x in lines] + [""]
    return out
