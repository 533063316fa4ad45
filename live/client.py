"""Start the agent process, read its stream, record the session file (no Textual, no torch).

The agent (``python -m tracer.agent``) gets a private message pipe and a control pipe (passed as
file descriptors), its own stdout/stderr pipes and no stdin, in a new process group, so nothing it
prints reaches the terminal the UI draws on and ending it ends its children too; in our own session
(:func:`own_process_group`), so the script is scheduled as it would be when run from the same shell.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable

from inductor_step.session import format as protocol


def own_process_group() -> dict[str, Any]:
    """``subprocess.Popen`` keywords that start a child in a process group of its own (``os.killpg`` ends it and its
    children; the terminal's Ctrl+C, sent to the foreground group, does not reach it) but in this process's session.

    Not ``start_new_session``: where Linux's scheduler autogroups are on (``/proc/sys/kernel/sched_autogroup_enabled``,
    the default of most distributions' kernels) a new session is a new autogroup, and the scheduler shares the CPUs
    between autogroups first, so the script ran under other rules than when run from the shell.  Beside two busy
    loops of the shell on a 2-core box, a plain nanoGPT process had its two OpenMP threads left on one core (its
    call 340-720 ms against 4-6 ms) in 7 of 10 runs under ``setsid`` and 2 of 10 in the shell's session
    (BENCHMARKS.md, "Session 39").  In the launching shell's session the script shares the CPUs as it does when run
    as ``python train.py``."""
    if sys.version_info >= (3, 11):
        return {"process_group": 0}
    return {"preexec_fn": os.setpgrp}  # (Python 3.10 has no process_group)


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


def import_root(python: str | None = None) -> str | None:
    """A folder to put on the agent's ``PYTHONPATH`` so that ``import inductor_step`` finds this very package,
    or None where the agent's Python imports it already.  Installed from a wheel, that is the folder holding
    ``inductor_step/``; from a clone (the repository root is the package) run by this very Python, none: the
    editable install's finder serves the agent too (no temporary folder, whose paths showed in
    tracebacks); a clone run by another interpreter (``--python``) gets a temporary folder with a link named
    ``inductor_step`` to it."""
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.path.basename(pkg) == "inductor_step":
        return os.path.dirname(pkg)
    import shutil  # noqa: PLC0415

    # the same path, not the same binary: a virtual environment's python links to its base interpreter, whose
    # site-packages hold no editable install of this clone
    if python is None or os.path.abspath(shutil.which(python) or python) == os.path.abspath(sys.executable):
        return None
    if not _IMPORT_ROOT:
        import atexit  # noqa: PLC0415
        import tempfile  # noqa: PLC0415

        d = tempfile.mkdtemp(prefix="inductor-step-import-")
        os.symlink(pkg, os.path.join(d, "inductor_step"))
        atexit.register(shutil.rmtree, d, True)  # after the agent: it ends before the UI does
        _IMPORT_ROOT.append(d)
    return _IMPORT_ROOT[0]


def agent_env(python: str | None = None) -> dict[str, str]:
    """The agent's environment: ours, unbuffered, with :func:`import_root` first on ``PYTHONPATH`` where needed, and
    ``INDUCTOR_STEP_LAUNCH_SESSION``: the session inductor-step runs in, which the timings compare with their own
    (tracer.timing.rounds.scheduling_group)."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    try:
        env["INDUCTOR_STEP_LAUNCH_SESSION"] = str(os.getsid(0))
    except (OSError, AttributeError):  # (no sessions on Windows)
        pass
    here = import_root(python)
    if here is not None:
        env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


class AgentProcess:
    """The agent running a user's script.

    ``on_message(msg)`` is called from reader threads for each stream message and for the
    user's output (``{"type": "output", "stream": "stdout"|"stderr", "text": ...}``), and once
    with ``{"type": "agent_exit", "returncode": N}`` when the agent has exited.  Every message is
    first written to ``writer`` (if given).
    """

    def __init__(self, script: str, args: list[str], on_message: Callable[[dict[str, Any]], None],
                 writer: SessionWriter | None = None, step: bool = True, run_at_end: bool = False,
                 python: str | None = None, what_if: list[str] | None = None, numerics: bool = False,
                 blame: str | None = None):
        self.on_message = on_message
        self.writer = writer
        msg_r, msg_w = os.pipe()
        ctl_r, ctl_w = os.pipe()
        cmd = [python or sys.executable, "-m", "inductor_step.tracer.agent", "--msg-fd", str(msg_w), "--ctl-fd", str(ctl_r)]
        if step:
            cmd += ["--step", "--serve"]
        if run_at_end:
            cmd.append("--run")
        if numerics:  # compare every graph's buffers with eager at the end
            cmd.append("--numerics")
        if blame:  # bisect the first graph that diverges, after the script (tracer.blame)
            cmd += ["--blame", blame]
        for w in what_if or []:  # recompile every graph with these settings at the end
            cmd += ["--what-if", w]
        cmd += ["--", script] if script.startswith("-") else [script]
        cmd += list(args)
        env = agent_env(python)
        self.proc = subprocess.Popen(cmd, pass_fds=(msg_w, ctl_r), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                     **own_process_group())
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


