"""What the subcommands share: the SESSION argument, how `report` and `export` end (one line, exit status), and UsageError."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable


class UsageError(Exception):
    """Bad input: printed as one line (``inductor-step: <why>``), exit status 2."""


def session_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """The argument parser of ``inductor-step report`` / ``export``, with its SESSION argument."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("session", metavar="SESSION", help="a recorded session (.jsonl)")
    return p


def session_command(session_path: str, work: Callable[[], str]) -> int:
    """How ``inductor-step report`` and ``export`` end: ``work()`` on an existing session file and
    its result (a path) printed, exit status 0; or, when the session is missing or ``work`` raises
    OSError or ValueError, one line ``inductor-step: <why>`` on stderr, exit status 2."""
    try:
        if not os.path.exists(session_path):
            raise FileNotFoundError(f"no such session file: {session_path}")
        path = work()
    except (OSError, ValueError) as e:
        print(f"inductor-step: {e}", file=sys.stderr)
        return 2
    print(path)
    return 0
