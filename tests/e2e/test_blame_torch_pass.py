"""Blame down to one application of torch's own post-grad pass (tests/scripts/blame_torch_pass.py: a pattern
registered in Inductor's post-grad pattern pass rewrites cos into sin): the verdict names the application
(``post_grad_passes #N: pass_pattern_1``) and the FX nodes it rewrote (the graph before that application against
after it: sin_default added, cos removed), linked as a user pass's nodes are: Enter in pane B selects sin_default's
buffer in pane 2."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), "scripts", "blame_torch_pass.py")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    out = tmp_path_factory.mktemp("blame_pass") / "s.jsonl"
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--blame", "numerics", "--record",
                        str(out), SCRIPT], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout, str(out)


def test_the_pass_application_and_the_fx_nodes_it_rewrote_are_named(recorded):
    out, _ = recorded
    head = out.split("blame numerics of [0/0]: ", 1)[1].splitlines()
    assert head[0].startswith("inductor / post_grad_passes #") and head[0].endswith(": pass_pattern_1")
    assert "the FX nodes it rewrote: added sin_default; removed cos" in head[1]
    assert "FX nodes: sin_default (post-grad graph of [0/0] inference)" in out
    assert "divergence it leaves: none" in out


def test_report_and_enter_link_the_rewritten_node(recorded, app_driver, tmp_path):
    from inductor_step.session import api
    from inductor_step.session.report.bundle import build_report

    _, path = recorded
    s = api.load(path)
    where = s.blame_where(s.blames()[-1])
    assert where["graph"] == "[0/0] inference" and where["fx_nodes"] == ["sin_default"] and where["kernels"]
    report = open(os.path.join(build_report(path, str(tmp_path / "r")), "REPORT.md")).read()
    assert f"FX nodes: sin_default (post-grad graph of [0/0] inference); kernel: {where['kernels'][0]}" in report
    seen: dict = {}

    async def steps(app, pilot):
        await pilot.press("B")
        await pilot.pause()
        await pilot.press("home", "enter")
        await pilot.pause()
        seen["after"] = (app.view.stage, app.view.graph, app.view.selected)
        seen["buffers"] = app.session.links("[0/0] inference")["fx_nodes"]["sin_default"]["buffers"]

    app_driver(steps, size=(160, 50), path=path)
    assert seen["after"] == ("aot", "[0/0] inference", seen["buffers"][0])
