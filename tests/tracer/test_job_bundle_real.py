"""``inductor-step report`` and ``export`` of a real torchrun job: a job file naming one session per rank.

One real two-rank job (gloo, CPU) of ``tests/scripts/job_allreduce.py`` is recorded per module:
torch's own launcher (``python -m torch.distributed.run --nproc-per-node 2``) starts the headless
recorder in each rank; rank 1 compiles a graph with one more all_reduce that rank 0 runs eagerly
(``JOB_EXTRA_RANK``) and then dies (``JOB_DIE_RANK``: ``os._exit(3)``).  Each header gets its ``distributed`` part
and the job file is written with :func:`protocol.write_job`, as the job launcher does (:func:`record_job`).  The
exports are read back by tlparse's multi-rank mode (``tlparse DIR --all-ranks-html``).  The same commands on
checked-in jobs, without torch: tests/session/test_job_bundle.py.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile

import pytest

from inductor_step.session.format import JOB_FORMAT, read_job, write_job
from inductor_step.cli.export import main_export
from inductor_step.cli.report import main_report
from inductor_step.session.export import export_job
from inductor_step.session.report import build_job_report, build_report
from inductor_step.session.store import load_session

from tests.session.test_job_bundle import ALL_REDUCE, REPO, _all_ranks, _log_events, _read, _tlparse

SCRIPT = os.path.join(REPO, "tests", "scripts", "job_allreduce.py")


def _state(session: str) -> tuple[str, int | None, str | None]:
    """(state, returncode, message) of a rank as the job launcher writes them in its JobRank."""
    msgs = load_session(session)
    done = next((m for m in msgs if m.get("type") == "done"), None)
    if done is not None:
        return "done", done.get("returncode"), None
    rc = next((m.get("returncode") for m in msgs if m.get("type") == "agent_exit"), None)
    return "died", rc, "its stream ended before the script did"


def _has_job_launcher(env: dict) -> bool:
    """Whether this inductor-step's CLI launches torchrun jobs itself (``--nproc-per-node``)."""
    proc = subprocess.run([sys.executable, "-m", "inductor_step", "--help"], env=env, capture_output=True,
                          text=True, timeout=60)
    return "--nproc-per-node" in proc.stdout


def record_job(folder: str, base: str = "job", env: dict | None = None, pythonpath: str = REPO) -> str:
    """Record a two-rank job of SCRIPT under ``folder``: ``base.rank{0,1}.jsonl``, ``base.launcher.log``
    and ``base.job.json``; return the job file's path.

    With ``inductor-step --headless --nproc-per-node 2 --record base.jsonl SCRIPT`` where the CLI has
    it (the job launcher writes everything).  Else torch's launcher runs the headless recorder in
    each rank (``python -m torch.distributed.run --nproc-per-node 2 --no-python sh -c 'python -m
    inductor_step --headless --record base.rank$RANK.jsonl SCRIPT'``), and the header's ``distributed``
    part and the job file are written here as the job launcher writes them (the launcher options
    ``--nproc-per-node 2``; a rank without a ``done`` line died)."""
    pp = os.pathsep.join(p for p in (pythonpath, os.environ.get("PYTHONPATH")) if p)
    run_env = dict(os.environ, PYTHONPATH=pp, **(env or {}))
    job = os.path.join(folder, f"{base}.job.json")
    if _has_job_launcher(run_env):
        proc = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--nproc-per-node", "2",
                               "--record", f"{base}.jsonl", SCRIPT], cwd=folder, env=run_env,
                              capture_output=True, text=True, timeout=300)
        assert os.path.isfile(job), proc.stdout[-3000:] + proc.stderr[-3000:]
        return job
    rank_cmd = f'exec "{sys.executable}" -m inductor_step --headless --record {base}.rank$RANK.jsonl "{SCRIPT}"'
    with open(os.path.join(folder, f"{base}.launcher.log"), "w") as log:
        proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--no-python",
                               "sh", "-c", rank_cmd], cwd=folder, env=run_env, stdout=log,
                              stderr=subprocess.STDOUT, timeout=300)
    ranks = []
    for rank in (0, 1):
        session = os.path.join(folder, f"{base}.rank{rank}.jsonl")
        assert os.path.isfile(session), open(os.path.join(folder, f"{base}.launcher.log")).read()[-3000:]
        with open(session) as f:
            header, rest = f.readline(), f.read()
        h = json.loads(header)
        h["distributed"] = {"rank": rank, "local_rank": rank, "world_size": 2, "group_rank": 0, "restart_count": 0,
                            "stepped_rank": None, "collective_timeout_s": None,
                            "note": f"rank {rank} of 2: records every stop without pausing"}
        with open(session, "w") as f:
            f.write(json.dumps(h) + "\n" + rest)
        state, rc, message = _state(session)
        ranks.append({"rank": rank, "session": os.path.basename(session), "pid": h.get("pid"), "state": state,
                      "returncode": rc, "message": message})
    write_job(job, {"type": "job", "format": JOB_FORMAT, "script": SCRIPT, "argv": [],
                    "launcher": ["--nproc-per-node", "2"], "nproc_per_node": 2, "world_size": 2,
                    "stepped_rank": None, "collective_timeout_s": None, "ranks": ranks,
                    "launcher_log": f"{base}.launcher.log", "launcher_returncode": proc.returncode, "time": 0.0})
    return job


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> str:
    """The recorded job: rank 1 compiles one graph (with a collective) more than rank 0, then dies."""
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed: cannot record a real job")
    return record_job(str(tmp_path_factory.mktemp("job")), env={"JOB_EXTRA_RANK": "1", "JOB_DIE_RANK": "1"})


