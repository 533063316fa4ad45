"""Time to first frame of `inductor-step --open SESSION` in a real terminal (tmux): from starting
the process until the stage bar is on screen.  Median of several runs.

    python benchmarks/open_time.py SESSION [--repeats 5]
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


def once(session: str) -> float:
    sock = f"bench-{uuid.uuid4().hex[:6]}"
    tm = ["tmux", "-L", sock]
    cmd = f"cd {ROOT} && {sys.executable} -m inductor_step --open {session}; sleep 5"
    start = time.perf_counter()
    subprocess.run(tm + ["new-session", "-d", "-s", "b", "-x", "160", "-y", "50", cmd], check=True)
    try:
        while time.perf_counter() - start < 60:
            screen = subprocess.run(tm + ["capture-pane", "-p", "-t", "b"], capture_output=True, text=True).stdout
            if "✓dynamo" in screen and "Next stop" in screen:
                return time.perf_counter() - start
            time.sleep(0.01)
        raise TimeoutError("no frame in 60 s")
    finally:
        subprocess.run(tm + ["kill-server"], check=False)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("session")
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args()
    xs = [once(os.path.abspath(a.session)) for _ in range(a.repeats)]
    size = os.path.getsize(a.session) / 1e6
    with open(a.session, "rb") as f:
        fmt = json.loads(f.readline()).get("format")
    print(f"{a.session} ({size:.1f} MB, {fmt}): first frame median {statistics.median(xs) * 1000:.0f} ms "
          f"(min {min(xs) * 1000:.0f}, max {max(xs) * 1000:.0f}, {a.repeats} runs)")
