"""Our `run` timings (tracer/timing.py) against torch.profiler and a plain loop, on a CUDA machine.

For each model (default: benchmarks/cuda_models.py ``attention`` and ``pointwise``):

1. ``python -m tui.cli --headless --run --record S.jsonl benchmarks/cuda_models.py MODEL ...`` in a
   subprocess; its ``run`` messages give our per-kernel ``median_ms`` (triton.testing.do_bench,
   L2 flushed, each kernel alone), ``gbps``, ``pct_peak_bw`` and each graph's ``compiled_ms``.
   Each kernel also has ``warm_ms`` (``triton.testing.do_bench_cudagraph``: replayed in a CUDA graph,
   L2 warm, median), which is what the comparison uses ("warm"; ``median_ms`` where it is None); the
   table shows both, with each one's % difference to the profiler, and the summary groups them
   (cuBLAS/extern; Triton by the profiler's time: >=100us, 5-100us, <5us).
2. In this process: the same model (``cuda_models.build``) compiled, warmed up, then N iterations
   under ``torch.profiler.profile(activities=[CUDA])``.  After each phase (one compiled graph) a
   ``torch.cuda._sleep`` kernel (``spin_kernel``) marks the boundary, so every GPU kernel belongs
   to one graph of one iteration.  Triton kernels are matched to ours by name (k-th launch of a name
   in a graph = our ``call`` k); extern kernels (cuBLAS, ...) by order of appearance among the
   graph's non-Triton kernels, and only when the counts agree (else listed as unmatched).
3. Each phase timed with a plain loop: CUDA events around the phase, 100 iterations, median.
4. Pointwise case: our GB/s and % of peak against ``y.copy_(x)`` timed with do_bench on the same GPU
   (bytes = 2 x nbytes).

Our flushed time (``median_ms``) empties L2 before each timed call; our warm time (``warm_ms``) and
the profiler both see warm L2, but ours times each kernel alone, replayed on the same inputs, while
the profiler sees it back to back in the running model (neighbours' tails, inputs partly evicted).
Differences are reported, not tuned away.

    python benchmarks/gpu_vs_profiler.py [--iters 20] [--out-dir DIR] [--models attention pointwise]
    python benchmarks/gpu_vs_profiler.py --dry-run     # CPU, tiny sizes: exercises the plumbing only
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS_SCRIPT = os.path.join(ROOT, "benchmarks", "cuda_models.py")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

MODEL_ARGS = {
    "attention": ["attention", "--dim", "1024", "--seq", "512", "--batch", "16", "--heads", "16"],
    "pointwise": ["pointwise", "--numel", str(64 * 1024 * 1024)],
}
DRY_ARGS = {
    "attention": ["attention", "--dim", "64", "--seq", "16", "--batch", "2", "--heads", "4", "--device", "cpu"],
    "pointwise": ["pointwise", "--numel", "4096", "--device", "cpu"],
}
MARKER = "spin_kernel"
_NON_KERNEL = re.compile(r"^(Memcpy|Memset|##|Torch-Compiled Region|CompiledFunction)")
_GEMM = re.compile(r"gemm|gemv|nvjet|cutlass|xmma|cublas|splitK", re.I)


def _is_gemm(name: str) -> bool:
    return bool(_GEMM.search(name)) and not re.search(r"fmha|flash|attention", name, re.I)


# ----------------------------------------------------------------------------- ours (subprocess)

def run_ours(model_args: list[str], record: str) -> tuple[dict[str, dict], dict, float]:
    """Run the headless agent with --run; return ({graph_key: run message}, header, seconds)."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PYTHONUNBUFFERED="1")
    cmd = [sys.executable, "-m", "tui.cli", "--headless", "--run", "--record", record, MODELS_SCRIPT, *model_args]
    print("$ " + " ".join(cmd[1:]), flush=True)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    for line in p.stdout.splitlines():
        if " run " in line or line.startswith("ran "):
            print("  | " + line)
    if p.returncode != 0:
        print(f"  headless run exited {p.returncode}; stderr tail:\n" + p.stderr[-3000:], flush=True)
    runs: dict[str, dict] = {}
    header: dict = {}
    if os.path.exists(record):
        with open(record, encoding="utf-8") as f:
            for line in f:
                m = json.loads(line)
                if m.get("type") == "header":
                    header = m
                elif m.get("type") == "run":
                    runs[f"{m.get('compile_id')} {m.get('graph_kind')}"] = m
                elif m.get("type") == "error":
                    print(f"  session error ({m.get('stage')}): {m.get('message')}")
    return runs, header, dt


