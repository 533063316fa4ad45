"""Timing for diffs that are not what-if variants: two graphs of one live session (a recompile [0/1] and
[0/0]) timed round by round on request -- ``r`` in the diff view -- with real compiles, the real agent and
its timing worker.  A person steps the recompile script to its end, presses ``d`` (the recompile against the
graph before it), reads at the top that the two were timed at different moments, presses ``r`` and, once the
rounds are done, reads the round-by-round figures at the top of the diff."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import time

import pytest

from conftest import screen_settled, wait_for

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(HERE, "scripts", "diff_recompile.py")


def test_r_in_the_diff_of_a_recompile_times_both_graphs_round_by_round(tmp_path) -> None:
    from inductor_step.session.format import read_session, validate
    from inductor_step.tui.app import StepApp
    from inductor_step.tui.screens.diff import DiffScreen

    app = StepApp(script=SCRIPT, session_path=str(tmp_path / "s.jsonl"), screenshots=str(tmp_path))
    seen: dict = {}

    def title() -> str:
        return str(app.screen.query_one("#diff-title").render())

    def said() -> str:  # the diff view's status line
        return str(app.screen.query_one("#diff-status").render())

    async def main():
        async with app.run_test(size=(120, 40)) as pilot:
            try:
                await wait_for(pilot, lambda: app.view.paused is not None)
                while app.session.done is None:  # n at each stop, to the end of the script
                    at = app.view.paused
                    if at is not None:
                        await pilot.press("n")
                    await wait_for(pilot, lambda at=at: (app.view.paused is not None and app.view.paused is not at)
                                   or app.session.done is not None)
                await pilot.press("r")  # the per-graph timing, one graph after the other
                await wait_for(pilot, lambda: {"[0/0] inference", "[0/1] inference"} <= set(app.session.runs)
                               and "timed 2 of 2" in app.session.run_status.message)
                await pilot.press("d")  # the graph shown (the last, [0/1]) against its partner, [0/0]
                await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen))
                await pilot.pause()
                seen["before"] = (list(app.screen.diff.notes), title())
                seen["timing_before"] = list(app.screen.diff.level("timing").notes)
                pair = ("[0/0] inference", "[0/1] inference")
                status = lambda: (app.session.pair_timings.get(pair) or {}).get("status")  # noqa: E731
                # r, and c as soon as the timing started: the request ends, cancelled, within two seconds
                await pilot.press("r")
                seen["asked"] = str(app.screen.query_one("#diff-status").render())
                await wait_for(pilot, lambda: status() == "timing")
                t0 = time.monotonic()
                await pilot.press("c")
                await wait_for(pilot, lambda: status() == "failed", timeout=30, seen=status)
                seen["cancel_s"] = time.monotonic() - t0
                await wait_for(pilot, lambda: said().startswith("timing them round by round"), timeout=10, seen=said)
                seen["cancelled"] = (dict(app.session.pair_timings[pair]), app.session.run_status, said())
                await pilot.press("r")  # and asked again, it runs to the end
                await wait_for(pilot, lambda: (app.session.pair_timings.get(("[0/0] inference", "[0/1] inference"))
                                               or {}).get("status") in ("done", "failed"))
                await screen_settled(pilot, app)  # the diff redrawn with the pair's figures
                d = app.screen.diff
                seen["after"] = (list(d.notes), title(), list(d.level("timing").notes))
                seen["status"] = app.session.run_status.message
                await wait_for(pilot, lambda: said().endswith("the figures are at the top"), timeout=10, seen=said)
                seen["said"] = said()
                seen["msg"] = app.session.pair_timings[("[0/0] inference", "[0/1] inference")]
            finally:
                app.action_quit_app()

    asyncio.run(main())
    notes, head = seen["before"]
    assert any(n.startswith("A's and B's times were taken at different moments") and
               n.endswith("r in the diff view of a live session times both round by round") for n in notes), notes
    assert [n.split(" UTC: ")[0][:10] for n in notes if n.startswith(("  A timed at", "  B timed at"))] == \
        ["  A timed ", "  B timed "], notes  # when each was measured, and each verdict after it
    assert "timed at different moments" in head
    assert "round by round" in seen["asked"] and "c cancels" in seen["asked"]

    cancelled, run_status, said = seen["cancelled"]
    assert cancelled.get("cancelled") is True and "cancelled" in cancelled["message"], cancelled
    assert seen["cancel_s"] < 3.0, (seen["cancel_s"], cancelled)  # c ends it within 2 s at the agent
    assert run_status.done and run_status.cancelled and run_status.of == 2 and not run_status.local, run_status
    assert "cancelled" in run_status.message and said.startswith("timing them round by round cancelled"), \
        (run_status, said)

    msg = seen["msg"]
    assert msg["status"] == "done", msg
    r = msg["rounds"]
    assert r["rounds"] == 7 and len(r["a_rounds_ms"]) == len(r["b_rounds_ms"]) == len(r["eager_b_rounds_ms"]) == 7
    assert r["a_ms"] > 0 and r["b_ms"] > 0 and r["b_vs_a"] > 0 and "reliable" in r and r["device"] == "cpu"
    assert r["sizes_a"][0].startswith("8x64") and r["sizes_b"] != r["sizes_a"], r  # [0/1] ran at its hint size
    notes, head, timing = seen["after"]
    top = next(n for n in notes if n.startswith("timed round by round in one process (7 rounds"))
    assert f"B/A {r['b_vs_a']:.2f}x" in top and "eager A" in top
    assert timing == seen["timing_before"]  # the timings level keeps the per-graph times; the rounds are on top
    if r["reliable"]:  # eager, timed in the same rounds, says how much of B/A is the work of B's larger inputs
        assert any(n.startswith(("eager moved", "eager held still")) for n in notes), notes
    else:  # a loaded box: the rounds are judged too, and nothing calls B/A the change's
        assert "NOT RELIABLE" in top and "times NOT RELIABLE" in head
        assert any(n.startswith("the rounds themselves were contended") for n in notes), notes
        assert not any("is the change's" in n for n in notes), notes
    assert any(n.startswith("the per-graph times below were taken at different moments") for n in notes)
    assert "timed round by round" in head
    assert "timed round by round" in seen["status"] and "B/A" in seen["status"]  # the request ended, said so
    assert seen["said"].endswith("timed round by round: the figures are at the top"), seen["said"]

    # the session file keeps it (a reopened session shows the same figures), in the session format
    saved = [m for m in read_session(str(tmp_path / "s.jsonl")) if m.get("type") == "pair_timing"]
    assert [m["status"] for m in saved] == ["timing", "failed", "timing", "done"]
    assert not validate(saved[-1])