TIMEOUT_NOTE = "every process group's timeout raised to 3600 s while rank 0 may pause (the script asked for none)"


@pytest.fixture(scope="module")
def twin_job(job, tmp_path_factory) -> str:
    """A job whose two ranks agree: rank 0's session twice, the second copy labelled rank 1, written
    as a job that steps rank 0 with the collective timeout raised: the header's ``distributed`` note
    and a ``process_group`` line after it, as the agent writes them."""
    folder = str(tmp_path_factory.mktemp("twin"))
    src = read_job(job)[1][0]
    for rank in (0, 1):
        with open(src) as f:
            h, rest = json.loads(f.readline()), f.read()
        h["distributed"].update(rank=rank, local_rank=rank, stepped_rank=0, collective_timeout_s=3600.0,
                                note=TIMEOUT_NOTE)
        pg = {"type": "process_group", "call": "init_process_group", "backend": "gloo", "world_size": 2,
              "rank": rank, "timeout_asked_s": None, "default_s": 1800.0, "timeout_s": 3600.0, "t": 0.5}
        with open(os.path.join(folder, f"twin.rank{rank}.jsonl"), "w") as f:
            f.write(json.dumps(h) + "\n" + json.dumps(pg) + "\n" + rest)
    j, _ = read_job(job)
    j["ranks"] = [dict(r, session=f"twin.rank{r['rank']}.jsonl", state="done", returncode=0, message=None)
                  for r in j["ranks"]]
    j.update(stepped_rank=0, collective_timeout_s=3600.0)
    j.pop("launcher_log")
    path = os.path.join(folder, "twin.job.json")
    write_job(path, j)
    return path


def _without_rank1(job: str, folder: str) -> str:
    """A copy of ``job`` in ``folder`` whose rank 1 session is gone."""
    for name in os.listdir(os.path.dirname(job)):
        if ".rank1." not in name:
            shutil.copy(os.path.join(os.path.dirname(job), name), folder)
    return os.path.join(folder, os.path.basename(job))


