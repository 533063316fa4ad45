"""``r`` in the diff view: time the two graphs of the diff round by round in one process.

Two graphs of one live session (a recompile ``[0/1]`` and ``[0/0]``, or any two ctrl+p paired) were each timed
at their own moment; ``r`` here asks the agent (``time_pair``, tracer.pair_timing) to time both, and both run
eagerly, round by round, so the machine's moves fall on both alike.  The answer (``pair_timing``) redraws the
diff in place: its top then gives the round-by-round figures (session.diff.moments.rounds_text).  ``c`` cancels, as it cancels ``r`` elsewhere.
"""

from __future__ import annotations

from typing import Any

from inductor_step.session.format import CMD_TIME_PAIR


def request(screen: Any) -> None:
    """``r`` on a :class:`inductor_step.tui.screens.diff.DiffScreen`: ask for the shown pair's round-by-round
    timing, or say on its status line why it cannot be had (two recordings, a pair with one side only, no live
    script)."""
    app = screen.app
    p = screen.pair
    if not screen.same_session:
        screen._status("two recordings cannot be timed together: their times were taken at different moments "
                       "(the top says when, and each side's verdict)")
        return
    if p.key_a is None or p.key_b is None:
        screen._status("r times a pair of graphs: this one has a single side")
        return
    agent = getattr(app, "agent", None)
    if agent is None or not agent.alive:
        screen._status("no live script to time with (a recorded session, or its process has ended): the times "
                       "shown were taken one graph at a time")
        return
    agent.send(CMD_TIME_PAIR, graphs=[p.key_a, p.key_b])
    app.session.note_run_status(f"timing {p.key_a} and {p.key_b} round by round…")
    app.refresh_status()
    screen._status(f"timing {p.key_a} and {p.key_b} round by round… (c cancels)")


def on_message(app: Any, msg: dict[str, Any]) -> None:
    """A ``pair_timing`` message: the diff of that pair, when on screen, computed again with the rounds; else a
    notification (failures always)."""
    from inductor_step.session.diff import DiffSide, diff_graphs  # noqa: PLC0415
    from inductor_step.tui.screens.diff import DiffPair, DiffScreen  # noqa: PLC0415

    a, b, status = msg.a, msg.b, msg.status
    top = app.screen
    if status == "failed":
        app.notify(f"timing {a} and {b} round by round " + ("cancelled" if msg.cancelled else "failed")
                   + f": {msg.message}", severity="information" if msg.cancelled else "error",
                   timeout=8, markup=False)
    if isinstance(top, DiffScreen) and top.same_session and (top.pair.key_a, top.pair.key_b) == (a, b):
        d = diff_graphs(DiffSide.from_session(app.session, a), DiffSide.from_session(app.session, b), rounds=msg)
        note = {"done": f"{a} and {b} timed round by round: the figures are at the top",
                "failed": f"timing them round by round {'cancelled' if msg.cancelled else 'failed'}: "
                          f"{msg.message} (r asks again)"}.get(str(status), "")
        if status != "timing":
            top.replace_pair(DiffPair(a, b, "", d), note)
    elif status == "done":
        app.notify(f"{a} and {b} timed round by round: d on {b} shows it", timeout=5, markup=False)


__all__ = ["on_message", "request"]
