"""The script's-call figure against torch.utils.benchmark of the script's own calls, on CPU, side by side.

    python benchmarks/script_call_cpu.py [--rounds 3] [--script benchmarks/scripts/flex_block.py]
                                         [--hogs 2 [--hogs-elsewhere]]

Each round runs, one after the other: the script with ``--bench`` (no inductor-step: ``torch.utils.benchmark``
of the compiled call ``c(x, mask)`` and of the module ``m(x, mask)``, two threads, three medians each), then
``inductor-step --headless --run`` of the same script (OMP_NUM_THREADS=2), whose run messages carry
``script_call`` (tracer/timing/script_call.py).  Prints each round's figures and their ratios, and the medians of
the ratios; a figure our verdicts call not reliable is marked.  Results: BENCHMARKS.md, "Session 34: the script's
call on CPU".

``--hogs N`` keeps N busy loops (``python3 -c 'while True: pass'``) running through every round, in this process's
session as a shell's background jobs are (``--hogs-elsewhere``: each in a session of its own, as another login's
or service's work is), killed at the end whatever happens.  Each round then also says the session our timing ran
in (the run's ``load``) and how many cores processes other than ours and the hogs used meanwhile (a shared box).
Where Linux's scheduler autogroups are on, the CPUs are shared between sessions first: our agent in a session of its
own (before session 39) read nanoGPT's call 50-90x the plain process beside two hogs of the shell (BENCHMARKS.md,
"Session 39"); the target: the medians of the ratios within 3x with the hogs (either placement), within 15% quiet.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def plain(script: str, env: dict[str, str]) -> tuple[float, float]:
    """(compiled call ms, eager module ms): the medians of the script's own three ``--bench`` rounds."""
    out = subprocess.run([sys.executable, script, "--bench"], env=env, capture_output=True, text=True, timeout=600)
    rows = re.findall(r"compiled call ([\d.]+) ms, eager module ([\d.]+) ms", out.stdout)
    if not rows:
        raise SystemExit(f"--bench printed no figures:\n{out.stdout[-1000:]}\n{out.stderr[-2000:]}")
    return statistics.median(float(c) for c, _ in rows), statistics.median(float(e) for _, e in rows)


def ours(script: str, env: dict[str, str], where: str) -> dict:
    """The ``script_call`` figure of the script's recorded run (the first graph that has a timed one)."""
    from inductor_step.session.format import read_session  # noqa: PLC0415

    record = os.path.join(where, "s.jsonl")
    subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--run", "--record", record, script],
                   env=env, capture_output=True, text=True, timeout=900, cwd=where)
    for m in read_session(record):
        fig = m.get("script_call") if m.get("type") == "run" else None
        if fig and isinstance(fig.get("compiled_ms"), (int, float)):
            return fig
    raise SystemExit("no timed script_call in the recording")


class Others:
    """``with Others(hogs) as o:`` then ``o.cores``: the cores used over the block by processes other than this one's
    children and ``hogs`` (/proc/stat's busy time less theirs): the shared box's other work."""

    def __init__(self, hogs: list[subprocess.Popen]) -> None:
        self.hogs, self.cores = hogs, None

    def _now(self) -> tuple[float, float, float, float]:
        hz = os.sysconf("SC_CLK_TCK")
        with open("/proc/stat", encoding="ascii") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        hog = 0.0
        for h in self.hogs:
            with contextlib.suppress(OSError), open(f"/proc/{h.pid}/stat", encoding="ascii") as f:
                fields = f.read().rsplit(")", 1)[1].split()
                hog += (int(fields[11]) + int(fields[12])) / hz
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return time.monotonic(), (sum(v) - v[3] - v[4]) / hz, hog, kids.ru_utime + kids.ru_stime

    def __enter__(self) -> "Others":
        self.a = self._now()
        return self

    def __exit__(self, *exc: object) -> None:
        b = self._now()
        self.cores = ((b[1] - self.a[1]) - (b[2] - self.a[2]) - (b[3] - self.a[3])) / max(b[0] - self.a[0], 1e-9)


def start_hogs(n: int, elsewhere: bool) -> list[subprocess.Popen]:
    """``n`` busy loops, in this session or (``elsewhere``) each in a session of its own."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=elsewhere)
            for _ in range(n)]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--script", default=os.path.join(ROOT, "benchmarks", "scripts", "flex_block.py"))
    p.add_argument("--hogs", type=int, default=0, help="busy loops kept running through every round")
    p.add_argument("--hogs-elsewhere", action="store_true", help="each hog in a session of its own")
    args = p.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="2",
               PYTHONPATH=os.pathsep.join(x for x in (os.environ.get("PYTHONPATH"), ROOT) if x))
    c_ratios, e_ratios = [], []
    hogs = start_hogs(args.hogs, args.hogs_elsewhere)
    try:
        time.sleep(2 if hogs else 0)
        for r in range(args.rounds):
            load = os.getloadavg()[0]
            with Others(hogs) as o1:
                pc, pe = plain(args.script, env)
            with tempfile.TemporaryDirectory() as d, Others(hogs) as o2:
                fig = ours(args.script, env, d)
            bad = [w for w, v in (fig.get("verdicts") or {}).items() if v.get("reliable") is False]
            c_ratios.append(fig["compiled_ms"] / pc)
            e_ratios.append(fig["eager_ms"] / pe)
            where = fig.get("load") or {}
            print(f"round {r}: compiled call ours {fig['compiled_ms']:.4f} / plain {pc:.4f} ms = {c_ratios[-1]:.3f}; "
                  f"eager ours {fig['eager_ms']:.4f} / plain {pe:.4f} ms = {e_ratios[-1]:.3f}"
                  + (f"  (ours not reliable: {', '.join(bad)})" if bad else "")
                  + f"; load {load:.2f}, other processes' cores {o1.cores:.2f} (plain) {o2.cores:.2f} (ours)"
                  + (f"; ours timed in session {where.get('session')} (ours {os.getsid(0)}) "
                     f"{where.get('autogroup') or ''}" if where else ""), flush=True)
    finally:
        for h in hogs:
            h.kill()
        for h in hogs:
            h.wait()
    print(f"median ratio, compiled call: {statistics.median(c_ratios):.3f}; eager: {statistics.median(e_ratios):.3f} "
          f"({args.rounds} rounds, {args.hogs} hog(s){' elsewhere' if args.hogs_elsewhere else ''}; load average "
          f"{os.getloadavg()[0]:.2f} at the end)")


if __name__ == "__main__":
    main()
