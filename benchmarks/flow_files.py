"""Which of our files run: pressing 6 after selecting a buffer in pane 3 (flow (a)), a codegen stop arriving (c).

    python benchmarks/flow_files.py [--session tests/fixtures/demo.jsonl] [--buffer buf6] [--flow a|c]

Opens the session in the app under Textual's Pilot (120x40), steps to the forward graph's codegen stop (``n`` x5),
presses ``3`` and moves the cursor to ``--buffer`` with the arrow keys, then records, with ``sys.setprofile``, every
function of this repository that runs while ``6`` is pressed and the app settles.  Prints the files in the order
they first ran, each with its functions, and splits them in two: the selection's path (the functions whose names or
files carry the selected buffer to the marked lines: ``select``, ``marks_for``, the code view) and the rest (the title,
stage bar, status line and tabs that every pane switch redraws).  ``--flow c``: the files that run from a codegen
stop's arrival (as the live agent's message) to pane 6's table.  The counts go into BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections import OrderedDict

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--session", default=os.path.join(HERE, "tests", "fixtures", "demo.jsonl"))
    ap.add_argument("--buffer", default="buf6")
    ap.add_argument("--flow", choices=("a", "b", "c"), default="a",
                    help="a: 6 after selecting --buffer in pane 3; b: a timing's progress line, then its result, "
                         "arriving while pane 7 shows; c: the first codegen stop arriving while pane 6 shows")
    args = ap.parse_args()
    if args.flow == "b":
        return flow_b(args)
    if args.flow == "c":
        return flow_c(args)

    flow_a(args)


def flow_a(args: argparse.Namespace) -> None:
    """Flow (a): ``n`` x5 and ``3`` on the session, the cursor down to ``--buffer``, then ``6`` recorded."""
    from inductor_step.session.format import read_session
    from inductor_step.tui.app import StepApp

    app = StepApp(messages=list(read_session(args.session)), session_path=args.session)
    ran = _recorder()

    async def drive() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            for k in "nnnnn3":
                await pilot.press(k)
                await pilot.pause()
            table = app.query_one("#table-lowering")
            target = next(i for i in range(table.row_count) if str(table.get_row_at(i)[0]) == args.buffer)
            while table.cursor_row != target:
                await pilot.press("down" if table.cursor_row < target else "up")
                await pilot.pause()
            await pilot.pause(0.3)
            sys.setprofile(ran.profile)
            try:
                await pilot.press("6")
                await pilot.pause()
                await pilot.pause(0.3)
            finally:
                sys.setprofile(None)
            marked = app.query_one("#code-codegen") if app.query("#code-codegen") else None
            print(f"pane 6 shown: {app.view.stage}; selected {app.view.selected}; code view {marked is not None}")

    asyncio.run(drive())
    path_words = ("select", "marks_for", "mark", "code", "show_kernel", "follow")
    selection = [f for f, fns in ran.files.items() if any(w in q.lower() for q in fns for w in path_words)]
    print(f"{len(ran.files)} of our files ran on the keypress; {len(selection)} carry the selection (by function name):")
    ran.print(lambda f: "selection " if f in selection else "redraw    ", 8)


def flow_c(args: argparse.Namespace) -> None:
    """Flow (c): the session's messages up to its first codegen stop are opened, pane 6 is shown, then that stop
    arrives as the agent would send it (``StepApp.on_agent_message``); the files that run until the app settles."""
    from inductor_step.session.format import read_session
    from inductor_step.tui.app import StepApp

    msgs = list(read_session(args.session))
    at = next(i for i, m in enumerate(msgs) if m.get("type") == "stop" and m.get("stage") == "codegen")
    app = StepApp(messages=msgs[:at], session_path=args.session)
    ran = _recorder()

    async def drive() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await pilot.press("6")
            await pilot.pause(0.3)
            sys.setprofile(ran.profile)
            try:
                app.on_agent_message(msgs[at])
                await pilot.pause()
                await pilot.pause(0.3)
            finally:
                sys.setprofile(None)
            rows = app.query_one("#table-codegen").row_count
            print(f"pane 6 after the stop: {app.view.stage} of {app.view.graph}; {rows} kernel rows")

    asyncio.run(drive())
    print(f"{len(ran.files)} of our files ran from the message to the settled pane:")
    ran.print()


def flow_b(args: argparse.Namespace) -> None:
    """Flow (b), the app's side: the session without its first ``run`` message and the progress lines before it,
    pane 7 shown; then one progress line (``run_status``) and the ``run`` message arrive as the agent sends them.
    The files each one runs until the app settles (the agent's and the timing worker's side run in other processes)."""
    from inductor_step.session.format import read_session
    from inductor_step.tui.app import StepApp

    msgs = list(read_session(args.session))
    run = next(i for i, m in enumerate(msgs) if m.get("type") == "run")
    progress = next(m for m in reversed(msgs[:run]) if m.get("type") == "run_status")
    app = StepApp(messages=[m for m in msgs[:run] if m.get("type") != "run_status"], session_path=args.session)
    seen: dict[str, _recorder] = {}

    async def drive() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            app.go(str(msgs[run]["compile_id"]) + " " + str(msgs[run]["graph_kind"]), "run")
            await pilot.press("7")
            await pilot.pause(0.3)
            for name, msg in (("run_status", progress), ("run", msgs[run])):
                seen[name] = ran = _recorder()
                sys.setprofile(ran.profile)
                try:
                    app.on_agent_message(msg)
                    await pilot.pause()
                    await pilot.pause(0.3)
                finally:
                    sys.setprofile(None)
            print(f"pane 7 after the run: {app.query_one('#table-run').row_count} kernel rows")

    asyncio.run(drive())
    for name, ran in seen.items():
        print(f"{name}: {len(ran.files)} of our files ran from the message to the settled pane:")
        ran.print(most=6)


class _recorder:
    """``sys.setprofile`` hook keeping, per file of this repository, the functions that ran (first run first)."""

    def __init__(self) -> None:
        self.files: OrderedDict[str, OrderedDict[str, None]] = OrderedDict()
        self.root = os.path.realpath(HERE) + os.sep

    def profile(self, frame, event, arg):  # noqa: ANN001
        if event != "call":
            return
        name = frame.f_code.co_filename
        path = os.path.realpath(name)
        if (not name.startswith("<") and path.startswith(self.root) and "site-packages" not in path
                and os.sep + "tests" + os.sep not in path and "benchmarks" not in path):
            self.files.setdefault(os.path.relpath(path, self.root), OrderedDict())[frame.f_code.co_qualname] = None

    def print(self, tag=lambda f: "", most: int = 8) -> None:  # noqa: ANN001
        """Each file, first run first, with ``tag(file)`` before it and its first ``most`` functions."""
        for f, fns in self.files.items():
            print(f"  {tag(f)}{f}: {', '.join(list(fns)[:most])}{' ...' if len(fns) > most else ''}")


if __name__ == "__main__":
    main()
