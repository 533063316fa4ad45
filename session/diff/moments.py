"""When and how the two sides of a diff were timed: a diff's times are a comparison only when the
machine was the same for both.  No Textual, no torch.

Three cases, said at the top of the diff (:func:`top_notes`) and in its timings level (:func:`timing_notes`):

- a what-if variant and its original: the timing worker times them round by round with the run
  (``run["interleaved"]``, session.trust.interleaved_text); nothing more is said here;
- two graphs of one session (a recompile ``[0/1]`` against ``[0/0]``): each was timed on its own, at its own
  moment, until ``r`` in the diff view times both round by round in one process (tracer.pair_timing; the
  ``pair_timing`` message, :func:`rounds_text`);
- two recorded sessions (``inductor-step diff A B``): they cannot be timed together; the top says that the
  times were taken at different moments, when each was measured (the session header's wall-clock ``time``
  plus the run message's ``t``) and each side's contention verdict (session.trust).

In every case where the eager reference -- the post-grad graph run op by op, which neither a recompile's
guards nor the session's code path changes for inputs of one size -- moved by as much as the compiled time,
the machine moved, not the change (:func:`moved_text`).  Where the two sides ran on inputs of different sizes
(``input_sizes``) eager may move with the work; that is said instead.
"""

from __future__ import annotations

import datetime
import math
from typing import Any

from inductor_step.session import trust

#: the per-graph times of a pair are "far apart" from this many seconds between their timings
FAR_S = 60.0
#: one side's rounds "disagree" when the slowest is this many times the fastest
ROUNDS_SPREAD = 2.0


def measured_at(run: dict[str, Any] | None, header: dict[str, Any] | None) -> float | None:
    """The wall-clock time (s since the epoch) a message of a session was sent: the header's ``time``
    (``time.time()`` when the agent started) plus the message's ``t`` minus the header's (both seconds since
    the agent started); None when the session does not say."""
    h = header or {}
    if not isinstance((run or {}).get("t"), (int, float)) or not isinstance(h.get("time"), (int, float)):
        return None
    return float(h["time"]) + float(run["t"]) - float(h.get("t") or 0.0)  # type: ignore[index]


def _clock(ts: float | None, day: bool = True) -> str:
    if ts is None:
        return "at a time the session does not record"
    d = datetime.datetime.fromtimestamp(ts, tz=datetime.timezone.utc)
    return "at " + d.strftime("%Y-%m-%d %H:%M:%S UTC" if day else "%H:%M:%S UTC")


def verdict_text(run: dict[str, Any] | None) -> str:
    """One side's contention verdict in a few words: ``"reliable (its threads waited for a core 0.4% of the
    time)"``, ``"NOT RELIABLE (...)"``, or ``"not judged (...)"`` for a run recorded before verdicts."""
    word = trust.verdict_word(run)
    tag = trust.figure_tag(run, "compiled").strip()
    if word == "NOT RELIABLE":
        why = trust.unreliable(run) or ""
        return f"NOT RELIABLE ({why.replace('; ' + trust.AGAIN, '')})" if why else "NOT RELIABLE"
    if word == "reliable":
        return tag.replace("(reliable: ", "reliable (") if tag.startswith("(reliable") else "reliable"
    if str((run or {}).get("device", "cpu")).startswith("cuda"):
        return "not judged (GPU: its rounds, not contention)"
    return "not judged (recorded before contention was measured)"


def _ok(run: dict[str, Any] | None) -> bool:
    return bool(run) and not run.get("error") and isinstance(run.get("compiled_ms"), (int, float))  # type: ignore[union-attr]


def _ratio(a: Any, b: Any) -> float | None:
    return (b / a) if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a > 0 and b > 0 else None


def moved_text(ra: dict[str, Any] | None, rb: dict[str, Any] | None) -> str | None:
    """A sentence when the eager reference moved from A to B by at least :data:`session.trust.EAGER_MOVED` and the
    compiled time by about as much (the machine, not the change); where both runs record the sizes they were
    timed at and those differ, eager may move with the work and the sentence says so.  None otherwise."""
    e = _ratio((ra or {}).get("eager_ms"), (rb or {}).get("eager_ms"))
    c = _ratio((ra or {}).get("compiled_ms"), (rb or {}).get("compiled_ms"))
    if e is None or c is None or max(e, 1 / e) < trust.EAGER_MOVED:
        return None
    sa, sb = (ra or {}).get("input_sizes"), (rb or {}).get("input_sizes")
    if sa and sb and sa != sb:
        return (f"the eager reference moved too ({e:.2f}x, compiled {c:.2f}x), and A and B ran on inputs of "
                f"different sizes ({', '.join(sa[:3])} -> {', '.join(sb[:3])}): part is the work, part may be the "
                "machine; timing them round by round tells")
    same_way = (e > 1) == (c > 1) and abs(math.log(c)) <= 2 * abs(math.log(e)) + math.log(trust.EAGER_MOVED)
    if same_way:
        return (f"the machine moved, not the change: the eager reference, which the change does not touch, went "
                f"{ra['eager_ms']:.4f} -> {rb['eager_ms']:.4f} ms ({e:.2f}x) while the compiled graph went "  # type: ignore[index]
                f"{c:.2f}x: the two were timed at different moments of a changing machine")
    return (f"the eager reference moved too ({e:.2f}x): part of the compiled change ({c:.2f}x) is the machine's")


