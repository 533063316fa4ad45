"""Job command lines a person types: a bad ``--nproc-per-node`` is one line and exit
status 2, and ``report`` of a job file writes its bundle beside the job file, wherever it is run from."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JOB_DIR = os.path.join(REPO, "tests", "fixtures", "job_step")


def _cli(args: list[str], cwd: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(REPO)] + [p for p in [env.get("PYTHONPATH")] if p])
    return subprocess.run([sys.executable, "-m", "inductor_step", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_bad_option_values_are_one_line_and_exit_2(tmp_path):
    for args, want in ((["--nproc-per-node", "abc", "train.py"], "--nproc-per-node abc: not a whole number"),
                       (["--rank", "x", "train.py"], "--rank x: not a whole number")):
        p = _cli(args, str(tmp_path))
        assert p.returncode == 2 and p.stdout == "", p
        assert p.stderr.strip().splitlines() == [f"inductor-step: {want} (inductor-step -h lists the options)"], p.stderr


def test_report_of_a_job_file_goes_beside_the_job_file(tmp_path):
    jobs = tmp_path / "runs"
    shutil.copytree(JOB_DIR, jobs)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    p = _cli(["report", str(jobs / "job.job.json")], str(elsewhere))
    assert p.returncode == 0, p.stderr[-2000:]
    assert os.path.isfile(jobs / "report-job" / "REPORT.md"), (os.listdir(jobs), p.stdout, p.stderr)
    assert not os.path.exists(elsewhere / "inductor-step-sessions")
