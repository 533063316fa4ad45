"""Pane 1 on a backward graph: a training compile's backward has no Dynamo graph of its own, and the pane showed the
forward's without a word (trial 8, on Hugging Face BERT); it now says so in its first line."""

from __future__ import annotations

from conftest import DEMO, screen_lines, screen_settled


def test_pane_1_says_a_backward_graph_shows_its_forwards_dynamo_graph(app_driver):
    seen: dict[str, str] = {}

    async def steps(app, pilot):
        await screen_settled(pilot, app)
        seen["forward"] = "\n".join(screen_lines(app))
        for key in ("g", "down", "enter", "1"):
            await pilot.press(key)
            await screen_settled(pilot, app)
        seen["backward"] = "\n".join(screen_lines(app))

    app_driver(steps, size=(160, 50), path=DEMO)
    assert "[0/0] backward" in seen["backward"]
    assert "[0/0] backward has no Dynamo graph of its own" in seen["backward"], seen["backward"]
    assert "has no Dynamo graph of its own" not in seen["forward"]
