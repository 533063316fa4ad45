"""Timing a compiled graph that holds collectives ("whether their kernels and (when timed)
kernel times agree ... a slower kernel").

A post-grad graph with ``_c10d_functional`` ops cannot be run alone: after the script the process group is
gone ("Could not resolve the process group registered under the name 0"), and while the script runs the
other ranks would not join, so a real collective would wait for them.  The timing harness runs the wrapper
with each collective replaced by a local stand-in: every compute kernel gets its time, each collective is
listed with no time and the reason, and the graph's times say they exclude the collectives.

Real compiles, no mocks: a world-size-1 gloo group in a subprocess (timed while the group exists, under a
``TorchDispatchMode`` that records every op the dispatcher sees, so a real collective would show; then
after ``destroy_process_group``), and one 2-rank torchrun job through the headless CLI
(tests/scripts/job_step.py), whose rank sessions go through the run pane's text and the ledger.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from inductor_step.session.format import read_job, read_session, validate

from conftest import wait_for

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")
pytestmark = pytest.mark.skipif(not dist.is_available(), reason="needs torch.distributed (gloo)")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REASON = "timing it alone needs every rank running it together"
#: a collective as the wrapper calls it: torch.ops._c10d_functional.all_reduce_.default(buf1, 'sum', '0')
WRAPPER_COLLECTIVE = re.compile(r"^\s*(?:buf\d+ = )?torch\.ops\._c10d_functional\.(\w+)\.default\(", re.M)

DIRECT = textwrap.dedent('''
    import json, os, sys
    import torch
    import torch.distributed as dist
    import torch.distributed._functional_collectives as fc
    from torch._inductor.utils import run_and_get_code
    from torch.utils._python_dispatch import TorchDispatchMode
    from inductor_step.tracer.timing import time_graph

    dist.init_process_group("gloo", rank=0, world_size=1, store=dist.HashStore())

    def f(x, w):
        y = torch.sin(x) @ w
        dist.all_reduce(y)                                      # in place: all_reduce_ + wait_tensor
        g = fc.all_gather_tensor(y, 0, dist.group.WORLD)          # out of place, another shape
        r = fc.reduce_scatter_tensor(g.cos(), "sum", 0, dist.group.WORLD)
        return r + 1

    x, w = torch.randn(8, 16), torch.randn(16, 16)
    _, codes = run_and_get_code(torch.compile(f), x, w)
    path = os.path.join(sys.argv[1], "output_code.py")
    with open(path, "w") as fh:
        fh.write(codes[0])

    class Seen(TorchDispatchMode):
        """Every op the dispatcher runs while active (a real collective is one)."""
        def __init__(self):
            super().__init__()
            self.ops = set()
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.add(func.name())
            return func(*args, **(kwargs or {}))

    with Seen() as control:  # the detector sees a real collective
        fc.wait_tensor(fc.all_reduce(torch.ones(2), "sum", dist.group.WORLD))
    with Seen() as seen:
        alive = time_graph(path, None, "cpu", rep=5)
    dist.destroy_process_group()
    dead = time_graph(path, None, "cpu", rep=5)
    from inductor_step.tracer.whatif import compare_outputs
    numerics = compare_outputs(path, path, None)  # a what-if variant's check runs the graph too
    print("RESULT " + json.dumps({"alive": alive, "dead": dead, "numerics": numerics, "ops": sorted(seen.ops),
                                  "control": sorted(control.ops), "path": path}, default=str))
''')


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for k in ("TORCH_LOGS", "TORCH_TRACE", "RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(k, None)
    return env


@pytest.fixture(scope="module")
def direct(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("direct")
    script = tmp / "direct.py"
    script.write_text(DIRECT)
    p = subprocess.run([sys.executable, str(script), str(tmp)], cwd=str(tmp), env=_env(), capture_output=True,
                       text=True, timeout=300)
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert p.returncode == 0 and line, f"rc={p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-5000:]}"
    out = json.loads(line[len("RESULT "):])
    with open(out["path"]) as fh:
        out["wrapper"] = fh.read()
    return out


def _collectives(run: dict) -> list[dict]:
    return [k for k in run["kernels"] if k.get("collective")]


def _compute(run: dict) -> list[dict]:
    return [k for k in run["kernels"] if not k.get("collective")]


@pytest.mark.parametrize("when", ["alive", "dead"])
def test_every_compute_kernel_is_timed_and_every_collective_is_listed_untimed_with_its_reason(direct, when):
    run = direct[when]
    assert not run.get("error"), run.get("error")
    # the collectives, in the wrapper's call order, as the wrapper calls them
    assert [k["collective"] for k in _collectives(run)] == WRAPPER_COLLECTIVE.findall(direct["wrapper"]) == \
        ["all_reduce_", "wait_tensor", "all_gather_into_tensor", "wait_tensor", "reduce_scatter_tensor", "wait_tensor"]
    for k in _collectives(run):
        assert k["median_ms"] is None and k.get("share") is None, k
        assert REASON in k["not_timed"] and k["name"].startswith("torch.ops._c10d_functional."), k
        assert k["stand_in"], k
    # every compute kernel of the wrapper: the C++ kernels and the matmul
    compute = _compute(run)
    assert {k["backend"] for k in compute} == {"cpp", "extern"}
    assert sum(1 for k in compute if k["name"].startswith("extern_kernels.mm")) == 1
    assert sum(1 for k in compute if k["backend"] == "cpp") == len(re.findall(r"^\s*cpp_fused_\w+\(", direct["wrapper"],
                                                                             re.M)) == 3
    for k in compute:
        assert k["median_ms"] > 0 and 0 < k["share"] <= 1, k
    # the sums and shares are over the compute kernels only, and say so
    assert run["kernel_sum_ms"] == pytest.approx(sum(k["median_ms"] for k in compute), rel=1e-9)
    assert sum(k["share"] for k in compute) == pytest.approx(1.0)
    assert run["compiled_ms"] > 0
    assert run["collectives_stubbed"] == [k["name"] for k in _collectives(run)]
    assert "exclude" in run["collectives_note"] and "6 collective" in run["collectives_note"], run["collectives_note"]


def test_timing_never_runs_a_real_collective_while_the_process_group_exists(direct):
    assert any(op.startswith("_c10d_functional::") for op in direct["control"]), direct["control"]
    assert not [op for op in direct["ops"] if "c10d" in op], direct["ops"]
    assert "aten::mm.out" in direct["ops"]  # the detector saw the graph's own ops


#: a collective's arguments with group_size 2 and 3 (the world-size-1 graph above only has group_size 1)
SHAPE_CASES = {
    "all_gather_into_tensor": lambda x: (x, 2, "g"),
    "all_gather_into_tensor_coalesced": lambda x: ([x, x[:2]], 3, "g"),
    "reduce_scatter_tensor": lambda x: (x, "sum", 2, "g"),
    "reduce_scatter_tensor_coalesced": lambda x: ([x], "sum", 3, "g"),
    "all_reduce": lambda x: (x, "sum", "g"),
    "all_reduce_": lambda x: (x, "sum", "g"),
    "all_to_all_single": lambda x: (x, [2, 4], [3, 3], "g"),
    "broadcast": lambda x: (x, 0, "g"),
    "wait_tensor": lambda x: (x,),
}


@pytest.mark.parametrize("op", sorted(SHAPE_CASES))
def test_each_stand_in_returns_what_the_collectives_own_meta_kernel_says(op):
    """Shape, stride and dtype against torch's fake-tensor run of the real op (its Meta kernel, which needs
    no process group): a wrong shape would trip the wrapper's assert_size_stride, or the kernels after it."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    from inductor_step.tracer.adapter.collectives import STAND_INS

    x = torch.randn(6, 3)
    with FakeTensorMode() as mode:
        fake = SHAPE_CASES[op](mode.from_tensor(x))
        want = getattr(torch.ops._c10d_functional, op).default(*fake)
    got = STAND_INS[op][0](*SHAPE_CASES[op](x))
    want, got = (list(v) if isinstance(v, (list, tuple)) else [v] for v in (want, got))
    assert [(tuple(t.shape), t.stride(), t.dtype) for t in got] == [(tuple(t.shape), t.stride(), t.dtype) for t in want]


