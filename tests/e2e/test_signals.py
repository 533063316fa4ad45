"""Timing never hangs and nothing we start outlives us.

One agent (tests/scripts/whatif_fusion.py, one small compiled graph) takes every kind of timing
request in a row, as the keys send them: ``w`` (a what-if, timed), ``r`` while that timing runs
(it waits, saying so), ``c`` (both end within two seconds), ``r`` again (it completes), ``c`` with
nothing running; the same in the app with the keys (n to the end, r, c, r), reading the status line.
A timing worker over its limit says which step took too long.  Then
``inductor-step --headless --run`` in an SSH-like session (``setsid``): SIGHUP to the session's
process group, and SIGKILL to ``inductor-step`` alone; no process it started survives (checked
from ``/proc``) and the session file is kept.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import time
from typing import Any

import pytest

from inductor_step.session import format as protocol
from inductor_step.tracer.lifetime import descendants
from inductor_step.live.client import AgentProcess

from conftest import wait_for, wait_until

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(HERE)
SCRIPT = os.path.join(HERE, "scripts", "whatif_fusion.py")

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads processes from /proc")


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


class Driver:
    """An agent in step mode, its messages on a queue."""

    def __init__(self) -> None:
        self.q: queue.Queue[dict[str, Any]] = queue.Queue()
        self.agent = AgentProcess(SCRIPT, [], self.q.put, step=True)
        self.seen: list[dict[str, Any]] = []

    def until(self, pred: Any, timeout: float = 120.0) -> dict[str, Any]:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                m = self.q.get(timeout=max(0.01, end - time.monotonic()))
            except queue.Empty:
                break
            self.seen.append(m)
            if m.get("type") == "stop" and m.get("paused"):
                self.agent.send(protocol.CMD_CONTINUE)
            if pred(m):
                return m
        shown = [" ".join(str(x.get(k)) for k in ("type", "stage", "status", "message", "text", "error") if x.get(k))[:160]
                 for x in self.seen[-30:]]
        raise AssertionError(f"timed out; last messages: {shown}")


def _done(m: dict[str, Any]) -> bool:
    return m.get("type") == "run_status" and bool(m.get("done"))


def test_every_timing_request_ends_and_c_cancels_within_two_seconds() -> None:
    d = Driver()
    try:
        stop = d.until(lambda m: m.get("type") == "stop")
        d.until(lambda m: m.get("type") == "done")
        # w: a what-if, timed; r while its timing runs waits behind it
        d.agent.send(protocol.CMD_WHAT_IF, compile_id=stop["compile_id"], graph_kind=stop["graph_kind"],
                     settings={"max_fusion_size": 1}, run=True)
        d.until(lambda m: m.get("type") == "run_status" and "starting" in m.get("message", ""))
        d.agent.send(protocol.CMD_RUN)
        waiting = d.until(lambda m: m.get("type") == "run_status" and "waiting" in m.get("message", ""))
        assert "c cancels" in waiting["message"]
        # c: the what-if's timing and the waiting r both end, with a done status each, within 2 s
        t0 = time.monotonic()
        d.agent.send(protocol.CMD_CANCEL_RUN)
        first = d.until(_done, timeout=5)
        second = d.until(_done, timeout=5)
        assert time.monotonic() - t0 < 2.0, (first, second)
        assert first["cancelled"] and second["cancelled"]
        # a new r after w: it runs to the end, both graphs timed (or each says why not)
        d.agent.send(protocol.CMD_RUN)
        done = d.until(_done, timeout=180)
        assert not done.get("cancelled") and done["of"] == 2, done
        runs = [m for m in d.seen if m.get("type") == "run"]
        assert len(runs) >= 2 and all(m.get("compiled_ms") or m.get("error") for m in runs[-2:])
        limit = [m for m in d.seen if m.get("type") == "run_status" and "limit" in m.get("message", "")]
        assert limit and limit[-1]["limit_s"] > 0  # the per-graph limit is shown
        # c with nothing running still answers, so the status line never says "cancelling…" forever
        d.agent.send(protocol.CMD_CANCEL_RUN)
        idle = d.until(_done, timeout=5)
        assert idle["message"].startswith("nothing to cancel")
    finally:
        d.agent.terminate()


def test_a_graph_over_its_limit_says_which_step() -> None:
    from inductor_step.tracer.timing.isolate import TimingFailed, TimingWorker

    w = TimingWorker()
    try:
        with pytest.raises(TimingFailed) as e:
            w.time(os.path.join(HERE, "no_such_output_code.py"), None, "cpu", timeout_s=0.5)
        assert "per-graph limit of 0.5 s ran out" in e.value.reason and "while " in e.value.reason
        assert "--timing-limit" in e.value.reason and not e.value.crashed
    finally:
        w.close()


def _session_under_setsid(tmp_path: Any) -> tuple[subprocess.Popen, str]:
    """``inductor-step --headless --run`` started by a shell in a session of its own (like an SSH
    login), returned once a timing worker runs, with the session file's path."""
    record = str(tmp_path / "s.jsonl")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    sh = subprocess.Popen(["setsid", "bash", "-c", f'"{sys.executable}" -m inductor_step --headless --run '
                           f'--record "{record}" "{SCRIPT}"; echo ended $?'],
                          cwd=str(tmp_path), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: any("inductor_step.tracer.timing.worker" in _cmdline(p) for p in descendants(sh.pid)),
                   timeout=120, seen=lambda: "no timing worker started")
    except AssertionError:
        sh.kill()
        raise
    return sh, record


