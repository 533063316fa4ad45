"""Processes we start never outlive us: parent-death signals, descendants from /proc, and SIGTERM/SIGHUP handling.

An ``inductor-step`` ended with SIGTERM left its timing worker
(``inductor_step.tracer.timing.worker``) running for minutes.  The agent and the timing worker each
watch the process that started them (:func:`die_with_parent`: Linux's ``PR_SET_PDEATHSIG`` where
there is one, and a thread that polls ``os.getppid()`` everywhere), and the agent ends every
process below it (:func:`end_descendants`, read from ``/proc``: timing workers, Inductor's compile
workers) before it exits on SIGTERM, SIGHUP, SIGINT or its UI going away.  Standard library only.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Callable

PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent(sig: int = signal.SIGTERM, poll_s: float = 0.5,
                    on_orphan: Callable[[], None] | None = None, use_prctl: bool = True) -> None:
    """End this process when the one that started it goes (killed, even with SIGKILL, or exited).

    Linux: ``prctl(PR_SET_PDEATHSIG, sig)`` (the kernel sends ``sig`` when the parent *thread*
    that started us ends), and on every platform a daemon thread that polls ``os.getppid()`` every
    ``poll_s`` s and then calls ``on_orphan`` (default: ``os.kill(os.getpid(), sig)``).  A parent that
    went before this call is caught where it set ``INDUCTOR_STEP_PARENT_PID`` in our environment.  ``use_prctl``
    False: the thread only (a process whose parent may start it from a thread that ends early, or
    that must run ``on_orphan`` first).  Never raises."""
    parent = os.getppid()
    try:
        if not use_prctl:
            raise OSError("prctl not wanted")
        import ctypes  # noqa: PLC0415

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    except Exception:  # noqa: BLE001 - not Linux: the thread below does it
        pass

    def orphaned() -> None:
        if on_orphan is not None:
            on_orphan()
        else:
            os.kill(os.getpid(), sig)

    expected = os.environ.get("INDUCTOR_STEP_PARENT_PID")
    if expected and expected.isdigit() and int(expected) != parent:  # the parent went before we looked
        orphaned()
        return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        orphaned()

    threading.Thread(target=watch, daemon=True, name="inductor-step-parent-watch").start()


def _children_map() -> dict[int, list[int]]:
    """{ppid: [pid, ...]} of every process this user can see, from ``/proc/*/stat``; {} without /proc."""
    out: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for n in names:
        if not n.isdigit():
            continue
        try:
            with open(f"/proc/{n}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[-1].split()
        except OSError:
            continue
        if len(fields) > 1 and fields[0] != b"Z":
            out.setdefault(int(fields[1]), []).append(int(n))
    return out


def descendants(pid: int | None = None) -> list[int]:
    """Every live process below ``pid`` (default: this one), children first; from ``/proc``."""
    root = os.getpid() if pid is None else pid
    kids = _children_map()
    out: list[int] = []
    todo = [root]
    while todo:
        p = todo.pop(0)
        for c in kids.get(p, []):
            if c not in out and c != root:
                out.append(c)
                todo.append(c)
    return out


def end_descendants(grace_s: float = 1.0, pid: int | None = None) -> list[int]:
    """SIGTERM every process below ``pid`` (default: this one), SIGKILL those still there after
    ``grace_s`` s; returns the pids signalled.  Never raises."""
    pids = descendants(pid)
    for p in pids:
        try:
            os.kill(p, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.02)
    for p in pids + descendants(pid):  # and any started meanwhile
        if _alive(p):
            try:
                os.kill(p, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    return pids


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
    except OSError:
        try:
            os.kill(pid, 0)
            return True
        except (ProcessLookupError, PermissionError):
            return False


def on_signals(handler: Callable[[int], None], sigs: tuple[str, ...] = ("SIGTERM", "SIGHUP")) -> None:
    """Call ``handler(signum)`` on each of ``sigs`` that this platform has (main thread only)."""
    for name in sigs:
        sig = getattr(signal, name, None)
        if sig is not None:
            try:
                signal.signal(sig, lambda s, _f: handler(s))
            except (ValueError, OSError):  # not the main thread
                pass
