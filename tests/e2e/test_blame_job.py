"""Blame in a torchrun job (``--nproc-per-node 2 --headless --blame numerics``, gloo on CPU): rank 0 bisects its first
divergent graph after the script (tests/scripts/blame_job.py: torch's relu fault injection in a graph that holds an
all_reduce), each step a torchrun job of the same two processes (rank 0 compares, every rank takes part in the
collectives); the verdict names the lowering of relu and gives a torchrun repro; rank 1 blames nothing.  ``--blame
speed`` on a job is refused in one line (exit 2).  About 40 s alone on the shared 2-core box (7 steps, each a job)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), "scripts", "blame_job.py")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    out = tmp_path_factory.mktemp("blame_job") / "job.jsonl"
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--nproc-per-node", "2", "--headless", "--blame",
                        "numerics", "--record", str(out), SCRIPT], capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout, str(out)


def test_rank_0_blames_the_relu_lowering_each_step_a_job(recorded, tmp_path):
    from inductor_step.session import blame as sb
    from inductor_step.session import format as protocol
    from inductor_step.session.format import read_session
    from inductor_step.session.report.job import build_job_report

    out, path = recorded
    assert "[rank0] blame       bisecting the first divergent graph: each step runs the script again as a torchrun " \
           "job of 2 processes" in out
    assert "[rank0] blame step  #0 the script as it compiles (Inductor): BAD" in out
    head = out.split("[rank0] blame numerics of [0/0]: ", 1)[1].splitlines()[0]
    assert head.startswith("inductor / lowerings #") and head.endswith(": relu")
    assert "[rank0]   divergence it leaves: none" in out
    assert "repro: torchrun --standalone --nproc-per-node 2 " in out
    assert "[rank1] blame" not in out
    job_path, base = protocol.job_paths(path)
    r0 = [m for m in read_session(base + ".rank0.jsonl") if m.get("type") == "blame"]
    r1 = [m for m in read_session(base + ".rank1.jsonl") if m.get("type") == "blame"]
    assert sb.runs(r0)[-1].verdict.what == "relu" and not r1
    bundle, _ = build_job_report(job_path, str(tmp_path / "r"))
    assert "inductor / lowerings #" in open(os.path.join(bundle, "rank0", "REPORT.md")).read().split("## Blame")[1]


def test_speed_blame_on_a_job_is_refused_in_one_line():
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--nproc-per-node", "2", "--headless", "--blame",
                        "speed", SCRIPT], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    assert "--blame speed" in p.stderr and "--blame numerics is" in p.stderr
