"""Recompile blame's constraint guards on a real script (tests/scripts/blame_guards.py: a branch on a size, a
torch._check, a view that needs divisibility, then a call that fails the branch's guard): ``--headless`` names each
guard with its symbol, what it stands for, the user's line and torch function that added it; REPORT.md lists them;
pane B on the recompile shows them beside the sizes made static.  Guards torch suppressed, and Inductor's own size
checks (no user line), are not named."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), "scripts", "blame_guards.py")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    out = tmp_path_factory.mktemp("guards") / "s.jsonl"
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--record", str(out), SCRIPT],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout, str(out)


def test_headless_names_each_guard_with_its_user_line(recorded):
    out, _ = recorded
    lines = [x for x in out.splitlines() if " constrain " in x]
    first = [x for x in lines if x.startswith("[0/0]")]
    assert len(first) == 3, lines
    assert "s77 (L['x'].size()[0]) constrained: s77 > 16 by " in first[0]  # (the line starts with [0/0])
    assert "blame_guards.py:7 in f (torch: _dynamo/variables/tensor.py:" in first[0]
    assert "(L['y'].size()[0]) constrained: Eq(Mod(" in first[1] and ", 2), 0) by " in first[1]
    assert "blame_guards.py:9 in f" in first[1]
    assert ", 4), 0) by " in first[2] and "blame_guards.py:10 in f" in first[2]
    assert "<= 4096" not in out and "//4), 0)" not in out  # Inductor's own checks, torch's suppressed guards
    assert any(x.startswith("[0/1]") and "s77 <= 16" in x for x in lines)  # the recompile's side of the branch


def test_report_and_pane_b_show_the_guards_beside_the_specializations(recorded, tmp_path, app_driver):
    from inductor_step.session.format import read_session, validate
    from inductor_step.session.report.bundle import build_report

    _, path = recorded
    msgs = [m for m in read_session(path) if m.get("type") == "blame"]
    assert msgs and all(validate(m) == [] for m in msgs)
    report = open(os.path.join(build_report(path, str(tmp_path / "r")), "REPORT.md")).read()
    section = report.split("### Sizes constrained", 1)[1]
    assert "constrained: s77 > 16 in [0/0]" in section and "if x.size(0) > 16:" in section
    assert "torch._check(y.size(0) % 2 == 0)" in section and "y.view(-1, 4)" in section
    seen: dict = {}

    async def steps(app, pilot):
        app.show_graph("[0/1] inference")
        await pilot.press("B")
        await pilot.pause()
        t = app.query_one("#table-blame")
        seen["rows"] = [tuple(str(c) for c in t.get_row_at(i)) for i in range(t.row_count)]
        seen["code"] = app.query_one("#code-blame").text

    app_driver(steps, size=(200, 50), path=path)
    guards = [r for r in seen["rows"] if r[0] == "G"]
    assert any("s77 > 16 in [0/0]" in r[1] and r[2] == "guarded" for r in guards), seen["rows"]
    assert any("s77 <= 16 in [0/1]" in r[1] for r in guards)
    assert "[0/1]'s frame: earlier compiles guarded dynamic sizes" in seen["code"]
    assert "[0/1] is dynamic in these sizes only within these guards:" in seen["code"]
    assert "if x.size(0) > 16:" in seen["code"]


def test_headless_says_each_symbols_shape_events_once_before_its_stop(tmp_path):
    """Under dynamic=True (tests/scripts/dynamic_dropout.py) dropout's ``p`` is constrained three times and then
    specialized to 0.0, and Dynamo restarts the frame's analysis (TensorifyScalarRestartAnalysis), which records
    the events again: nanoGPT printed 34 such lines before its first stage line.  Each symbol is said once, by
    its outcome, before the dynamo line of its compile."""
    script = os.path.join(os.path.dirname(HERE), "scripts", "dynamic_dropout.py")
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--record", str(tmp_path / "s.jsonl"),
                        script], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    rows = p.stdout.splitlines()
    shape = [x for x in rows if " specialize " in x or " constrain " in x]
    assert "restarted ([0/0_1])" in p.stdout  # the restart whose events were said once
    drop = [x for x in shape if "L['self']._modules['drop'].p" in x]
    assert len(drop) == 1 and "specialized to 0.0 by " in drop[0], shape  # not its >= 0, <= 1, == 0 on the way
    assert [x for x in shape if "constrained:" in x and "> 8 by " in x and "dynamic_dropout.py:13" in x], shape
    assert len(shape) == len(set(shape)) == 3, shape  # with the Linear's size specialized to 16
    first_dynamo = next(i for i, x in enumerate(rows) if " dynamo " in x)
    assert all(rows.index(x) < first_dynamo for x in shape), rows
