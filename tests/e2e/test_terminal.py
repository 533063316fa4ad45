"""One real-terminal test: the app in tmux, driven by keys, read back with capture-pane."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from conftest import wait_until

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)")


class Tmux:
    """``cmd`` in a new tmux server's window of ``width`` x ``height``.  The app sizes itself from the terminal:
    COLUMNS and LINES, which pytest-xdist's workers set to 80 and 24 and which Textual's size (shutil's) reads
    first, are unset (at 140x45 the app drew an 80x24 frame into the larger window, garbled, then a 140x45 one)."""

    def __init__(self, cmd: str, width: int, height: int):
        self.sock = f"istep-{uuid.uuid4().hex[:8]}"
        self.run("new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height), f"env -u COLUMNS -u LINES {cmd}")

    def run(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.sock, *args], capture_output=True, text=True, check=False).stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "t")

    def wait_for(self, text: str, timeout: float = 30) -> str:
        return wait_until(lambda: (lambda s: s if text in s else "")(self.screen()), timeout=timeout, every=0.1,
                          seen=lambda: f"{text!r} never appeared; screen:\n{self.screen()}")

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", "t", *keys)

    def close(self) -> None:
        self.run("kill-server")


@pytest.mark.parametrize("size", [(80, 24), (140, 45)], ids=["80x24", "140x45"])
def test_open_a_recording_in_a_real_terminal_step_and_quit(tmp_path, size):
    env = f"cd {ROOT} && {sys.executable} -m inductor_step --open tests/fixtures/demo.jsonl --screenshots {tmp_path}"
    t = Tmux(f"sh -c '{env}; echo EXITED=$?; sleep 30'", *size)
    try:
        t.wait_for("[0/0] forward")
        t.wait_for("class GraphModule")
        t.wait_for("Next")  # footer with keys
        t.keys("n")
        t.wait_for("post-grad graph")  # the AOT pane: its code under the table
        t.keys("3")
        t.wait_for("ComputedBuffer")
        t.keys("s")
        t.wait_for("screenshot saved")
        assert list(tmp_path.glob("*_0-0_forward_lowering_*.svg"))
        t.keys("q")
        screen = t.wait_for("EXITED=")
        assert "EXITED=0" in screen
    finally:
        t.close()


def _agents_running(marker: str) -> list[str]:
    out = subprocess.run(["ps", "-eww", "-o", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if marker in line and "inductor_step.tracer.agent" in line]


@pytest.mark.parametrize("key", ["q", "C-c"], ids=["q", "ctrl+c"])
def test_quit_while_paused_ends_the_agent_and_keeps_a_valid_session(tmp_path, key):
    """Live: pause in the middle of a real compile, quit; within 2 s no agent (or its children)
    is left, the terminal is handed back and the session file holds everything up to there."""
    from inductor_step.session.format import read_session

    script = tmp_path / "paused_script.py"
    script.write_text("import torch\nprint(torch.compile(lambda x: (x.sin() * 2).sum())(torch.randn(64)))\n")
    session = tmp_path / "s.jsonl"
    cmd = (f"cd {tmp_path} && {sys.executable} -m inductor_step --record {session} {script}")
    t = Tmux(f"sh -c '{cmd}; echo EXITED=$?; sleep 30'", 120, 40)
    try:
        t.wait_for("paused after dynamo", timeout=120)
        t.keys("n")
        t.wait_for("paused after aot", timeout=60)
        assert _agents_running(str(script))
        t.keys(key)
        start = time.monotonic()
        screen = t.wait_for("EXITED=", timeout=10)
        assert f"EXITED={130 if key == 'C-c' else 0}" in screen, screen  # ctrl+c: as after an interrupt
        try:
            wait_until(lambda: not _agents_running(str(script)), timeout=max(0.0, 2 - (time.monotonic() - start)))
        except AssertionError:
            pass  # said below
        assert not _agents_running(str(script)), "agent left running after quit"
        assert time.monotonic() - start < 4
        msgs = list(read_session(str(session)))
        stages = [m["stage"] for m in msgs if m.get("type") == "stop"]
        assert stages[:2] == ["dynamo", "aot"]
    finally:
        t.close()


def test_sigterm_to_the_ui_says_where_the_session_is(tmp_path):
    """SIGTERM to the live UI exited 143 saying nothing (its line went to the app's alternate
    screen); headless and ctrl+c say where the session is, and so does this now."""
    script = tmp_path / "paused_script.py"
    script.write_text("import torch\nprint(torch.compile(lambda x: (x.sin() * 2).sum())(torch.randn(64)))\n")
    session = tmp_path / "s.jsonl"
    pidfile = tmp_path / "pid"
    ui = tmp_path / "ui.sh"  # the UI's own process (exec), its pid written first
    ui.write_text(f"cd {tmp_path} && echo $$ > {pidfile} && exec {sys.executable} -m inductor_step --record {session} "
                  f"{script}\n")
    t = Tmux(f"sh -c 'sh {ui}; echo EXITED=$?; sleep 30'", 120, 40)
    try:
        t.wait_for("paused after dynamo", timeout=120)
        os.kill(int(pidfile.read_text()), 15)
        screen = t.wait_for("EXITED=", timeout=10)
        assert "EXITED=143" in screen, screen
        assert f"inductor-step: ended by SIGTERM; session kept in {session}" in screen.replace("\n", ""), screen
    finally:
        t.close()


def _half_drawn(screen: str) -> bool:
    """tmux caught mid-draw (a loaded box starves it between two reads of the app's output, which it draws top
    down): the two bottom rows, the status line and the footer, are still blank.  No frame of the app is so: the
    status line is set before its first frame (``StepApp.on_mount``), so a footer without keys still leaves a row."""
    rows = screen.splitlines()
    return len(rows) >= 2 and not any(line.strip() for line in rows[-2:])


def test_the_first_frame_of_open_has_the_footer_the_tab_underline_and_the_table_as_they_stay(tmp_path):
    """``--open``'s first frame in a real terminal holds what the settled screen holds above the code: the
    footer's keys (Footer added them a frame later; now drawn as one picture first, then as keys, the same row),
    the shown tab's underline (Tabs moved it there a frame later) and the table's column widths (they grew by two
    cells a frame later).  Every screen tmux shows
    twice in a row (a frame, not one caught while tmux draws it) is compared with the last one."""
    cmd = f"cd {ROOT} && {sys.executable} -m inductor_step --open tests/fixtures/demo.jsonl"  # (Tmux unsets COLUMNS)
    t = Tmux(f"sh -c '{cmd}; sleep 30'", 160, 50)
    try:
        screens: list[str] = []
        last, keys_at, end = "", None, time.monotonic() + 60
        while time.monotonic() < end and (keys_at is None or time.monotonic() < keys_at + 2):
            s = t.screen()
            if s == last and "●dynamo" in s and (not screens or screens[-1] != s) and not _half_drawn(s):
                screens.append(s)
                if keys_at is None and "Next" in s:
                    keys_at = time.monotonic()
            last = s
        assert screens, f"no stage bar in 60 s:\n{last}"
        final = screens[-1].splitlines()
        header = next(line for line in final if "node" in line and "target" in line)
        underline = final[final.index(next(line for line in final if "1 Dynamo" in line)) + 1]
        assert "╺" in underline, underline
        for s in screens:
            rows = s.splitlines()
            assert "n Next" in s, f"a frame with the stage bar and no footer keys:\n{s}"
            assert rows[-1] == final[-1], f"a frame whose footer differs from the settled one:\n{s}"
            assert underline in rows, f"a frame without the tab's underline:\n{s}"
            assert header in rows, f"a frame whose table columns differ from the settled ones:\n{s}"
    finally:
        t.close()
