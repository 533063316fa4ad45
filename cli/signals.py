"""SIGTERM, SIGHUP (an SSH link dropping) and SIGINT reaching ``inductor-step``: end every process it started, keep the session.

An ``inductor-step`` ended with SIGTERM left its timing worker running for
minutes, and a job launcher outlived its run.  The headless loops turn SIGTERM and SIGHUP into
:class:`Ended` (handled like Ctrl+C: the agent or the whole job is ended, the session file kept);
the UI ends its agents (or job) from the handler at once and then leaves the app
(:func:`end_app_on_signal`).  The agent ends its own children (tracer.lifetime).  No torch here.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from typing import Any


def _signal_name(rc: int) -> str:
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return f"signal {-rc}"


class Ended(BaseException):
    """SIGTERM or SIGHUP (an SSH link dropping) reached ``inductor-step``: raised on the main thread
    so the headless loops end the agent (or the job) and keep the session, like Ctrl+C."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum
        self.name = _signal_name(-signum)


def raise_ended(signum: int) -> None:
    """The headless handler: raise :class:`Ended` on the main thread."""
    raise Ended(signum)


def on_end_signals(handler: Any, names: tuple[str, ...] = ("SIGTERM", "SIGHUP")) -> None:
    """Call ``handler(signum)`` on SIGTERM and SIGHUP (where the platform has them; main thread only)."""
    for name in names:
        sig = getattr(signal, name, None)
        if sig is not None:
            try:
                signal.signal(sig, lambda s, _f: handler(s))
            except (ValueError, OSError):
                pass


def ended_line(signum: int, record: str) -> str:
    """What the command says as it exits on signal ``signum``: ``inductor-step: ended by SIGTERM; session kept in
    PATH``.  Said once the app has left the terminal (said while the app still drew, on its
    alternate screen, it vanished with it and the command exited 143 saying nothing)."""
    return f"inductor-step: ended by {_signal_name(-signum)}; session kept in {record}"


def end_app_on_signal(app: Any, record: str) -> None:
    """The UI: on SIGTERM or SIGHUP end every process it started (agent and its workers, a job's
    launcher and ranks) and close the session files at once, then leave the app; if the app does
    not return within 2 s (its terminal gone), exit anyway -- nothing is left to lose."""
    import threading  # noqa: PLC0415

    def handler(signum: int) -> None:
        app.ended_by = signum
        try:
            app.end_agents()
        finally:
            def last_resort() -> None:
                time.sleep(2.0)
                print(ended_line(signum, record), file=sys.stderr)
                os._exit(128 + signum)

            threading.Thread(target=last_resort, daemon=True).start()
            try:
                app.exit()
            except Exception:  # noqa: BLE001
                os._exit(128 + signum)

    # SIGINT too: ctrl+c is a key inside the app (raw terminal), so one comes from `kill -INT` only
    on_end_signals(handler, ("SIGTERM", "SIGHUP", "SIGINT"))
