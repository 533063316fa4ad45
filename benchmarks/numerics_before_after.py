"""Numerics' cost side by side: a script under ``inductor-step --headless`` (plain), ``--headless --numerics`` with
this checkout's code (after) and, with ``--before DIR``, ``--headless --numerics`` with another copy of the package
(``DIR/inductor_step``, e.g. ``git archive`` of an older commit), in rotating order for ``--rounds`` rounds.

Per run: wall time and peak resident memory of the whole run (``getrusage(RUSAGE_CHILDREN)`` in a wrapper
process: the largest process of the tree, the agent), where ``nvidia-smi`` exists the GPU's peak used memory (polled every 0.2 s),
the 1-minute load average before and after; per graph from the recorded session, the comparison's seconds
and phases, the copies it kept, its peak RSS / CUDA allocation growth and the answer.  Then medians per variant,
and whether before's and after's recorded comparisons are the same (every row, timings aside).

Usage: python benchmarks/numerics_before_after.py [--before DIR] [--rounds N] [--json OUT] SCRIPT [ARGS...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.dirname(ROOT))
TIMING_KEYS = {"seconds", "phases_s", "kept_bytes", "maxrss_growth_bytes", "gpu_peak_growth_bytes", "method", "how",
               "t"}


#: runs argv[2:] and writes its process tree's peak RSS in KiB to argv[1] (getrusage of the waited children)
_WRAP = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[2:]).returncode; "
         "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)); sys.exit(r)")


def _load() -> float:
    with open("/proc/loadavg", encoding="utf-8") as f:
        return float(f.read().split()[0])


class GpuPeak(threading.Thread):
    """The GPU's used memory (MiB, nvidia-smi), its maximum while running; None without nvidia-smi."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak: int | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                                     capture_output=True, text=True, timeout=5).stdout.split()
                self.peak = max(self.peak or 0, int(out[0]))
            except Exception:  # noqa: BLE001
                return
            self.stop.wait(0.2)


def run_once(variant: str, script: list[str], before: str | None, d: str, i: int) -> dict:
    record = os.path.join(d, f"{variant}{i}.jsonl")
    env = dict(os.environ)
    if variant == "before":
        env["PYTHONPATH"] = before + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-m", "inductor_step", "--headless", "--record", record]
    cmd += ["--numerics"] if variant != "plain" else []
    timef = os.path.join(d, "time.txt")
    gpu = GpuPeak() if shutil.which("nvidia-smi") else None
    if gpu:
        gpu.start()
    load0, t0 = _load(), time.monotonic()
    p = subprocess.run([sys.executable, "-c", _WRAP, timef, *cmd, *script], env=env,
                       cwd=os.path.dirname(script[0]), capture_output=True, text=True)
    wall = time.monotonic() - t0
    if gpu:
        gpu.stop.set()
        gpu.join()
    with open(timef, encoding="utf-8") as f:
        rss_kib = int(f.read().split()[-1])
    out = {"variant": variant, "wall_s": wall, "maxrss_mib": rss_kib / 1024, "load": [load0, _load()],
           "rc": p.returncode, "gpu_peak_mib": gpu.peak if gpu else None, "record": record,
           "numerics_lines": [ln for ln in p.stdout.splitlines() if " numerics " in ln]}
    if p.returncode:
        out["stderr"] = p.stderr[-2000:]
    return out


def graphs(record: str) -> dict[str, dict]:
    from inductor_step.session.format import graph_key
    from inductor_step.session.store import load_session

    return {graph_key(m): m for m in load_session(record) if m.get("type") == "numerics"}


