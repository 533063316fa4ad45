"""Whole-process wall time of `inductor-step --headless --record` against plain `python script.py`
and `TORCH_COMPILE_DEBUG=1 python script.py`, caches off in all (the agent turns them off;
the others get TORCHINDUCTOR_FX_GRAPH_CACHE=0 TORCHINDUCTOR_AUTOGRAD_CACHE=0), run interleaved,
repeated; medians and ratios.  Also the size of our session file against a TORCH_TRACE log of the
same run.

A fourth mode, "python, no finalization", runs the script the way the agent does (runpy, then the
atexit functions, then ``os._exit``): CPython's interpreter finalization after torch has compiled
takes 1-2 s, which the agent skips, so this is the baseline that isolates our own cost.

Each round runs every mode once, back to back; besides each mode's median wall time the report gives
the median over rounds of the per-round ratio to "no finalization" (the paired ratio), which is
less sensitive to the machine's speed drifting between rounds.  ``--before DIR`` adds a mode that
runs ``inductor-step --headless`` from another checkout (e.g. a ``git worktree`` of the previous
commit), interleaved with the others, for before/after comparisons in one run.

``--script-args "--device cuda"`` passes the same arguments to every script (split as a shell would).

    python benchmarks/overhead.py [--repeats 5] [--before DIR] [--script-args ARGS] SCRIPT [SCRIPT...]
"""

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


NO_FINALIZATION = """
import atexit, os, runpy, sys
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
runpy.run_path(sys.argv[0], run_name="__main__")
atexit._run_exitfuncs()
sys.stdout.flush(); sys.stderr.flush()
os._exit(0)
"""


def timed(cmd, env, cwd):
    s = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - s


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--before", metavar="DIR", help="also run inductor-step from this checkout (interleaved)")
    p.add_argument("--script-args", default="", metavar="ARGS",
                   help='arguments for every script, e.g. "--device cuda" (split as a shell would)')
    p.add_argument("scripts", nargs="+")
    a = p.parse_args()
    base = dict(os.environ, PYTHONPATH=ROOT, TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    for script in a.scripts:
        script = os.path.abspath(script)
        args = shlex.split(a.script_args)
        work = tempfile.mkdtemp()
        modes = {
            "python": ([sys.executable, script, *args], base),
            "inductor-step --headless": ([sys.executable, "-m", "inductor_step", "--headless", "--record",
                                          os.path.join(work, "s.jsonl"), script, *args], base),
            "TORCH_COMPILE_DEBUG=1": ([sys.executable, script, *args], dict(base, TORCH_COMPILE_DEBUG="1")),
            "python, no finalization": ([sys.executable, "-c", NO_FINALIZATION, script, *args], base),
        }
        if a.before:
            before = os.path.abspath(a.before)
            modes["inductor-step, --before"] = ([sys.executable, "-m", "inductor_step", "--headless", "--record",
                                                 os.path.join(work, "before.jsonl"), script, *args],
                                                dict(base, PYTHONPATH=before))
        times = {m: [] for m in modes}
        for _ in range(a.repeats):
            for m, (cmd, env) in modes.items():
                times[m].append(timed(cmd, env, work))
        trace_dir = os.path.join(work, "trace")
        subprocess.run([sys.executable, script, *args], env=dict(base, TORCH_TRACE=trace_dir), cwd=work,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        trace_bytes = sum(os.path.getsize(os.path.join(trace_dir, f)) for f in os.listdir(trace_dir))
        ours = os.path.getsize(os.path.join(work, "s.jsonl"))
        plain = statistics.median(times["python"])
        bare = statistics.median(times["python, no finalization"])
        print(f"\n{os.path.relpath(script, ROOT)} {a.script_args}  ({a.repeats} runs each, interleaved;"
              f" load average {' '.join(f'{x:.2f}' for x in os.getloadavg())})")
        for m, xs in times.items():
            paired = statistics.median(x / b for x, b in zip(xs, times["python, no finalization"]))
            print(f"  {m:<26} median {statistics.median(xs):6.2f} s   ratio to python {statistics.median(xs) / plain:5.2f}x"
                  f"   to no-finalization {statistics.median(xs) / bare:5.2f}x (paired {paired:5.3f}x)"
                  f"   (min {min(xs):.2f}, max {max(xs):.2f})")
        print(f"  session file {ours / 1e6:.2f} MB   TORCH_TRACE log {trace_bytes / 1e6:.2f} MB   ratio {ours / trace_bytes:.2f}x")
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