# ----------------------------------------------------------------------------- profiler (this process)

def profile_phases(phases: list, iters: int, cuda: bool) -> dict[str, list[list[tuple[str, float]]]]:
    """{graph_key: [[(kernel name, duration ms) in launch order] per iteration]} from torch.profiler."""
    import torch  # noqa: PLC0415
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

    acts = [ProfilerActivity.CUDA] if cuda else [ProfilerActivity.CPU]
    with profile(activities=acts) as prof:
        for _ in range(iters):
            for _, fn in phases:
                fn()
                if cuda:
                    torch.cuda._sleep(1000)  # boundary marker: spin_kernel
        if cuda:
            torch.cuda.synchronize()
    evs = []
    for e in prof.profiler.kineto_results.events():
        if e.device_type() != torch.autograd.DeviceType.CUDA:
            continue
        try:
            if e.is_user_annotation():
                continue
        except AttributeError:
            pass
        name = e.name()
        if _NON_KERNEL.match(name):
            continue
        evs.append((e.start_ns(), name, e.duration_ns() / 1e6))
    evs.sort()
    segments: list[list[tuple[str, float]]] = [[]]
    for _, name, ms in evs:
        if MARKER in name:
            segments.append([])
        else:
            segments[-1].append((name, ms))
    segments = segments[:-1]  # after the last marker: nothing
    out: dict[str, list] = {k: [] for k, _ in phases}
    if len(segments) != iters * len(phases):
        print(f"  profiler: {len(segments)} segments between markers, expected {iters * len(phases)}; "
              "per-graph attribution unreliable", flush=True)
    for i, seg in enumerate(segments):
        out[phases[i % len(phases)][0]].append(seg)
    return out


def match(run: dict, iters_kernels: list[list[tuple[str, float]]]) -> tuple[list[dict], list[str]]:
    """Pair our kernels with the profiler's: rows (name, ours, profiler, ratio, how) and notes."""
    notes: list[str] = []
    ours = run.get("kernels") or []
    rows: list[dict] = []
    if not iters_kernels:
        return [{"name": k["name"], "call": k.get("call", 1), "backend": k.get("backend"),
                 "ours": k.get("warm_ms") if k.get("warm_ms") is not None else k["median_ms"],
                 "ours_warm": k.get("warm_ms"), "ours_flushed": k["median_ms"], "prof": None, "how": "no profile"}
                for k in ours], ["no profiler segments for this graph"]
    # per iteration: occurrences by name (Triton), and non-Triton kernels in order
    trit: dict[tuple[str, int], list[float]] = {}
    others: list[list[tuple[str, float]]] = []
    for seg in iters_kernels:
        seen: dict[str, int] = {}
        oth = []
        for name, ms in seg:
            if name.startswith("triton_"):
                seen[name] = seen.get(name, 0) + 1
                trit.setdefault((name, seen[name]), []).append(ms)
            elif "splitKreduce" in name and oth:
                # cuBLAS(Lt) split-K: one extern call launches a GEMM and then this reduction
                oth[-1] = (oth[-1][0] + " + splitKreduce", oth[-1][1] + ms)
            else:
                oth.append((name, ms))
        others.append(oth)
    n_it = len(iters_kernels)
    ext_ours = [k for k in ours if k.get("backend") != "triton"]
    counts = {len(o) for o in others}
    ext_ok = counts == {len(ext_ours)}
    ext_how = "order"
    all_others = others
    if ext_ours and not ext_ok:
        gemm = [[(n, ms) for n, ms in o if _is_gemm(n)] for o in others]
        if {len(o) for o in gemm} == {len(ext_ours)}:
            notes.append(f"extern kernels matched by order among GEMM-named profiler kernels only ({len(ext_ours)} "
                         f"of {sorted(counts)} non-Triton kernels per iteration); the others are listed below")
            ext_ok, ext_how, all_others, others = True, "order (GEMM-named)", others, gemm
        else:
            notes.append(f"extern kernels not matched: ours has {len(ext_ours)} in call order, the profiler "
                         f"{sorted(counts)} non-Triton kernel(s) per iteration; listed below")
    ext_i = 0
    used_trit = set()
    for k in ours:
        warm = k.get("warm_ms")
        row = {"name": k["name"], "call": k.get("call", 1), "backend": k.get("backend"),
               "ours": warm if warm is not None else k["median_ms"], "ours_warm": warm,
               "ours_flushed": k["median_ms"], "prof": None, "how": ""}
        if k.get("backend") == "triton":
            key = (k["name"], k.get("call", 1))
            if key in trit:
                row["prof"] = statistics.fmean(trit[key])
                row["how"] = f"name ({len(trit[key])}/{n_it} it)"
                used_trit.add(key)
            else:
                row["how"] = "not seen by profiler"
        elif ext_ok:
            vals = [o[ext_i][1] for o in others]
            names = {o[ext_i][0] for o in others}
            row["prof"] = statistics.fmean(vals)
            row["prof_name"] = sorted(names)[0][:60] + (" + splitKreduce" if any("splitKreduce" in n[60:] for n in names) else "")
            row["how"] = ext_how
            ext_i += 1
        else:
            row["how"] = "extern, skipped"
        rows.append(row)
    for key, vals in trit.items():
        if key not in used_trit:
            notes.append(f"profiler-only Triton kernel {key[0]} (launch {key[1]}): {statistics.fmean(vals):.4f} ms")
    if not ext_ok or ext_how != "order":
        agg: dict[str, list[float]] = {}
        for o in (others if not ext_ok else [[x for x in a if not _is_gemm(x[0])] for a in all_others]):
            for name, ms in o:
                agg.setdefault(name, []).append(ms)
        for name, vals in agg.items():
            notes.append(f"profiler non-Triton: {name[:90]}  x{len(vals) / n_it:g}/it  mean {statistics.fmean(vals):.4f} ms")
    return rows, notes


