"""``inductor-step gate BASELINE NEW``'s command line: its options, output and exit status (0 passed, 1 a limit crossed, 2 bad input); the checks are :mod:`inductor_step.session.gate`'s."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, NoReturn

from inductor_step.session.gate import (
    DEFAULTS, FAIL, GateInputError, checked_limit, limits_file_for, render, resolve_limits, run_gate, write_junit,
)


class _Parser(argparse.ArgumentParser):
    """argparse with its errors as one line and exit status 2 (as ``inductor-step``'s own)."""

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        self.exit(2, f"{self.prog}: {message} (inductor-step gate -h lists the options)\n")


def build_parser() -> argparse.ArgumentParser:
    """``inductor-step gate``'s options: BASELINE, NEW, one option per limit in :data:`DEFAULTS`, --limits, --junit."""
    p = _Parser(prog="inductor-step gate", allow_abbrev=False,
                description="Compare a new recording with a baseline and fail (exit 1) when a limit is crossed: "
                            "a new error, new graph breaks or recompiles, more graphs or kernels, fewer fusions, a graph or "
                            "kernel slower than --max-slowdown (only where both were timed and judged reliable). "
                            "Exit 0: passed; 1: a limit crossed; 2: bad input.",
                epilog="Limits not given as options are read from BASELINE.gate.toml (or BASELINE.gate.json) "
                       "beside the baseline, with the same names: max-slowdown = 1.05.")
    p.add_argument("baseline", metavar="BASELINE", help="the baseline recording (a .jsonl session or a .job.json job)")
    p.add_argument("new", metavar="NEW", help="the new recording to judge")
    for name, (default, typ, what) in DEFAULTS.items():
        shown = "" if default is None else f" (default {default:g})"
        p.add_argument(f"--{name}", type=str, default=None, metavar="X" if typ is float else "N",
                       help=f"{what}{shown}")
    p.add_argument("--limits", metavar="FILE", help="read the limits from FILE (TOML, or JSON for a .json name) "
                                                    "instead of the file beside the baseline")
    p.add_argument("--junit", metavar="FILE", help="also write the checks as JUnit XML to FILE")
    return p


def main_gate(argv: list[str]) -> int:
    """``inductor-step gate BASELINE NEW [options]``; returns the exit status (0, 1 or 2)."""
    ns = build_parser().parse_args(argv)
    try:
        options: dict[str, Any] = {}
        for name, (_d, typ, _w) in DEFAULTS.items():
            v = getattr(ns, name.replace("-", "_"))
            if v is not None:
                try:
                    num = float(v)
                except ValueError:
                    raise GateInputError(f"--{name} {v}: not a number") from None
                options[name] = checked_limit(name, num, f"--{name}", " ")
        file = ns.limits
        if file is not None and not os.path.isfile(file):
            raise GateInputError(f"no such limits file: {file}")
        limits, sources = resolve_limits(options, file or limits_file_for(ns.baseline))
        try:
            checks, head = run_gate(ns.baseline, ns.new, limits, sources)
        except (KeyError, TypeError, AttributeError, IndexError) as e:  # a recording whose messages are malformed
            raise GateInputError(f"could not compare {ns.baseline} with {ns.new}: a message is not as the session "
                                 f"format says ({type(e).__name__}: {e})") from None
        if ns.junit:
            try:
                write_junit(checks, ns.junit)
            except OSError as e:
                raise GateInputError(f"cannot write {ns.junit}: {e.strerror}") from None
    except GateInputError as e:
        print(f"inductor-step gate: {e}", file=sys.stderr)
        return 2
    print(render(checks, head), flush=True)
    if ns.junit:
        print(f"gate: JUnit XML written to {ns.junit}", flush=True)
    return 1 if any(c.status == FAIL for c in checks) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main_gate(sys.argv[1:]))