def rounds_text(msg: dict[str, Any] | None, header: dict[str, Any] | None = None) -> list[str]:
    """A ``pair_timing`` message (A and B timed round by round, tracer.pair_timing) as lines: the result, its
    verdict, what eager's ratio means; ``failed`` or ``timing`` as one line; [] for None."""
    if not msg:
        return []
    if msg.get("status") == "timing":
        return ["timing A and B round by round… (c cancels)"]
    if msg.get("status") == "failed":
        return [f"timing A and B round by round failed: {msg.get('message')}"]
    r = msg.get("rounds") or {}
    ms = lambda k: f"{r[k]:.4f} ms" if isinstance(r.get(k), (int, float)) else "-"  # noqa: E731
    line = (f"timed round by round in one process ({r.get('rounds')} rounds, {_clock(measured_at(msg, header), False)}):"
            f" A {ms('a_ms')}, B {ms('b_ms')}")
    if isinstance(r.get("b_vs_a"), (int, float)):
        line += f", B/A {r['b_vs_a']:.2f}x"
    if isinstance(r.get("eager_b_vs_a"), (int, float)):
        line += f"; eager A {ms('eager_a_ms')}, B {ms('eager_b_ms')}, B/A {r['eager_b_vs_a']:.2f}x"
    if r.get("reliable") is False:
        line += (f"  [NOT RELIABLE: the threads waited for a core {100 * (r.get('wait_share') or 0):.0f}% of the "
                 f"time in these rounds; {trust.AGAIN}]")
    out = [line]
    for side in ("a", "b"):
        xs = [x for x in r.get(f"{side}_rounds_ms") or [] if isinstance(x, (int, float)) and x > 0]
        if xs and max(xs) > ROUNDS_SPREAD * min(xs):
            out.append(f"{side.upper()}'s rounds ranged {min(xs):.4f} to {max(xs):.4f} ms: some rounds were slowed, "
                       "so the median may be the machine's")
    e, c = r.get("eager_b_vs_a"), r.get("b_vs_a")
    if r.get("reliable") is False:
        out.append("the rounds themselves were contended: B/A is not the change's until rounds on a quieter "
                   "machine agree (r here times them again)")
    elif isinstance(e, (int, float)) and isinstance(c, (int, float)) and e > 0:
        if max(e, 1 / e) >= trust.EAGER_MOVED:
            out.append(f"eager moved {e:.2f}x in the same rounds: B's inputs are that much more (or less) work "
                       f"({', '.join((r.get('sizes_a') or [])[:3])} -> {', '.join((r.get('sizes_b') or [])[:3])}); "
                       f"compiled B/A beyond it: {c / e:.2f}x")
        else:
            out.append(f"eager held still in the same rounds ({e:.2f}x): the compiled B/A {c:.2f}x is the change's")
    if r.get("eager_error"):
        out.append(f"eager not timed: {r['eager_error']}")
    return out


def top_notes(key_b: str, ra: dict[str, Any] | None, rb: dict[str, Any] | None,
              header_a: dict[str, Any] | None, header_b: dict[str, Any] | None,
              same_session: bool, rounds: dict[str, Any] | None = None) -> list[str]:
    """What the top of a diff says about its times (``ra``/``rb``: the two ``run`` messages, None when not
    timed; ``rounds``: the pair's ``pair_timing`` message).  A what-if variant's pair gets the judgement lines it
    had before (session.whatif.judgement_lines: its own interleaved rounds)."""
    from inductor_step.session.format import GraphKey  # noqa: PLC0415
    from inductor_step.session.whatif import judgement_lines  # noqa: PLC0415

    if GraphKey.parse(key_b).variant is not None and (rb or {}).get("variant"):
        if _ok(ra) and _ok(rb):
            return [n for n in judgement_lines(ra, rb, ("A", "B")) if "NOT RELIABLE" in n or "machine moved" in n]
        return []
    out = rounds_text(rounds, header_b) if same_session else []
    if not (_ok(ra) and _ok(rb)):
        return out
    ta, tb = measured_at(ra, header_a), measured_at(rb, header_b)
    apart = f", {abs(tb - ta):.0f} s apart" if ta is not None and tb is not None and abs(tb - ta) >= 1 else ""
    day = not same_session or (ta is not None and tb is not None and abs(tb - ta) > FAR_S)
    done = bool(rounds and rounds.get("status") == "done")
    head = ("the per-graph times below were" if done else "A's and B's times were")
    line = f"{head} taken at different moments{apart}, not round by round"
    if not same_session:
        line += ": two recordings cannot be timed together, so compare them with care"
    elif not done:
        line += ": r in the diff view of a live session times both round by round"
    out += [line, f"  A timed {_clock(ta, day)}: {verdict_text(ra)}", f"  B timed {_clock(tb, day)}: {verdict_text(rb)}"]
    moved = moved_text(ra, rb)
    if moved:
        out.append(moved)
    return out


def timing_notes(ra: dict[str, Any] | None, rb: dict[str, Any] | None) -> list[str]:
    """The timings level's judgement lines: a what-if variant's as before (session.whatif.judgement_lines, its
    interleaved rounds and the eager reference's move), any other pair's eager move (:func:`moved_text`)."""
    from inductor_step.session.whatif import judgement_lines  # noqa: PLC0415

    if (rb or {}).get("variant"):
        return [n for n in judgement_lines(ra, rb, ("A", "B")) if not n.startswith(("A timing", "B timing"))]
    moved = moved_text(ra, rb)
    return [moved] if moved else []


__all__ = ["FAR_S", "measured_at", "moved_text", "rounds_text", "timing_notes", "top_notes", "verdict_text"]
