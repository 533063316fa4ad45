"""A torch.cond's branch is a graph of its own in the app: pick it in the graph list (g),
select one of its buffers in the IR pane, and every other pane moves to that buffer.  On the recorded
session tests/fixtures/subgraphs_cond.jsonl (tests/scripts/hop_cond.py, --run)."""

from __future__ import annotations

import os

from test_flows import KEY_OF, PANES, move_to_row, press, shown_row, status

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "subgraphs_cond.jsonl")
BRANCH = "[0/0] inference › true_graph_0"
BUF = "true_graph_0_buf1"  # the branch's relu(x @ w) + 1, computed by its C++ kernel in place of the mm's output


def test_pick_a_branch_then_select_a_buffer_in_it_and_every_pane_follows(app_driver):
    seen: dict = {}

    async def steps(app, pilot):
        graphs = app.session.graphs
        seen["graphs"] = list(graphs)
        await press(pilot, "g")
        ol = app.query_one("#graphs")
        while ol.highlighted != graphs.index(BRANCH):
            await press(pilot, "down" if (ol.highlighted or 0) < graphs.index(BRANCH) else "up")
        await press(pilot, "enter")
        seen["stage_bar"] = str(app.query_one("#stagebar").content)
        await press(pilot, "3")
        await move_to_row(app, pilot, "lowering", BUF)
        seen["status"] = status(app)
        rows = {}
        for key in "12456878":
            await press(pilot, key)
            rows[PANES[key]] = shown_row(app, PANES[key])[0].split(" (call")[0]
        seen["rows"] = rows
        seen["links"] = app.session.links(BRANCH)["buffers"][BUF]
        seen["graph"] = app.view.graph

    app_driver(steps, path=FIXTURE)
    assert [g for g in seen["graphs"] if " › " in g] == [BRANCH, "[0/0] inference › false_graph_0"]
    assert seen["graph"] == BRANCH
    assert seen["stage_bar"].startswith(f" {BRANCH} ") and "✓run" in seen["stage_bar"], seen["stage_bar"]  # timed
    assert f"selected {BUF}" in seen["status"]
    b, rows = seen["links"], seen["rows"]
    assert b["kernels"] == ["cpp_fused_add_gt_relu_2"]
    want = {"dynamo": set(b["dynamo_nodes"]), "aot": set(b["fx_nodes"]), "scheduling": {b["fused_node"]},
            "loopbody": {b["scheduler_node"]}, "codegen": set(b["kernels"]), "run": set(b["kernels"]),
            "linked": {BUF}}
    for stage, cells in want.items():
        assert rows[stage] in cells, f"pane {KEY_OF[stage]} ({stage}) shows {rows[stage]!r}, not {BUF}'s {sorted(cells)}"


def test_a_failed_timing_is_never_shown_as_run_done():
    """The stage bar of a graph whose timing failed says ✗run; a timed one ✓run."""
    from inductor_step.session.format import graph_key, read_session
    from inductor_step.tui.bars import stage_text
    from inductor_step.session.store import Store
    from inductor_step.tui.state import ViewState

    msgs = list(read_session(FIXTURE))
    failed = [{**m, "error": "timing failed: for this test", "failed": True}
              if m.get("type") == "run" and graph_key(m) == BRANCH else m for m in msgs]
    for messages, want, not_want in ((msgs, "✓run", "✗run"), (failed, "✗run", "✓run")):
        bar = str(stage_text(Store.of(messages), ViewState(graph=BRANCH, stage="run"), 120))
        assert want in bar and not_want not in bar, bar
