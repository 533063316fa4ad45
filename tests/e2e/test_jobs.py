"""torchrun jobs: torch's launcher with our agent in every rank, gloo on CPU, 2 processes.

Real jobs of tests/scripts/job_step.py (a DDP training step of a compiled MLP, then a compiled
function with an in-graph all_reduce): headless through torchrun's own spelling, and live in the
app, stepping rank 1 while rank 0 records, with the keys a person presses.  Every test checks that
no process of the job is left behind.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

from inductor_step.session import format as protocol
from inductor_step.tui.app import StepApp
from inductor_step.tui.job import LiveJob

from conftest import wait_for, wait_until

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(HERE, "scripts", "job_step.py")
FIXTURE = os.path.join(HERE, "fixtures", "job_step", "job.job.json")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def _no_orphans(job: dict, within_s: float = 5.0) -> None:
    pids = [r["pid"] for r in job["ranks"] if r.get("pid")]
    assert pids, "the job file names no rank process"
    try:
        wait_until(lambda: not any(_alive(p) for p in pids), timeout=within_s)
    except AssertionError:
        pass  # said below, with the processes
    assert not [p for p in pids if _alive(p)], "a rank's process outlived the job"


def test_launcher_flags_match_torchrun():
    """The UI finds the script among torchrun's options without importing torch: its list of
    torchrun's value-less options must be torch's own."""
    from torch.distributed.run import get_args_parser

    from inductor_step.cli.main import LAUNCHER_FLAGS, split_launcher

    flags = {o for a in get_args_parser()._actions if a.nargs == 0 for o in a.option_strings}
    assert flags == set(LAUNCHER_FLAGS)
    assert split_launcher(["-m", "torch.distributed.run", "--nproc-per-node", "2", "--standalone", "t.py", "--lr", "3"]) \
        == (["t.py", "--lr", "3"], ["--nproc-per-node", "2", "--standalone"])
    assert split_launcher(["--rank", "1", "torchrun", "--nproc_per_node=2", "t.py", "-m", "x"]) \
        == (["--rank", "1", "t.py", "-m", "x"], ["--nproc_per_node=2"])
    assert split_launcher(["t.py", "-m", "torch.distributed.run"]) == (["t.py", "-m", "torch.distributed.run"], None)


def test_headless_job_in_torchruns_spelling_records_every_rank_and_a_rank_that_dies(tmp_path):
    """``inductor-step --headless -m torch.distributed.run --nproc-per-node 2 --standalone job_step.py
    --die-rank 1``: rank 1's Inductor fails lowering; the job file says where, rank 0 is stopped by
    torch's launcher, the exit status is non-zero and both ranks' sessions are complete files."""
    record = str(tmp_path / "job.jsonl")
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--record", record,
                        "-m", "torch.distributed.run", "--nproc-per-node", "2", "--standalone",
                        SCRIPT, "--die-rank", "1"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 1, p.stderr[-2000:]
    assert "[rank1] error in [1/0] inference lowering: " in p.stderr
    assert "injected lowering failure for aten.sin on rank 1" in p.stderr
    assert "[rank0] [0/0] forward        dynamo" in p.stdout
    job, sessions = protocol.read_job(str(tmp_path / "job.job.json"))
    assert job["world_size"] == 2 and job["launcher"] == ["--nproc-per-node", "2", "--standalone"]
    r0, r1 = job["ranks"]
    assert r1["state"] == "done" and r1["returncode"] == 1
    assert r1["message"].startswith("[1/0] inference lowering: ") and "injected lowering failure" in r1["message"]
    # rank 0 waits at the all_reduce rank 1 never joins: torch's launcher stops it, or gloo fails it first
    assert r0["returncode"] != 0 and r0["message"]
    assert (r0["state"] == "died" and "stopped by torch's launcher after rank 1 failed" in r0["message"]) or \
        (r0["state"] == "done" and "RuntimeError" in r0["message"]), r0  # gloo: "Connection closed by peer"
    for rank, path in sessions.items():
        msgs = list(protocol.read_session(path))
        assert msgs[0]["type"] == "header" and msgs[0]["distributed"]["rank"] == rank
        assert msgs[0]["distributed"]["world_size"] == 2
        groups = [m for m in msgs if m["type"] == "process_group"]
        assert groups and groups[0]["backend"] == "gloo" and groups[0]["world_size"] == 2
        assert any(m["type"] == "stop" and m["stage"] == "codegen" for m in msgs)
        assert not [e for m in msgs for e in protocol.validate(m)]
    assert os.path.getsize(tmp_path / "job.launcher.log") > 0
    _no_orphans(job)


def _rows(app: StepApp, stage: str) -> list[tuple[str, ...]]:
    t = app.query_one(f"#table-{stage}")
    return [tuple(str(c) for c in t.get_row_at(i)) for i in range(t.row_count)]


def _title(app: StepApp) -> str:
    return str(app.query_one("#title").content)


def _status(app: StepApp) -> str:
    return str(app.query_one("#status").content)


def test_live_job_steps_rank_1_while_rank_0_records_then_q_ends_every_process(tmp_path):
    """``inductor-step --nproc-per-node 2 --rank 1 job_step.py``: rank 1 waits at its first stop
    while rank 0 records its forward and backward compiles and then waits at DDP's all-reduce;
    pane 0 says so; n steps rank 1; > shows rank 0 at the same graph and stage; n there says rank 0
    does not pause; q ends the launcher and both ranks."""
    path = str(tmp_path / "job.job.json")
    app = StepApp(script=SCRIPT, session_path=path, screenshots=str(tmp_path),
                  job=LiveJob(["--standalone", "--nproc-per-node", "2"], 1, 2))
    seen: dict = {}

    async def steps(app: StepApp, pilot) -> None:
        await wait_for(pilot, lambda: 1 in app.ranks and app.ranks[1].view.paused is not None)
        await wait_for(pilot, lambda: 0 in app.ranks and any(
            s["graph_kind"] == "backward" and s["stage"] == "codegen" for s in app.ranks[0].session.stops))
        seen["title"] = _title(app)
        await pilot.press("0")
        await wait_for(pilot, lambda: app.view.stage == "ranks" and _rows(app, "ranks"), timeout=10)
        seen["ranks"] = _rows(app, "ranks")
        await pilot.press("1")
        for _ in range(3):  # rank 1: dynamo -> aot -> lowering -> scheduling
            before = len(app.ranks[1].session.stops)
            await pilot.press("n")
            await wait_for(pilot, lambda b=before: len(app.ranks[1].session.stops) > b)
        await wait_for(pilot, lambda: app.view.stage == "scheduling", timeout=30,
                       seen=lambda: (app.view.graph, app.view.stage))
        seen["rank1_at"] = (app.view.graph, app.view.stage)
        await pilot.press("greater_than_sign")
        await wait_for(pilot, lambda: app.current.rank == 0, timeout=10)
        seen["rank0_title"] = _title(app)
        seen["rank0_at"] = (app.current.rank, app.view.graph, app.view.stage)
        seen["rank0_rows"] = _rows(app, "scheduling")
        for _ in range(20):  # n through rank 0's recorded stops to its last (backward codegen)
            if app.current_index() == len(app.session.stops) - 1:
                break
            at = app.current_index()
            await pilot.press("n")
            await wait_for(pilot, lambda at=at: app.current_index() != at, timeout=10)
        seen["rank0_last"] = (app.view.graph, app.view.stage)
        await pilot.press("n")
        await wait_for(pilot, lambda: "rank 0 records without pausing" in _status(app), timeout=10,
                       seen=lambda: _status(app))
        seen["rank0_n"] = _status(app)
        await pilot.press("less_than_sign")
        await wait_for(pilot, lambda: app.current.rank == 1, timeout=10)
        seen["back"] = app.current.rank
        await pilot.press("q")

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            try:
                await steps(app, pilot)
            finally:
                app.action_quit_app()

    asyncio.run(main())
    assert "rank 1/2 stepped" in seen["title"] and "timeout 24 h" in seen["title"]
    by_rank = {r[0].split()[1]: r for r in seen["ranks"] if r[0].startswith("rank ")}
    assert by_rank["1"][1].startswith("paused") and by_rank["1"][2] == "[0/0] forward dynamo"
    assert by_rank["0"][1] == "recording" and by_rank["0"][2] == "[0/0] backward codegen"
    assert seen["rank1_at"] == ("[0/0] forward", "scheduling")
    assert seen["rank0_at"] == (0, "[0/0] forward", "scheduling")  # the same place, on the other rank
    assert "rank 0/2 recorded" in seen["rank0_title"]
    assert seen["rank0_rows"], "rank 0's scheduler nodes are shown"
    assert seen["rank0_last"] == ("[0/0] backward", "codegen")
    assert "rank 0 records without pausing" in seen["rank0_n"]
    assert seen["back"] == 1
    job = json.load(open(path))
    assert [r["rank"] for r in job["ranks"]] == [0, 1] and job["stepped_rank"] == 1
    assert job["collective_timeout_s"] == 24 * 3600
    # q ended the job while both ranks ran: the user's stop, not a death of theirs
    assert [r["state"] for r in job["ranks"]] == ["stopped", "stopped"], job["ranks"]
    _no_orphans(job)
    assert job["launcher_returncode"] is not None or not (app.job and app.job.alive)
