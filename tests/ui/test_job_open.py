"""A recorded torchrun job opened in the app (``inductor-step --open job.job.json``): every
rank's recording, switched with > and <, compared in pane 0.  Needs no torch: the job fixture was
recorded by ``inductor-step --headless --nproc-per-node 2 --run`` on tests/scripts/job_step.py."""

from __future__ import annotations

import asyncio
import os

from inductor_step.session import format as protocol
from inductor_step.tui.app import StepApp
from inductor_step.tui.job import RecordedJob

from conftest import wait_for

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JOB = os.path.join(HERE, "fixtures", "job_step", "job.job.json")


def open_job(rank: int | None = None) -> StepApp:
    job, paths = protocol.read_job(JOB)
    sessions = {r: list(protocol.read_session(p)) for r, p in paths.items()}
    first = rank if rank is not None else 0
    return StepApp(messages=sessions[first], session_path=JOB, job=RecordedJob(job, sessions, first))


def drive(app: StepApp, steps, size=(120, 40)) -> None:
    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await steps(app, pilot)

    asyncio.run(main())


def rows(app: StepApp, stage: str) -> list[tuple[str, ...]]:
    t = app.query_one(f"#table-{stage}")
    return [tuple(str(c) for c in t.get_row_at(i)) for i in range(t.row_count)]


def test_open_job_switch_ranks_keeps_the_place_and_pane_0_lists_the_ranks():
    seen: dict = {}

    async def steps(app: StepApp, pilot) -> None:
        seen["title0"] = str(app.query_one("#title").content)
        await pilot.press("4")  # rank 0's scheduler nodes of its first graph
        first = app.view.selected
        await pilot.press("down")
        await wait_for(pilot, lambda: app.view.selected != first, timeout=10, seen=lambda: app.view.selected)
        seen["at0"] = (app.view.graph, app.view.stage, app.view.selected)
        await pilot.press("greater_than_sign")
        await wait_for(pilot, lambda: app.current.rank == 1, timeout=10)
        seen["title1"] = str(app.query_one("#title").content)
        seen["at1"] = (app.current.rank, app.view.graph, app.view.stage, app.view.selected)
        await pilot.press("0")
        await wait_for(pilot, lambda: app.view.stage == "ranks", timeout=10)
        seen["ranks"] = rows(app, "ranks")
        seen["detail"] = app.query_one("#code-ranks").text
        await pilot.press("less_than_sign")
        await wait_for(pilot, lambda: app.current.rank != 1, timeout=10)
        seen["back"] = app.current.rank

    drive(open_job(), steps)
    assert "rank 0/2 recorded" in seen["title0"]
    assert "rank 1/2 recorded" in seen["title1"]
    graph, stage, sel = seen["at0"]
    assert stage == "scheduling" and sel
    assert seen["at1"] == (1, graph, stage, sel)  # rank 1, at the same graph, stage and buffer
    ranks = [r for r in seen["ranks"] if r[0].startswith("rank ")]
    assert [r[0].split()[1] for r in ranks] == ["0", "1"]
    assert all(r[1] == "done: exit 0" for r in ranks)
    assert "init_process_group: backend gloo, 2 ranks" in seen["detail"]
    assert seen["back"] == 0


def test_one_session_has_no_ranks_pane_and_says_why():

    app = StepApp(messages=list(protocol.read_session(os.path.join(HERE, "fixtures", "demo.jsonl"))))
    seen: dict = {}

    async def steps(app: StepApp, pilot) -> None:
        await pilot.press("0")
        await pilot.press("greater_than_sign")
        await pilot.pause()
        seen["stage"] = app.view.stage
        seen["tabs"] = [str(t.label) for t in app.query("Tab")]

    drive(app, steps)
    assert seen["stage"] == "dynamo"
    assert not any("Ranks" in t for t in seen["tabs"])


def test_pane_0_says_where_ranks_diverge_and_enter_diffs_the_two_ranks():
    """A job where rank 1 recompiled [1/1] and took another branch in [2/0]: pane 0's graph rows say
    so; Enter on [2/0] opens the diff of rank 0's and rank 1's versions; Enter on rank 1's row
    shows rank 1."""
    job, paths = protocol.read_job(os.path.join(HERE, "fixtures", "ranks_torchrun.job.json"))
    sessions = {r: list(protocol.read_session(p)) for r, p in paths.items()}
    app = StepApp(messages=sessions[0], session_path="job", job=RecordedJob(job, sessions, 0))
    seen: dict = {}

    async def steps(app: StepApp, pilot) -> None:
        await pilot.press("0")
        await wait_for(pilot, lambda: app.view.stage == "ranks", timeout=10)
        seen["rows"] = rows(app, "ranks")
        keys = [r[0] for r in seen["rows"]]
        table = app.query_one("#table-ranks")
        for _ in range(keys.index("[2/0] inference")):
            await pilot.press("down")
        await wait_for(pilot, lambda: table.cursor_row == keys.index("[2/0] inference"), timeout=10)
        seen["detail"] = app.query_one("#code-ranks").text
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen.query("#diff-title"), timeout=10, seen=lambda: app.screen)
        seen["screen"] = type(app.screen).__name__
        seen["diff_title"] = str(app.screen.query_one("#diff-title").content)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.screen.query("#diff-title"), timeout=10)
        await pilot.press("home")
        await pilot.press("down")  # rank 1's row
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.current.rank == 1, timeout=10)
        seen["rank"] = app.current.rank

    drive(app, steps)
    by_key = {r[0]: r for r in seen["rows"]}
    assert "recompiled there only" in by_key["[1/1] inference"][1] and by_key["[1/1] inference"][2] == "on 1"
    assert "Dynamo graph" in by_key["[2/0] inference"][1] and "differ on rank 1" in by_key["[2/0] inference"][1]
    assert by_key["[0/0] inference"][1] == "agree" and by_key["[0/0] inference"][2] == "on 0,1"
    assert "y_1 on rank 0 only" in seen["detail"]
    assert seen["screen"] == "DiffScreen"
    assert "rank 0 [2/0] inference" in seen["diff_title"] and "rank 1 [2/0] inference" in seen["diff_title"]
    assert seen["rank"] == 1


def test_a_two_gpu_job_each_rank_on_its_own_gpu_reads_as_agreeing_in_pane_0():
    """The 2-H100 DDP recording (rank 1 on cuda:1): pane 0 lists no divergence and no graph whose
    ranks differ; it said "where the ranks diverge (7)" ("a parameter was cuda:0, now cuda:1")."""
    job, paths = protocol.read_job(os.path.join(HERE, "fixtures", "ranks_ddp_gpu.job.json"))
    sessions = {r: list(protocol.read_session(p)) for r, p in paths.items()}
    app = StepApp(messages=sessions[0], session_path=os.path.join(HERE, "fixtures", "ranks_ddp_gpu.job.json"),
                  job=RecordedJob(job, sessions, 0))
    seen: dict = {}

    async def steps(app: StepApp, pilot) -> None:
        await pilot.press("0")
        await wait_for(pilot, lambda: app.view.stage == "ranks", timeout=10)
        seen["ranks"] = rows(app, "ranks")
        seen["detail"] = app.query_one("#code-ranks").text

    drive(app, steps, size=(80, 24))
    text = "\n".join(" ".join(r) for r in seen["ranks"]) + "\n" + seen["detail"]
    assert "diverge" not in text and "cuda:0, now cuda:1" not in text, text
    graphs = [r for r in seen["ranks"] if r[0].startswith("[")]
    assert len(graphs) == 7 and not any("differ" in " ".join(r) for r in graphs), graphs