def test_a_what_if_check_of_outputs_runs_the_same_stand_ins_and_says_so(direct):
    n = direct["numerics"]
    assert [e.get("max_abs") for e in n["vs_original"]] == [0.0], n
    assert "stand-ins" in n["note"], n


# ----------------------------------------------------------------------------- a 2-rank torchrun job

@pytest.fixture(scope="module")
def job(tmp_path_factory) -> dict[int, list[dict]]:
    tmp = tmp_path_factory.mktemp("job")
    record = tmp / "job.jsonl"
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--nproc-per-node", "2", "--run",
                        "--record", str(record), os.path.join(ROOT, "tests", "scripts", "job_step.py")],
                       cwd=str(tmp), env=_env(), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"rc={p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    _job, ranks = read_job(str(tmp / "job.job.json"))
    assert sorted(ranks) == [0, 1]
    return {r: list(read_session(path)) for r, path in ranks.items()}


def _run_of(msgs: list[dict], key: str) -> dict:
    return next(m for m in msgs if m.get("type") == "run" and f"{m['compile_id']} {m['graph_kind']}" == key)


def test_each_rank_times_its_graph_with_the_all_reduce_and_both_ranks_list_the_same_kernels(job):
    runs = {r: _run_of(msgs, "[1/0] inference") for r, msgs in job.items()}
    for r, run in runs.items():
        assert not run.get("error"), (r, run.get("error"))
        assert [k["collective"] for k in _collectives(run)] == ["all_reduce_", "wait_tensor"]
        assert [k["backend"] for k in _compute(run)] == ["cpp", "cpp"]
        assert all(k["median_ms"] > 0 for k in _compute(run))
        assert "exclude" in run["collectives_note"]
        # eager: the post-grad graph ran with the same stand-ins; its collective nodes have no eager time
        assert run["eager_ms"] > 0
        # (the timing process gets the graph re-traced: all_reduce_default, as eager_by_node in session/ledger/ says)
        assert sorted(re.sub(r"_default$", "", n) for n in run["eager_nodes_stubbed"]) == ["all_reduce_", "wait_tensor"]
        assert not set(run["eager_nodes_ms"]) & set(run["eager_nodes_stubbed"])
        assert len(run["eager_nodes_ms"]) == 3  # sin, mul, add
        assert "stand-ins" in run["eager_nodes"]
    assert [k["name"] for k in runs[0]["kernels"]] == [k["name"] for k in runs[1]["kernels"]]
    # every run message of both ranks, the new fields included, matches the format's types
    assert [p for msgs in job.values() for m in msgs if m.get("type") == "run" for p in validate(m)] == []