def test_job_report_bundles_every_rank(job, tmp_path):
    out = str(tmp_path / "bundle")
    path, problems = build_job_report(job, out)
    assert path == out and problems == []
    names = set(os.listdir(out))
    assert {"REPORT.md", "job.job.json", "job.launcher.log", "job.rank0.jsonl", "job.rank1.jsonl", "rank0", "rank1",
            "DIFF_rank0_rank1.txt"} <= names
    # the bundled job file names the bundled sessions: `--open` of it finds every rank
    _, sessions = read_job(os.path.join(out, "job.job.json"))
    assert sorted(sessions) == [0, 1] and all(os.path.isfile(p) for p in sessions.values())
    assert _read(os.path.join(out, "job.launcher.log")) == _read(os.path.join(os.path.dirname(job), "job.launcher.log"))
    # each rank's own report, as the single-session report writes it, with Inductor's repro
    for rank in (0, 1):
        sub = os.path.join(out, f"rank{rank}")
        rank_md = _read(os.path.join(sub, "REPORT.md"))
        assert "#### Graphs compiled" in rank_md
        assert f"| torchrun rank | {rank} of world size 2 (local rank {rank}) |" in rank_md
        assert "repro_0-0_inference.py" in os.listdir(sub)
    assert "repro_1-0_inference.py" in os.listdir(os.path.join(out, "rank1"))
    assert "repro_1-0_inference.py" not in os.listdir(os.path.join(out, "rank0"))

    md = _read(os.path.join(out, "REPORT.md"))
    assert md.startswith("### torch.compile under torchrun: 2 rank(s), rank 1 died")
    rows = {int(m.group(1)): m.group(0) for m in re.finditer(r"^\| (\d) \| .*$", md, re.M)}
    assert "| done |" in rows[0] and "| 0 |" in rows[0]
    died = read_job(job)[0]["ranks"][1]
    assert died["state"] == "died" and died["message"]
    assert "**died**" in rows[1] and f"| {died['returncode']} |" in rows[1] and died["message"] in rows[1]
    assert "[1/0] inference codegen" in rows[1]  # where it was last seen
    assert "| collective timeout | left as the script set it |" in md
    assert re.search(r"^python -m torch.distributed.run (--standalone )?--nproc-per-node 2 \S*job_allreduce.py$", md, re.M)
    # which ranks compiled which graphs, and where they differ
    graph_rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `(\[\d/\d\] \w+)` \|.*$", md, re.M)}
    assert graph_rows["[0/0] inference"].endswith("| ranks 0,1: agree |")
    assert "2 collective call(s)" in graph_rows["[0/0] inference"]
    assert "| — |" in graph_rows["[1/0] inference"] and "rank 1:" in graph_rows["[1/0] inference"]
    assert "2 collective call(s)" in graph_rows["[1/0] inference"]
    assert "`[0/0] inference` rank 0: `all_reduce_` → `wait_tensor`" in md
    assert "`[0/0] inference` rank 1: `all_reduce_` → `wait_tensor`" in md
    assert "`[1/0] inference` rank 1: `all_reduce_` → `wait_tensor`" in md
    assert "`[1/0] inference` rank 0" not in md
    assert f"- rank 1 **died**: {died['message']} (last stop recorded: [1/0] inference codegen)" in md
    assert "- rank 1: rank 1 of 2: records every stop without pausing" in md
    # the diff view of rank 0 against rank 1: the graph only rank 1 compiled
    assert "rank 0 → rank 1 (`DIFF_rank0_rank1.txt`)" in md
    assert re.search(r"^  -\s+<-> \[1/0\] inference\s+only in B$", _read(os.path.join(out, "DIFF_rank0_rank1.txt")), re.M)
    assert "/tmp/" not in md  # paths outside the working directory are scrubbed
    # the launcher failed (rank 1's exit): its last lines, where torch's launcher names the failing rank
    assert "The launcher's log, last" in md and "exited with status 1)" in md


def test_job_report_agreeing_ranks(twin_job, tmp_path):
    out, problems = build_job_report(twin_job, str(tmp_path / "b"))
    md = _read(os.path.join(out, "REPORT.md"))
    assert problems == [] and "died" not in md and "None recorded on any rank." in md
    assert re.search(r"^\| `\[0/0\] inference` \|.*\| ranks 0,1: agree \|$", md, re.M)
    assert "own output" not in md  # the job file names no launcher log
    tar, _ = build_job_report(twin_job, str(tmp_path / "b"), archive=True)
    with tarfile.open(tar) as t:
        assert {"b/REPORT.md", "b/twin.job.json", "b/twin.rank1.jsonl", "b/rank1/REPORT.md"} <= set(t.getnames())
    assert "| stepped rank | 0 |" in md
    assert "| collective timeout | raised to 3600 s for the job" in md
    assert f"- rank 1: {TIMEOUT_NOTE}" in md
    assert "- rank 1: `init_process_group` backend gloo, size 2; timeout: none asked (torch's default 1800 s), 3600 s in effect" in md


def test_job_report_missing_session(job, tmp_path, capsys):
    src = _without_rank1(job, str(tmp_path))
    out = str(tmp_path / "bundle")
    rc = main_report([src, "--out", out])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert err == [f"inductor-step: rank 1: no such session file: {tmp_path}/job.rank1.jsonl"]
    # the rest is bundled all the same
    assert {"REPORT.md", "job.job.json", "job.launcher.log", "job.rank0.jsonl", "rank0"} <= set(os.listdir(out))
    md = _read(os.path.join(out, "REPORT.md"))
    assert "#### Missing from this bundle" in md and "job.rank1.jsonl" in md
    assert re.search(r"^\| 1 \| \*\*died\*\* \|.*no such session file", md, re.M)
    assert "(no session)" in md


