"""Key press to repainted frame in a real terminal (tmux), on a recorded session: issue 5's (b).

Starts ``inductor-step --open SESSION`` in a detached tmux server, waits for the first frame, then
sends real key events with ``tmux send-keys`` and polls ``tmux capture-pane -e`` (colours included,
so a moved cursor counts) until the screen changes: that is the latency of one key, end to end
(tmux parses the key, the app handles it and repaints, tmux applies the output).  After each key
it also waits until the screen has been still for 150 ms, so keys never queue, and records the
time until the last change ("settled": the detail panes update 40 ms after the cursor stops).
Prints median and p95 per action and over all keys, in ms.  Polling resolution is a few ms.

    python benchmarks/key_latency.py SESSION [--size 160x50] [--repeats 30] [--wait 4]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Term:
    """A tmux server of our own running one command."""

    def __init__(self, cmd: str, w: int, h: int):
        self.tm = ["tmux", "-L", f"lat-{uuid.uuid4().hex[:6]}"]
        subprocess.run(self.tm + ["new-session", "-d", "-s", "b", "-x", str(w), "-y", str(h), cmd], check=True)

    def screen(self) -> str:
        return subprocess.run(self.tm + ["capture-pane", "-p", "-e", "-t", "b"], capture_output=True,
                              text=True).stdout

    def keys(self, *k: str) -> None:
        subprocess.run(self.tm + ["send-keys", "-t", "b", *k], check=True)

    def close(self) -> None:
        subprocess.run(self.tm + ["kill-server"], check=False, capture_output=True)


def press(term: Term, key: str, still_s: float = 0.15, timeout_s: float = 20.0) -> tuple[float, float] | None:
    """(ms to the first change of the screen, ms to the last change) for one key; None when the
    screen did not change within ``timeout_s``."""
    before = term.screen()
    t0 = time.perf_counter()
    term.keys(key)
    first = last = None
    cur = before
    while time.perf_counter() - t0 < timeout_s:
        s = term.screen()
        now = time.perf_counter()
        if s != cur:
            cur = s
            last = now
            if first is None:
                first = now
        elif first is not None and now - last >= still_s:
            break
        time.sleep(0.002)
    if first is None:
        return None
    return (first - t0) * 1000, (last - t0) * 1000


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("session")
    p.add_argument("--size", default="160x50")
    p.add_argument("--repeats", type=int, default=30, help="cursor moves per table")
    p.add_argument("--wait", type=float, default=4.0,
                   help="seconds between the first frame and the first key (the app parses the rest of a "
                        "large session in the background meanwhile; 0 measures keys during that)")
    a = p.parse_args()
    w, h = map(int, a.size.split("x"))
    session = os.path.abspath(a.session)
    cmd = f"cd {ROOT} && PYTHONPATH={ROOT} {sys.executable} -m tui.cli --open {session}; sleep 30"
    t0 = time.perf_counter()
    term = Term(cmd, w, h)
    try:
        while "Next stop" not in term.screen():
            if time.perf_counter() - t0 > 60:
                raise TimeoutError("no first frame in 60 s")
            time.sleep(0.01)
        print(f"{a.session} ({os.path.getsize(session) / 1e6:.1f} MB) at {w}x{h}: "
              f"first frame {(time.perf_counter() - t0) * 1000:.0f} ms")
        time.sleep(max(a.wait, 0.3))  # let the first detail update (and, with --wait, the preload) finish
        plan = [("next stop (n)", ["n"] * 5),
                ("back to dynamo (1)", ["1"]),
                ("move in FX nodes (Down)", ["Down"] * a.repeats),
                ("switch to lowering (3)", ["3"]),
                ("move in IR buffers (Down)", ["Down"] * a.repeats),
                ("switch to scheduling (4)", ["4"]),
                ("move in scheduler nodes (Down)", ["Down"] * a.repeats),
                ("switch to codegen (6)", ["6"]),
                ("move in kernels (Down)", ["Down"] * a.repeats),
                ("switch to linked (8)", ["8"]),
                ("move in linked buffers (Down)", ["Down"] * a.repeats),
                # n steps through recorded stops, and the linked view is none: back to codegen first
                ("back to codegen (6)", ["6"]),
                ("next graph's stops (n)", ["n"] * 6)]
        rows: list[tuple[str, list[float], list[float]]] = []
        for label, keys in plan:
            firsts, settled = [], []
            for k in keys:
                r = press(term, k)
                if r is not None:
                    firsts.append(r[0])
                    settled.append(r[1])
            rows.append((label, firsts, settled))
    finally:
        term.close()
    every_first = [x for _, f, _ in rows for x in f]
    every_settled = [x for _, _, s in rows for x in s]
    print(f"{'action':<34}{'n':>4} {'first change: median':>21} {'p95':>7} {'settled: median':>16} {'p95':>7}")
    for label, f, s in rows + [("all keys", every_first, every_settled)]:
        if f:
            print(f"{label:<34}{len(f):>4} {statistics.median(f):>21.0f} {pct(f, 0.95):>7.0f} "
                  f"{statistics.median(s):>16.0f} {pct(s, 0.95):>7.0f}")
    moves = [x for lbl, f, _ in rows if "move" in lbl for x in f]
    if moves:
        print(f"{'cursor moves only':<34}{len(moves):>4} {statistics.median(moves):>21.0f} {pct(moves, 0.95):>7.0f}")


if __name__ == "__main__":
    main()
