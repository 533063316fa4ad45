"""Work the agent hands to the script's main thread once the script has returned: timing that must run where the script ran.

On CPU a compiled graph's C++ kernels run in OpenMP parallel regions whose thread team belongs to the native thread
that opens them.  After the script's main thread has run its OpenMP work, the same call made from another thread of
the process ran 1.8-2.5x slower (torch 2.13, 2 cores: a compiled MLP 0.39 -> 0.72 ms, a flex-attention block 0.43 ->
1.09 ms; called first from the other thread, neither slows: BENCHMARKS.md, "Session 37: the script's call on its
own thread").  The agent's timing requests arrive on its control thread, so the timings it takes in this process
(the script's call whole, graphs timed in-process) are handed here: :meth:`MainThreadWork.serve` runs them on the
main thread while it waits (after the script, ``--serve``; or beside a ``--run`` at the end, :meth:`beside`).
"""

from __future__ import annotations

import queue
import threading
from typing import Any, Callable


class Handle:
    """One piece of work handed to the main thread: ``done`` is set when it ended, with ``result`` or ``error``."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.fn, self.done = fn, threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None

    def wait(self) -> Any:
        """Block until the work ended; its result, or its exception raised here."""
        self.done.wait()
        if self.error is not None:
            raise self.error
        return self.result


class MainThreadWork:
    """A queue the main thread serves while it waits; one per process (:data:`WORK`)."""

    def __init__(self) -> None:
        self._q: queue.Queue[Handle] = queue.Queue()
        self._serving = False

    def submit(self, fn: Callable[[], Any]) -> Handle | None:
        """Hand ``fn`` to the main thread: its :class:`Handle`, or None where the main thread is not serving (the
        script still runs, or this is the main thread): the caller then runs it as before."""
        if not self._serving or threading.current_thread() is threading.main_thread():
            return None
        h = Handle(fn)
        self._q.put(h)
        return h

    def call(self, fn: Callable[[], Any]) -> Any:
        """``fn()`` on the main thread where it serves, else on this thread; its result (or its exception)."""
        h = self.submit(fn)
        return fn() if h is None else h.wait()

    def serve(self, until: Callable[[], bool] | None = None) -> None:
        """On the main thread: run handed work until ``until()`` is true (forever without it)."""
        self._serving = True
        try:
            while until is None or not until():
                try:
                    h = self._q.get(timeout=0.05)
                except queue.Empty:
                    continue
                try:
                    h.result = h.fn()
                except BaseException as e:  # noqa: BLE001 - the submitter raises it
                    h.error = e
                h.done.set()
        finally:
            self._serving = False

    def beside(self, fn: Callable[[], Any]) -> None:
        """On the main thread: run ``fn`` on a thread of its own and serve its handed work until it returns (how
        ``--run`` times at the end of the script); ``fn``'s exception is raised here."""
        box: dict[str, BaseException] = {}

        def go() -> None:
            try:
                fn()
            except BaseException as e:  # noqa: BLE001
                box["error"] = e
        t = threading.Thread(target=go, daemon=True, name="inductor-step timing")
        self._serving = True  # before the thread starts: its first hand-over must not find the main thread away
        t.start()
        self.serve(until=lambda: not t.is_alive())
        if "error" in box:
            raise box["error"]


#: the process's one main-thread queue
WORK = MainThreadWork()