def _none_left(pids: list[int], within_s: float = 5.0) -> None:
    try:
        wait_until(lambda: not any(_alive(p) for p in pids), timeout=within_s)
    except AssertionError:
        pass  # said below, with the processes
    left = {p: _cmdline(p) for p in pids if _alive(p)}
    assert not left, f"outlived inductor-step: {left}"


def test_sighup_to_an_ssh_session_ends_every_process_and_keeps_the_session(tmp_path: Any) -> None:
    sh, record = _session_under_setsid(tmp_path)
    ours = descendants(sh.pid)
    agents = [p for p in ours if "inductor_step.tracer.agent" in _cmdline(p)]
    # (process group, session) of each agent and the shell's session, read now, checked once all have ended
    placed = {a: (os.getpgid(a), os.getsid(a), os.getsid(sh.pid)) for a in agents}
    os.killpg(sh.pid, signal.SIGHUP)  # the link dropped: the session's processes get SIGHUP
    _none_left(ours)
    sh.wait(10)
    # the agent leads a process group of its own (ending it ends its children) in the shell's session: a session
    # of its own was a scheduler autogroup of its own: the script was scheduled under other rules than from the shell
    assert placed and all(group == a and session == shell for a, (group, session, shell) in placed.items()), placed
    msgs = list(protocol.read_session(record))
    assert msgs[0]["type"] == "header" and any(m.get("type") == "stop" for m in msgs)
    assert any(m.get("type") == "error" and m.get("message") == "ended by SIGHUP" for m in msgs)


def test_inductor_step_killed_outright_leaves_no_agent_or_worker(tmp_path: Any) -> None:
    sh, record = _session_under_setsid(tmp_path)
    ours = descendants(sh.pid)
    cli = [p for p in ours if "-m inductor_step " in _cmdline(p) + " " and "tracer" not in _cmdline(p)]
    assert len(cli) == 1, {p: _cmdline(p) for p in ours}
    os.kill(cli[0], signal.SIGKILL)  # no handler runs: the agent and the worker notice their parent went
    _none_left(ours)
    sh.wait(10)
    assert os.path.getsize(record) > 0


def test_in_the_app_r_then_c_ends_within_two_seconds_and_the_status_line_follows(tmp_path: Any) -> None:
    """The keys a person presses: n to the script's end, r, c as soon as timing starts, then r again;
    the status line says what the agent last said, and a cancelled timing is never ✓run."""
    import asyncio

    from inductor_step.tui.app import StepApp
    from inductor_step.tui.bars import stage_text

    app = StepApp(script=SCRIPT, session_path=str(tmp_path / "s.jsonl"), screenshots=str(tmp_path))
    seen: dict[str, Any] = {}

    async def until(pilot: Any, cond: Any, timeout: float = 120.0) -> None:
        await wait_for(pilot, cond, timeout=timeout, seen=status)

    def status() -> str:
        return str(app.query_one("#status").content)

    async def steps(pilot: Any) -> None:
        while app.session.done is None:  # n at each stop, to the end of the script
            at = app.view.paused
            if at:
                await pilot.press("n")
            await wait_for(pilot, lambda at=at: (app.view.paused is not None and app.view.paused is not at)
                           or app.session.done is not None, seen=status)
        await pilot.press("r")
        await until(pilot, lambda: "starting (limit" in status() or "loading" in status())
        t0 = time.monotonic()
        await pilot.press("c")
        await until(pilot, lambda: "timing cancelled" in status(), timeout=5)
        seen["cancel_s"] = time.monotonic() - t0
        seen["bar"] = stage_text(app.session, app.view, 120).plain
        await pilot.press("r")
        await until(pilot, lambda: "timed 1 of 1 graph(s)" in status())
        seen["bar_after"] = stage_text(app.session, app.view, 120).plain

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            try:
                await steps(pilot)
            finally:
                app.action_quit_app()

    asyncio.run(main())
    assert seen["cancel_s"] < 2.0, seen
    assert "✓run" not in seen["bar"]
    assert "✓run" in seen["bar_after"]
