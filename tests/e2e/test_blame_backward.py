"""Blame of a divergence only in a backward graph (tests/scripts/blame_backward.py: aten.cos lowered as aten.sin;
the forward computes sin, right, the backward of sin is cos, wrong): ``--headless --blame numerics`` bisects the
backward's lowerings as a forward's, down to the lowering of its FX node cos, says it ran in ``[0/0] backward``,
and Enter on the verdict in pane B opens pane 2 at that node's buffer in the backward graph."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), "scripts", "blame_backward.py")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    out = tmp_path_factory.mktemp("blame_bw") / "s.jsonl"
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--blame", "numerics", "--record",
                        str(out), SCRIPT], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout, str(out)


def test_the_backward_lowering_is_named_with_its_graph(recorded):
    out, _ = recorded
    assert "blame step  #0 the script as it compiles (Inductor): BAD" in out and "grad 0: suspect" in out
    head = out.split("blame numerics of [0/0]: ", 1)[1].splitlines()
    assert head[0].startswith("inductor / lowerings #") and head[0].endswith(": cos")
    assert "(the lowering of FX node cos, in [0/0] backward)" in head[1]
    assert "FX nodes: cos (post-grad graph of [0/0] backward)" in out
    assert "divergence it leaves: none" in out


def test_enter_on_the_verdict_opens_pane_2_at_the_backward_node(recorded, app_driver):
    from inductor_step.session import api

    _, path = recorded
    s = api.load(path)
    run = s.blames()[-1]
    assert run.verdict.graph_kind == "backward"
    where = s.blame_where(run)
    assert where["graph"] == "[0/0] backward" and where["fx_nodes"] == ["cos"]
    from inductor_step.session.blame import kernel_names

    assert where["kernels"] and set(where["kernels"]) <= set(kernel_names(s.store, "[0/0] backward"))
    seen: dict = {}

    async def steps(app, pilot):
        app.show_graph("[0/0] forward")
        await pilot.press("B")
        await pilot.pause()
        seen["code"] = app.query_one("#code-blame").text
        await pilot.press("home", "enter")
        await pilot.pause()
        seen["after"] = (app.view.stage, app.view.graph, app.view.selected)
        seen["buffers"] = app.session.links("[0/0] backward")["fx_nodes"]["cos"]["buffers"]

    app_driver(steps, size=(160, 50), path=path)
    assert "FX nodes: cos (post-grad graph of [0/0] backward); kernel: " in seen["code"]
    assert seen["after"] == ("aot", "[0/0] backward", seen["buffers"][0])
