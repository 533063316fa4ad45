"""The job file of a distributed run: its TypedDicts, write and read, a rank agent's hello."""

from __future__ import annotations

import json
import os
from typing import Any, Literal, TypedDict


# ----------------------------------------------------------------------------- distributed jobs
#
# ``inductor-step --nproc-per-node N script.py`` starts ``python -m torch.distributed.run ... -m
# inductor_step.tracer.agent --connect SOCKET --step-rank R -- script.py ...``: torch's launcher
# starts one agent per rank.  Each agent connects to the UI's Unix socket SOCKET and hands over,
# in one message (:func:`send_hello`), a :class:`Hello` line and four file descriptors: the read
# end of its message pipe, the write end of its control pipe and the read ends of its stdout and
# stderr (the agent points its fds 1 and 2 at those pipes).  From then on a rank is read exactly
# like a single agent: the pipes outlive a crash of the rank, so nothing it wrote is lost.

#: The job file's format: one JSON object (:class:`Job`), written whole (temp file + rename).
JOB_FORMAT = "inductor-step-job/1"
#: How many descriptors a hello carries, in this order.
HELLO_FDS = ("msg", "ctl", "stdout", "stderr")


class Hello(TypedDict, total=False):
    """What an agent in a rank says first, on the job's socket (see above)."""
    rank: int
    local_rank: int
    world_size: int
    pid: int
    restart_count: int


class JobRank(TypedDict, total=False):
    """One rank of a job, as the job file names it.  ``session``: the rank's session file, relative
    to the job file's folder; ``state``: ``"waiting"`` (not connected yet), ``"running"``,
    ``"done"`` (the script ended; ``returncode``), ``"died"`` (its stream ended before the script
    did: a crash, a signal, ``os._exit``; ``message`` says where), ``"stopped"`` (the user ended the
    job, q or ctrl+c, while this rank ran)."""
    rank: int
    session: str
    pid: int | None
    state: Literal["waiting", "running", "done", "died", "stopped"]
    returncode: int | None
    message: str | None


class Job(TypedDict, total=False):
    """A torchrun job's recording: one session per rank plus this file that names them.

    ``launcher``: the launcher's arguments as run (after ``python -m torch.distributed.run``);
    ``launcher_log``: the launcher's own output (relative path); ``launcher_returncode``: its exit
    status once it ended (``None`` while it runs)."""
    type: Literal["job"]
    format: str
    script: str
    argv: list[str]
    launcher: list[str]
    nproc_per_node: int
    world_size: int | None
    stepped_rank: int | None
    collective_timeout_s: float | None
    ranks: list[JobRank]
    launcher_log: str
    launcher_returncode: int | None
    time: float


def job_paths(record: str) -> tuple[str, str]:
    """``(job file, base)`` for a job recorded at ``record``: ``runs/x.jsonl`` or ``runs/x.job.json``
    give ``runs/x.job.json`` and base ``runs/x``; rank N's session is ``base + ".rank{N}.jsonl"``."""
    base = record
    for ext in (".job.json", ".jsonl", ".json"):
        if base.endswith(ext):
            base = base[: -len(ext)]
            break
    return base + ".job.json", base


def write_job(path: str, job: dict[str, Any]) -> None:
    """Write the job file whole (a temp file renamed over it: a reader never sees half of it)."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(job, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def is_job_file(path: str) -> bool:
    """Whether ``path`` is a job file (its first bytes name :data:`JOB_FORMAT`'s type)."""
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return False
    return head.lstrip().startswith(b"{") and b'"type": "job"' in head


def read_job(path: str) -> tuple[dict[str, Any], dict[int, str]]:
    """The job file at ``path`` and ``{rank: session path}`` (paths made absolute against the job
    file's folder).  Raises ValueError with a one-line reason if it is not a job file."""
    try:
        with open(path) as f:
            job = json.load(f)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path} is not a job file ({e.msg} at line {e.lineno})") from None
    if not isinstance(job, dict) or job.get("type") != "job" or not str(job.get("format", "")).startswith(
            "inductor-step-job/"):
        raise ValueError(f"{path} is not an inductor-step job file")
    here = os.path.dirname(os.path.abspath(path))
    ranks = {int(r["rank"]): os.path.join(here, r["session"]) for r in job.get("ranks") or []
             if isinstance(r, dict) and r.get("session")}
    return job, ranks


def send_hello(sock: Any, hello: dict[str, Any], fds: list[int]) -> None:
    """Send ``hello`` (one JSON line) with ``fds`` (:data:`HELLO_FDS` order) on a connected Unix
    socket (``SCM_RIGHTS``).  Raises OSError if the socket is gone."""
    import socket  # noqa: PLC0415

    socket.send_fds(sock, [json.dumps(hello).encode() + b"\n"], fds)


def recv_hello(sock: Any) -> tuple[dict[str, Any], list[int]]:
    """Receive what :func:`send_hello` sent: ``(hello, fds)``.  Raises ValueError if the peer sent
    something else (no fds, or not a JSON line), OSError if the socket failed."""
    import socket  # noqa: PLC0415

    data, fds, _flags, _addr = socket.recv_fds(sock, 1 << 16, len(HELLO_FDS))
    try:
        hello = json.loads(data.decode())
    except (UnicodeDecodeError, json.JSONDecodeError):
        hello = None
    if not isinstance(hello, dict) or len(fds) != len(HELLO_FDS):
        for fd in fds:
            os.close(fd)
        raise ValueError("not an inductor-step agent's hello")
    return hello, list(fds)
