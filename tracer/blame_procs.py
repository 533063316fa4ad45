"""The processes of blame's steps: a step in an interpreter of its own, the warm parent the steps fork from, a forked step.

Used by :mod:`tracer.blame`; each handle polls for its exit status and ends its process and every process it started.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from typing import Any


#: what a step forked from the warm parent says when the GPU cannot be used after a fork
FORK_ERRORS = ("Cannot re-initialize CUDA in forked subprocess", "CUDA driver error: initialization error",
               "CUDA error: initialization error", "forked subprocess")


def fork_broke_it(text: str) -> bool:
    """Whether a step's error (or stderr) ``text`` says it failed because it was forked (CUDA after a fork)."""
    return any(e in text for e in FORK_ERRORS)


class Cancelled(Exception):
    """The blame was cancelled (ctrl+c, the cancel command): the step in progress was ended."""


class StepHandle:
    """A bisect step's process, however it was started: its exit status (None while it runs) and how to end it."""

    def poll(self) -> int | None:
        raise NotImplementedError

    def end(self) -> None:
        raise NotImplementedError


class StepCold(StepHandle):
    """A step in an interpreter of its own."""

    def __init__(self, proc: subprocess.Popen):
        self.proc = proc

    def poll(self) -> int | None:
        return self.proc.poll()

    def end(self) -> None:
        _end(self.proc)


class StepWarm:
    """The warm parent of the steps (``python -m inductor_step.tracer.blame_step --zygote``): torch imported once,
    each step forked from it.  Raises RuntimeError when it does not start (or the blame is cancelled meanwhile)."""

    START_S = 300.0

    def __init__(self, python: str, env: dict[str, str], cwd: str, cancel: threading.Event):
        import queue  # noqa: PLC0415

        env = {**env, "PYTORCH_NVML_BASED_CUDA_CHECK": "1"}  # torch.cuda.is_available() without initialising CUDA
        self.proc = subprocess.Popen([python, "-m", "inductor_step.tracer.blame_step", "--zygote"], env=env, cwd=cwd,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, bufsize=1)
        self.lines: Any = queue.Queue()
        self.exits: dict[int, int] = {}
        threading.Thread(target=self._read, daemon=True, name="inductor-step blame parent").start()
        t = time.monotonic()
        while True:
            try:
                msg = self.lines.get(timeout=0.1)
            except queue.Empty:
                msg = None
            if msg is not None and msg.get("ready"):
                return
            if msg is not None and msg.get("eof") or self.proc.poll() is not None:
                raise RuntimeError(f"the steps' warm parent exited ({self.proc.poll()})")
            if cancel.is_set() or time.monotonic() - t > self.START_S:
                self.close()
                raise Cancelled() if cancel.is_set() else RuntimeError("the steps' warm parent did not start in time")

    def _read(self) -> None:
        for line in self.proc.stdout or []:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "exit" in msg:
                self.exits[int(msg["pid"])] = int(msg["exit"])
            else:
                self.lines.put(msg)
        self.lines.put({"eof": True})

    def start(self, req: dict[str, Any]) -> "StepForked":
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        msg = self.lines.get(timeout=60)
        if "pid" not in msg:
            raise RuntimeError("the steps' warm parent ended")
        return StepForked(self, int(msg["pid"]))

    def close(self) -> None:
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
        except OSError:
            pass
        _end(self.proc)


class StepForked(StepHandle):
    """A step forked from the warm parent: ended by its pid (and every process it started)."""

    def __init__(self, warm: StepWarm, pid: int):
        self.warm, self.pid = warm, pid

    def poll(self) -> int | None:
        if self.pid in self.warm.exits:
            return self.warm.exits[self.pid]
        if self.warm.proc.poll() is not None:
            return -9
        return None

    def end(self) -> None:
        import signal  # noqa: PLC0415

        try:
            from inductor_step.tracer.lifetime import end_descendants  # noqa: PLC0415

            end_descendants(grace_s=0.3, pid=self.pid)
        except Exception:  # noqa: BLE001
            pass
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        t = time.monotonic()
        while self.poll() is None and time.monotonic() - t < 5:
            time.sleep(0.02)


def _end(proc: subprocess.Popen) -> None:
    """End a step's process and every process it started."""
    try:
        from inductor_step.tracer.lifetime import end_descendants  # noqa: PLC0415

        end_descendants(grace_s=0.3, pid=proc.pid)
    except Exception:  # noqa: BLE001
        pass
    try:
        proc.kill()
        proc.wait(timeout=5)
    except Exception:  # noqa: BLE001
        pass