def test_single_session_report_unchanged_by_jobs(job, tmp_path, capsys):
    """A rank's session is an ordinary session: `report SESSION` bundles it alone, as before."""
    session = read_job(job)[1][0]
    assert main_report([session, "--out", str(tmp_path / "one")]) == 0
    assert set(os.listdir(tmp_path / "one")) == {"REPORT.md", "job.rank0.jsonl", "repro_0-0_inference.py"}
    assert build_report(session, str(tmp_path / "two")).endswith("two")


def test_job_export_tlparse_reads_every_rank(job, tmp_path):
    trace = str(tmp_path / "trace")
    logs, problems = export_job(job, trace)
    assert problems == []
    assert sorted(os.path.basename(p) for p in logs) == ["dedicated_log_torch_trace_rank_0_job.log",
                                                        "dedicated_log_torch_trace_rank_1_job.log"]
    for rank, log in enumerate(sorted(logs)):
        events = [e for e in _log_events(log) if "str" not in e]
        assert events and all(e.get("rank") == rank for e in events)
    rank1 = [e for e in _log_events(sorted(logs)[1]) if e.get("artifact", {}).get("name") == "inductor_step_rank_state"]
    assert len(rank1) == 1 and rank1[0]["frame_id"] == 1  # under the graph it was last seen in

    out = str(tmp_path / "tl")
    printed, landing = _all_ranks(trace, out)
    assert "Processing rank 0" in printed and "Processing rank 1" in printed
    assert "Rank 0" in landing and "Rank 1" in landing
    dirs = {}
    for rank in (0, 1):
        with open(os.path.join(out, f"rank_{rank}", "compile_directory.json")) as f:
            dirs[rank] = json.load(f)
    assert set(dirs[0]) == {"[0/0]"} and set(dirs[1]) == {"[0/0]", "[1/0]"}
    # rank 1's extra graph is what tlparse calls a compile-id desync, and its all_reduce (eager on
    # rank 0, where the compiled graphs do not show it) a collective schedule divergence
    assert "Diverging Compilation IDs detected across ranks" in landing
    assert "Diverging collective operation sequences detected across ranks" in landing
    # the collective schedule of each rank, rebuilt from the wrapper, as tlparse reads it
    with open(os.path.join(out, "collective_schedules.json")) as f:
        schedules = json.load(f)
    assert sorted((s["rank"], s["graph"].split("_")[1], tuple(s["ops"])) for s in schedules) == [
        (0, "0", tuple(ALL_REDUCE)), (1, "0", tuple(ALL_REDUCE)), (1, "1", tuple(ALL_REDUCE))]
    for rank in (0, 1):  # the schedule and the output code agree on each rank (tlparse's parity check)
        with open(os.path.join(out, f"rank_{rank}", "collectives_parity.json")) as f:
            assert json.load(f)["graphs"] == []
    # each rank's log alone: every line is one tlparse knows, all of one rank
    for rank, log in enumerate(sorted(logs)):
        proc = subprocess.run([_tlparse(), log, "-o", str(tmp_path / f"one{rank}"), "--overwrite", "--no-browser",
                               "--strict"], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and f"Detected rank: Some({rank})" in proc.stdout + proc.stderr, proc.stderr


def test_job_export_agreeing_ranks_no_desync(twin_job, tmp_path):
    logs, problems = export_job(twin_job, str(tmp_path / "trace"))
    assert len(logs) == 2 and problems == []
    _printed, landing = _all_ranks(str(tmp_path / "trace"), str(tmp_path / "tl"))
    assert "Diverging" not in landing and "Warning:" not in landing


def test_job_export_missing_session(job, tmp_path, capsys):
    src = _without_rank1(job, str(tmp_path))
    trace = str(tmp_path / "trace")
    rc = main_export([src, trace])
    captured = capsys.readouterr()
    assert rc == 2
    assert captured.err.strip().splitlines() == [f"inductor-step: rank 1: no such session file: {tmp_path}/job.rank1.jsonl"]
    assert os.listdir(trace) == ["dedicated_log_torch_trace_rank_0_job.log"]
    assert captured.out.strip() == os.path.join(trace, "dedicated_log_torch_trace_rank_0_job.log")
