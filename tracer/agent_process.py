"""The agent process's own life: the quit at a stop, the script's traceback without our frames, ending every child
on SIGTERM/SIGHUP, the script's ``atexit`` functions, and a torchrun rank's pipes handed to the UI over a Unix socket."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import traceback
from typing import Any

from inductor_step.session import format as protocol


class _nothing:
    """A context manager that does nothing (no compile clock)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


class _Quit(BaseException):
    """Raised on the compile thread when the UI asks the agent to end at a stop."""


def _ours(filename: str) -> bool:
    """Whether a traceback frame's file is ours (the agent, its hooks; not the bundled demo script) or runpy's."""
    if filename.startswith("<frozen runpy") or os.path.basename(filename) == "runpy.py":
        return True
    ours = os.path.dirname(os.path.realpath(__file__))  # tracer/ (its demo/ script is the user's)
    path = os.path.realpath(filename)
    return path.startswith(ours + os.sep) and not path.startswith(os.path.join(ours, "demo") + os.sep)


def user_traceback_text(exc: BaseException) -> str:
    """The script's exception as ``python script.py`` prints it: every frame of ours (the agent, the hooks it
    wraps around torch's functions, e.g. the C++ build timer) left out, in the exception and in those it chains; an exception whose frames are all ours keeps them (an error of ours)."""
    te = traceback.TracebackException(type(exc), exc, exc.__traceback__)
    seen: set[int] = set()
    todo = [te]
    while todo:
        t = todo.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        kept = [f for f in t.stack if not _ours(f.filename)]
        if kept:
            t.stack = traceback.StackSummary.from_list(kept)
        todo += [c for c in (t.__cause__, t.__context__) if c is not None]
        todo += list(getattr(t, "exceptions", None) or [])
    return "".join(te.format())


def _end_children() -> None:
    """End every process this agent started (timing and compile workers): tracer.lifetime."""
    try:
        from inductor_step.tracer.lifetime import end_descendants  # noqa: PLC0415

        end_descendants(grace_s=0.5)
    except Exception:  # noqa: BLE001 - exiting anyway
        pass


def _end_now(signum: int) -> None:
    """SIGTERM or SIGHUP (or the UI gone): end our children, then die of the signal itself (torch's
    launcher and the UI read a rank's ``-15`` as before)."""
    _end_children()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        time.sleep(1.0)
    finally:
        os._exit(128 + int(signum))


def _run_exit_funcs(timeout: float | None = None) -> None:
    """Run the ``atexit`` functions, as the interpreter would at exit (the agent ends with ``os._exit``).

    The script's own handlers (a results file, a logger's flush) and torch's (the compile worker
    pool's shutdown) run as they would under ``python script.py``.  ``timeout`` (s) bounds the wait
    when the UI asked to quit; the functions then run on a daemon thread.
    """
    import atexit  # noqa: PLC0415

    def run() -> None:
        try:
            atexit._run_exitfuncs()
        except BaseException:  # noqa: BLE001 - the interpreter prints and ignores these too
            traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()

    if timeout is None:
        run()
        return
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout)


#: What a paused rank's process groups' timeouts are raised to (s): a day of stepping.
COLLECTIVE_TIMEOUT_S = 24 * 3600.0


def connect(path: str, hello: dict[str, Any]) -> tuple[int, int]:
    """Hand this rank's pipes to the UI listening on the Unix socket ``path`` and point fds 1 and 2
    at two of them (the script's output then reaches the UI, not torchrun's terminal).  Returns
    ``(msg fd, ctl fd)``, this side's ends.  Raises OSError if the UI is not listening."""
    import socket  # noqa: PLC0415

    msg_r, msg_w = os.pipe()
    ctl_r, ctl_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        for attempt in range(50):  # the UI's listener is up before torchrun starts; be patient anyway
            try:
                sock.connect(path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                if attempt == 49:
                    raise
                time.sleep(0.1)
        protocol.send_hello(sock, hello, [msg_r, ctl_w, out_r, err_r])
    finally:
        sock.close()
    for fd in (msg_r, ctl_w, out_r, err_r):
        os.close(fd)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    os.close(out_w)
    os.close(err_w)
    return msg_w, ctl_r