class RankAgent:
    """One rank of a torchrun job, once its agent handed over its pipes (:func:`protocol.recv_hello`):
    read and recorded exactly like an :class:`AgentProcess`, but not our child (torch's launcher
    started it), so ``alive`` is whether its message stream is still open and ``terminate`` asks it
    to quit, then signals its pid.

    ``on_message(msg)`` gets each stream message, its output lines, and at the end
    ``{"type": "agent_exit", "returncode": N}`` (the script's status from its ``done``, else 1: it
    died; ``-signal`` when the pid is found gone after a signal is not knowable here)."""

    def __init__(self, hello: dict[str, Any], fds: list[int], on_message: Callable[[dict[str, Any]], None],
                 writer: SessionWriter | None = None):
        self.hello = hello
        self.rank = int(hello.get("rank", -1))
        self.pid = hello.get("pid")
        self.on_message = on_message
        self.writer = writer
        msg_r, ctl_w, out_r, err_r = fds
        self.msg = os.fdopen(msg_r, "rb", buffering=0)
        self.ctl = os.fdopen(ctl_w, "wb", buffering=0)
        self.ctl_lock = threading.Lock()
        self.returncode: int | None = None  # from its done message
        self._open = True
        self._threads = [threading.Thread(target=AgentProcess._read_stream, args=(self,), daemon=True),
                         threading.Thread(target=AgentProcess._read_output,
                                          args=(self, os.fdopen(out_r, "rb", buffering=0), "stdout"), daemon=True),
                         threading.Thread(target=AgentProcess._read_output,
                                          args=(self, os.fdopen(err_r, "rb", buffering=0), "stderr"), daemon=True)]
        for t in self._threads:
            t.start()
        threading.Thread(target=self._wait, daemon=True).start()

    def _emit(self, msg: dict[str, Any], raw: bytes | None = None) -> None:
        if msg.get("type") == "done":
            self.returncode = msg.get("returncode")
        if self.writer is not None:
            self.writer.write(msg, raw)
        self.on_message(msg)

    def _wait(self) -> None:
        for t in self._threads:
            t.join()
        self._open = False
        rc = self.returncode if self.returncode is not None else 1
        self._emit({"type": "agent_exit", "returncode": rc})
        if self.writer is not None:
            self.writer.close()

    send = AgentProcess.send

    @property
    def alive(self) -> bool:
        return self._open

    def terminate(self) -> None:
        """Ask the rank to quit, then SIGTERM/SIGKILL its pid if it is still there."""
        self.send(protocol.CMD_QUIT)
        try:
            self.ctl.close()
        except OSError:
            pass
        if not self.pid:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline and _pid_alive(self.pid):
                time.sleep(0.02)
            if not _pid_alive(self.pid):
                return
            try:
                os.kill(self.pid, sig)
            except (ProcessLookupError, PermissionError):
                return


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (ended, not reaped by its launcher yet) counts as gone
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True