# ----------------------------------------------------------------------------- plain loop, copy

def plain_loop(phases: list, iters: int, cuda: bool) -> dict[str, float]:
    """Median per-iteration ms of each phase: CUDA events around it (perf_counter on CPU)."""
    import torch  # noqa: PLC0415

    times: dict[str, list] = {k: [] for k, _ in phases}
    for _ in range(iters):
        for k, fn in phases:
            if cuda:
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                fn()
                e.record()
                times[k].append((s, e))
            else:
                t0 = time.perf_counter()
                fn()
                times[k].append(time.perf_counter() - t0)
    if cuda:
        torch.cuda.synchronize()
        return {k: statistics.median(s.elapsed_time(e) for s, e in v) for k, v in times.items()}
    return {k: statistics.median(v) * 1e3 for k, v in times.items()}


def bench_ms(fn, cuda: bool) -> float:
    if cuda:
        from triton.testing import do_bench  # noqa: PLC0415

        return float(do_bench(fn, warmup=25, rep=200, return_mode="median"))
    t = []
    for _ in range(20):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return statistics.median(t) * 1e3


GROUPS = ("cuBLAS/extern", "Triton >=100us", "Triton 5-100us", "Triton <5us")


def group_of(r: dict) -> str:
    """Size group of a matched row, by the profiler's time: extern (cuBLAS, CUTLASS, ...) or Triton by duration."""
    if r.get("backend") != "triton":
        return GROUPS[0]
    return GROUPS[1] if r["prof"] >= 0.1 else GROUPS[2] if r["prof"] >= 0.005 else GROUPS[3]


def group_line(label: str, ds: list[float]) -> str:
    """count, within 10%, median |diff|, median and range of the signed diff, for one group's % differences."""
    if not ds:
        return f"    {label:<16} none"
    return (f"    {label:<16} {sum(abs(d) <= 10 for d in ds):3d}/{len(ds):<3d} within 10%; "
            f"median |diff| {statistics.median(abs(d) for d in ds):6.1f}%; signed median {statistics.median(ds):+6.1f}%, "
            f"range {min(ds):+.1f}% to {max(ds):+.1f}%")


def pct(a: float | None, b: float | None) -> str:
    return f"{100.0 * (a - b) / b:+6.1f}%" if a is not None and b else "     -"


