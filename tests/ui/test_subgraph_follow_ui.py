"""Following the compile: a higher-order op's subgraph stop that the compile did not pause at leaves the view on
its parent graph, also when it is the last stop before the script ends (a cond's and flex attention's recorded
messages handed to the app as its agent hands them)."""

from __future__ import annotations

import asyncio
import os

import pytest

from inductor_step.session.format import read_session
from inductor_step.tui.app import StepApp

FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")


@pytest.mark.parametrize("name", ["subgraphs_cond.jsonl", "subgraphs_flex.jsonl"], ids=["cond", "flex"])
def test_the_view_stays_on_the_parent_graph_through_its_subgraphs_stops(name) -> None:
    path = os.path.join(FIX, name)
    msgs = list(read_session(path))
    app = StepApp(messages=msgs[:1], session_path=path)  # the header only: the stops arrive one by one
    seen: list = []

    async def main():
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            for m in msgs[1:]:
                if m.get("type") in ("stop", "done"):
                    app.on_agent_message(m)
                    await pilot.pause()
                    seen.append((m.get("subgraph"), m.get("stage"), app.view.graph))

    asyncio.run(main())
    assert seen[-2][0]  # the last stop before the script's end is a subgraph's
    assert {g for _, _, g in seen} == {"[0/0] inference"}, seen