class JobProcess:
    """A torchrun job: torch's launcher, our agent in every rank, one session per rank.

    Starts ``python -m inductor_step.tracer.launch LAUNCHER_ARGS SCRIPT ARGS`` (torch's
    ``torch.distributed.run`` with our agent as each rank's entry point) in its own process group,
    listens on a Unix socket for each rank's hello and records rank N to ``base.rankN.jsonl``; the
    job file ``job_path`` (:class:`protocol.Job`) names them and is rewritten as ranks connect and
    end.  ``on_message(rank, msg)`` is called from reader threads: ``rank`` None for the launcher's
    own output lines and its ``{"type": "launcher_exit", "returncode": N}``.

    ``stepped_rank``: the rank that pauses at every stop (``None``: none pauses, e.g. headless).
    Raises OSError if the socket or the session files cannot be made.
    """

    def __init__(self, script: str, args: list[str], launcher_args: list[str],
                 on_message: Callable[[int | None, dict[str, Any]], None], record: str,
                 stepped_rank: int | None = 0, run_at_end: bool = False, serve: bool = True,
                 python: str | None = None, what_if: list[str] | None = None, nproc_per_node: int | None = None,
                 blame: str | None = None):
        import socket  # noqa: PLC0415
        import tempfile  # noqa: PLC0415

        self.on_message = on_message
        self.job_path, self.base = protocol.job_paths(record)
        os.makedirs(os.path.dirname(os.path.abspath(self.job_path)), exist_ok=True)
        self.ranks: dict[int, RankAgent] = {}
        self.lock = threading.Lock()
        self.stepped_rank = stepped_rank
        #: rank -> (exit code, "(pid: N) (SIGTERM)") from torch's failure table in the launcher's output
        self.launcher_exits: dict[int, tuple[int, str]] = {}
        self.closing = False  # terminate() was called: ranks ending now are not news
        self.script, self.args = script, list(args)
        self.job: dict[str, Any] = {
            "type": "job", "format": protocol.JOB_FORMAT, "script": script, "argv": list(args),
            "launcher": list(launcher_args), "nproc_per_node": nproc_per_node, "world_size": None,
            "stepped_rank": stepped_rank, "collective_timeout_s": None, "ranks": [],
            "launcher_log": os.path.basename(self.base) + ".launcher.log", "launcher_returncode": None,
            "time": time.time()}
        self._write_job()
        self.launcher_log = open(self.base + ".launcher.log", "w")  # noqa: SIM115 - open for the job
        self.tmp = tempfile.mkdtemp(prefix="inductor-step-job-")
        self.sock_path = os.path.join(self.tmp, "ranks.sock")
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(self.sock_path)
        self.server.listen(64)
        agent_args = ["--connect", self.sock_path]
        if stepped_rank is not None:
            agent_args += ["--step-rank", str(stepped_rank)]
        if serve:
            agent_args.append("--serve")
        if run_at_end:
            agent_args.append("--run")
        for w in what_if or []:
            agent_args += ["--what-if", w]
        if blame:  # rank 0 bisects its first divergent graph after the script (tracer.blame)
            agent_args += ["--blame", blame]
        env = agent_env(python)
        env["INDUCTOR_STEP_AGENT_ARGS"] = json.dumps(agent_args)
        self.cmd = [python or sys.executable, "-m", "inductor_step.tracer.launch", *launcher_args,
                    *(["--", script] if script.startswith("-") else [script]), *args]
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env, **own_process_group())
        self._out_threads = [threading.Thread(target=self._read_launcher, args=(self.proc.stdout, "stdout"),
                                              daemon=True),
                             threading.Thread(target=self._read_launcher, args=(self.proc.stderr, "stderr"),
                                              daemon=True)]
        for t in self._out_threads:
            t.start()
        threading.Thread(target=self._accept, daemon=True).start()
        threading.Thread(target=self._wait, daemon=True).start()

    # ------------------------------------------------------------------ the job file
    def _write_job(self) -> None:
        with self.lock:
            protocol.write_job(self.job_path, self.job)

    def _rank_entry(self, rank: int) -> dict[str, Any]:
        for r in self.job["ranks"]:
            if r["rank"] == rank:
                return r
        r = {"rank": rank, "session": os.path.basename(self.base) + f".rank{rank}.jsonl", "pid": None,
             "state": "waiting", "returncode": None, "message": None}
        self.job["ranks"].append(r)
        self.job["ranks"].sort(key=lambda x: x["rank"])
        return r

    # ------------------------------------------------------------------ threads
    #: torch's failure table (torch.distributed.elastic ChildFailedError): "rank : 1 (local_rank: 1)"
    #: then "exitcode : -15 (pid: 6261)  (SIGTERM)"
    _FAIL_RANK = re.compile(r"^\s*rank\s*:\s*(\d+)\s*\(local_rank")
    _FAIL_EXIT = re.compile(r"^\s*exitcode\s*:\s*(-?\d+)(.*)$")

    def _read_launcher(self, pipe: Any, stream: str) -> None:
        failed_rank: int | None = None
        for raw in iter(pipe.readline, b""):
            text = raw.decode("utf-8", errors="replace").rstrip("\n")
            m = self._FAIL_RANK.match(text)
            if m:
                failed_rank = int(m.group(1))
            m = self._FAIL_EXIT.match(text)
            if m and failed_rank is not None:
                self.launcher_exits[failed_rank] = (int(m.group(1)), " ".join(m.group(2).split()))
                failed_rank = None
            try:
                self.launcher_log.write(f"{stream}: {text}\n")
                self.launcher_log.flush()
            except (OSError, ValueError):
                pass
            self.on_message(None, {"type": "output", "stream": stream, "text": text})

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            try:
                hello, fds = protocol.recv_hello(conn)
            except (ValueError, OSError):
                conn.close()
                continue
            conn.close()
            rank = int(hello.get("rank", -1))
            with self.lock:
                if hello.get("world_size"):
                    self.job["world_size"] = hello["world_size"]
                    for r in range(int(hello["world_size"])):
                        self._rank_entry(r)
                entry = self._rank_entry(rank)
                entry.update(pid=hello.get("pid"), state="running")
            writer = SessionWriter(os.path.join(os.path.dirname(self.job_path), entry["session"]),
                                   {"script": self.script, "argv": self.args})
            self._write_job()

            def emit(msg: dict[str, Any], rank: int = rank) -> None:
                self._rank_message(rank, msg)

            agent = RankAgent(hello, fds, emit, writer=writer)
            with self.lock:
                self.ranks[rank] = agent

    def _rank_message(self, rank: int, msg: dict[str, Any]) -> None:
        t = msg.get("type")
        if t == "header":
            d = msg.get("distributed") or {}
            if d.get("collective_timeout_s"):
                with self.lock:
                    self.job["collective_timeout_s"] = d["collective_timeout_s"]
                self._write_job()
        elif t in ("done", "agent_exit", "error"):
            with self.lock:
                entry = self._rank_entry(rank)
                if t == "done":
                    entry.update(state="done", returncode=msg.get("returncode"),
                                 message=entry.get("message") or msg.get("message"))
                elif t == "error" and not entry.get("message"):
                    where = (f"{protocol.graph_key(msg) if msg.get('graph_kind') else msg['compile_id']} "
                         if msg.get("compile_id") else "")
                    entry["message"] = f"{where}{msg.get('stage')}: {msg.get('message')}"
                elif t == "agent_exit" and entry["state"] != "done" and self.closing:
                    entry.update(state="stopped", message="ended by the user (q / ctrl+c) while it ran")
                elif t == "agent_exit" and entry["state"] != "done":
                    entry.update(state="died", returncode=msg.get("returncode"),
                                 message=entry.get("message") or "its stream ended before the script did")
            self._write_job()
        self.on_message(rank, msg)

    def _wait(self) -> None:
        rc = self.proc.wait()
        for t in self._out_threads:
            t.join(timeout=2)
        first = min(self.launcher_exits, default=None, key=lambda r: (self.launcher_exits[r][0] < 0, r))
        with self.lock:
            self.job["launcher_returncode"] = rc
            for r in self.job["ranks"]:
                if r["state"] == "waiting":
                    r.update(state="died", message="never reached the UI (see the launcher log)")
                code = self.launcher_exits.get(r["rank"])
                if code is not None and r["state"] == "died" and not self.closing:
                    how = f"exit code {code[0]} {code[1]}".strip()
                    if code[0] < 0 and first is not None and first != r["rank"]:
                        how += f": stopped by torch's launcher after rank {first} failed"
                    r.update(returncode=code[0], message=how)
        self._write_job()
        try:
            self.launcher_log.close()
        except OSError:
            pass
        self.on_message(None, {"type": "launcher_exit", "returncode": rc})

    # ------------------------------------------------------------------ control
    def send(self, rank: int, cmd: str, **kw: Any) -> bool:
        """Send a control command to one rank; False if it is not (or no longer) connected."""
        a = self.ranks.get(rank)
        return a.send(cmd, **kw) if a is not None else False

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def terminate(self, grace_s: float = 3.0) -> None:
        """End the whole job: every rank asked to quit, the launcher signalled (torch's launcher
        then stops its workers), and any rank process still there killed by pid; no orphans."""
        self.closing = True
        with self.lock:
            ranks = list(self.ranks.values())
        for a in ranks:
            a.send(protocol.CMD_QUIT)
        deadline = time.monotonic() + grace_s / 3
        while time.monotonic() < deadline and self.proc.poll() is None:
            time.sleep(0.02)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if self.proc.poll() is not None:
                break
            try:
                os.killpg(self.proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                break
            try:
                self.proc.wait(timeout=grace_s / 3)
            except subprocess.TimeoutExpired:
                continue
        for a in ranks:
            a.terminate()
        try:
            self.server.close()
            os.unlink(self.sock_path)
            os.rmdir(self.tmp)
        except OSError:
            pass
