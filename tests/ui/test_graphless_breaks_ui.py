"""Graph breaks in frames that give no graph: Dynamo broke off in them before any op it could put in a graph
(a ``with lock:`` around the first tensor op, as Hugging Face's output capturing does in Mixtral's forward),
so their tensor ops ran eagerly.  Their break reasons were dropped (only a frame with a graph sent its
breaks), and pane 1 said those frames had "no tensor op to compile there"."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(HERE)
SCRIPT = os.path.join(HERE, "scripts", "graphless_break.py")

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")


def test_pane_1_says_why_the_frames_before_the_first_graph_gave_none(app_driver, tmp_path) -> None:
    """A real compile of tests/scripts/graphless_break.py: frames 0 (``f``) and 1 (``inner``) break on the lock's
    context manager and give no graph, ``[2/0] inference`` (the ``* 2`` after the call) is the only graph.
    Pane 1 names the break, its frames and its line; it does not say the frames had no tensor op."""
    path = str(tmp_path / "s.jsonl")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    env.pop("TORCH_LOGS", None)
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--record", path, SCRIPT],
                       cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    seen: dict = {}

    async def steps(app, pilot) -> None:
        await pilot.press("1")
        await pilot.pause()
        seen["graphs"] = list(app.session.graphs)
        seen["code"] = app.query_one("#code-dynamo").text
        seen["note"] = app.session.graph_note("[2/0] inference")

    app_driver(steps, size=(80, 24), path=path)
    assert seen["graphs"] == ["[2/0] inference"], seen["graphs"]
    head = seen["code"].split("class GraphModule")[0]
    assert "no tensor op to compile there" not in head, head
    assert "Unsupported context manager" in head, head
    assert "# graph break: Unsupported context manager (in [0/0], [1/0], which gave no graph)" in head, head
    assert "#   user code: graphless_break.py:9\n" in head, head  # the `with lock:` line, as the tables show it
    assert "frames 0-1" in head, head
    assert "Unsupported context manager" in seen["note"] and "no tensor op" not in seen["note"], seen["note"]

    from inductor_step.session.compiled import Compiled  # the report's and the CI gate's count

    assert [(b.compile_id, b.reason) for b in Compiled.load(path).graph_breaks] == [
        ("[0/0]", "Unsupported context manager"), ("[1/0]", "Unsupported context manager")]


def test_the_last_graphs_pane_1_and_the_report_say_why_frames_after_it_gave_none(app_driver, tmp_path) -> None:
    """The same script with ``after``: ``g`` (compiled, called after ``f``) breaks on the same lock in its own frame
    and gives no graph, after the session's last graph.  Its break came with no graph's stop, so it was never
    sent; now the ``done`` message carries it: pane 1 of the last graph names it after the frames before, the
    graph note says it, the count (report and gate) has it, and REPORT.md lists it."""
    path = str(tmp_path / "s.jsonl")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    env.pop("TORCH_LOGS", None)
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--record", path, SCRIPT, "after"],
                       cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    seen: dict = {}

    async def steps(app, pilot) -> None:
        await pilot.press("1")
        await pilot.pause()
        seen["graphs"] = list(app.session.graphs)
        seen["code"] = app.query_one("#code-dynamo").text
        seen["note"] = app.session.graph_note("[2/0] inference")

    app_driver(steps, size=(80, 24), path=path)
    assert seen["graphs"] == ["[2/0] inference"], seen["graphs"]
    head = seen["code"].split("class GraphModule")[0]
    before, _, after = head.partition("after it gave no graph")
    assert "frames 0-1 before it gave no graph" in before, head
    assert "# graph break: Unsupported context manager (in [3/0], which gave no graph)" in after, head
    assert "#   user code: graphless_break.py:9\n" in after, head
    assert "after it gave no graph: Dynamo broke off there" in seen["note"], seen["note"]

    from inductor_step.session.compiled import Compiled

    assert [b.compile_id for b in Compiled.load(path).graph_breaks] == ["[0/0]", "[1/0]", "[3/0]"]
    out = subprocess.run([sys.executable, "-m", "inductor_step", "report", path, "--out", str(tmp_path / "r")],
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    report = open(os.path.join(tmp_path / "r", "REPORT.md"), encoding="utf-8").read()
    assert "- graph break in `[3/0]`, which gave no graph (its ops ran eagerly) at `" in report, report
