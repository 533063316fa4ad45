"""``inductor-step report SESSION``'s command line: its parser, the screenshots it collects, and its exit status (the bundle is :mod:`inductor_step.session.report`'s)."""

from __future__ import annotations

import argparse
import os
import sys

from inductor_step.cli.common import session_command, session_parser
from inductor_step.session.report.bundle import DEFAULT_SHOTS, build_report
from inductor_step.session.report.job import build_job_report


def collect_screenshots(items: list[str], session_path: str) -> list[str]:
    """Screenshot files from ``items``: files as given; in a directory, the files whose names start
    with the session file's stem (the UI names screenshots ``<session stem>_<graph>_<stage>_<time>``)."""
    stem = os.path.splitext(os.path.basename(session_path))[0]
    out: list[str] = []
    for it in items:
        if os.path.isdir(it):
            for name in sorted(os.listdir(it)):
                p = os.path.join(it, name)
                if name.startswith(stem) and os.path.isfile(p):
                    out.append(p)
        elif os.path.isfile(it):
            out.append(it)
        else:
            raise FileNotFoundError(f"no such screenshot file or directory: {it}")
    return out


def build_report_parser() -> argparse.ArgumentParser:
    p = session_parser("inductor-step report",
                       "Make a bug-report bundle from a recorded session: REPORT.md (a GitHub issue body), "
                       "a minimal repro per graph, the session file and screenshots. Given a job file "
                       "(X.job.json), every rank's session, the job file, the launcher log and a REPORT.md "
                       "covering every rank.")
    p.add_argument("--out", metavar="DIR", help="bundle directory (default: inductor-step-sessions/report-<session stem>; "
                                                "for a job file, report-<job stem> beside the job file)")
    p.add_argument("--screenshots", metavar="DIR_OR_FILE", nargs="+", action="extend",
                   help="screenshot files, or directories to take the files named <session stem>* from "
                        "(default: inductor-step-sessions/screenshots, where `s` saves, when it exists)")
    p.add_argument("--archive", action="store_true", help="also write <DIR>.tar.gz and print its path")
    p.add_argument("--include-paths", action="store_true",
                   help="keep absolute paths in REPORT.md (default: <path>/name outside the working directory)")
    p.add_argument("--diff", metavar="OTHER", help="add the level-by-level diff of OTHER (a session, .jsonl) "
                   "against this one: a summary in REPORT.md, the whole in DIFF.txt")
    return p


def main_report(argv: list[str]) -> int:
    """``inductor-step report SESSION [...]`` (``argv``: the arguments after ``report``)."""
    args = build_report_parser().parse_args(argv)
    from inductor_step.session.format import is_job_file, job_paths  # noqa: PLC0415

    if is_job_file(args.session):
        problems: list[str] = []

        def job_work() -> str:
            if args.diff:
                raise ValueError("--diff compares two sessions; give it one rank's session, not a job file")
            stem = os.path.basename(job_paths(args.session)[1])
            items = args.screenshots or ([DEFAULT_SHOTS] if os.path.isdir(DEFAULT_SHOTS) else [])
            shots = collect_screenshots(items, stem + ".jsonl") if items else []
            path, bad = build_job_report(args.session, args.out, screenshots=shots,
                                         include_paths=args.include_paths, archive=args.archive)
            problems.extend(bad)
            return path

        rc = session_command(args.session, job_work)
        for line in problems:
            print(f"inductor-step: {line}", file=sys.stderr)
        return rc or (2 if problems else 0)

    def work() -> str:
        if args.screenshots:
            shots = collect_screenshots(args.screenshots, args.session)
        elif os.path.isdir(DEFAULT_SHOTS):
            shots = collect_screenshots([DEFAULT_SHOTS], args.session)
        else:
            shots = []
        if args.diff and not os.path.isfile(args.diff):
            raise FileNotFoundError(f"no such session file: {args.diff}")
        return build_report(args.session, args.out, screenshots=shots, include_paths=args.include_paths,
                            archive=args.archive, diff_with=args.diff)

    return session_command(args.session, work)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main_report(sys.argv[1:]))
