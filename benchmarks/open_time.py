"""Time to first frame of `inductor-step --open SESSION` in a real terminal (tmux, 160x50): from starting
the process until the stage bar ("✓dynamo") and the footer ("n Next") are on screen.  Median of several runs.

    python benchmarks/open_time.py SESSION [--repeats 5] [--cmd "COMMAND THAT OPENS A SESSION"] [--json OUT] [--bare]

``--cmd`` runs another checkout, e.g. the one before the package restructure (top-level ``tui`` package):
``--cmd "cd /tmp/before && PYTHONPATH=/tmp/before python -m tui.cli --open"``; the session's absolute path is
appended (or replaces ``{session}``).  ``--json`` writes every run's time in ms.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from key_latency import has_first_frame, open_command  # noqa: E402  (the same markers and --cmd)


def once(cmd: str) -> float:
    """Seconds from starting ``cmd`` in a new tmux server until its screen shows the first frame."""
    sock = f"bench-{uuid.uuid4().hex[:6]}"
    tm = ["tmux", "-L", sock]
    start = time.perf_counter()
    subprocess.run(tm + ["new-session", "-d", "-s", "b", "-x", "160", "-y", "50", cmd + "; sleep 5"], check=True)
    try:
        while time.perf_counter() - start < 60:
            screen = subprocess.run(tm + ["capture-pane", "-p", "-t", "b"], capture_output=True, text=True).stdout
            if has_first_frame(screen):
                return time.perf_counter() - start
            time.sleep(0.01)
        raise TimeoutError("no frame in 60 s")
    finally:
        subprocess.run(tm + ["kill-server"], check=False)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("session")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--cmd", default=None,
                   help="shell command that opens a session (SESSION appended, or put where {session} is); "
                        "default: this checkout's python -m inductor_step --open")
    p.add_argument("--json", default=None, help="also write every run's time (ms) to this file")
    p.add_argument("--bare", action="store_true",
                   help="also time a bare Textual app (benchmarks/bare_app.py: a Static and a Footer), run by run "
                        "alternating with the session's, and print the ratio of the medians")
    a = p.parse_args()
    cmd = open_command(a.cmd, os.path.abspath(a.session))
    bare_cmd = f"cd {ROOT} && {sys.executable} {os.path.join(ROOT, 'benchmarks', 'bare_app.py')}"
    # as a user runs it: Python's bytecode cache on (a shell with PYTHONDONTWRITEBYTECODE=1 compiled our ~20
    # modules from source on every run, 55 ms, while the bare app's Textual came precompiled by pip), and one run
    # first, untimed, that writes the cache
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # each run's tmux server starts from this environment
    once(cmd)
    xs, bs = [], []
    for _ in range(a.repeats):
        xs.append(once(cmd))
        if a.bare:
            bs.append(once(bare_cmd))
    size = os.path.getsize(a.session) / 1e6
    with open(a.session, "rb") as f:
        fmt = json.loads(f.readline()).get("format")
    print(f"{a.session} ({size:.1f} MB, {fmt}): first frame median {statistics.median(xs) * 1000:.0f} ms "
          f"(min {min(xs) * 1000:.0f}, max {max(xs) * 1000:.0f}, {a.repeats} runs)")
    if bs:
        print(f"bare Textual app (Static + Footer): median {statistics.median(bs) * 1000:.0f} ms "
              f"(min {min(bs) * 1000:.0f}, max {max(bs) * 1000:.0f}); session / bare: "
              f"{statistics.median(xs) / statistics.median(bs):.2f}x")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"session": os.path.abspath(a.session), "cmd": cmd, "first_frame_ms": [x * 1000 for x in xs],
                       "bare_ms": [x * 1000 for x in bs]}, f)
