"""The live app, driven by keys while the agent runs a real script.

Each test starts the real agent on a small script (a real ``torch.compile`` on CPU) and presses keys
as a person does, then reads what the panes say.
"""

from __future__ import annotations

import asyncio
import os

from inductor_step.session.format import CMD_CONTINUE
from inductor_step.tui.app import StepApp

from conftest import screen_settled, wait_for

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