def test_the_run_pane_says_collective_not_timed_and_the_ledger_does_not_count_it_as_zero(job):
    from inductor_step.session import ledger
    from inductor_step.session.store import Store
    from inductor_step.session.text import run_cells, run_kernel_text, run_summary, run_text

    msgs = job[0]
    run = _run_of(msgs, "[1/0] inference")
    ar = next(k for k in run["kernels"] if k.get("collective") == "all_reduce_")
    cells = run_cells(ar)
    assert cells["median ms [p20-p80]"] == "collective, not timed" and cells["share"] == "-"
    assert f"collective, not timed: a collective: {REASON}" in run_kernel_text(ar, None, False, "")
    summary = run_summary("[1/0] inference", run)
    assert "collective" in summary and "exclude" in summary
    assert "not timed" in run_text(run)

    s = Store.of(msgs)
    rows = [r for r in ledger.roofline_rows(s) if r.graph == "[1/0] inference"]
    untimed = [r for r in rows if r.name.startswith("torch.ops._c10d_functional.")]
    assert len(untimed) == 2
    for r in untimed:
        assert r.measured_ms is None and r.wasted_ms is None and "collective, not timed" in r.missing
    text = ledger.summary(s)
    assert "2 collective call(s) not timed" in text, text
    lines = [a for a in ledger.line_rows(s) if any(k.startswith("[1/0] inference torch.ops") for k in a.kernels)]
    assert lines and all(a.untimed for a in lines), lines
    assert all("collective, not timed" in u for a in lines for u in a.untimed)
    md = ledger.report_markdown(s)
    assert "collective, not timed" in md


def test_pane_7_lists_the_collectives_last_and_says_why_they_have_no_time(job):
    """The run pane of rank 0's session, in the app: the two collectives sort after the timed kernels, their
    median cell reads "collective, not timed", and the detail of one says why and what ran in its place."""
    import asyncio

    from inductor_step.tui.app import StepApp
    from inductor_step.tui.codeview import CodeView
    from inductor_step.tui.table import Table

    app = StepApp(messages=list(job[0]), session_path="rank0.jsonl")
    got: dict = {}

    async def main():
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await pilot.press("7")
            await pilot.press("g")
            for _ in range(list(app.session.graphs).index("[1/0] inference")):
                await pilot.press("down")
            await pilot.press("enter")
            table = app.query_one("#table-run", Table)
            await wait_for(pilot, lambda: app.view.graph == "[1/0] inference" and table.row_count >= 4, timeout=10,
                           seen=lambda: (app.view.graph, table.row_count))
            median = table.labels.index("median ms [p20-p80]")
            got["graph"] = app.view.graph
            got["cells"] = [str(table.get_row_at(r)[median]) for r in range(table.row_count)]
            table.move_cursor(row=table.row_count - 1)
            await wait_for(pilot, lambda: "collective, not timed" in app.query_one("#code-run", CodeView).text,
                           timeout=10, seen=lambda: app.query_one("#code-run", CodeView).text[:300])
            got["detail"] = app.query_one("#code-run", CodeView).text

    asyncio.run(main())
    assert got["graph"] == "[1/0] inference"
    # a kernel's time, marked "!" where the kernels' times were not reliable (a busy machine)
    assert got["cells"][2:] == ["collective, not timed"] * 2 and all(c.lstrip("!")[0].isdigit() for c in got["cells"][:2]), got
    assert f"collective, not timed: a collective: {REASON}" in got["detail"]
    assert "local stand-in in its place" in got["detail"] and "exclude" in got["detail"]
