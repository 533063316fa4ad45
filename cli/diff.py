"""``inductor-step diff A B``'s command line: its parser, the diff view or (``--headless``) the text diff of :mod:`inductor_step.session.diff`, and its exit status."""

from __future__ import annotations

import argparse
import os
import sys

from inductor_step.cli.common import UsageError
from inductor_step.session import format as protocol


def main_diff(argv: list[str]) -> int:
    """``inductor-step diff A.jsonl B.jsonl``: the diff view of two recorded sessions (graphs paired by
    compile id and kind, then by content); ``--headless`` prints the same diff as text.  One file
    given twice diffs its recompiles.  Needs no torch."""
    p = argparse.ArgumentParser(prog="inductor-step diff",
                                description="Diff two recorded sessions level by level: why it recompiled, "
                                            "Dynamo and post-grad graphs, IR buffers, scheduler nodes, kernels, "
                                            "timings.")
    p.add_argument("a", metavar="A", help="the earlier session (.jsonl)")
    p.add_argument("b", metavar="B", help="the later session (.jsonl)")
    p.add_argument("--headless", action="store_true", help="print a plain-text summary instead of the view")
    p.add_argument("--no-source", action="store_true", help="with --headless: leave out the kernels' source diffs")
    ns = p.parse_args(argv)
    try:
        for f in (ns.a, ns.b):
            if not os.path.isfile(f):
                raise UsageError(f"no such session file: {f}")
        if ns.headless:
            from inductor_step.session.diff import diff_files  # noqa: PLC0415

            try:
                print(diff_files(ns.a, ns.b, diffs=not ns.no_source))
            except (ValueError, OSError) as e:
                raise UsageError(str(e)) from None
            return 0
        if not sys.stdout.isatty():
            raise UsageError("the diff view needs a terminal; use --headless to print the diff")
        try:
            msgs_a = list(protocol.read_session(ns.a))
            msgs_b = list(protocol.read_session(ns.b, lazy_over=1 << 18))
        except (ValueError, OSError) as e:
            raise UsageError(str(e)) from None
        from inductor_step.tui.app import StepApp  # noqa: PLC0415

        app = StepApp(messages=msgs_b, session_path=ns.b, diff_against=(ns.a, msgs_a))
        app.run()
        return 130 if app.interrupted else 0
    except UsageError as e:
        print(f"inductor-step: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main_diff(sys.argv[1:]))
