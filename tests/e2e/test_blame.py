"""Blame on a real planted bug: ``--headless --blame numerics`` bisects torch's own fault injection
(``cpp.inject_relu_bug_TESTING_ONLY = "accuracy"``) to the lowering of FX node relu, each step a child process; the
session records the steps and the verdict (valid messages), REPORT.md has its section and repro, the same recording
holds the size the script's loop made static (recompile blame), and in a live session e, B and c start and cancel
a blame.  The other planted causes (a custom post-grad pass, a wrong lowering)
are measured in benchmarks/blame_planted.py: each costs a dozen compiles."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), "scripts", "blame_relu.py")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    out = tmp_path_factory.mktemp("blame") / "s.jsonl"
    t = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--blame", "numerics", "--record",
                        str(out), SCRIPT], capture_output=True, text=True, timeout=600)
    return p, str(out), time.monotonic() - t


def test_blame_names_the_relu_lowering_planted_by_torchs_fault_injection(recorded):
    p, path, seconds = recorded
    assert p.returncode == 0, p.stderr[-2000:]
    out = p.stdout
    assert "blame step  #0 the script as it compiles (Inductor): BAD" in out
    assert "backend aot_eager_decomp_partition: good" in out
    assert "lowerings off" in out and "blame numerics of [0/0]: inductor / lowerings #" in out
    assert ": relu" in out.split("blame numerics of [0/0]:")[1].splitlines()[0]
    assert "divergence it leaves: none" in out
    assert "TORCH_BISECT_SUBSYSTEM=lowerings" in out  # the setting that keeps it off, runnable


def test_the_record_holds_valid_blame_messages_and_report_has_the_section(recorded, tmp_path):
    from inductor_step.session import api
    from inductor_step.session.format import read_session, validate
    from inductor_step.session.report.bundle import build_report

    _, path, _ = recorded
    msgs = list(read_session(path))
    blames = [m for m in msgs if m.get("type") == "blame" and m.get("kind") == "numerics"]
    assert [m["event"] for m in blames][0] == "start" and blames[-1]["event"] == "verdict"
    assert all(validate(m) == [] for m in blames), [validate(m) for m in blames]
    run = api.load(path).blames()[-1]
    v = run.verdict
    assert v.found and v.backend == "inductor" and v.subsystem == "lowerings" and v.what == "relu"
    assert [s.outcome for s in run.steps][:2] == ["bad", "good"]
    where = api.load(path).blame_where(run)
    assert where["graph"] == "[0/0] inference" and where["fx_nodes"] == ["relu"] and where["kernels"]
    report = open(os.path.join(build_report(path, str(tmp_path / "r")), "REPORT.md")).read()
    section = report.split("## Blame", 1)[1]
    assert "inductor / lowerings #" in section and "FX nodes: relu" in section and "TORCH_BISECT_MAX=" in section


def test_live_e_then_b_starts_the_blame_and_c_cancels_it(tmp_path):
    """The keys a person presses in a live session: n to the script's end, e (the divergence), B (the blame starts in
    the agent), c after its first step (the step in progress is ended, the verdict says cancelled)."""
    from conftest import screen_settled, wait_for
    from test_live import live

    seen: dict = {}

    async def steps(app, pilot):
        await wait_for(pilot, lambda: app.view.paused is not None, timeout=120)
        while app.session.done is None:  # n at each stop (three compiles of six stops each), to the script's end
            at = app.view.paused
            if at is not None:
                await pilot.press("n")
            await wait_for(pilot, lambda at=at: (app.view.paused is not None and app.view.paused is not at)
                           or app.session.done is not None, timeout=120)
        app.show_graph("[0/0] inference")
        await pilot.press("e")
        await wait_for(pilot, lambda: (app.session.numerics.get("[0/0] inference") or {}).get("rows"))
        await pilot.press("B")
        await wait_for(pilot, lambda: any(m.get("event") == "step" for m in app.session.blames), timeout=120,
                       seen=lambda: app.session.blames)
        await pilot.press("c")
        await wait_for(pilot, lambda: any(m.get("event") == "verdict" for m in app.session.blames), timeout=60,
                       seen=lambda: app.session.blames)
        await wait_for(pilot, lambda: app.view.stage == "blame" and app.query_one("#table-blame").row_count, timeout=10,
                       seen=lambda: app.view.stage)
        await screen_settled(pilot, app)  # the blame pane drawn with the verdict
        seen["stage"] = app.view.stage
        seen["row"] = tuple(str(c) for c in app.query_one("#table-blame").get_row_at(0))
        seen["blames"] = [m for m in app.session.blames if m.get("kind") == "numerics"]

    live(SCRIPT, steps, tmp_path, size=(160, 50))
    ev = [(m["event"], (m.get("step") or {}).get("outcome")) for m in seen["blames"]]
    assert ev[0] == ("start", None) and ev[1] == ("step", "bad") and ev[-1] == ("verdict", None)
    assert ("step", "cancelled") in ev or len(ev) == 3  # c came during the second step (or between steps)
    assert seen["blames"][-1]["verdict"]["cancelled"] and seen["stage"] == "blame"
    assert seen["row"][1].startswith("verdict: cancelled")


def test_a_size_made_static_is_recorded_with_the_line_that_forced_it(recorded):
    from inductor_step.session import blame as sb
    from inductor_step.session.format import read_session

    p, path, _ = recorded
    specs = sb.specializations(m for m in read_session(path) if m.get("type") == "blame")
    assert [(s.compile_id, s.value) for s in specs] == [("[1/0]", "4"), ("[1/1]", "5")]
    assert specs[0].sources == ("L['x'].size()[0]",) and specs[0].user_line.endswith("blame_relu.py:16 in g")
    assert "range(x.size(0))" in (specs[0].user_code or "") and specs[0].torch_line.startswith("_dynamo/")
    assert any(x.startswith("[1/0]") and "specialized to 4 by " in x for x in p.stdout.splitlines()), p.stdout
    assert sb.recompile_lines(specs, "[1/1]")[0].startswith("[1/1] recompiled")
