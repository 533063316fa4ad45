"""Start the agent process, read its stream, record the session file (no Textual, no torch).

The agent (``python -m tracer.agent``) gets a private message pipe and a control pipe (passed as
file descriptors), its own stdout/stderr pipes and no stdin, in a new process group, so nothing it
prints reaches the terminal the UI draws on and ending it ends its children too.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable

from inductor_step.tracer import protocol


class SessionWriter:
    """Appends messages to a session file as they arrive (flushed per line, so nothing is lost).

    A line of :data:`protocol.PACK_OVER` bytes or more is stored packed (compressed, its head in the
    clear: :func:`protocol.pack`), so a session is a few percent of its messages' JSON (BENCHMARKS.md,
    "Session size"); :func:`protocol.read_session` reads it back.

    The header is always the file's first line: output the script prints before the agent's
    header (import-time warnings) is held until it comes; if the agent dies before sending one,
    ``close()`` writes a minimal header first.  Raises OSError from the constructor if the file
    cannot be created.
    """

    def __init__(self, path: str, fallback_header: dict[str, Any] | None = None):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self.path = path
        self.f = open(path, "wb")  # noqa: SIM115 - kept open for the session
        self.lock = threading.Lock()
        self.pending: list[tuple[dict[str, Any], bytes | None]] | None = []
        self.fallback_header = fallback_header or {}

    def _put(self, msg: dict[str, Any], raw: bytes | None = None) -> None:
        line = raw if raw is not None else protocol.encode(msg).rstrip(b"\n")
        self.f.write(protocol.pack(line, msg) + b"\n")

    def write(self, msg: dict[str, Any], raw: bytes | None = None) -> None:
        """Append ``msg``; ``raw``, where given, is the line it was decoded from (without its
        newline), written as it is instead of encoding ``msg`` again."""
        with self.lock:
            if self.f.closed:
                return
            if self.pending is not None:
                if msg.get("type") != "header":
                    self.pending.append((msg, raw))
                    return
                self._put(msg, raw)
                for m, r in self.pending:
                    self._put(m, r)
                self.pending = None
            else:
                self._put(msg, raw)
            self.f.flush()

    def close(self) -> None:
        with self.lock:
            if self.f.closed:
                return
            if self.pending is not None:
                self._put({"type": "header", "format": protocol.FORMAT, "torch": None, "triton": None,
                           "python": None, "device": None, **self.fallback_header,
                           "note": "the agent ended before it sent its header"})
                for m, r in self.pending:
                    self._put(m, r)
                self.pending = None
            self.f.close()


_IMPORT_ROOT: list[str] = []


def import_root() -> str:
    """A folder from which ``import inductor_step`` finds this very package, for the agent's
    ``PYTHONPATH``: the agent may run under another interpreter (``--python``) that has no install
    of ours.  Installed from a wheel, that is the folder holding ``inductor_step/``; from a clone
    (the repository root is the package), a folder with a link named ``inductor_step`` to it."""
    if not _IMPORT_ROOT:
        pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        if os.path.basename(pkg) == "inductor_step":
            _IMPORT_ROOT.append(os.path.dirname(pkg))
        else:
            import atexit  # noqa: PLC0415
            import shutil  # noqa: PLC0415
            import tempfile  # noqa: PLC0415

            d = tempfile.mkdtemp(prefix="inductor-step-import-")
            os.symlink(pkg, os.path.join(d, "inductor_step"))
            atexit.register(shutil.rmtree, d, True)  # after the agent: it ends before the UI does
            _IMPORT_ROOT.append(d)
    return _IMPORT_ROOT[0]


class AgentProcess:
    """The agent running a user's script.

    ``on_message(msg)`` is called from reader threads for each stream message and for the
    user's output (``{"type": "output", "stream": "stdout"|"stderr", "text": ...}``), and once
    with ``{"type": "agent_exit", "returncode": N}`` when the agent has exited.  Every message is
    first written to ``writer`` (if given).
    """

    def __init__(self, script: str, args: list[str], on_message: Callable[[dict[str, Any]], None],
                 writer: SessionWriter | None = None, step: bool = True, run_at_end: bool = False,
                 python: str | None = None, what_if: list[str] | None = None):
        self.on_message = on_message
        self.writer = writer
        msg_r, msg_w = os.pipe()
        ctl_r, ctl_w = os.pipe()
        cmd = [python or sys.executable, "-m", "inductor_step.tracer.agent", "--msg-fd", str(msg_w), "--ctl-fd", str(ctl_r)]
        if step:
            cmd += ["--step", "--serve"]
        if run_at_end:
            cmd.append("--run")
        for w in what_if or []:  # issue 22: recompile every graph with these settings at the end
            cmd += ["--what-if", w]
        cmd += ["--", script] if script.startswith("-") else [script]
        cmd += list(args)
        env = dict(os.environ)
        env["PYTHONUNBUFFERED"] = "1"
        here = import_root()
        env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self.proc = subprocess.Popen(cmd, pass_fds=(msg_w, ctl_r), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                     start_new_session=True)
        os.close(msg_w)
        os.close(ctl_r)
        self.msg = os.fdopen(msg_r, "rb", buffering=0)
        self.ctl = os.fdopen(ctl_w, "wb", buffering=0)
        self.ctl_lock = threading.Lock()
        self._threads = [threading.Thread(target=self._read_stream, daemon=True),
                         threading.Thread(target=self._read_output, args=(self.proc.stdout, "stdout"), daemon=True),
                         threading.Thread(target=self._read_output, args=(self.proc.stderr, "stderr"), daemon=True)]
        for t in self._threads:
            t.start()
        threading.Thread(target=self._wait, daemon=True).start()

    def _emit(self, msg: dict[str, Any], raw: bytes | None = None) -> None:
        if self.writer is not None:
            self.writer.write(msg, raw)
        self.on_message(msg)

    def _read_stream(self) -> None:
        # a stop line can be megabytes: keep its chunks in a list and look for the newline in each
        # new chunk only (appending to one bytes object and scanning it again was quadratic)
        parts: list[bytes] = []
        while True:
            try:
                chunk = self.msg.read(1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                break
            start = 0
            while True:
                end = chunk.find(b"\n", start)
                if end < 0:
                    parts.append(chunk[start:])
                    break
                line = chunk[start:end]
                if parts:
                    parts.append(line)
                    line = b"".join(parts)
                    parts = []
                start = end + 1
                msg = protocol.decode(line)
                if msg is not None:
                    self._emit(msg, line.strip())

    def _read_output(self, pipe: Any, stream: str) -> None:
        for raw in iter(pipe.readline, b""):
            self._emit({"type": "output", "stream": stream, "text": raw.decode("utf-8", errors="replace").rstrip("\n")})

    def _wait(self) -> None:
        rc = self.proc.wait()
        for t in self._threads:
            t.join(timeout=2)
        self._emit({"type": "agent_exit", "returncode": rc})

    def send(self, cmd: str, **kw: Any) -> bool:
        """Send a control command; False if the agent is gone."""
        data = (json.dumps({"cmd": cmd, **kw}) + "\n").encode()
        with self.ctl_lock:
            try:
                self.ctl.write(data)
                return True
            except (BrokenPipeError, OSError, ValueError):
                return False

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def terminate(self, grace_s: float = 1.0) -> None:
        """End the agent and every process it started (its process group), within ``grace_s`` + a bit."""
        if self.proc.poll() is None:
            self.send(protocol.CMD_QUIT)
        try:
            self.ctl.close()
        except OSError:
            pass
        deadline = time.monotonic() + grace_s / 2
        while time.monotonic() < deadline and self.proc.poll() is None:
            time.sleep(0.02)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                break
            try:
                self.proc.wait(timeout=grace_s / 2)
                break
            except subprocess.TimeoutExpired:
                continue
        # children that left the group still die with the group kill above; reap ours
        try:
            self.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            pass
