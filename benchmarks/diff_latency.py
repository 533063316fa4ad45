"""Key press to repainted frame in the diff view, in a real terminal (tmux), on a recorded
session: the same method as ``key_latency.py`` (real key events through tmux, the screen read until it
changes; see there), on the diff screen.

Opens ``inductor-step --open SESSION`` (or ``inductor-step diff A SESSION`` with ``--against A``), waits
``--wait`` seconds (the rest of a large session is parsed in the background meanwhile), presses ``d``
(the shown graph against its default partner: the diff is computed on this key) unless the diff view is
already open, then switches levels and moves in the changes.  Prints median and p95 per action, in ms.

    python benchmarks/diff_latency.py SESSION [--against A] [--size 160x50] [--repeats 20] [--wait 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from key_latency import ROOT, Term, pct, press  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("session")
    p.add_argument("--against", help="open `inductor-step diff AGAINST SESSION` instead of pressing d")
    p.add_argument("--size", default="160x50")
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--wait", type=float, default=10.0)
    a = p.parse_args()
    w, h = map(int, a.size.split("x"))
    session = os.path.abspath(a.session)
    how = f"diff {os.path.abspath(a.against)} {session}" if a.against else f"--open {session}"
    term = Term(f"cd {ROOT} && {sys.executable} -m inductor_step {how}; sleep 30", w, h)
    t0 = time.perf_counter()
    try:
        ready = "Next level" if a.against else "Quit"
        while ready not in term.screen():
            if time.perf_counter() - t0 > 120:
                raise TimeoutError("no first frame in 120 s")
            time.sleep(0.01)
        print(f"{a.session} ({os.path.getsize(session) / 1e6:.1f} MB) at {w}x{h}: first frame "
              f"{(time.perf_counter() - t0) * 1000:.0f} ms")
        time.sleep(a.wait)
        plan = [] if a.against else [("open the diff (d)", ["d"])]
        plan += [("why (0)", ["0"]), ("Dynamo graph (1)", ["1"]), ("post-grad graph (2)", ["2"]),
                 ("move in post-grad changes (Down)", ["Down"] * a.repeats),
                 ("IR buffers (3)", ["3"]), ("move in IR buffer changes (Down)", ["Down"] * a.repeats),
                 ("scheduler nodes (4)", ["4"]), ("kernels (6)", ["6"]),
                 ("move in kernel changes (Down)", ["Down"] * a.repeats),
                 ("next / previous level (n, b)", ["n", "b"] * 3)]
        rows = []
        for label, keys in plan:
            firsts, settled = [], []
            for k in keys:
                r = press(term, k, timeout_s=60)
                if r is not None:
                    firsts.append(r[0])
                    settled.append(r[1])
            rows.append((label, firsts, settled))
    finally:
        term.close()
    print(f"{'action':<36}{'n':>4} {'first change: median':>21} {'p95':>7} {'settled: median':>16} {'p95':>7}")
    every = [x for lbl, f, _ in rows if "open" not in lbl for x in f]
    for label, f, s in rows + [("all keys in the view", every, [x for lbl, _, s in rows if "open" not in lbl for x in s])]:
        if f:
            print(f"{label:<36}{len(f):>4} {statistics.median(f):>21.0f} {pct(f, 0.95):>7.0f} "
                  f"{statistics.median(s):>16.0f} {pct(s, 0.95):>7.0f}")


if __name__ == "__main__":
    main()
