"""Stepping a flex-attention script live: after `n` at the codegen stop the compile runs on, sending the stages of
the score_mod and mask_mod subgraphs it does not pause at; a second `n` pressed meanwhile waits for the next pause
and the view goes there.  (It used to walk into those recorded subgraph stops and stop following: the compile then
paused at its next graph while the view stayed behind, and `n` seemed to do nothing for as many presses as there
were subgraph stops.)"""

from __future__ import annotations

import os

from inductor_step.session.format.keys import GraphKey
from test_live import SCRIPTS, live, n_until

from conftest import wait_for


def test_n_while_the_compile_runs_past_subgraph_stops_lands_on_the_next_pause(tmp_path):
    seen: dict = {}

    async def steps(app, pilot):
        await n_until(pilot, app, "codegen")
        at = len(app.session.stops)
        await pilot.press("n")  # the compile runs on: the subgraphs' stages come, not paused
        await wait_for(pilot, lambda: any(GraphKey.of(s).subgraph for s in app.session.stops[at:]), timeout=120)
        seen["running"] = app.view.paused is None
        await pilot.press("n")  # pressed while it runs on
        await wait_for(pilot, lambda: app.view.paused is not None or app.session.done is not None, timeout=120)
        await pilot.pause()
        seen["paused"] = dict(app.view.paused or {})
        seen["view"] = (app.view.graph, app.view.stage)
        seen["status"] = str(app.query_one("#status").render())

    live(os.path.join(SCRIPTS, "hop_flex_then_more.py"), steps, tmp_path)
    assert seen["running"], "the second n was not pressed while the compile ran"
    p = seen["paused"]
    assert p.get("compile_id") == "[1/0]" and p.get("stage") == "dynamo", p
    assert seen["view"] == ("[1/0] inference", "dynamo"), seen
    assert "paused after dynamo of [1/0] inference" in seen["status"], seen["status"]
