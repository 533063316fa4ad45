"""Pane B (blame) on a recorded session (tests/fixtures/blame.jsonl: ``--numerics --blame numerics`` on
tests/scripts/blame_relu.py, torch's planted relu bug): a person sees the divergence in pane e, presses B, reads the
verdict and the steps, moves down the steps, and Enter on the verdict selects the relu node's buffer in pane 2.
No torch needed."""

from __future__ import annotations

import os

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "blame.jsonl")


def _row(app, stage: str) -> tuple[str, ...]:
    t = app.query_one(f"#table-{stage}")
    return tuple(str(c) for c in t.get_row_at(t.cursor_row))


def test_e_then_b_shows_the_verdict_and_steps_and_enter_selects_the_fx_node(app_driver):
    seen: dict = {}

    async def steps(app, pilot):
        await pilot.press("e")
        await pilot.pause()
        seen["numerics"] = app.query_one("#code-numerics").text
        await pilot.press("B")
        await pilot.pause()
        seen["stage"] = app.view.stage
        seen["verdict_row"] = _row(app, "blame")
        seen["verdict_code"] = app.query_one("#code-blame").text
        await pilot.press("down", "down")
        await pilot.pause()
        seen["step_row"] = _row(app, "blame")
        seen["step_code"] = app.query_one("#code-blame").text
        await pilot.press("home", "enter")
        await pilot.pause()
        seen["after"] = (app.view.stage, app.view.graph, app.view.selected)
        seen["aot_row"] = _row(app, "aot")

    app = app_driver(steps, size=(160, 50), path=FIXTURE)
    from inductor_step.session import blame as sb

    run = sb.runs(app.session.blames)[-1]
    assert "first suspect" in seen["numerics"]
    assert seen["stage"] == "blame"
    assert seen["verdict_row"][1] == f"verdict: {run.verdict.cause()}" and "relu" in seen["verdict_row"][1]
    assert "FX nodes: relu" in seen["verdict_code"] and "divergence it leaves: none" in seen["verdict_code"]
    assert "steps:" in seen["verdict_code"] and "#0 the script as it compiles (Inductor): BAD" in seen["verdict_code"]
    assert seen["step_row"][0] == "1" and seen["step_row"][2] == "good"  # aot_eager_decomp_partition
    assert "TORCH_BISECT_BACKEND=aot_eager_decomp_partition" in seen["step_code"]
    relu_buffers = app.session.links("[0/0] inference")["fx_nodes"]["relu"]["buffers"]
    assert seen["after"] == ("aot", "[0/0] inference", relu_buffers[0])
    assert "relu" in " ".join(seen["aot_row"])


SPECIALIZE = os.path.join(os.path.dirname(FIXTURE), "blame_specialize.jsonl")


def test_b_on_a_recompile_says_which_line_made_the_size_static(app_driver):
    seen: dict = {}

    async def steps(app, pilot):
        app.show_graph("[0/1] inference")
        await pilot.press("B")
        await pilot.pause()
        seen["row"] = _row(app, "blame")
        seen["code"] = app.query_one("#code-blame").text
        app.show_graph("[0/0] inference")
        await pilot.pause()
        seen["first"] = app.query_one("#table-blame").row_count

    app_driver(steps, size=(160, 50), path=SPECIALIZE)
    assert seen["row"][0] == "S" and "s77 (L['x'].size()[0]) specialized to 4 in [0/0]" in seen["row"][1]
    assert "[0/1] recompiled" in seen["code"] and "blame_specialize.py:9 in f" in seen["code"]
    assert "for i in range(n)" in seen["code"] and "_dynamo/variables/tensor.py" in seen["code"]
    assert seen["first"] == 1  # [0/0]: only its own specialization (to 4)


SPEED = os.path.join(os.path.dirname(FIXTURE), "blame_speed.jsonl")


def test_speed_blame_names_a_setting_only_where_every_round_agrees(app_driver):
    """tests/fixtures/blame_speed.jsonl: cpp.simdlen = 1 planted, seven variants timed round by round on the shared
    2-core box, where other processes held the cores: every variant is noise there, and nothing is named."""
    seen: dict = {}

    async def steps(app, pilot):
        await pilot.press("B")
        await pilot.pause()
        seen["verdict_row"] = _row(app, "blame")
        seen["code"] = app.query_one("#code-blame").text
        await pilot.press("down")
        await pilot.pause()
        seen["first_step"] = _row(app, "blame")

    app = app_driver(steps, size=(160, 50), path=SPEED)
    from inductor_step.session import blame as sb

    run = sb.runs(app.session.blames)[-1]
    assert run.kind == "speed" and run.steps[0].what == "cpp.simdlen=None"  # the script's own change comes first
    for s in run.steps:
        il = next(m["step"]["interleaved"] for m in app.session.blames if m.get("event") == "step"
                  and m["step"]["index"] == s.index)
        if il.get("reliable") is False:  # contention: never an effect
            assert s.outcome == "noise" and "NOT RELIABLE" in s.timing
    faster = [s for s in run.steps if s.outcome == "faster"]
    assert run.verdict.found == bool(faster)
    if faster:
        assert run.verdict.what == max(faster, key=lambda s: s.effect).what
    else:
        assert "no setting's change moved the time beyond noise" in seen["verdict_row"][1]
    assert seen["first_step"][1] == "cpp.simdlen=None" and seen["first_step"][2] in ("noise", "FASTER", "slower")
    assert "steps:" in seen["code"]
