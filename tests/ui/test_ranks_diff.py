"""The diff screen fed with two ranks' versions of a graph ("compare ranks"):
:func:`inductor_step.session.ranks.diff_pair` gives the diff screen what it shows, in an app holding
rank 1's session (the rank the UI steps): the fusion rank 1 lacks is the level shown, and Enter
opens rank 1's scheduler node in its pane."""

from __future__ import annotations

import asyncio
import os

from inductor_step.session.format import read_session
from inductor_step.session import ranks
from inductor_step.tui.app import StepApp
from inductor_step.session.diff import session_of
from inductor_step.tui.screens.diff import DiffPair, DiffScreen
from inductor_step.session.store import load_session

FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")


def test_two_ranks_fusion_in_the_diff_screen_and_enter_opens_rank_1s_node():
    r0, r1 = os.path.join(FIX, "ranks_r0.jsonl"), os.path.join(FIX, "ranks_r1.jsonl")
    sessions = {0: session_of(load_session(r0)), 1: session_of(load_session(r1))}
    pair = DiffPair(*ranks.diff_pair(sessions, "[1/0] inference", 0, 1))
    app = StepApp(messages=list(read_session(r1)), session_path=r1)
    seen = {}

    async def go():
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            app.push_screen(DiffScreen([pair], same_session=False, label_a="rank 0", label_b="rank 1"))
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, DiffScreen)
            seen["title"] = str(screen.query_one("#diff-title").content)
            seen["levels"] = [o.id for o in screen.query_one("#diff-levels").options]
            await pilot.press("4")
            await pilot.pause()
            seen["row"] = [str(c) for c in screen.table.get_row_at(screen.table.cursor_row)]
            await pilot.press("enter")
            await pilot.pause()
            await pilot.pause()
            seen["after"] = (type(app.screen).__name__, app.view.graph, app.view.stage)

    asyncio.run(go())
    assert "A rank 0 [1/0] inference  ->  B rank 1 [1/0] inference" in seen["title"]
    assert seen["levels"][0] == "scheduling" and "dynamo" not in seen["levels"] and "why" not in seen["levels"]
    assert seen["row"][:2] == ["~", "op0_op1_op2_op3 -> op0, op1, op2, op3"]
    assert seen["after"] == ("MainScreen", "[1/0] inference", "scheduling")
