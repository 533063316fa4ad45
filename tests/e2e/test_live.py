"""The live app, driven by keys while the agent runs a real script.

Each test starts the real agent on a small script (a real ``torch.compile`` on CPU) and presses keys
as a person does, then reads what the panes say.
"""

from __future__ import annotations

import asyncio
import os

from inductor_step.session.format import CMD_CONTINUE
from inductor_step.tui.app import StepApp

from conftest import screen_lines, screen_settled, wait_for

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(HERE, "scripts")


def live(script: str, steps, tmp_path, size=(120, 40)) -> StepApp:
    app = StepApp(script=script, session_path=str(tmp_path / "s.jsonl"), screenshots=str(tmp_path))

    async def main():
        async with app.run_test(size=size) as pilot:
            try:
                await steps(app, pilot)
            finally:
                app.action_quit_app()

    asyncio.run(main())
    return app


async def n_until(pilot, app, stage: str) -> None:
    """Wait for the first stop, then press ``n`` (each press waiting for the next stop) until the compile is paused
    at ``stage``, as a person steps a live script."""
    await wait_for(pilot, lambda: app.view.paused is not None, timeout=120)
    while app.view.paused and app.view.paused["stage"] != stage:
        before = len(app.session.stops)
        await pilot.press("n")
        await wait_for(pilot, lambda: len(app.session.stops) > before and app.view.paused is not None, timeout=120)


def test_a_script_that_never_compiles_says_so_in_the_pane(tmp_path):
    seen = {}

    async def steps(app, pilot):
        await wait_for(pilot, lambda: app.session.agent_exit is not None or app.session.done is not None)
        await wait_for(pilot, lambda: "without compiling a graph" in app.query_one("#code-dynamo").text, timeout=10,
                       seen=lambda: app.query_one("#code-dynamo").text)
        seen["code"] = app.query_one("#code-dynamo").text

    live(os.path.join(SCRIPTS, "no_compile.py"), steps, tmp_path)
    assert "waiting for the script's first torch.compile" not in seen["code"]
    assert "the script ended (exit 0) without compiling a graph" in seen["code"]


def test_a_script_that_raised_before_compiling_shows_its_error_in_the_pane(tmp_path):
    seen = {}

    async def steps(app, pilot):
        await wait_for(pilot, lambda: app.session.agent_exit is not None or app.session.done is not None)
        await wait_for(pilot, lambda: "without compiling a graph" in app.query_one("#code-dynamo").text, timeout=10,
                       seen=lambda: app.query_one("#code-dynamo").text)
        seen["code"] = app.query_one("#code-dynamo").text

    live(os.path.join(SCRIPTS, "raises_before_compile.py"), steps, tmp_path)
    assert "without compiling a graph" in seen["code"]
    assert "RuntimeError" in seen["code"] and "raises_before_compile.py" in seen["code"]


def test_n_typed_while_the_compile_runs_stops_at_the_next_stop(tmp_path):
    """n n pressed at once at the newest stop goes on one stop: the second n
    comes while the compile runs, and a stop is never passed without the person seeing it."""
    seen = {}

    async def steps(app, pilot):
        await wait_for(pilot, lambda: app.view.paused is not None)
        agent, sent = app.current.agent, []
        real_send = agent.send

        def send(cmd, **kw):  # what the app tells the agent, passed on unchanged
            sent.append(cmd)
            return real_send(cmd, **kw)
        agent.send = send
        first = app.view.paused["stage"]
        await pilot.press("n", "n")
        await wait_for(pilot, lambda: app.view.paused is not None and len(app.session.stops) >= 2)
        await screen_settled(pilot, app)  # the app done with the aot stop: a wrongly queued continue is sent by now
        seen["sent"] = list(sent)
        seen["stops"] = [s["stage"] for s in app.session.stops]
        seen["first"] = first
        seen["paused"] = app.view.paused["stage"] if app.view.paused else None

    live(os.path.join(os.path.dirname(HERE), "tracer", "demo", "train_step.py"), steps, tmp_path)
    assert seen["first"] == "dynamo"
    assert seen["stops"] == ["dynamo", "aot"]
    assert seen["sent"] == [CMD_CONTINUE], seen["sent"]  # one continue for two n: the second waits at aot
    assert seen["paused"] == "aot"


def test_n_after_a_look_at_another_pane_continues_the_compile(tmp_path):
    """Paused at the newest stop, a person presses 1 to look at Dynamo's graph, then n: the compile goes on
    to the next stop (a pane key shows another level of the same stop; it is no step back).  After b, n first
    walks forward through the stops already recorded."""
    seen = {}

    async def steps(app, pilot):
        await wait_for(pilot, lambda: app.view.paused is not None)
        await pilot.press("n")
        await wait_for(pilot, lambda: app.view.paused is not None and app.view.paused["stage"] == "aot")
        await pilot.press("1")
        await wait_for(pilot, lambda: app.view.stage == "dynamo")
        await pilot.press("n")
        await wait_for(pilot, lambda: app.view.paused is not None and app.view.paused["stage"] == "lowering")
        seen["after_pane_key"] = [s["stage"] for s in app.session.stops]
        await pilot.press("b")  # a step back: to the aot stop
        await wait_for(pilot, lambda: app.view.stage == "aot")
        await pilot.press("n")  # forward through what was recorded: the lowering stop again, no continue
        await wait_for(pilot, lambda: app.view.stage == "lowering")
        await screen_settled(pilot, app)
        seen["after_b_n"] = ([s["stage"] for s in app.session.stops], app.view.paused["stage"] if app.view.paused else None)

    live(os.path.join(os.path.dirname(HERE), "tracer", "demo", "train_step.py"), steps, tmp_path)
    assert seen["after_pane_key"] == ["dynamo", "aot", "lowering"]
    assert seen["after_b_n"] == (["dynamo", "aot", "lowering"], "lowering")


def test_the_footer_keeps_s_on_every_pane_of_a_live_session_at_80x24(tmp_path):
    """A live script paused at its codegen stop, at 80x24: every pane's footer shows ``s Shot`` (how a person files a
    screenshot), and pane 6's keeps its own ``t``/``x`` with run and search beside it (a live session's ``r Run``
    took the cell ``s Shot`` needed there)."""
    footers: dict[str, str] = {}

    async def steps(app, pilot):
        await n_until(pilot, app, "codegen")
        for key in "123456789l":
            await pilot.press(key)
            await screen_settled(pilot, app)
            footers[key] = screen_lines(app)[-1]

    live(os.path.join(SCRIPTS, "run_at_codegen.py"), steps, tmp_path, size=(80, 24))
    assert all("s Shot" in f and "r Run" in f for f in footers.values()), footers
    for key in ("t IR/asm", "x Repro", "q Quit", "? Help", "n Next", "1-9 panes", "/ Find", "^p palette"):
        assert key in footers["6"], footers["6"]
