"""``inductor-step export SESSION DIR``'s command line: its parser and exit status (the work is :mod:`inductor_step.session.export`)."""

from __future__ import annotations

import argparse
import os
import sys

from inductor_step.cli.common import session_command, session_parser
from inductor_step.session.export import export_job, export_trace
from inductor_step.session.format import is_job_file


def build_export_parser() -> argparse.ArgumentParser:
    p = session_parser("inductor-step export",
                       "Write a recorded session as a TORCH_TRACE structured log (what torch writes with "
                       "TORCH_TRACE=DIR), for tlparse: `tlparse DIR/dedicated_log_torch_trace_*.log`. "
                       "Given a job file (X.job.json), one log per rank: `tlparse DIR --all-ranks-html`.")
    p.add_argument("dir", metavar="DIR", help="directory to write the trace log into (created if needed)")
    return p


def main_export(argv: list[str]) -> int:
    """``inductor-step export SESSION DIR`` (``argv``: the arguments after ``export``)."""
    args = build_export_parser().parse_args(argv)

    problems: list[str] = []

    def work() -> str:
        if os.path.exists(args.dir) and not os.path.isdir(args.dir):
            raise NotADirectoryError(f"{args.dir} exists and is not a directory")
        if is_job_file(args.session):
            logs, bad = export_job(args.session, args.dir)
            problems.extend(bad)
            return "\n".join(logs) if logs else args.dir
        return export_trace(args.session, args.dir)

    rc = session_command(args.session, work)
    for line in problems:
        print(f"inductor-step: {line}", file=sys.stderr)
    return rc or (2 if problems else 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main_export(sys.argv[1:]))
