"""In a torchrun rank: notice when the script's thread sits inside a torch.distributed collective (waiting for another rank, one held at a stop, say) and say which."""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, Callable

#: seconds inside one collective before the rank reports it is waiting there
WAIT_S = 1.5
_DIST = os.sep + os.path.join("torch", "distributed") + os.sep
_TORCH = os.sep + "torch" + os.sep


def blocked_at(frame: Any) -> tuple[str, str] | None:
    """``(collective, where)`` when the stack from ``frame`` (innermost first) is inside a
    torch.distributed call: the outermost public function of ``torch/distributed`` on the stack
    (``all_reduce``, ``barrier``, ``broadcast``; not a ``wrapper`` or ``_private`` helper) and the
    first caller outside torch as ``file.py:line``; None otherwise."""
    name = None
    where = None
    f = frame
    while f is not None:
        path = f.f_code.co_filename
        if _DIST in path:
            fn = f.f_code.co_name
            if not fn.startswith("_") and fn not in ("wrapper", "inner", "decorated"):
                name = fn  # keep going: the outermost one is the call the script made
        elif name is not None and _TORCH not in path:
            where = f"{os.path.basename(path)}:{f.f_lineno}"
            break
        f = f.f_back
    return (name, where or "?") if name else None


def watch(thread_id: int, send: Callable[[dict[str, Any]], None], stop: threading.Event,
          every_s: float = 0.5) -> None:
    """Sample thread ``thread_id``'s stack every ``every_s`` s until ``stop`` is set; send
    ``{"type": "blocked", "collective", "where", "since_s"}`` once it has sat in the same collective
    for :data:`WAIT_S`, and ``{"type": "blocked", "collective": None}`` when it leaves."""
    seen: tuple[str, str] | None = None
    since = 0.0
    reported = False
    waited = 0.0
    while not stop.wait(every_s):
        waited += every_s
        frame = sys._current_frames().get(thread_id)  # noqa: SLF001 - the standard way to read another thread's stack
        at = blocked_at(frame) if frame is not None else None
        # never hold the script's frame while we sleep: a frame kept alive keeps its locals (tensors) alive past
        # their function's return; under a job, DDPOptimizer's second bucket then failed to compile
        # ("FakeTensorDeviceMismatchError: ... meta and cpu!", examples/ddp_train.py, CPU and H100/H200)
        del frame
        if at != seen:
            if reported:
                send({"type": "blocked", "collective": None})
            seen, since, reported = at, waited, False
            continue
        if at is not None and not reported and waited - since >= WAIT_S:
            send({"type": "blocked", "collective": at[0], "where": at[1], "since_s": round(waited - since, 1)})
            reported = True


def start(send: Callable[[dict[str, Any]], None]) -> threading.Event:
    """Watch the calling thread (the script's) from a daemon thread; set the returned event to stop."""
    stop = threading.Event()
    threading.Thread(target=watch, args=(threading.get_ident(), send, stop), daemon=True,
                     name="inductor-step-rank-watch").start()
    return stop
