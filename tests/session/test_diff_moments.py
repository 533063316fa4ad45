"""Diffs of recorded sessions: two recordings cannot be timed together, so the diff says at its
top that their times were taken at different moments, when each was measured and each side's contention
verdict, and -- when the eager reference moved as much as the compiled time -- that the machine moved, not the
change.  Recorded sessions only (tests/fixtures/diff_config_{a,b}.jsonl, diff_recompile.jsonl): no torch."""

from __future__ import annotations

import asyncio
import copy
import os

from inductor_step.session.format import read_session
from inductor_step.session.diff import DiffSide, diff_files, diff_graphs, render
from inductor_step.session.store import Store

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(HERE, "fixtures")
CONFIG_A = os.path.join(FIX, "diff_config_a.jsonl")
CONFIG_B = os.path.join(FIX, "diff_config_b.jsonl")
RECOMPILE = os.path.join(FIX, "diff_recompile.jsonl")
KEY = "[0/0] inference"


def _with_runs(path: str, **changes) -> Store:
    """The recording at ``path`` with its run message's fields changed (a later recording, a judged one)."""
    msgs = [copy.deepcopy(m) for m in read_session(path)]
    for m in msgs:
        if m.get("type") == "run":
            m.update(changes)
    return Store.of(msgs)


def test_two_recordings_say_at_the_top_when_each_was_timed_and_each_verdict() -> None:
    out = diff_files(CONFIG_A, CONFIG_B)
    top = [ln for ln in out.splitlines() if ln.startswith("! ")]
    assert len(top) == 3, top
    assert top[0] == ("! A's and B's times were taken at different moments, 19 s apart, not round by round: two "
                      "recordings cannot be timed together, so compare them with care")
    # each side's wall-clock moment (the header's time plus the run's t, seconds since the agent started), verdict
    assert top[1] == "!   A timed at 2026-11-24 14:39:37 UTC: not judged (recorded before contention was measured)"
    assert top[2] == "!   B timed at 2026-11-24 14:39:56 UTC: not judged (recorded before contention was measured)"
    assert out.index(top[2]) < out.index("== ")  # above every level

    # a recording judged on its contention: its verdict, as pane 7 says it
    judged = _with_runs(CONFIG_B, reliable=False, unreliable="compiled time not reliable (other processes held the "
                        "cores: threads waited for a core up to 41% of the time); press r to time again",
                        verdicts={"compiled": {"reliable": False, "wait_share": 0.41}})
    sa = Store.of(list(read_session(CONFIG_A)))
    d = diff_graphs(DiffSide.from_session(sa, KEY), DiffSide.from_session(judged, KEY), same_session=False)
    assert "  B timed at 2026-11-24 14:39:56 UTC: NOT RELIABLE (compiled time not reliable (other processes held the " \
        "cores: threads waited for a core up to 41% of the time))" in d.notes, d.notes


def test_when_eager_moved_as_much_as_compiled_the_machine_moved_not_the_change() -> None:
    sa = Store.of(list(read_session(CONFIG_A)))
    ra = sa.runs[KEY]
    slow = _with_runs(CONFIG_B, compiled_ms=ra["compiled_ms"] * 3, eager_ms=ra["eager_ms"] * 3)
    d = diff_graphs(DiffSide.from_session(sa, KEY), DiffSide.from_session(slow, KEY), same_session=False)
    moved = [n for n in d.notes if "machine moved" in n]
    assert len(moved) == 1 and moved[0].startswith("the machine moved, not the change: the eager reference")
    assert "(3.00x)" in moved[0] and "setting" not in moved[0]
    assert moved[0] in d.level("timing").notes
    assert "! " + moved[0] in render(d)

    # the same move on inputs of different sizes may be the work: said so, not blamed on the machine
    bigger = _with_runs(CONFIG_B, compiled_ms=ra["compiled_ms"] * 3, eager_ms=ra["eager_ms"] * 3,
                        input_sizes=["32x64 float32", "64 float32"])
    sa2 = _with_runs(CONFIG_A, input_sizes=["16x64 float32", "64 float32"])
    d = diff_graphs(DiffSide.from_session(sa2, KEY), DiffSide.from_session(bigger, KEY), same_session=False)
    assert not any("machine moved" in n for n in d.notes)
    assert any("ran on inputs of different sizes (16x64 float32, 64 float32 -> 32x64 float32" in n for n in d.notes)

    # eager held still: nothing blamed on the machine
    d = diff_graphs(DiffSide.from_session(sa, KEY), DiffSide.from_session(_with_runs(CONFIG_B), KEY), same_session=False)
    assert not any("moved" in n for n in d.notes), d.notes


def test_r_in_a_diff_of_two_recordings_says_they_cannot_be_timed_together_and_a_recording_of_one_session_says_why() -> None:
    from inductor_step.tui.app import StepApp
    from inductor_step.tui.screens.diff import DiffScreen

    seen: dict = {}

    def run(path, steps, **kw):
        app = StepApp(messages=list(read_session(path)), session_path=path, **kw)

        async def go():
            async with app.run_test(size=(120, 40)) as pilot:
                await pilot.pause()
                await steps(app, pilot)

        asyncio.run(go())

    async def two(app, pilot):
        assert isinstance(app.screen, DiffScreen)
        seen["title"] = str(app.screen.query_one("#diff-title").content)
        await pilot.press("r")
        seen["r"] = str(app.screen.query_one("#diff-status").content)

    run(CONFIG_B, two, diff_against=(CONFIG_A, list(read_session(CONFIG_A))))
    assert "! timed at different moments" in seen["title"]
    assert seen["r"].startswith("two recordings cannot be timed together: their times were taken at different moments")

    async def one(app, pilot):
        await pilot.press("d")
        await pilot.pause()
        seen["title1"] = str(app.screen.query_one("#diff-title").content)
        seen["code"] = app.screen.code.text
        await pilot.press("r")
        seen["r1"] = str(app.screen.query_one("#diff-status").content)

    run(RECOMPILE, one)
    assert "timed at different moments" in seen["title1"]
    assert ("# ! A's and B's times were taken at different moments, not round by round: r in the diff view of a live "
            "session times both round by round\n# !   A timed at 14:39:07 UTC: not judged") in seen["code"]
    assert seen["r1"].startswith("no live script to time with")
