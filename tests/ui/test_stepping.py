"""Stepping with `n` against a compile that is still running.

The agent's side is a recorded session played back: each stop is sent, paused, only after the app
sends ``continue`` (as the real agent blocks at a stop), a short while later (as a compile takes a
while).  The keys are what a person presses; the checks are what the status line says and which stop
the compile waits at.
"""

from __future__ import annotations

import asyncio
import os

from inductor_step.session.format import CMD_CONTINUE, read_session
from inductor_step.tui.app import StepApp

from conftest import screen_settled, wait_for

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(HERE, "fixtures", "demo.jsonl")


class Playback:
    """The agent's pipe, played from recorded stops: the first stop at once, each next one ``delay``
    seconds after the app sends ``continue`` (never before: the compile waits at a stop)."""

    def __init__(self, app: StepApp, stops: list[dict], delay: float = 0.4) -> None:
        self.app, self.stops, self.delay = app, list(stops), delay
        self.alive = True
        self.sent: list = []
        self.waiting_at: dict | None = None

    def start(self) -> None:
        self._next()

    def _next(self) -> None:
        if not self.stops:
            self.app.on_agent_message({"type": "done", "returncode": 0})
            return
        msg = {**self.stops.pop(0), "paused": True}
        self.waiting_at = msg
        self.app.on_agent_message(msg)

    def send(self, cmd) -> None:
        self.sent.append(cmd)
        if cmd == CMD_CONTINUE:
            assert self.waiting_at is not None, "continue sent while the compile was not paused"
            self.waiting_at = None
            self.app.set_timer(self.delay, self._next)


def _stops(*pick: tuple[str, str]) -> list[dict]:
    msgs = [m for m in read_session(DEMO) if m.get("type") == "stop"]
    out = []
    for key, stage in pick:
        m = next(m for m in msgs if f"{m['compile_id']} {m['graph_kind']}" == key and m["stage"] == stage)
        out.append(dict(m))
    return out


def play(stops: list[dict], steps, delay: float = 0.4) -> StepApp:
    app = StepApp(messages=[m for m in read_session(DEMO) if m.get("type") == "header"])

    async def main():
        async with app.run_test(size=(120, 40)) as pilot:
            app.live = True
            app.current.agent = agent = Playback(app, stops, delay)
            agent.start()
            await pilot.pause()
            await steps(app, pilot, agent)

    asyncio.run(main())
    return app


def status(app: StepApp) -> str:
    return str(app.query_one("#status").content)


def test_n_continues_after_dynamo_restarted_the_frames_analysis():
    """Dynamo restarts the frame's analysis (a BatchNorm model), so a second dynamo stop of
    the same graph comes; n there continues the compile (it did nothing, 3 of 3 tries)."""
    f = "[0/0] forward"
    stops = _stops((f, "dynamo"), (f, "dynamo"), (f, "aot"), (f, "lowering"))

    async def steps(app, pilot, agent):
        await pilot.press("n")
        await wait_for(pilot, lambda: len(agent.sent) == 1 and agent.waiting_at is not None, timeout=10)
        assert agent.waiting_at["stage"] == "dynamo"  # the stop again, paused
        await pilot.press("n")
        await wait_for(pilot, lambda: app.view.paused is not None and app.view.paused["stage"] == "aot",
                       timeout=10, seen=lambda: (agent.sent, status(app)))
        assert app.view.stage == "aot" and "paused after aot" in status(app)
        await pilot.press("b")  # back views the dynamo stop (the restarted one), then n comes back
        assert app.view.stage == "dynamo"
        await pilot.press("n")
        assert app.view.stage == "aot"
        await pilot.press("n")
        await wait_for(pilot, lambda: app.view.paused is not None and app.view.paused["stage"] == "lowering",
                       timeout=10)

    play(stops, steps)


def test_n_typed_while_the_compile_runs_never_skips_the_next_stop():
    """Pressing n, then n again before the next stop arrives: the compile stops at that next stop and
    the person sees it (it went on to lowering); the status line says why the second n did nothing."""
    f = "[0/0] forward"
    stops = _stops((f, "dynamo"), (f, "aot"), (f, "lowering"))

    async def steps(app, pilot, agent):
        await pilot.press("n")
        await pilot.press("n", "space")  # typed ahead while the compile runs to the aot stop
        assert "continuing the compile" in status(app) and "n continues it from there" in status(app)
        await wait_for(pilot, lambda: app.view.paused is not None and app.view.paused["stage"] == "aot",
                       timeout=10)
        await screen_settled(pilot, app)  # the app done with the aot stop: a wrongly queued continue is sent by now
        assert agent.sent == [CMD_CONTINUE]
        assert app.view.stage == "aot" and agent.waiting_at["stage"] == "aot"
        assert "paused after aot" in status(app)

    play(stops, steps)