# ----------------------------------------------------------------------------- main

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["attention", "pointwise"], choices=list(MODEL_ARGS))
    ap.add_argument("--iters", type=int, default=20, help="profiled iterations (default 20)")
    ap.add_argument("--loop-iters", type=int, default=100, help="plain-loop iterations (default 100)")
    ap.add_argument("--out-dir", default=None, help="where the session files and summary JSON go (default: a temp dir)")
    ap.add_argument("--benchmark-kernel", action="store_true",
                    help="compile in this process with torch._inductor.config.benchmark_kernel=True, as the agent does "
                         "on CUDA (default: off, as in a user's own program)")
    ap.add_argument("--dry-run", action="store_true", help="CPU, tiny sizes: checks the plumbing, numbers meaningless")
    a = ap.parse_args()
    out_dir = a.out_dir or tempfile.mkdtemp(prefix="gpu_vs_profiler-")
    os.makedirs(out_dir, exist_ok=True)

    import torch  # noqa: PLC0415
    import torch._inductor.config  # noqa: PLC0415

    import cuda_models  # noqa: PLC0415

    if a.benchmark_kernel:
        torch._inductor.config.benchmark_kernel = True

    cuda = torch.cuda.is_available() and not a.dry_run
    if not cuda and not a.dry_run:
        print("no CUDA device: use --dry-run to check the plumbing on CPU", file=sys.stderr)
        return 2
    table_args = DRY_ARGS if a.dry_run else MODEL_ARGS
    import triton  # noqa: PLC0415

    print(f"torch {torch.__version__}, triton {triton.__version__}, python {sys.version.split()[0]}, "
          f"device {torch.cuda.get_device_name() if cuda else 'cpu (dry run)'}")
    print(f"in-process inductor config.benchmark_kernel = {torch._inductor.config.benchmark_kernel}")
    summary: dict[str, Any] = {"torch": torch.__version__, "triton": triton.__version__,
                               "benchmark_kernel_in_process": bool(torch._inductor.config.benchmark_kernel),
                               "device": torch.cuda.get_device_name() if cuda else "cpu", "models": {}}
    all_diffs: list[float] = []  # |warm - profiler| / profiler, %
    all_flushed: list[float] = []  # |flushed - profiler| / profiler, %
    groups: dict[str, list[float]] = {}  # signed warm-vs-profiler %, by group_of
    flushed_groups: dict[str, list[float]] = {}
    warm_none: list[str] = []  # kernels whose warm_ms is None (CUDA-graph capture failed)
    mm_rows: list[str] = []
    for model in a.models:
        margs = table_args[model]
        print(f"\n=== {model}: {' '.join(margs)}")
        record = os.path.join(out_dir, f"{model}.jsonl")
        if os.path.exists(record):
            os.remove(record)
        runs, header, secs = run_ours(margs, record)
        print(f"  headless run {secs:.1f} s; session {record} ({os.path.getsize(record) / 1e6:.2f} MB); "
              f"graphs timed: {', '.join(runs) or 'none'}")
        if header.get("settings"):
            print(f"  agent settings: {header['settings']}")

        phases = cuda_models.build(margs)
        t0 = time.perf_counter()
        for _ in range(3):  # compile + warm up
            for _, fn in phases:
                fn()
        if cuda:
            torch.cuda.synchronize()
        print(f"  in-process compile + 3 warm-up iterations {time.perf_counter() - t0:.1f} s")
        prof = profile_phases(phases, a.iters, cuda)
        loop = plain_loop(phases, a.loop_iters, cuda)
        msum: dict[str, Any] = {"graphs": {}}
        for key, _ in phases:
            run = runs.get(key)
            print(f"\n  --- {key}")
            if run is None:
                print(f"  no run message for {key} in our session (have: {', '.join(runs) or 'none'})")
                continue
            if run.get("error"):
                print(f"  our run failed: {run['error']}")
                continue
            rows, notes = match(run, prof.get(key) or [])
            print(f"  {'kernel':<52} {'warm ms':>9} {'flush ms':>9} {'prof ms':>9} {'warm/pr':>8} {'flush/pr':>8}"
                  f"  {'GB/s':>6} {'%peak':>6}  match")
            kmap = {(k["name"], k.get("call", 1)): k for k in run.get("kernels") or []}
            diffs, flushed_diffs = [], []
            for r in rows:
                k = kmap.get((r["name"], r["call"]), {})
                warm_s = f"{r['ours_warm']:9.4f}" if r.get("ours_warm") is not None else "     None"
                prof_s = f"{r['prof']:9.4f}" if r["prof"] is not None else "        -"
                gbps = f"{k['gbps']:6.0f}" if k.get("gbps") is not None else "     -"
                pk = f"{k['pct_peak_bw']:5.1f}%" if k.get("pct_peak_bw") is not None else "     -"
                extra = f"  [{r['prof_name']}]" if r.get("prof_name") else ""
                name = r["name"] + (f" (call {r['call']})" if r["call"] != 1 else "")
                print(f"  {name[:52]:<52} {warm_s} {r['ours_flushed']:9.4f} {prof_s} {pct(r.get('ours_warm'), r['prof']):>8} "
                      f"{pct(r['ours_flushed'], r['prof']):>8}  {gbps} {pk}  {r['how']}{extra}")
                if r.get("ours_warm") is None:
                    warm_none.append(f"{key} {name}")
                if r["prof"]:
                    flushed_diffs.append(abs(r["ours_flushed"] - r["prof"]) / r["prof"] * 100)
                    if r.get("ours_warm") is not None:
                        d = (r["ours_warm"] - r["prof"]) / r["prof"] * 100
                        diffs.append(abs(d))
                        groups.setdefault(group_of(r), []).append(d)
                    flushed_groups.setdefault(group_of(r), []).append(
                        (r["ours_flushed"] - r["prof"]) / r["prof"] * 100)
                if k.get("tflops") is not None:
                    pp = "-" if k.get("pct_peak_tflops") is None else f"{k['pct_peak_tflops']:.1f}%"
                    wm = "-" if k.get("warm_ms") is None else f"{k['warm_ms']:.4f}"
                    mm_rows.append(f"{key} {name}: {k['tflops']:.1f} TFLOP/s ({k.get('dtype')}), {pp} of peak "
                                   f"(from flushed {k['median_ms']:.4f} ms; warm {wm} ms)")
            for n in notes:
                print(f"    note: {n}")
            segs = prof.get(key) or []
            prof_sum = statistics.fmean(sum(ms for _, ms in s) for s in segs) if segs else None
            med_diff = statistics.median(diffs) if diffs else None
            within = sum(d <= 10 for d in diffs)
            all_diffs += diffs
            all_flushed += flushed_diffs
            med_fl = statistics.median(flushed_diffs) if flushed_diffs else None
            print(f"  warm vs profiler: {len(diffs)}/{len(rows)} kernels matched with a warm time; median |diff| "
                  f"{'-' if med_diff is None else f'{med_diff:.1f}%'}; within 10%: {within}/{len(diffs)}")
            print(f"  flushed vs profiler: {len(flushed_diffs)} matched; median |diff| "
                  f"{'-' if med_fl is None else f'{med_fl:.1f}%'}; within 10%: {sum(d <= 10 for d in flushed_diffs)}/{len(flushed_diffs)}")
            print(f"  kernel sum: ours {run['kernel_sum_ms']:.4f} ms, profiler (all GPU kernels of the graph, per it) "
                  f"{'-' if prof_sum is None else f'{prof_sum:.4f}'} ms  {pct(run['kernel_sum_ms'], prof_sum)}")
            print(f"  whole graph: ours compiled_ms {run['compiled_ms']:.4f} ms (do_bench of mod.call, L2 flushed) "
                  f"vs plain loop {loop[key]:.4f} ms (CUDA events around the compiled call, median of {a.loop_iters})"
                  f"  {pct(run['compiled_ms'], loop[key])}")
            msum["graphs"][key] = {"rows": rows, "notes": notes, "median_abs_diff_pct": med_diff,
                                   "within_10pct": within, "matched": len(diffs),
                                   "flushed_median_abs_diff_pct": med_fl,
                                   "flushed_within_10pct": sum(d <= 10 for d in flushed_diffs), "kernel_sum_ms": run["kernel_sum_ms"],
                                   "prof_kernel_sum_ms": prof_sum, "compiled_ms": run["compiled_ms"],
                                   "plain_loop_ms": loop[key], "peak": run.get("peak")}
            if run.get("peak"):
                msum["peak"] = run["peak"]
        if msum.get("peak"):
            pk = msum["peak"]
            print(f"\n  peaks in our run message: bw {pk.get('bw_gbps')} GB/s ({pk.get('bw_source')}); "
                  f"tflops {pk.get('tflops')} ({pk.get('tflops_source')})")
            print(f"  peak dict: {json.dumps(pk)}")

        if model == "pointwise":
            n = int(margs[margs.index("--numel") + 1])
            dev = "cuda" if cuda else "cpu"
            x = torch.randn(n, device=dev)
            y = torch.empty_like(x)
            copy_ms = bench_ms(lambda: y.copy_(x), cuda)
            copy_gbps = 2 * x.nbytes / (copy_ms / 1e3) / 1e9
            peak_bw = (msum.get("peak") or {}).get("bw_gbps")
            run = runs.get("[0/0] inference") or {}
            k = (run.get("kernels") or [{}])[0]
            f = phases[0][1]
            f_ms = bench_ms(f, cuda)
            f_gbps = 3 * x.nbytes / (f_ms / 1e3) / 1e9
            print(f"\n  pointwise x * 2 + y, {n} fp32 elements ({x.nbytes / 1e6:.0f} MB per tensor)")
            print(f"    ours (run message):  {k.get('name')}  flushed {k.get('median_ms', float('nan')):.4f} ms "
                  f"(warm {k.get('warm_ms')}), "
                  f"gb {k.get('gb')} ({k.get('gb_source')}), {k.get('gbps', float('nan')):.0f} GB/s, "
                  f"{k.get('pct_peak_bw', float('nan')):.1f}% of peak")
            print(f"    compiled fn, do_bench here (bytes 3 x nbytes): {f_ms:.4f} ms, {f_gbps:.0f} GB/s"
                  + (f", {100 * f_gbps / peak_bw:.1f}% of peak" if peak_bw else ""))
            print(f"    y.copy_(x), do_bench here (bytes 2 x nbytes):  {copy_ms:.4f} ms, {copy_gbps:.0f} GB/s"
                  + (f", {100 * copy_gbps / peak_bw:.1f}% of peak" if peak_bw else ""))
            if k.get("gbps"):
                print(f"    ours / copy GB/s: {k['gbps'] / copy_gbps:.3f}")
            msum["pointwise"] = {"ours_gbps": k.get("gbps"), "ours_pct_peak": k.get("pct_peak_bw"), "ours_gb": k.get("gb"),
                                 "fn_do_bench_ms": f_ms, "fn_gbps": f_gbps, "copy_ms": copy_ms, "copy_gbps": copy_gbps,
                                 "copy_pct_peak": (100 * copy_gbps / peak_bw) if peak_bw else None}
        summary["models"][model] = msum
        del phases
        if cuda:
            torch.cuda.empty_cache()
    print("\n=== summary")
    print(f"warm (do_bench_cudagraph) vs profiler, all matched kernels: {sum(d <= 10 for d in all_diffs)}/{len(all_diffs)} "
          f"within 10%, median |diff| {statistics.median(all_diffs) if all_diffs else float('nan'):.1f}%")
    for g in GROUPS:
        print(group_line(g, groups.get(g, [])))
    print(f"flushed (do_bench) vs profiler, all matched kernels: {sum(d <= 10 for d in all_flushed)}/{len(all_flushed)} "
          f"within 10%, median |diff| {statistics.median(all_flushed) if all_flushed else float('nan'):.1f}%")
    for g in GROUPS:
        print(group_line(g, flushed_groups.get(g, [])))
    print(f"kernels with warm_ms None (capture failed or not GPU): {len(warm_none)}"
          + "".join(f"\n    {w}" for w in warm_none))
    print(f"matmul kernels with tflops: {len(mm_rows)}" + "".join(f"\n    {m}" for m in mm_rows))
    summary["warm_vs_profiler"] = {"matched": len(all_diffs), "within_10pct": sum(d <= 10 for d in all_diffs),
                                   "median_abs_diff_pct": statistics.median(all_diffs) if all_diffs else None,
                                   "groups": groups}
    summary["flushed_vs_profiler"] = {"matched": len(all_flushed), "within_10pct": sum(d <= 10 for d in all_flushed),
                                      "median_abs_diff_pct": statistics.median(all_flushed) if all_flushed else None,
                                      "groups": flushed_groups}
    summary["warm_ms_none"] = warm_none
    summary["matmul"] = mm_rows
    with open(os.path.join(out_dir, "gpu_vs_profiler.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, default=str)
    print(f"summary JSON: {os.path.join(out_dir, 'gpu_vs_profiler.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