def differences(a: dict, b: dict) -> list[str]:
    """Where two recorded comparisons differ, timings and the wording of method/how aside."""
    out: list[str] = []

    def walk(x, y, path):
        if isinstance(x, dict) and isinstance(y, dict):
            for k in sorted(set(x) | set(y)):
                if k not in TIMING_KEYS:
                    walk(x.get(k, "<missing>"), y.get(k, "<missing>"), f"{path}.{k}")
        elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for i, (u, v) in enumerate(zip(x, y)):
                walk(u, v, f"{path}[{i}]")
        elif x != y:
            out.append(f"{path}: {str(x)[:80]} | {str(y)[:80]}")

    walk(a, b, "")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", help="a directory holding another inductor_step package (the code before)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--json", help="write every run's figures here")
    ap.add_argument("script", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    from inductor_step.session.numerics import short_answer

    script = [os.path.abspath(a.script[0])] + a.script[1:]
    variants = ["plain", "after"] + (["before"] if a.before else [])
    runs: list[dict] = []
    with tempfile.TemporaryDirectory() as d:
        for i in range(a.rounds):
            order = variants[i % len(variants):] + variants[:i % len(variants)]
            for v in order:
                r = run_once(v, script, a.before, d, i)
                if v != "plain":
                    g = graphs(r["record"])
                    r["graphs"] = {k: {"seconds": m.get("seconds"), "phases_s": m.get("phases_s"),
                                       "kept_mib": (m.get("kept_bytes") or 0) / 2**20,
                                       "rss_growth_mib": (m.get("maxrss_growth_bytes") or 0) / 2**20,
                                       "gpu_growth_mib": (m.get("gpu_peak_growth_bytes") or 0) / 2**20
                                       if "gpu_peak_growth_bytes" in m else None,
                                       "answer": short_answer(m), "summary": m.get("summary")} for k, m in g.items()}
                print(f"round {i} {v:<6} {r['wall_s']:7.1f} s  maxrss {r['maxrss_mib']:7.0f} MiB  gpu "
                      f"{r['gpu_peak_mib']} MiB  load {r['load'][0]:.2f}->{r['load'][1]:.2f}  rc {r['rc']}", flush=True)
                for k, gr in (r.get("graphs") or {}).items():
                    ph = ", ".join(f"{p} {s:.2f}" for p, s in (gr["phases_s"] or {}).items())
                    print(f"    {k:<16} {gr['seconds'] or 0:7.2f} s kept {gr['kept_mib']:.0f} MiB rss+ "
                          f"{gr['rss_growth_mib']:.0f} MiB gpu+ {gr['gpu_growth_mib']} MiB  {gr['answer']}  ({ph})",
                          flush=True)
                runs.append(r)
            if a.before:
                ga = graphs([x for x in runs if x["variant"] == "after"][-1]["record"])
                gb = graphs([x for x in runs if x["variant"] == "before"][-1]["record"])
                diff = [f"{k}{line}" for k in sorted(set(ga) | set(gb))
                        for line in differences(gb.get(k) or {}, ga.get(k) or {})]
                print(f"round {i}: before vs after recorded comparisons: {len(diff)} difference(s)"
                      + "".join(f"\n    {x}" for x in diff[:12]), flush=True)
        print("medians:")
        for v in variants:
            rs = [r for r in runs if r["variant"] == v]
            gp = [r["gpu_peak_mib"] for r in rs if r["gpu_peak_mib"] is not None]
            print(f"  {v:<6} wall {statistics.median(r['wall_s'] for r in rs):7.1f} s  maxrss "
                  f"{statistics.median(r['maxrss_mib'] for r in rs):7.0f} MiB"
                  + (f"  gpu peak {statistics.median(gp):.0f} MiB" if gp else "")
                  + f"  ({len(rs)} run(s), load {min(r['load'][0] for r in rs):.2f}-{max(r['load'][1] for r in rs):.2f})")
            secs = [sum((g["seconds"] or 0) for g in r.get("graphs", {}).values()) for r in rs if r.get("graphs")]
            if secs:
                print(f"         comparison (all graphs) {statistics.median(secs):.1f} s")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(runs, f, indent=1, default=str)


if __name__ == "__main__":
    main()
