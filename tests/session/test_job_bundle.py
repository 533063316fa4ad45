"""``inductor-step report`` and ``export`` of a torchrun job (a job file naming one session per rank), on checked-in
sessions: tests/fixtures/job_step (recorded by ``inductor-step --headless --run --nproc-per-node 2``), two timed
fixtures as a job's ranks, a job file that cannot be read.  The exports are read back by tlparse's multi-rank mode
(``tlparse DIR --all-ranks-html``).  The same on a two-rank job recorded here (needs torch):
tests/tracer/test_job_bundle_real.py."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from inductor_step.session.format import JOB_FORMAT, write_job
from inductor_step.cli.export import main_export
from inductor_step.cli.report import main_report
from inductor_step.session.export import collective_schedule, export_job
from inductor_step.session.report import build_job_report

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ALL_REDUCE = ["torch.ops._c10d_functional.all_reduce_.default", "torch.ops._c10d_functional.wait_tensor.default"]


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


# --------------------------------------------------------------------------- export

def _tlparse() -> str:
    exe = shutil.which("tlparse") or os.path.join(os.path.dirname(sys.executable), "tlparse")
    if not os.access(exe, os.X_OK):
        pytest.skip("tlparse is not installed (pip install tlparse): cannot check the export with it")
    return exe


def _all_ranks(trace_dir: str, out: str) -> tuple[str, str]:
    """``tlparse DIR --all-ranks-html``: (its output, the landing page's text)."""
    proc = subprocess.run([_tlparse(), trace_dir, "--all-ranks-html", "-o", out, "--overwrite", "--no-browser"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr, _read(os.path.join(out, "index.html"))


def _log_events(log: str) -> list[dict]:
    return [json.loads(line.split("] ", 1)[1]) for line in _read(log).split("\n") if line.startswith("V")]


def test_collective_schedule_from_wrapper():
    wrapper = ("# File: .../_functional_collectives.py:195 in all_reduce, code: torch.ops._c10d_functional.all_reduce(\n"
               "    torch.ops._c10d_functional.all_reduce_.default(buf0, 'sum', '0')\n"
               "    # [Provenance debug handles] torch.ops._c10d_functional.wait_tensor.default:3\n"
               "    torch.ops._c10d_functional.wait_tensor.default(buf0)\n")
    assert collective_schedule(wrapper) == ALL_REDUCE
    assert collective_schedule("def call(args):\n    return (buf0,)\n") == []


@pytest.mark.parametrize("command", ["report", "export"])
def test_job_file_unreadable(command, tmp_path, capsys):
    bad = tmp_path / "bad.job.json"
    bad.write_text('{"type": "job", "format": "inductor-step-job/1", "ranks": [')
    argv = [str(bad), str(tmp_path / "out")] if command == "export" else [str(bad), "--out", str(tmp_path / "out")]
    rc = (main_export if command == "export" else main_report)(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith(f"inductor-step: {bad} is not a job file")


def test_job_report_timed_ranks_name_the_slower_kernel(tmp_path):
    """Two timed sessions of one script (tests/fixtures/diff_config_{a,b}.jsonl, recorded with --run)
    as the two ranks of a job: the same graph and kernel, timed far apart."""
    for rank, name in ((0, "diff_config_a.jsonl"), (1, "diff_config_b.jsonl")):
        shutil.copy(os.path.join(REPO, "tests", "fixtures", name), tmp_path / f"t.rank{rank}.jsonl")
    job = str(tmp_path / "t.job.json")
    write_job(job, {"type": "job", "format": JOB_FORMAT, "script": "diff_config.py", "argv": [], "launcher": [],
                    "nproc_per_node": 2, "world_size": 2, "ranks": [
                        {"rank": r, "session": f"t.rank{r}.jsonl", "state": "done", "returncode": 0} for r in (0, 1)]})
    out, problems = build_job_report(job, str(tmp_path / "b"))
    md = _read(os.path.join(out, "REPORT.md"))
    assert problems == [] and "#### Run timings by rank" in md
    row = next(line for line in md.splitlines() if line.startswith("| `[0/0] inference` | 59.9768 ms"))
    assert "| 59.9768 ms, kernels 0.0019 ms | 60.0234 ms, kernels 49.9954 ms |" in row
    assert row.endswith("| cpp_fused_add_mul_native_layer_norm_relu_sum_0 26850.4x slower on rank 1 "
                        "(49.9954 ms vs 0.0019 ms on rank 0) |")
    # b was compiled with max_fusion_size = 1: the graph table and the diff view say where
    graph_row = next(line for line in md.splitlines() if line.startswith("| `[0/0] inference` | codegen"))
    assert "fusion, kernels differ on rank 1" in graph_row
    assert "scheduler nodes after fusion: 1 -> 4" in md
    full = _read(os.path.join(out, "DIFF_rank0_rank1.txt"))
    assert full.startswith("A: t.rank0.jsonl\nB: t.rank1.jsonl\n") and "fused group split" in full


# --------------------------------------------------------------------------- the recorded job fixture

JOB_STEP = os.path.join(REPO, "tests", "fixtures", "job_step", "job.job.json")


def test_job_step_fixture_report_and_export(tmp_path):
    """tests/fixtures/job_step: a job recorded by ``inductor-step --headless --run --nproc-per-node 2``
    (a compiled training step, forward and backward, and a compiled function with an all_reduce)."""
    out, problems = build_job_report(JOB_STEP, str(tmp_path / "b"))
    md = _read(os.path.join(out, "REPORT.md"))
    assert problems == [] and md.startswith("### torch.compile under torchrun: 2 rank(s)\n")
    graph_rows = [line for line in md.splitlines() if re.match(r"^\| `\[\d/\d\] \w+` \| codegen", line)]
    assert [r.split("`")[1] for r in graph_rows] == ["[0/0] forward", "[0/0] backward", "[1/0] inference"]
    assert all("| ranks 0,1: agree" in r for r in graph_rows), graph_rows
    # the all_reduce graph is timed without its collectives (stand-ins ran in their place): each rank says so
    timing = next(line for line in md.splitlines() if line.startswith("| `[1/0] inference` | 0."))
    assert timing.count("(2 collective call(s) not timed, left out)") == 2 and timing.endswith("| agree |")

    logs, problems = export_job(JOB_STEP, str(tmp_path / "trace"))
    assert problems == [] and len(logs) == 2
    printed, landing = _all_ranks(str(tmp_path / "trace"), str(tmp_path / "tl"))
    assert "Processing rank 0" in printed and "Processing rank 1" in printed and "Diverging" not in landing
    for rank in (0, 1):
        with open(os.path.join(tmp_path / "tl", f"rank_{rank}", "compile_directory.json")) as f:
            assert set(json.load(f)) == {"[0/0]", "[1/0]"}
