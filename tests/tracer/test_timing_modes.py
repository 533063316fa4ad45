"""On one real recording: every way of compiling that timing used to re-trace and
lose is timed, compiled and eager, or says which part could not be and why; other backends are recorded.

tests/scripts/timing_modes.py, recorded once with ``--headless --run`` and script arguments that look
like our options: frozen parameters (prepacked mkldnn weights), a ``torch.library.custom_op``, a compiled
``Adam(foreach=True).step``, compiled autograd, ``aot_eager`` and a custom backend, a compile after
``torch._dynamo.reset()``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from inductor_step.session import format as protocol
from inductor_step.tui.bars import stage_text
from inductor_step.session.store import Store
from inductor_step.tui.state import ViewState

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(HERE)
SCRIPT = os.path.join(HERE, "scripts", "timing_modes.py")
ARGS = ["--n", "32", "--r", "1", "--h", "--help", "-m", "x"]  # each once an "ambiguous option" of ours


class Rec:
    def __init__(self, p: subprocess.CompletedProcess, record: str):
        self.rc, self.stdout, self.stderr = p.returncode, p.stdout, p.stderr
        self.msgs = list(protocol.read_session(record))
        self.runs = {protocol.graph_key(m): m for m in self.msgs if m["type"] == "run"}
        self.stops: dict[str, dict[str, dict[str, Any]]] = {}
        for m in self.msgs:
            if m["type"] == "stop":
                self.stops.setdefault(protocol.graph_key(m), {})[m["stage"]] = m
        self.done = next(m for m in self.msgs if m["type"] == "done")


@pytest.fixture(scope="module")
def rec(tmp_path_factory: pytest.TempPathFactory) -> Rec:
    d = tmp_path_factory.mktemp("timing_modes")
    record = str(d / "modes.jsonl")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("TORCH_LOGS", None)
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--run", "--record", record, SCRIPT, *ARGS],
                       cwd=str(d), env=env, capture_output=True, text=True, timeout=600)
    return Rec(p, record)


def _inductor_graphs(rec: Rec) -> list[str]:
    return [k for k, st in rec.stops.items() if "codegen" in st]


def test_the_script_runs_as_without_us(rec: Rec) -> None:
    assert "match True" in rec.stdout, rec.stdout[-2000:] + rec.stderr[-3000:]
    assert "ARGV=" + json.dumps(ARGS) in rec.stdout  # arguments reached the script verbatim
    assert rec.rc == 0, rec.stderr[-3000:]
    assert not [e for m in rec.msgs for e in protocol.validate(m)]  # the new fields are in the session format


def test_every_inductor_graph_is_timed_compiled_and_eager(rec: Rec) -> None:
    graphs = _inductor_graphs(rec)
    assert len(graphs) >= 6, graphs  # frozen, custom op, optimizer step, forward + compiled autograd, after reset
    for k in graphs:
        run = rec.runs.get(k)
        assert run is not None and not run.get("error"), (k, run and run.get("error"))
        assert run["compiled_ms"] > 0, k
        assert run.get("eager_ms") is not None, (k, run.get("eager_error"))
        assert run.get("limit_s"), k


def test_each_mode_says_how_it_was_timed(rec: Rec) -> None:
    frozen = rec.runs["[0/0] inference"]
    assert "_frozen_param" in frozen["in_process"] and "opaque" in frozen["in_process"]
    custom = next(r for k, r in rec.runs.items() if "istep::scale_add" in (r.get("in_process") or ""))
    assert "custom_op" in custom["in_process"]
    foreach = [r for r in rec.runs.values() if r.get("eager_fixes")]
    assert len(foreach) == 1 and "in-place foreach" in foreach[0]["eager_fixes"]
    # compiled autograd's Dynamo graph (eager) calls torch._dynamo.compiled_autograd.ops, which do not
    # pickle: timed here, saying so
    ca = [r for k, r in rec.runs.items() if k.startswith("[!")]
    assert ca and all("Dynamo's graph (the eager baseline) cannot be sent" in r["in_process"] for r in ca)
    assert not [r for k, r in rec.runs.items()
                if r.get("in_process") and r is not frozen and r is not custom and not k.startswith("[!")]
    assert "eager not timed" not in rec.stdout


def test_compiled_autograd_graph_has_its_fx_nodes(rec: Rec) -> None:
    ca = [k for k in rec.stops if k.startswith("[!")]
    assert ca, list(rec.stops)
    for k in ca:
        assert len(rec.stops[k]["dynamo"]["graph"]["nodes"]) > 5, k


def test_other_backends_are_recorded_and_named(rec: Rec) -> None:
    other = rec.done["other_backends"]
    assert sorted(other.values()) == ["<lambda>", "aot_eager"]
    for key, backend in other.items():
        dyn = rec.stops[key]["dynamo"]
        assert dyn["backend"] == backend and len(dyn["graph"]["nodes"]) >= 5
        assert "not Inductor" in dyn["note"] and "lowering" not in rec.stops[key]
    aot = next(k for k, b in other.items() if b == "aot_eager")
    assert "inference" in rec.stops[aot]["aot"]["aot_graphs"]
    assert "(backend 'aot_eager', not Inductor)" in rec.stdout
    assert rec.done["inductor_graphs"] == len(_inductor_graphs(rec)) and rec.done.get("message") is None


def test_a_compile_after_reset_says_so(rec: Rec) -> None:
    after = [k for k in rec.stops if protocol.RESET_SEP in k]
    assert after == ["[0/0]@reset1 inference"], list(rec.stops)
    assert not [k for k in rec.stops if protocol.PART_SEP in k]  # no DDP-style part spelling
    assert rec.runs["[0/0]@reset1 inference"]["compiled_ms"] > 0


def test_a_failed_timing_is_never_a_done_run_stage(rec: Rec) -> None:
    key = "[0/0]@reset1 inference"
    run = dict(rec.runs[key])
    ok = Store.of([m for m in rec.msgs if m["type"] != "run" or protocol.graph_key(m) == key])
    view = ViewState(graph=key, stage="codegen")
    assert "✓run" in stage_text(ok, view, 120).plain
    failed = Store.of([m for m in rec.msgs if m["type"] != "run"] + [{**run, "error": "boom", "failed": True}])
    text = stage_text(failed, view, 120).plain
    assert "✗run" in text and "✓run" not in text
    assert "run" not in failed.stages_done(key)


NOTHING = os.path.join(HERE, "scripts", "nothing_for_inductor.py")


@pytest.fixture(scope="module")
def nothing(tmp_path_factory: pytest.TempPathFactory) -> Rec:
    d = tmp_path_factory.mktemp("nothing")
    record = str(d / "nothing.jsonl")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--record", record, NOTHING],
                       cwd=str(d), env=env, capture_output=True, text=True, timeout=600)
    return Rec(p, record)


def test_nothing_for_inductor_says_so_with_dynamos_reasons(nothing: Rec) -> None:
    from inductor_step.tui.bars import status_text
    from inductor_step.session.ranks import compare_ranks, text

    assert nothing.rc == 0 and "ok" in nothing.stdout
    done = nothing.done
    assert done["inductor_graphs"] == 0 and done["message"].startswith("no graph reached Inductor")
    assert done["break_reasons"] and all("graph break" in r for r in done["break_reasons"])
    assert "nothing_for_inductor.py:" in done["break_reasons"][0]  # where, and what broke
    assert "inductor-step: no graph reached Inductor" in nothing.stderr
    s = Store.of(nothing.msgs)
    assert "no graph reached Inductor" in status_text(s, ViewState(), False, "", None).plain
    # a job whose ranks compiled nothing for Inductor: never "the ranks agree"
    c = compare_ranks({0: Store.of(nothing.msgs), 1: Store.of(nothing.msgs)})
    summary = text(c)
    assert not c.agree and "agree" not in summary, summary
    assert "nothing to compare: no graph reached Inductor on ranks 0,1" in summary
    assert "graph break" in summary


def test_pane_7_of_another_backends_graph_says_r_does_not_time_it(rec: Rec, tmp_path) -> None:
    """Pane 7 on a graph Dynamo gave to aot_eager: not "press r to run and time every compiled graph" (r does not
    time it) but whose graph it is and what r times."""
    import asyncio

    from inductor_step.tui.app import StepApp

    aot = next(k for k, b in rec.done["other_backends"].items() if b == "aot_eager")
    seen = {}

    async def main():
        app = StepApp(messages=rec.msgs, session_path=str(tmp_path / "s.jsonl"))
        async with app.run_test(size=(120, 40)) as pilot:
            app.show_graph(aot)
            await pilot.press("7")
            await pilot.pause()
            seen["text"] = app.query_one("#code-run").text
    asyncio.run(main())
    assert seen["text"].startswith(f"# {aot}: Dynamo handed this graph to backend 'aot_eager', not Inductor"), seen
    assert "press r to run" not in seen["text"]
