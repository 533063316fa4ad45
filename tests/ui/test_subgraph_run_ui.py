"""Pane 7 on flex attention's mask subgraph, lowered inline into its parent's kernels: it says why it has no
times of its own (not "timed with None"), on tests/fixtures/subgraphs_flex.jsonl (tests/scripts/flex_attention_cpu.py,
recorded with ``--headless --run``)."""

from __future__ import annotations

import os

from test_flows import press

from inductor_step.tui.codeview import CodeView

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "subgraphs_flex.jsonl")
MASK = "[0/0] inference › sdpa_mask0"


def test_a_subgraph_timed_as_part_of_its_parent_says_so_in_pane_7(app_driver) -> None:
    seen: dict = {}

    async def steps(app, pilot):
        graphs = app.session.graphs
        await press(pilot, "g")
        ol = app.query_one("#graphs")
        while ol.highlighted != graphs.index(MASK):
            await press(pilot, "down" if (ol.highlighted or 0) < graphs.index(MASK) else "up")
        await press(pilot, "enter", "7")
        seen["graph"] = app.view.graph
        seen["text"] = app.query_one("#code-run", CodeView).text

    app_driver(steps, size=(200, 50), path=FIXTURE)
    assert seen["graph"] == MASK
    text = seen["text"]
    assert "None" not in text and "compiled graph   -" not in text and "not available" not in text, text
    assert "not timed on its own: Inductor lowered it inline into [0/0] inference's kernels" in text, text
