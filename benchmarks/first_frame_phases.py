"""Where `inductor-step --open SESSION`'s first frame goes: the UI thread's CPU ms (``time.thread_time``) in each
phase up to the first screen Textual writes, median of several runs in a real terminal (tmux, 160x50).

    python benchmarks/first_frame_phases.py SESSION [--repeats 9] [--bare]

Phases: ``startup`` (the interpreter, Textual's import (the probe patches Textual first), ``cli.main``'s imports), ``read`` (``read_session``), ``import ui``
(``tui.app`` and what it imports), ``init`` (``StepApp.__init__``: the session indexed), ``compose+mount`` (Textual
builds the screen and our widgets, CSS), ``on_mount`` (the panes filled: the first stop and its texts, stage bar,
graph list), ``render`` (layout and the first write to the terminal).  ``--bare`` runs benchmarks/bare_app.py the
same way, alternating (its phases: ``startup`` to its ``on_mount``, ``render``).  The UI thread's CPU is steadier
than wall time on a shared box (open_time.py measures the wall time a person waits); the first write is found
through Textual's ``App._display``, which has no public hook.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _child(session: str | None, out: str) -> None:
    """In the measured process: stamp the phases, exit after Textual's first write."""
    stamps = [("startup", 0.0)]

    def stamp(name: str) -> None:
        stamps.append((name, time.thread_time() * 1e3))

    import textual.app as ta

    first_write = ta.App._display

    def _display(self, screen, renderable):  # type: ignore[no-untyped-def]
        first_write(self, screen, renderable)
        stamp("render")
        with open(out, "a") as f:
            f.write(json.dumps(stamps) + "\n")
        self.exit()
    ta.App._display = _display
    if session is None:
        sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
        import bare_app

        class Bare(bare_app.Bare):
            def on_mount(self) -> None:
                stamp("startup")
        stamps.clear()
        Bare().run()
        return
    import inductor_step.cli.main as cli
    import inductor_step.session.format as fmt
    read, pause_gc = fmt.read_session, cli.pause_gc

    def read_session(*a, **k):  # type: ignore[no-untyped-def]
        stamps[0] = ("startup", time.thread_time() * 1e3)
        msgs = list(read(*a, **k))
        stamp("read")
        return iter(msgs)
    fmt.read_session = read_session

    def paused() -> None:  # where open_session imports the UI: after pausing the collector, the same import here
        pause_gc()
        from inductor_step.tui.app import StepApp

        stamp("import ui")
        init, on_mount = StepApp.__init__, StepApp.on_mount

        def __init__(self, *a, **k):  # type: ignore[no-untyped-def]
            init(self, *a, **k)
            stamp("init")

        def _on_mount(self) -> None:  # type: ignore[no-untyped-def]
            stamp("compose+mount")
            on_mount(self)
            stamp("on_mount")
        StepApp.__init__, StepApp.on_mount = __init__, _on_mount
    cli.pause_gc = paused
    sys.exit(cli.main(["--open", session]))


def once(session: str | None, out: str) -> list[tuple[str, float]]:
    """One run in a new tmux server: the phases' CPU ms (each phase's own, in order)."""
    before = open(out).read().count("\n") if os.path.exists(out) else 0
    who = f"--child {session}" if session else "--child-bare"
    cmd = f"cd {ROOT} && {sys.executable} {os.path.abspath(__file__)} {who} --out {out}"
    tm = ["tmux", "-L", f"phases-{uuid.uuid4().hex[:6]}"]
    subprocess.run(tm + ["new-session", "-d", "-s", "b", "-x", "160", "-y", "50", cmd + "; sleep 5"], check=True)
    try:
        start = time.perf_counter()
        while time.perf_counter() - start < 60:
            if os.path.exists(out) and open(out).read().count("\n") > before:
                break
            time.sleep(0.02)
        else:
            raise TimeoutError("no first frame in 60 s")
    finally:
        subprocess.run(tm + ["kill-server"], check=False)
    stamps = json.loads(open(out).read().splitlines()[-1])
    return [(stamps[0][0], stamps[0][1])] + [(b[0], b[1] - a[1]) for a, b in zip(stamps, stamps[1:])]


def table(name: str, runs: list[list[tuple[str, float]]]) -> str:
    names = [n for n, _ in runs[0]]
    cols = [statistics.median(r[i][1] for r in runs) for i in range(len(names))]
    total = statistics.median(sum(v for _, v in r) for r in runs)
    return f"{name}: " + ", ".join(f"{n} {v:.1f}" for n, v in zip(names, cols)) + f"; total {total:.1f} ms"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2], sys.argv[4])
        sys.exit(0)
    if sys.argv[1:2] == ["--child-bare"]:
        _child(None, sys.argv[3])
        sys.exit(0)
    p = argparse.ArgumentParser()
    p.add_argument("session")
    p.add_argument("--repeats", type=int, default=9)
    p.add_argument("--bare", action="store_true", help="also the bare Textual app, run by run alternating")
    a = p.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # as a user runs it: the bytecode cache on (open_time.py)
    with tempfile.TemporaryDirectory() as d:
        ours, bare = os.path.join(d, "ours.jsonl"), os.path.join(d, "bare.jsonl")
        once(os.path.abspath(a.session), ours)  # untimed: writes the bytecode cache
        xs, bs = [], []
        for _ in range(a.repeats):
            xs.append(once(os.path.abspath(a.session), ours))
            if a.bare:
                bs.append(once(None, bare))
    print(f"{a.session} ({os.path.getsize(a.session) / 1e6:.1f} MB), UI thread CPU ms, median of {a.repeats}:")
    print(table("  --open", xs))
    if bs:
        print(table("  bare", bs))
