"""The run stage's whole-call figure: the callable torch.compile returned, called again with the script's own
arguments once the script has returned, against the module (or function) itself under
``torch.compiler.set_stance("force_eager")`` (tracer.timing.script_call), on CPU, real compiles.

``tests/scripts/three_calls.py``: a module called three times under no_grad, a function Dynamo splits in two
graphs at a print, a function whose guard the script breaks after its last call, a sweep of three models
compiled, called once and let go, and a model compiled inside ``main()``, which returns before the run stage.
"""

from __future__ import annotations

import os

import pytest

from tests.tracer.test_eager_baseline import SCRIPTS, _headless

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    return _headless(tmp_path_factory.mktemp("calls"), os.path.join(SCRIPTS, "three_calls.py"))


def test_each_compiled_callable_is_timed_whole_against_itself_without_compile(recorded):
    proc, runs = recorded
    assert proc.returncode == 0, proc.stderr[-2000:]
    mlp = runs["[0/0] inference"]["script_call"]
    assert mlp["name"] == "MLP" and mlp["calls"] == 3 and mlp["grad_enabled"] is False
    assert mlp["graphs"] == ["[0/0] inference"]
    assert mlp["compiled_ms"] > 0 and mlp["eager_ms"] > 0
    assert mlp["cupti"] == "CPU: not applicable"  # on CUDA: detached before the repeats (the profiled calls left it)
    assert "script's call   MLP, whole: compiled" in proc.stdout
    assert mlp["how"].endswith("on the script's main thread, as the script called it"), mlp["how"]


def test_a_call_of_two_graphs_is_one_figure_named_on_both(recorded):
    _, runs = recorded
    first, second = runs["[1/0] inference"]["script_call"], runs["[2/0] inference"]["script_call"]
    assert first == second
    assert first["name"] == "two_graphs" and first["graphs"] == ["[1/0] inference", "[2/0] inference"]
    assert first["compiled_ms"] > 0


def test_the_scripts_prints_are_not_repeated_by_the_timed_calls(recorded):
    proc, runs = recorded
    assert proc.stdout.count("graph break") <= 3, proc.stdout.count("graph break")  # the script's two calls (+ tracing)
    assert "line(s) the repeated calls printed were discarded" in runs["[1/0] inference"]["script_call"]["how"]


def test_a_call_that_would_recompile_is_not_timed_and_says_why(recorded):
    proc, runs = recorded
    fig = runs["[3/0] inference"]["script_call"]
    assert "would recompile" in fig["missing"]
    assert "script's call   scaled: not timed: the compiled call: repeating it would recompile" in proc.stdout
    assert runs["[3/0] inference"]["compiled_ms"] > 0  # the graph's own figures are there all the same


def test_a_sweep_of_models_is_let_go_and_says_so(recorded):
    proc, runs = recorded
    # our record keeps the callable called last alive, no other: every swept model but the last is gone at once,
    # and the last once the script calls another compiled callable
    assert "released but the last True" in proc.stdout and "released True" in proc.stdout
    swept = [r["script_call"] for r in runs.values() if (r.get("script_call") or {}).get("name") == "Linear"]
    assert len(swept) == 3, [r.get("script_call") for r in runs.values()]
    assert all("the script let go of it" in f["missing"] for f in swept), swept


def test_a_model_compiled_inside_main_is_timed_after_main_returned(recorded):
    proc, runs = recorded
    block = [r["script_call"] for r in runs.values() if (r.get("script_call") or {}).get("name") == "Block"]
    assert block and all(f.get("compiled_ms", 0) > 0 and f.get("eager_ms", 0) > 0 for f in block), block
    assert "script's call   Block, whole: compiled" in proc.stdout


def test_the_report_lists_each_call_once(recorded, tmp_path):
    import subprocess
    import sys

    proc, _ = recorded
    session = next(a for a in proc.args if a.endswith("s.jsonl"))
    out = subprocess.run([sys.executable, "-m", "inductor_step", "report", session, "--out", str(tmp_path / "r")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    report = open(os.path.join(tmp_path / "r", "REPORT.md"), encoding="utf-8").read()
    assert "The script's calls, timed whole" in report
    assert report.count("- two_graphs, whole: compiled") == 1  # one call, two graphs: one line
    assert "- MLP, whole: compiled" in report and "- scaled: not timed:" in report


def _autogroup() -> str | None:
    """This process's scheduler autogroup where Linux's autogroups are on, else None."""
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            if f.read().strip() != "1":
                return None
        with open("/proc/self/autogroup") as f:
            return f.read().strip() or None  # as tracer.timing.rounds.scheduling_group reads it
    except OSError:
        return None


@pytest.mark.skipif(not hasattr(os, "getsid"), reason="no sessions on this platform")
def test_the_timings_run_in_the_session_inductor_step_was_started_in(recorded):
    """The agent ran in a session of its own (``start_new_session``): with autogroups on, the scheduler shares the
    CPUs between sessions first, and beside two busy loops of the shell a process in a session of its own had its
    two OpenMP threads left on one core more often (BENCHMARKS.md, "Session 39").  The script's call (timed in the
    agent) and each graph (timed in the worker, the agent's child) now run in this test's session, which
    ``inductor-step`` inherited, and in its autogroup; pane 7's summary says so."""
    proc, runs = recorded
    here, group = os.getsid(0), _autogroup()
    call = runs["[0/0] inference"]["script_call"]["load"]
    graph = runs["[0/0] inference"]["graph_rounds"]["load"]
    for where in (call, graph):
        assert where["session"] == here and where["launch_session"] == here, where
        assert where["autogroup"] == group, where
    if group:  # pane 7 says where the graph was timed
        from inductor_step.session.run_summary_text import run_summary

        text = run_summary("[0/0] inference", runs["[0/0] inference"])
        assert f"scheduler group while timing   {group}, session {here}: the session inductor-step was started in" \
            in text, text
