"""A torchrun job's wall time under `inductor-step --headless` against plain torchrun.

Modes, run interleaved in every round (caches off in all: the agent turns them off; the others get
TORCHINDUCTOR_FX_GRAPH_CACHE=0 TORCHINDUCTOR_AUTOGRAD_CACHE=0):

- ``torchrun``: ``python -m torch.distributed.run --standalone --nproc-per-node N SCRIPT``;
- ``torchrun + TORCH_COMPILE_DEBUG=1``: the same with torch's own debug dump;
- ``inductor-step``: ``inductor-step --headless --nproc-per-node N --record ... SCRIPT`` (every rank
  recorded, no rank pauses).

Reports each mode's median wall time (s) and the median over rounds of the per-round ratio to
``torchrun``, plus the recorded sessions' size per rank.  Results go to BENCHMARKS.md with the machine.

    python benchmarks/job_overhead.py [--repeats 5] [--nproc 2] [--script-args ARGS] SCRIPT
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time


def run(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:6])} ... failed ({p.returncode}): {p.stderr[-1500:]}")
    return dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("script")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--script-args", default="")
    ns = ap.parse_args()
    sargs = shlex.split(ns.script_args)
    env = dict(os.environ, TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0")
    out = tempfile.mkdtemp(prefix="job-overhead-")
    tr = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(ns.nproc)]
    modes = {
        "torchrun": (tr + [ns.script, *sargs], env),
        "torchrun + TORCH_COMPILE_DEBUG=1": (tr + [ns.script, *sargs],
                                             dict(env, TORCH_COMPILE_DEBUG="1", TORCH_COMPILE_DEBUG_DIR=out)),
        "inductor-step": ([sys.executable, "-m", "inductor_step", "--headless", "--nproc-per-node", str(ns.nproc),
                           "--record", os.path.join(out, "job.jsonl"), ns.script, *sargs], env),
    }
    times: dict[str, list[float]] = {m: [] for m in modes}
    for i in range(ns.repeats):
        for m, (cmd, e) in modes.items():
            times[m].append(run(cmd, e))
        print(f"round {i + 1}: " + ", ".join(f"{m} {times[m][-1]:.2f} s" for m in modes), flush=True)
    base = times["torchrun"]
    print(f"\n{ns.repeats} rounds, {ns.nproc} ranks, {os.path.basename(ns.script)} {' '.join(sargs)}")
    print(f"{'mode':<36} {'median s':>9} {'ratio to torchrun (median of per-round)':>40}")
    for m in modes:
        ratio = statistics.median(t / b for t, b in zip(times[m], base))
        print(f"{m:<36} {statistics.median(times[m]):>9.2f} {ratio:>40.2f}")
    sizes = [os.path.getsize(os.path.join(out, f)) for f in os.listdir(out) if f.startswith("job.rank")]
    if sizes:
        print(f"session size per rank: {statistics.median(sizes) / 1e6:.2f} MB (median of {len(sizes)})")


if __name__ == "__main__":
    main()
