"""Our `run` timings (tracer/timing/) against torch.profiler and a plain loop, on a CUDA machine.

For each model (default: benchmarks/cuda_models.py ``attention`` and ``pointwise``):

1. ``python -m inductor_step --headless --run --record S.jsonl benchmarks/cuda_models.py MODEL ...`` in a
   subprocess; its ``run`` messages give our per-kernel ``in_graph_ms`` (every kernel inside one
   CUDA-graph replay of its whole graph, between timing events; median of 30 replays), ``median_ms``
   (triton.testing.do_bench, L2 flushed, each kernel alone; what GB/s and % of peak use), ``warm_ms``
   (do_bench_cudagraph, kernel alone; only where the graph could not be captured), ``gb_source``,
   ``gbps``, ``pct_peak_bw``, matmul ``tflops``/``pct_peak_tflops`` and each graph's ``compiled_ms``.
   The table shows each time with its % difference to the profiler; the summary counts kernels within
   10% per kind of time and groups them (cuBLAS/extern; Triton by the profiler's time: >=100us,
   5-100us, <5us).  Each Triton kernel's byte source is shown (``estimate``: Inductor's
   ``estimate_kernel_num_bytes`` recorded at codegen; ``num_gb``: ``kernel_num_gb`` in the source;
   ``args<=``: whole tensor arguments, an upper bound).
2. In this process: the same model (``cuda_models.build``) compiled, warmed up, then N iterations
   under ``torch.profiler.profile(activities=[CUDA])``.  After each phase (one compiled graph) a
   ``torch.cuda._sleep`` kernel (``spin_kernel``) marks the boundary, so every GPU kernel belongs
   to one graph of one iteration.  Triton kernels are matched to ours by name (k-th launch of a name
   in a graph = our ``call`` k); extern kernels (cuBLAS, ...) by order of appearance among the
   graph's non-Triton kernels, and only when the counts agree (else listed as unmatched).
3. Each phase timed with a plain loop: CUDA events around the phase, 100 iterations, median; against
   our ``compiled_ms`` and the sum of our in-graph times.
4. Same replays (``same_replay``, skip with ``--no-same-replay``): each graph's output module loaded
   here and captured with and without the timing events, both replayed under the profiler: events
   vs CUPTI on the very same replays, and whether the events slow the kernels, to explain any kernel
   whose in-graph time differs from the profiler's.
5. Pointwise case: our GB/s and % of peak against ``y.copy_(x)`` timed with do_bench on the same GPU
   (bytes = 2 x nbytes).  The peak figures our run used and the matmuls' % of peak TFLOP/s are printed.

Any script (``--script SCRIPT [ARGS...]``, e.g. a Hugging Face or torchvision model no one here
wrote): step 1 as above on that script; then the script runs again, plainly (no agent), in a child
process under one ``torch.profiler`` session (CUDA activity) from start to end.  A wrapper on
``CompiledFxGraph.__call__`` launches a ``torch.cuda._sleep`` marker kernel before and after each
graph's calls 2 to 1+``--calls``, so the kernels between two markers are one call of one graph,
whatever the script does around them (eager optimizer steps, graph breaks, several graphs per
step).  Graphs are paired with ours by their Triton kernel names (the agent's provenance comments
change the output module's key, not its kernels), then compared kernel by kernel as above; each
graph's GPU span per call (first kernel start to last kernel end) is printed beside our times.
The profiler there records CPU activity too, from the first profiled call on: each library call
(cuBLAS, cuDNN) is paired with ours through the ATen op that launched its kernels (``aten::mm`` for
our ``extern_kernels.mm``), however many kernels it runs.  After the script ends, each graph is
called again on its second call's inputs and timed by a plain loop of CUDA events (L2 flushed,
L2 warm, back to back) against our ``compiled_ms``; our session's own output module is timed the
same way in that process, which tells a difference in the code from one in the process.  Before
those loops CUPTI is detached (tracer.timing.cupti_detached, as the agent does before its timing
run): a profiler session leaves it attached and it slows every later launch (up to 1.3x on a
launch-bound graph, benchmarks/profiler_after_effect.py).

Launch configs: where a Triton kernel has several, each process's autotuner picks by its own
benchmark and two runs can settle differently (a 2-4 us kernel at ``XBLOCK=512`` in one and
``XBLOCK=1024`` in the other).  By default the reference (the plain run, or the in-process
compile) has its kernels pinned to the configs our run used (tracer.adapter.pin_configs, before
the graph's first call), so both time the same code; ``--no-pin-configs`` lets it autotune.

Differences are reported, not tuned away.

    python benchmarks/gpu_vs_profiler.py [--iters 20] [--out-dir DIR] [--models attention pointwise]
    python benchmarks/gpu_vs_profiler.py [--calls 10] --script examples/real/hf_gpt2_train.py --device cuda --size small --steps 12
    python benchmarks/gpu_vs_profiler.py --dry-run     # CPU, tiny sizes: exercises the plumbing only
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import contextlib
from contextlib import contextmanager
from typing import Any, Iterator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS_SCRIPT = os.path.join(ROOT, "benchmarks", "cuda_models.py")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from inductor_step.session import format as protocol  # noqa: E402 - standard library only

MODEL_ARGS = {  # 12 iterations: the agent profiles the script's calls 2-11 of each graph (in_script_ms)
    "attention": ["attention", "--dim", "1024", "--seq", "512", "--batch", "16", "--heads", "16", "--iters", "12"],
    "pointwise": ["pointwise", "--numel", str(64 * 1024 * 1024), "--iters", "12"],
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


# ----------------------------------------------------------------------------- GPU clocks while we measure

class GpuClocks:
    """The GPU's SM clock (MHz), utilization (%), power (W), temperature (C) and active clock event
    reasons (nvidia-smi's ``clocks_event_reasons.active`` bitmask: power cap, thermal or hardware
    slowdown), sampled by ``nvidia-smi -lms 200`` in the background for the whole benchmark, with
    named phases (:meth:`phase`).  It tells a slow spell with the clocks down (power, thermal) from
    one without (the host, or another process on the GPU).  Rows go to ``path`` as CSV (unix time
    first).  Without nvidia-smi it records nothing and :meth:`summary` says so."""

    REASONS = {0x2: "applications clocks setting", 0x4: "SW power cap", 0x8: "HW slowdown", 0x10: "sync boost",
               0x20: "SW thermal", 0x40: "HW thermal", 0x80: "HW power brake", 0x100: "display clocks"}

    def __init__(self, path: str) -> None:
        self.path, self.rows, self.phases = path, [], []
        self.proc: subprocess.Popen | None = None
        exe = shutil.which("nvidia-smi")
        if not exe:
            return
        gpu = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or "0"
        for reasons in ("clocks_event_reasons.active", "clocks_throttle_reasons.active"):
            fields = f"clocks.sm,utilization.gpu,power.draw,temperature.gpu,{reasons}"
            q = [exe, "-i", gpu, f"--query-gpu={fields}", "--format=csv,noheader,nounits"]
            if subprocess.run(q, capture_output=True, text=True).returncode == 0:
                self.proc = subprocess.Popen([*q, "-lms", "200"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                             text=True)
                threading.Thread(target=self._read, daemon=True).start()
                return

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            parts = [x.strip() for x in line.split(",")]
            if len(parts) == 5:
                self.rows.append((time.time(), *parts))

    @contextmanager
    def phase(self, label: str) -> Iterator[None]:
        """Mark the samples taken inside the ``with`` block as ``label``."""
        t0 = time.time()
        try:
            yield
        finally:
            self.phases.append((label, t0, time.time()))

    def stop(self) -> None:
        """End sampling and write the CSV."""
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=5)
        with open(self.path, "w", encoding="utf-8") as f:
            f.write("unix_s,sm_mhz,util_pct,power_w,temp_c,clock_event_reasons\n")
            f.writelines(",".join(map(str, r)) + "\n" for r in self.rows)

    def summary(self) -> list[str]:
        """One line per phase: samples, SM clock median (min-max) MHz, utilization median %, power
        max W, and every clock event reason seen (GPU idle left out) with how many samples had it."""
        if self.proc is None:
            return ["GPU clocks: not sampled (no nvidia-smi)"]
        out = []
        for label, t0, t1 in self.phases:
            rows = [r for r in self.rows if t0 <= r[0] <= t1]

            def num(i: int) -> list[float]:
                vals = []
                for r in rows:
                    try:
                        vals.append(float(r[i]))
                    except ValueError:
                        pass
                return vals

            sm, util, power = num(1), num(2), num(3)
            if not sm:
                out.append(f"GPU clocks, {label}: no samples")
                continue
            seen: dict[str, int] = {}
            for r in rows:
                try:
                    mask = int(r[5], 16)
                except ValueError:
                    continue
                for bit, name in self.REASONS.items():
                    if mask & bit:
                        seen[name] = seen.get(name, 0) + 1
            out.append(f"GPU clocks, {label} ({t1 - t0:.0f} s, {len(rows)} samples): SM {statistics.median(sm):.0f} MHz "
                       f"median ({min(sm):.0f}-{max(sm):.0f}), utilization median {statistics.median(util or [0]):.0f}%, "
                       f"power max {max(power or [0]):.0f} W; clock event reasons: "
                       + (", ".join(f"{k} in {v}" for k, v in seen.items()) or "none"))
        return out


# ----------------------------------------------------------------------------- ours (subprocess)

def run_ours(model_args: list[str], record: str, script: str = MODELS_SCRIPT) -> tuple[dict[str, dict], dict, float]:
    """Run the headless agent with --run on ``script model_args``; return ({graph_key: run message},
    header, seconds)."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PYTHONUNBUFFERED="1")
    cmd = [sys.executable, "-m", "inductor_step", "--headless", "--run", "--record", record, script, *model_args]
    print("$ " + " ".join(cmd[1:]), flush=True)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    for line in p.stdout.splitlines():
        if " run " in line or line.startswith("ran "):
            print("  | " + line)
    if p.returncode != 0:
        print(f"  headless run exited {p.returncode}; stderr tail:\n" + p.stderr[-3000:], flush=True)
    runs, header = read_ours(record)
    return runs, header, dt


def read_ours(record: str) -> tuple[dict[str, dict], dict]:
    """({graph_key: run message}, header) of a recorded session; prints its errors."""
    runs: dict[str, dict] = {}
    header: dict = {}
    if os.path.exists(record):
        with open(record, encoding="utf-8") as f:
            for line in f:
                m = protocol.decode(line) or {}  # a packed line gives its message
                if m.get("type") == "header":
                    header = m
                elif m.get("type") == "run":
                    runs[f"{m.get('compile_id')} {m.get('graph_kind')}"] = m
                elif m.get("type") == "error":
                    print(f"  session error ({m.get('stage')}): {m.get('message')}")
    return runs, header


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
    segments = _segments(prof)
    out: dict[str, list] = {k: [] for k, _ in phases}
    if len(segments) != iters * len(phases):
        print(f"  profiler: {len(segments)} segments between markers, expected {iters * len(phases)}; "
              "per-graph attribution unreliable", flush=True)
    for i, seg in enumerate(segments):
        out[phases[i % len(phases)][0]].append(seg)
    return out


def _ours_row(k: dict) -> dict:
    """One of our kernels as a table row: ``ours`` is what is compared with the profiler, the in-graph
    time (``in_graph_ms``) where the run has one, else ``warm_ms``, else the flushed ``median_ms``."""
    ig, warm, flushed = k.get("in_graph_ms"), k.get("warm_ms"), k.get("median_ms")
    ours, which = ((ig, "in-graph") if ig is not None else (warm, "warm") if warm is not None else (flushed, "flushed"))
    return {"name": k["name"], "call": k.get("call", 1), "backend": k.get("backend"), "ours": ours, "ours_kind": which,
            "ours_in_graph": ig, "ours_in_graph_source": k.get("in_graph_source"),
            "ours_in_script": k.get("in_script_ms"),
            # what the run pane offers for "this kernel inside my model": the script's own calls where
            # profiled (Triton), else the in-graph replay
            "ours_model": k.get("in_script_ms") if k.get("in_script_ms") is not None else ig,
            "ours_events": k.get("in_graph_events_ms"), "ours_warm": warm, "ours_flushed": flushed, "prof": None,
            "how": "", "gb_source": k.get("gb_source")}


def externs_by_gaps(ours: list[dict], iters_kernels: list[list[tuple[str, float]]]) -> dict[int, tuple[float, str, str]] | None:
    """Pair our extern calls with the profiler's non-Triton kernels using the Triton kernels as anchors.

    Our kernels (call order) and each profiled call's kernels (launch order) are cut at their Triton
    kernels; where the Triton sequences agree, the k-th gap holds the same extern calls on both
    sides.  A gap with one extern call gets the sum of all the profiler's kernels in it (one cuBLAS
    or attention call may launch several); a gap with as many kernels as extern calls pairs them in
    order; other gaps stay unmatched.  Returns {index in ``ours``: (mean ms over calls, profiler
    kernel names, how)}, or None where the Triton sequences differ.
    """
    def cut(seq: list, is_triton) -> tuple[list, list[list]]:
        anchors, gaps = [], [[]]
        for x in seq:
            if is_triton(x):
                anchors.append(x["name"] if isinstance(x, dict) else x[0])
                gaps.append([])
            else:
                gaps[-1].append(x)
        return anchors, gaps

    our_anchors, our_gaps = cut(list(enumerate(ours)), lambda x: x[1].get("backend") == "triton")
    our_anchors = [ours[i]["name"] for i, k in enumerate(ours) if k.get("backend") == "triton"]
    per_iter = []
    for seg in iters_kernels:
        anchors, gaps = cut(seg, lambda x: x[0].startswith("triton_"))
        if anchors != our_anchors:
            return None
        per_iter.append(gaps)
    if not per_iter:
        return None
    out: dict[int, tuple[float, str, str]] = {}
    for g, mine in enumerate(our_gaps):
        if not mine:
            continue
        theirs = [gaps[g] for gaps in per_iter]
        if len(mine) == 1 and all(theirs):
            vals = [sum(ms for _, ms in t) for t in theirs]
            names = " + ".join(n[:40] for n, _ in theirs[0])
            out[mine[0][0]] = (statistics.fmean(vals), names, f"gap ({len(theirs[0])} kernel(s))")
        elif {len(t) for t in theirs} == {len(mine)}:
            for j, (i, _) in enumerate(mine):
                out[i] = (statistics.fmean(t[j][1] for t in theirs), theirs[0][j][0][:60], "gap, in order")
    return out


def externs_by_op(ext_ours: list[dict], ext_ops: list[list]) -> dict[int, tuple[float, str, str]]:
    """Pair our extern calls with the profiler's ATen ops: each profiled call's ``[op, ms, kernels]``
    list (the outermost ATen op that launched the non-Triton kernels, in order) is walked in step
    with our extern calls, skipping ops of other names (e.g. a ``copy_`` outside our hook); a call
    of ours gets the mean over profiled calls where every call has its op.  Returns {index in
    ``ext_ours``: (mean ms, op name, how)}."""
    from inductor_step.tracer.adapter import op_base_name  # noqa: PLC0415

    vals: dict[int, list[float]] = {}
    info: dict[int, tuple[str, int]] = {}
    for ops in ext_ops:
        j = 0
        for i, k in enumerate(ext_ours):
            want = op_base_name(k["name"])
            while j < len(ops) and op_base_name(ops[j][0]) != want:
                j += 1
            if j == len(ops):
                break
            vals.setdefault(i, []).append(ops[j][1])
            info[i] = (ops[j][0], ops[j][2])
            j += 1
    return {i: (statistics.fmean(v), info[i][0], f"ATen op ({info[i][1]} kernel(s))")
            for i, v in vals.items() if len(v) == len(ext_ops)}


def match(run: dict, iters_kernels: list[list[tuple[str, float]]],
          ext_ops: list[list] | None = None) -> tuple[list[dict], list[str]]:
    """Pair our kernels with the profiler's: rows (name, ours, profiler, ratio, how) and notes.
    ``ext_ops``: per profiled call, the ATen ops that launched its non-Triton kernels
    (:func:`profile_script_child`); where given, extern calls are paired by op (:func:`externs_by_op`)
    and only the rest by order or by gaps between Triton kernels."""
    notes: list[str] = []
    ours = run.get("kernels") or []
    ext_list = [k for k in ours if k.get("backend") != "triton"]
    by_op = externs_by_op(ext_list, ext_ops) if ext_list and ext_ops and len(ext_ops) == len(iters_kernels) else {}
    by_op = {id(ext_list[i]): v for i, v in by_op.items()}
    if ext_list and ext_ops:
        notes.append(f"extern calls matched to the ATen op that launched their kernels: {len(by_op)} of {len(ext_list)}")
    rows: list[dict] = []
    if not iters_kernels:
        return [dict(_ours_row(k), how="no profile") for k in ours], ["no profiler segments for this graph"]
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
    gapped = externs_by_gaps(ours, iters_kernels) if ext_ours and not ext_ok else None
    if gapped is not None:
        notes.append(f"extern kernels matched between Triton kernels: {len(gapped)} of {len(ext_ours)} extern calls "
                     f"({sorted(counts)} non-Triton kernels per call against our {len(ext_ours)})")
    elif ext_ours and not ext_ok:
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
        row = _ours_row(k)
        if id(k) in by_op:
            row["prof"], row["prof_name"], row["how"] = by_op[id(k)]
            if ext_ok:
                ext_i += 1
        elif k.get("backend") == "triton":
            key = (k["name"], k.get("call", 1))
            if key in trit:
                row["prof"] = statistics.fmean(trit[key])
                row["how"] = f"name ({len(trit[key])}/{n_it} it)"
                used_trit.add(key)
            else:
                row["how"] = "not seen by profiler"
        elif gapped is not None:
            i = next(j for j, x in enumerate(ours) if x is k)
            if i in gapped:
                row["prof"], row["prof_name"], row["how"] = gapped[i]
            else:
                row["how"] = "extern, gap ambiguous"
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
    if gapped is None and (not ext_ok or ext_how != "order"):
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


# ----------------------------------------------------------------------------- same replay (why a kernel differs)

def byte_src(src: str | None) -> str:
    """Short name of where a kernel's bytes come from (``gb_source`` in our run message)."""
    if not src:
        return "-"
    if src.startswith("inductor estimate"):
        return "estimate"  # estimate_kernel_num_bytes, recorded at codegen by our define_kernel hook
    if src.startswith("inductor kernel_num_gb"):
        return "num_gb"  # inductor_meta['kernel_num_gb'] in the kernel's source (config.benchmark_kernel)
    if src.startswith("tensor arguments"):
        return "args<="  # whole tensor arguments: an upper bound
    return src[:10]


def same_replay(output_path: str, replays: int = 20) -> tuple[dict[tuple[str, int], dict], list[str]]:
    """Our in-graph method against CUPTI on the very same CUDA-graph replays of one output module.

    The module's ``call`` is captured twice, outside the profiler: once with a pair of timing events
    (``external=True``) around every kernel launch, as ``tracer.timing.in_graph_times`` does, and once
    without.  Both are then replayed under torch.profiler.  Per kernel (name, call) this returns
    ``events`` (median event-pair time, ms), ``cupti_ev`` (CUPTI's duration in the graph with events)
    and ``cupti_plain`` (CUPTI's duration in the graph without them).  events vs cupti_ev isolates what
    the event pair adds; cupti_ev vs cupti_plain whether the events slow the kernel itself; cupti_plain
    vs the eager profile what replaying the graph alone (instead of inside the running model) changes.
    """
    import torch  # noqa: PLC0415
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

    from inductor_step.tracer import adapter, timing  # noqa: PLC0415
    from inductor_step.tracer.codeparse import parse_wrapper  # noqa: PLC0415

    with open(output_path, encoding="utf-8") as f:
        backends = {k["name"]: k["backend"] for k in parse_wrapper(f.read())}
    mod = adapter.load_output_module(output_path)
    events: list = []
    names: list[str] = []

    def plain(name: str, fn, a: tuple, k: dict):
        names.append(name)
        return fn(*a, **k)

    with torch.no_grad():
        args = timing._graph_args(mod)
        # the agent's own capture (tracer.timing.capture_graph / event_hook), once with events, once without
        g_ev = timing.capture_graph(mod, backends, args, timing.event_hook(events))
        g_plain = timing.capture_graph(mod, backends, args, plain)
        for _ in range(3):
            g_ev.replay()
            g_plain.replay()
        torch.cuda.synchronize()
        ev_ms: list[list[float]] = [[] for _ in events]
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(replays):
                g_ev.replay()
                torch.cuda._sleep(1000)  # marker
                torch.cuda.synchronize()
                for i, (_, s, e) in enumerate(events):
                    ev_ms[i].append(s.elapsed_time(e))
            for _ in range(replays):
                g_plain.replay()
                torch.cuda._sleep(1000)
            torch.cuda.synchronize()
    segs = _segments(prof)
    notes = []
    if len(segs) != 2 * replays:
        notes.append(f"profiler: {len(segs)} segments between markers, expected {2 * replays}")
    seen: dict[str, int] = {}
    ks = []
    for (name, _, _), t in zip(events, ev_ms):
        seen[name] = seen.get(name, 0) + 1
        base = name.split("#")[0]
        backend = "extern" if base.startswith(("extern_kernels", "torch.ops")) else backends.get(name, "?")
        ks.append({"name": name, "call": seen[name], "backend": backend, "in_graph_ms": statistics.median(t),
                   "median_ms": None})
    rows_ev, n1 = match({"kernels": ks}, segs[:replays])
    rows_pl, n2 = match({"kernels": ks}, segs[replays:2 * replays])
    notes += [f"graph with events: {n}" for n in n1] + [f"graph without events: {n}" for n in n2]
    out: dict[tuple[str, int], dict] = {}
    for re_, rp in zip(rows_ev, rows_pl):
        out[(re_["name"], re_["call"])] = {"events": re_["ours"], "cupti_ev": re_["prof"], "cupti_plain": rp["prof"]}
    del g_ev, g_plain
    return out, notes


def _segments(prof) -> list[list[tuple[str, float]]]:
    """GPU kernels of a finished profile, split at the ``spin_kernel`` markers (the part after the
    last marker dropped)."""
    import torch  # noqa: PLC0415

    evs = []
    for e in prof.profiler.kineto_results.events():
        if e.device_type() != torch.autograd.DeviceType.CUDA:
            continue
        try:
            if e.is_user_annotation():
                continue
        except AttributeError:
            pass
        if _NON_KERNEL.match(e.name()):
            continue
        evs.append((e.start_ns(), e.name(), e.duration_ns() / 1e6))
    evs.sort()
    segs: list[list[tuple[str, float]]] = [[]]
    for _, name, ms in evs:
        if MARKER in name:
            segs.append([])
        else:
            segs[-1].append((name, ms))
    return segs[:-1]


def report_graph(key: str, run: dict | None, segs: list[list[tuple[str, float]]], loop_ms: float | None,
                 output_path: str | None, ctx: dict, ext_ops: list[list] | None = None) -> dict | None:
    """Print one graph's comparison (each kernel: ours against the profiler) and return its summary.

    ``segs``: the profiler's kernels of this graph, one list of ``(name, ms)`` per profiled call;
    ``loop_ms``: the graph timed by a plain loop of CUDA events (None where there is none, e.g. in
    ``--script`` mode, which prints its own plain loop after this); ``ctx`` carries the
    accumulators across graphs (``diffs``, ``no_in_graph``, ``mm_rows``, ``src_count``) and the
    options (``cuda``, ``same_replay``, ``loop_iters``); ``ext_ops``: see :func:`match`.
    """
    diffs, no_in_graph, mm_rows, src_count = ctx["diffs"], ctx["no_in_graph"], ctx["mm_rows"], ctx["src_count"]
    cuda = ctx["cuda"]
    prof = {key: segs}
    print(f"\n  --- {key}")
    if run is None:
        print(f"  no run message for {key} in our session")
        return None
    if run.get("error"):
        print(f"  our run failed: {run['error']}")
        return None
    print(f"  in_graph: {run.get('in_graph')}; in_graph_cupti: {run.get('in_graph_cupti')}; "
          f"in_script: {run.get('in_script')}; inputs: {run.get('inputs')}")
    rows, notes = match(run, prof.get(key) or [], ext_ops)
    print(f"  {'kernel':<48} {'in-script':>9} {'in-graph':>9} {'src':>3} {'events':>9} {'flushed':>9} {'prof':>9} "
          f"{'is/prof':>8} {'ig/prof':>8} {'ev/prof':>8} {'fl/prof':>8}  {'GB/s':>6} {'%peak':>6} {'bytes':>8}  match")
    kmap = {(k["name"], k.get("call", 1)): k for k in run.get("kernels") or []}
    gd: dict[str, list[float]] = {"model": [], "in-script": [], "in-graph": [], "events": [], "warm": [],
                                  "flushed": []}
    for r in rows:
        k = kmap.get((r["name"], r["call"]), {})
        gbps = f"{k['gbps']:6.0f}" if k.get("gbps") is not None else "     -"
        pk = f"{k['pct_peak_bw']:5.1f}%" if k.get("pct_peak_bw") is not None else "     -"
        extra = f"  [{r['prof_name']}]" if r.get("prof_name") else ""
        name = r["name"] + (f" (call {r['call']})" if r["call"] != 1 else "")
        src = byte_src(k.get("gb_source"))
        if k.get("backend") == "triton":
            src_count[src] = src_count.get(src, 0) + 1
        isrc = {"cupti": "C", "events": "E"}.get(r.get("ours_in_graph_source") or "", "-")
        print(f"  {name[:48]:<48} {f4(r['ours_in_script'])} {f4(r['ours_in_graph'])} {isrc:>3} {f4(r['ours_events'])} "
              f"{f4(r['ours_flushed'])} {f4(r['prof'])} {pct(r['ours_in_script'], r['prof']):>8} "
              f"{pct(r['ours_in_graph'], r['prof']):>8} {pct(r['ours_events'], r['prof']):>8} "
              f"{pct(r['ours_flushed'], r['prof']):>8}  {gbps} {pk} {src:>8}  {r['how']}{extra}"
              + (f"  warm {r['ours_warm']:.4f}" if r.get("ours_warm") is not None else ""))
        if cuda and r.get("ours_in_graph") is None:
            no_in_graph.append(f"{key} {name} (in_graph: {run.get('in_graph')})")
        cfg_differs = bool(k.get("config") and k.get("plain_config") and k["config"] != k["plain_config"])
        r["config_differs"] = cfg_differs
        if cfg_differs:
            print(f"      autotuned config differs: ours (the script's run under the agent) {k['config']}; "
                  f"plain run {k['plain_config']} (of {k.get('configs_tried', '?')} configs)")
        if r["prof"] and r.get("ours_model") is not None and not cfg_differs:
            d = (r["ours_model"] - r["prof"]) / r["prof"] * 100
            diffs.setdefault("model, same config", {}).setdefault(group_of(r), []).append(d)
        if r["prof"]:
            for kind, field in (("model", "ours_model"), ("in-script", "ours_in_script"),
                                ("in-graph", "ours_in_graph"), ("events", "ours_events"), ("warm", "ours_warm"),
                                ("flushed", "ours_flushed")):
                if r.get(field) is not None:
                    d = (r[field] - r["prof"]) / r["prof"] * 100
                    gd[kind].append(d)
                    diffs[kind].setdefault(group_of(r), []).append(d)
        if k.get("tflops") is not None:
            pp = "-" if k.get("pct_peak_tflops") is None else f"{k['pct_peak_tflops']:.1f}%"
            ig = "-" if k.get("in_graph_ms") is None else f"{k['in_graph_ms']:.4f}"
            mm_rows.append(f"{key} {name}: {k['tflops']:.1f} TFLOP/s ({k.get('dtype')}), {pp} of peak "
                           f"(from flushed {k['median_ms']:.4f} ms; in-graph {ig} ms)")
    for n in notes:
        print(f"    note: {n}")
    segs = prof.get(key) or []
    prof_sum = statistics.fmean(sum(ms for _, ms in s) for s in segs) if segs else None
    for kind, ds in gd.items():
        if ds:
            print(f"  {kind:>8} vs profiler: {sum(abs(d) <= 10 for d in ds)}/{len(ds)} within 10%; "
                  f"median |diff| {statistics.median(abs(d) for d in ds):.1f}%")
    ig_sum = run.get("in_graph_sum_ms")
    print(f"  kernel sum: ours in-graph {f4(ig_sum).strip()} ms, flushed {run['kernel_sum_ms']:.4f} ms; "
          f"profiler (all GPU kernels of the graph, per it) {f4(prof_sum).strip()} ms; "
          f"in-graph {pct(ig_sum, prof_sum).strip()}, flushed {pct(run['kernel_sum_ms'], prof_sum).strip()}")
    if loop_ms is not None:
        print(f"  whole graph: ours compiled_ms {run['compiled_ms']:.4f} ms (do_bench of mod.call, L2 flushed) "
              f"vs plain loop {loop_ms:.4f} ms (CUDA events around the compiled call, median of {ctx['loop_iters']})"
              f"  {pct(run['compiled_ms'], loop_ms).strip()}; in-graph sum vs plain loop {pct(ig_sum, loop_ms).strip()}")
    gsum: dict[str, Any] = {"rows": rows, "notes": notes, "in_graph": run.get("in_graph"),
                            "kernel_sum_ms": run["kernel_sum_ms"], "in_graph_sum_ms": ig_sum,
                            "prof_kernel_sum_ms": prof_sum, "compiled_ms": run["compiled_ms"],
                            "plain_loop_ms": loop_ms, "peak": run.get("peak")}
    for kind, ds in gd.items():
        gsum[kind] = {"matched": len(ds), "within_10pct": sum(abs(d) <= 10 for d in ds),
                      "median_abs_diff_pct": statistics.median(abs(d) for d in ds) if ds else None}
    if cuda and ctx["same_replay"] and output_path:
        try:
            sr, sr_notes = same_replay(output_path)
        except Exception as e:  # noqa: BLE001 - a diagnostic; report and go on
            sr, sr_notes = {}, [f"failed: {type(e).__name__}: {e}"]
        print(f"  same CUDA-graph replays, events vs CUPTI ({output_path}):")
        print(f"    {'kernel':<48} {'sess ig':>9} {'sess ev':>9} {'events':>9} {'cupti+ev':>9} {'cupti':>9} "
              f"{'eager pr':>9} {'ev/cupti':>8} {'cupti/eag':>9} {'sess/eag':>8}")
        for r in rows:
            d = sr.get((r["name"], r["call"]))
            if not d:
                continue
            name = r["name"] + (f" (call {r['call']})" if r["call"] != 1 else "")
            print(f"    {name[:48]:<48} {f4(r['ours_in_graph'])} {f4(r['ours_events'])} {f4(d['events'])} {f4(d['cupti_ev'])} "
                  f"{f4(d['cupti_plain'])} {f4(r['prof'])} {pct(d['events'], d['cupti_ev']):>8} "
                  f"{pct(d['cupti_plain'], r['prof']):>9} {pct(r['ours_in_graph'], r['prof']):>8}")
            r["same_replay"] = d
        for n in sr_notes:
            print(f"    note: {n}")
        ev_d = [100 * (d["events"] - d["cupti_ev"]) / d["cupti_ev"] for d in sr.values() if d["cupti_ev"]]
        ev_abs = [1e3 * (d["events"] - d["cupti_ev"]) for d in sr.values() if d["cupti_ev"]]
        if ev_d:
            print(f"    events - CUPTI, same replays: median {statistics.median(ev_abs):+.2f} us "
                  f"(range {min(ev_abs):+.2f} to {max(ev_abs):+.2f} us), {sum(abs(x) <= 10 for x in ev_d)}/"
                  f"{len(ev_d)} within 10%")
        gsum["same_replay_notes"] = sr_notes
    return gsum


# ----------------------------------------------------------------------------- any script (--script)

def write_pins(runs: dict[str, dict], outputs: dict[str, str], path: str) -> str:
    """Write our graphs' Triton kernel names, the launch config each was timed with, and the output
    module's path, for :func:`match_pin` in another process; returns ``path``."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump([{"graph": key, "output_path": outputs.get(key),
                    "names": sorted({k["name"] for k in r.get("kernels") or [] if k.get("backend") == "triton"}),
                    "configs": {k["name"]: k["config"] for k in r.get("kernels") or [] if k.get("config")}}
                   for key, r in runs.items()], f)
    return path


def match_pin(key: str, pins: list[dict]) -> dict | None:
    """Before the first call of the graph whose output module is loaded under ``key``: the entry of
    ``pins`` (:func:`write_pins`) for the graph of ours with the same Triton kernels (90% of names
    shared at least), its kernels pinned to our configs (tracer.adapter.pin_configs; the entry's
    ``pinned`` says which), or None."""
    from inductor_step.tracer import adapter  # noqa: PLC0415

    mod = adapter.output_module(key)
    names = frozenset(adapter._autotuners(vars(mod))) if mod is not None else frozenset()
    if not names or not pins:
        return None

    def overlap(p: dict) -> float:
        theirs = frozenset(p["names"])
        return len(theirs & names) / max(1, len(theirs | names))

    best = max(pins, key=overlap)
    if overlap(best) < 0.9 or not best.get("configs"):
        return None
    return dict(best, pinned=adapter.pin_configs(mod, best["configs"]))


def plain_graph_loop(graph: Any, inputs: list, iters: int) -> dict[str, float]:
    """Time one compiled graph (a ``CompiledFxGraph``, or an output module's ``call``: both take the
    input list) on ``inputs`` (one of the script's own calls)
    with plain loops of CUDA events, each after 3 warm-up calls: ``per_call_ms`` (median of events
    around each call, L2 as the previous call left it), ``flushed_ms`` (the same with a 256 MB buffer
    zeroed before each call, as triton.testing.do_bench and our ``compiled_ms`` do) and
    ``back_to_back_ms`` (``iters`` calls between one event pair, divided by ``iters``: launch
    overlap included).

    ``flushed_ms`` is taken in rounds of ``iters // 5`` calls (at least 10) under the rule the agent
    uses for ``compiled_ms`` (tracer.timing.stable_window): rounds go on until the last five agree
    within 10% or 20 are done, and ``flushed_ms`` is the median of the last five round medians.  The
    GPU box has slow spells (a GPU-bound 3.0 ms graph read 5.0 ms for eight rounds in a row), and a
    plain loop that falls into one is no reference.  Every round is in ``flushed_rounds_ms``;
    ``flushed_stable`` says whether the last five agreed."""
    import torch  # noqa: PLC0415

    from inductor_step.tracer import timing  # noqa: PLC0415

    torch.set_grad_enabled(False)  # as AOTAutograd's runtime calls it; out= matmuls refuse inputs that need grad
    for _ in range(3):
        graph(list(inputs))
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
    ev = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731
    warm = []
    for _ in range(iters):
        s, e = ev(), ev()
        s.record()
        graph(list(inputs))
        e.record()
        warm.append((s, e))
    s0, e0 = ev(), ev()
    s0.record()
    for _ in range(iters):
        graph(list(inputs))
    e0.record()
    torch.cuda.synchronize()
    round_iters = max(10, iters // 5)

    def one_round() -> float:
        pairs = []
        for _ in range(round_iters):
            flush.zero_()
            s, e = ev(), ev()
            s.record()
            graph(list(inputs))
            e.record()
            pairs.append((s, e))
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in pairs)

    r = timing.rounds_until_stable(one_round)  # the agent's rule for compiled_ms
    return {"per_call_ms": statistics.median(s.elapsed_time(e) for s, e in warm),
            "flushed_ms": r["ms"], "flushed_rounds_ms": r["rounds_ms"],
            "flushed_stable": r["stable"], "round_iters": round_iters,
            "back_to_back_ms": s0.elapsed_time(e0) / iters, "iters": iters}


def profile_script_child(out_path: str, argv: list[str], max_calls: int, pin_path: str | None = None,
                         loop_iters: int = 0) -> int:
    """Run ``argv`` (a script and its arguments) in this process as ``python SCRIPT ARGS`` would, under
    one ``torch.profiler.profile(activities=[CPU, CUDA])`` (started at the first call it profiles, so
    the compiles before it run unprofiled), and write the kernels of
    each compiled graph's calls 2 to ``1 + max_calls`` to ``out_path`` as JSON:
    ``{"graphs": {module key: [[[kernel name, ms], ...] per call]}, "externs": {key: [[[ATen op,
    ms, kernels], ...] per call]}, "spans": {key: [GPU span ms per call]}, "calls": {key: calls
    made}, "configs": ..., "pinned": ..., "loops": {key: plain_graph_loop(...)}}``.

    No agent, no stops, no synchronisation: the only change to the script's run is a
    ``torch.cuda._sleep`` marker kernel (``spin_kernel``, ~1 us) on the current stream before and
    after each of those calls, launched by a wrapper on ``CompiledFxGraph.__call__``
    (tracer.adapter.install_graph_call_hook); the kernels between a call's two markers are that
    call's.  The first call of each graph is left alone (autotuning and warm-up run there), as the
    agent does.  Module key: ``CompiledFxGraph.cache_key``, the output module's file name, which
    the session's codegen stop gives as ``output_path``.

    ``externs``: the non-Triton kernels of each call grouped by the outermost ATen op on the CPU
    that launched them (the profiler links each kernel to its op by correlation id), so a library
    call that launches several kernels (cuDNN, cuBLAS split-K) is one entry.  ``pin_path``: JSON
    ``[{"names": [Triton kernel names of one of our graphs], "configs": {name: config}}]``; before
    a graph's first call, its Triton kernels are pinned (tracer.adapter.pin_configs) to the configs
    of our graph with the same kernel names, so both sides run every kernel with one launch config.
    ``loop_iters``: after the script ends (outside the profiler), each graph is called again on the
    inputs of the script's second call and timed by :func:`plain_graph_loop`.
    """
    import runpy  # noqa: PLC0415
    import threading  # noqa: PLC0415

    import torch  # noqa: PLC0415
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

    from inductor_step.tracer import adapter  # noqa: PLC0415

    labels: list[tuple[str | None, int]] = []  # per marker, in launch order: (key, call) opens, (None, call) closes
    calls: dict[str, int] = {}
    lock = threading.Lock()
    state = {"markers": True, "profiling": False}
    pins: list[dict] = []
    if pin_path:
        with open(pin_path, encoding="utf-8") as f:
            pins = json.load(f)
    pinned: dict[str, dict] = {}
    saved: dict[str, tuple[Any, list]] = {}

    def on_call(key: str, inputs: list, run: Any) -> Any:
        n = calls[key] = calls.get(key, 0) + 1
        if n == 1 and pins:
            hit = match_pin(key, pins)
            if hit is not None:
                pinned[key] = hit
        if n == 2 and loop_iters and key not in saved:
            saved[key] = (None, list(inputs))  # graph object filled in by the outer wrapper
        if (not state["markers"] or n == 1 or n > 1 + max_calls or not torch.cuda.is_available()
                or not torch.cuda.is_initialized()):
            return run()
        if not state["profiling"] and threading.current_thread() is threading.main_thread():
            prof.start()  # from the first profiled call on: compiling under a CPU profiler is slow
            state["profiling"] = True
        if not state["profiling"]:
            return run()
        with lock:
            labels.append((key, n))
            torch.cuda._sleep(1000)
        try:
            return run()
        finally:
            with lock:
                labels.append((None, n))
                torch.cuda._sleep(1000)

    adapter.install_graph_call_hook(on_call)
    graphs_by_key: dict[str, Any] = {}
    try:
        from torch._inductor.output_code import CompiledFxGraph  # noqa: PLC0415

        inner = CompiledFxGraph.__call__

        def outer(self: Any, inputs: Any) -> Any:  # remember the graph object, for the plain loop
            key = getattr(self, "cache_key", None)
            if key:
                graphs_by_key.setdefault(key, self)
            return inner(self, inputs)

        CompiledFxGraph.__call__ = outer
    except Exception:  # noqa: BLE001
        pass
    script = argv[0]
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    rc = 0
    # CPU (--dry-run): nothing to attribute, but the plumbing runs
    cuda = torch.cuda.is_available()
    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA] if cuda else [ProfilerActivity.CPU]
    prof = profile(activities=acts)
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    if cuda and torch.cuda.is_initialized():
        torch.cuda.synchronize()
    state["markers"] = False
    events = []
    if state["profiling"]:
        prof.stop()
        events = list(prof.profiler.kineto_results.events())
    roots = adapter.outermost_ops(events)
    kernels = []
    for e in events:
        if e.device_type() != torch.autograd.DeviceType.CUDA:
            continue
        try:
            if e.is_user_annotation():
                continue
        except AttributeError:
            pass
        if _NON_KERNEL.match(e.name()) and MARKER not in e.name():
            continue
        kernels.append((e.start_ns(), e.duration_ns(), e.name(), roots.get(e.linked_correlation_id())))
    kernels.sort(key=lambda k: k[:3])
    graphs: dict[str, list] = {}
    externs: dict[str, list] = {}
    spans: dict[str, list] = {}
    marker = -1
    cur: list | None = None
    ext: list | None = None
    first = last = None
    for start, dur, name, root in kernels:
        if MARKER in name:
            if cur is not None and cur and first is not None:
                spans.setdefault(labels[marker][0], []).append((last - first) / 1e6)
            marker += 1
            cur, ext, first, last = None, None, None, None
            if marker < len(labels) and labels[marker][0] is not None:
                cur, ext = [], []
                graphs.setdefault(labels[marker][0], []).append(cur)
                externs.setdefault(labels[marker][0], []).append(ext)
            continue
        if cur is not None:
            cur.append((name, dur / 1e6))
            first = start if first is None else first
            last = start + dur
            if root is not None and not name.startswith("triton_"):
                if ext and ext[-1][3] == root[0]:
                    ext[-1][1] += dur / 1e6
                    ext[-1][2] += 1
                else:
                    ext.append([root[1], dur / 1e6, 1, root[0]])
    externs = {k: [[e[:3] for e in c] for c in v] for k, v in externs.items()}
    configs = {key: adapter.autotuned_configs(key) for key in calls}  # what each Triton kernel autotuned to here
    loops: dict[str, Any] = {}
    loops_cupti = None
    if loop_iters and cuda:
        from inductor_step.tracer import timing  # noqa: PLC0415

        # the profiler session above leaves CUPTI attached, which slows every later launch (up to 1.3x
        # on a launch-bound graph, benchmarks/profiler_after_effect.py): detach it for the loops, as
        # the agent does for its timing run
        with timing.cupti_detached("cuda") as loops_cupti:
            loop_graphs(saved, graphs_by_key, pinned, loops, loop_iters)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump({"graphs": graphs, "externs": externs, "spans": spans, "calls": calls, "configs": configs,
                   "pinned": {k: v["pinned"] for k, v in pinned.items()}, "loops": loops, "loops_cupti": loops_cupti,
                   "markers_launched": len(labels), "markers_seen": marker + 1, "torch": torch.__version__}, f)
    return rc


def loop_graphs(saved: dict, graphs_by_key: dict, pinned: dict, loops: dict, loop_iters: int) -> None:
    """The plain loops of :func:`profile_script_child`: each graph, then our session's output module."""
    from inductor_step.tracer import adapter  # noqa: PLC0415

    for key, (_, inputs) in saved.items():
        g = graphs_by_key.get(key)
        if g is None:
            continue
        try:
            loops[key] = plain_graph_loop(g, inputs, loop_iters)
        except Exception as e:  # noqa: BLE001 - report it; the profile stands
            loops[key] = {"error": f"{type(e).__name__}: {e}"[:300]}
        ours_path = (pinned.get(key) or {}).get("output_path")
        if ours_path and os.path.exists(ours_path) and "error" not in loops[key]:
            try:  # our session's output module (provenance comments and all), same process, same inputs
                m = adapter.load_output_module(ours_path)
                adapter.pin_configs(m, pinned[key]["configs"])
                loops[key]["ours_module"] = plain_graph_loop(m.call, inputs, loop_iters)
            except Exception as e:  # noqa: BLE001
                loops[key]["ours_module"] = {"error": f"{type(e).__name__}: {e}"[:300]}


def triton_signature(kernels: list) -> tuple:
    """Sorted ``(Triton kernel name, k-th launch)`` pairs: what identifies a graph's calls when its
    module key is not found (a run message's ``kernels`` or one profiled call's ``(name, ms)`` list)."""
    seen: dict[str, int] = {}
    out = []
    for k in kernels:
        name = k["name"] if isinstance(k, dict) else k[0]
        if isinstance(k, dict) and k.get("backend") != "triton":
            continue
        if not name.startswith("triton_"):
            continue
        seen[name] = seen.get(name, 0) + 1
        out.append((name, k.get("call", seen[name]) if isinstance(k, dict) else seen[name]))
    return tuple(sorted(out))


def _phase(ctx: dict, label: str) -> Any:
    """``ctx["clocks"].phase(label)`` (:class:`GpuClocks`) where clocks are sampled, else a no-op."""
    clocks = ctx.get("clocks")
    return clocks.phase(label) if clocks is not None else contextlib.nullcontext()


def compare_script(a: Any, out_dir: str, cuda: bool, ctx: dict) -> dict:
    """``--script``: ours (headless agent, ``--run``) against the profiler in a plain run of the same
    script (:func:`profile_script_child` in a subprocess), graph by graph."""
    argv = a.script
    record = os.path.join(out_dir, "script.jsonl")
    if os.path.exists(record):
        os.remove(record)
    with _phase(ctx, "ours (headless agent, --run)"):
        runs, header, secs = run_ours(argv[1:], record, script=argv[0])
    print(f"  headless run {secs:.1f} s; session {record}; graphs timed: {', '.join(runs) or 'none'}")
    outputs: dict[str, str] = {}
    with open(record, encoding="utf-8") as f:
        for line in f:
            m = protocol.decode(line) or {}  # a packed line gives its message
            if m.get("type") == "stop" and m.get("stage") == "codegen" and m.get("output_path"):
                outputs[f"{m['compile_id']} {m['graph_kind']}"] = m["output_path"]
    prof_json = os.path.join(out_dir, "profile.json")
    cmd = [sys.executable, os.path.abspath(__file__), "--profile-child", prof_json, "--calls", str(a.calls),
           "--loop-iters", str(a.loop_iters)]
    if a.pin_configs:
        cmd += ["--pin-file", write_pins(runs, outputs, os.path.join(out_dir, "pin_configs.json"))]
    cmd += ["--script", *argv]
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), PYTHONUNBUFFERED="1")
    print("$ " + " ".join(cmd[1:]), flush=True)
    t0 = time.perf_counter()
    with _phase(ctx, "plain run (profiled calls, then plain loops)"):
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    print(f"  plain run under torch.profiler: exit {p.returncode}, {time.perf_counter() - t0:.1f} s")
    if p.returncode != 0:
        print("  stderr tail:\n" + p.stderr[-3000:])
    with open(prof_json, encoding="utf-8") as f:
        child = json.load(f)
    print(f"  profiled calls per graph module: {child['calls']}; markers launched {child['markers_launched']}, "
          f"seen on the GPU {child['markers_seen']}; CUPTI for the plain loops: {child.get('loops_cupti')}")
    by_sig = {triton_signature(segs[0]): k for k, segs in child["graphs"].items() if segs}
    msum: dict[str, Any] = {"argv": argv, "graphs": {}}
    for key, run in runs.items():
        mkey = adapter_key(outputs.get(key))
        segs = child["graphs"].get(mkey) if mkey else None
        how = "module key"
        if segs is None and run.get("kernels"):
            alt = by_sig.get(triton_signature(run["kernels"]))
            segs, how = (child["graphs"].get(alt), "Triton kernel names") if alt else (None, "")
        plain_cfg = (child.get("configs") or {}).get(mkey if how == "module key" else alt) or {} if segs else {}
        for k in run.get("kernels") or []:
            if k.get("backend") == "triton" and plain_cfg.get(k["name"]):
                k["plain_config"] = plain_cfg[k["name"]]
        ckey = (mkey if how == "module key" else alt) if segs else None
        gsum = report_graph(key, run, segs or [], None, outputs.get(key), ctx,
                            ext_ops=(child.get("externs") or {}).get(ckey) if ckey else None)
        if gsum is None:
            continue
        if ckey in (child.get("pinned") or {}):
            print(f"  plain run pinned to our configs: {len(child['pinned'][ckey])} Triton kernel(s)")
            gsum["pinned"] = len(child["pinned"][ckey])
        loop = (child.get("loops") or {}).get(ckey) if ckey else None
        if loop and loop.get("error"):
            print(f"  plain loop failed: {loop['error']}")
        elif loop:
            c = run["compiled_ms"]
            print(f"  whole graph, plain loop in the plain run (the graph called again on its second call's inputs, "
                  f"CUDA events, median of {loop['iters']}): L2 flushed {loop['flushed_ms']:.4f} ms "
                  f"({len(loop.get('flushed_rounds_ms') or [])} rounds of {loop.get('round_iters')}, "
                  f"{'stable' if loop.get('flushed_stable') else 'NOT stable'}), L2 warm "
                  f"{loop['per_call_ms']:.4f} ms, back to back {loop['back_to_back_ms']:.4f} ms; ours compiled_ms "
                  f"{c:.4f} ms: {pct(c, loop['flushed_ms']).strip()} against flushed, "
                  f"{pct(c, loop['per_call_ms']).strip()} against warm")
            om = loop.get("ours_module") or {}
            if om.get("flushed_ms"):
                print(f"    our session's output module in the plain run, same inputs: L2 flushed {om['flushed_ms']:.4f} ms "
                      f"({pct(om['flushed_ms'], loop['flushed_ms']).strip()} against the plain run's own module)")
            elif om.get("error"):
                print(f"    our session's output module in the plain run: {om['error']}")
            gsum["plain_loop"] = loop
            ctx.setdefault("whole", []).append((key, c, loop))
            ctx.setdefault("graph_rounds", {})[key] = run.get("graph_rounds") or {}
        span = child["spans"].get(ckey, []) if ckey else []
        if span:
            sp = statistics.median(span)
            print(f"  profiled calls: {len(segs)} (matched by {how}); GPU span per call (first kernel start to "
                  f"last kernel end), median {sp:.4f} ms; ours: in_script_sum_ms {f4(run.get('in_script_sum_ms')).strip()}, "
                  f"compiled_ms {run['compiled_ms']:.4f} (replay, L2 flushed) {pct(run['compiled_ms'], sp).strip()}")
            gsum["span_ms"] = sp
        msum["graphs"][key] = gsum
    return msum


def adapter_key(output_path: str | None) -> str | None:
    """Module key of an output module path (tracer.adapter.output_module_key, without importing torch)."""
    return os.path.splitext(os.path.basename(output_path))[0] if output_path else None


# ----------------------------------------------------------------------------- main

def f4(x: float | None) -> str:
    return f"{x:9.4f}" if x is not None else "        -"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["attention", "pointwise"], choices=list(MODEL_ARGS))
    ap.add_argument("--iters", type=int, default=20, help="profiled iterations (default 20)")
    ap.add_argument("--loop-iters", type=int, default=100, help="plain-loop iterations (default 100)")
    ap.add_argument("--out-dir", default=None, help="where the session files and summary JSON go (default: a temp dir)")
    ap.add_argument("--benchmark-kernel", action="store_true",
                    help="compile in this process with torch._inductor.config.benchmark_kernel=True "
                         "(default: off, as in a user's own program and in the agent)")
    ap.add_argument("--reuse-sessions", metavar="DIR", default=None,
                    help="take our side from DIR/<model>.jsonl where it exists (a session recorded by the same "
                         "headless command, e.g. kept by tests/gpu/test_gpu.py with INDUCTOR_STEP_KEEP_SESSIONS=DIR) "
                         "instead of running it again")
    ap.add_argument("--no-same-replay", action="store_true",
                    help="skip the check of our in-graph events against CUPTI on the same CUDA-graph replays")
    ap.add_argument("--dry-run", action="store_true", help="CPU, tiny sizes: checks the plumbing, numbers meaningless")
    ap.add_argument("--calls", type=int, default=10,
                    help="--script: profile each graph's calls 2 to 1+N in the plain run (default 10, as the agent)")
    ap.add_argument("--no-pin-configs", dest="pin_configs", action="store_false",
                    help="let the reference (the plain run, or the in-process compile) autotune on its own (default: "
                         "its Triton kernels are pinned to the launch configs our run recorded, so both sides time "
                         "the same config)")
    ap.add_argument("--profile-child", metavar="OUT", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--pin-file", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--script", nargs=argparse.REMAINDER, default=None,
                    help="compare on any script instead of the built-in models: --script SCRIPT [ARGS...] (last)")
    a = ap.parse_args()
    if a.profile_child:
        return profile_script_child(a.profile_child, a.script, a.calls, a.pin_file, a.loop_iters)
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
    try:
        import triton  # noqa: PLC0415

        triton_version = triton.__version__
    except ImportError:
        triton_version = None

    print(f"torch {torch.__version__}, triton {triton_version}, python {sys.version.split()[0]}, "
          f"device {torch.cuda.get_device_name() if cuda else 'cpu (dry run)'}")
    print(f"in-process inductor config.benchmark_kernel = {torch._inductor.config.benchmark_kernel}")
    summary: dict[str, Any] = {"torch": torch.__version__, "triton": triton_version,
                               "benchmark_kernel_in_process": bool(torch._inductor.config.benchmark_kernel),
                               "device": torch.cuda.get_device_name() if cuda else "cpu", "models": {}}
    # signed % difference to the profiler, per kind of our time, by group_of
    diffs: dict[str, dict[str, list[float]]] = {"model": {}, "in-script": {}, "in-graph": {}, "events": {}, "warm": {},
                                                 "flushed": {}}
    no_in_graph: list[str] = []  # kernels without in_graph_ms, with the run's in_graph status
    mm_rows: list[str] = []
    src_count: dict[str, int] = {}
    ctx = {"diffs": diffs, "no_in_graph": no_in_graph, "mm_rows": mm_rows, "src_count": src_count, "cuda": cuda,
           "same_replay": not a.no_same_replay, "loop_iters": a.loop_iters,
           "clocks": GpuClocks(os.path.join(out_dir, "gpu_clocks.csv")) if cuda else None}
    pin_state: dict[str, Any] = {"pins": [], "calls": {}}
    if a.pin_configs and not a.script:
        from inductor_step.tracer import adapter  # noqa: PLC0415

        def pin_first(key: str, inputs: list, run: Any) -> Any:
            """Pin each graph compiled here to the launch configs our run used, before its first call."""
            n = pin_state["calls"][key] = pin_state["calls"].get(key, 0) + 1
            if n == 1 and pin_state["pins"]:
                hit = match_pin(key, pin_state["pins"])
                print(f"  in-process graph {key[:12]}...: "
                      + (f"pinned {len(hit['pinned'])} Triton kernel(s) to our configs" if hit else "no graph of ours matched"))
            return run()

        adapter.install_graph_call_hook(pin_first)
    if a.script:
        print(f"\n=== script: {' '.join(a.script)}")
        summary["models"]["script"] = compare_script(a, out_dir, cuda, ctx)
    for model in ([] if a.script else a.models):
        margs = table_args[model]
        print(f"\n=== {model}: {' '.join(margs)}")
        reuse = os.path.join(a.reuse_sessions, f"{model}.jsonl") if a.reuse_sessions else None
        if reuse and os.path.exists(reuse):
            record = reuse
            (runs, header), secs = read_ours(record), 0.0
            print(f"  reusing session {record} (recorded by: python -m inductor_step --headless --run --record ... "
                  f"{' '.join(header.get('argv') or [])})")
        else:
            record = os.path.join(out_dir, f"{model}.jsonl")
            if os.path.exists(record):
                os.remove(record)
            with _phase(ctx, f"{model}: ours (headless agent, --run)"):
                runs, header, secs = run_ours(margs, record)
        print(f"  headless run {secs:.1f} s; session {record} ({os.path.getsize(record) / 1e6:.2f} MB); "
              f"graphs timed: {', '.join(runs) or 'none'}")
        if header.get("settings"):
            print(f"  agent settings: {header['settings']}")
        if header.get("hooks"):
            print(f"  agent hooks: {header['hooks']}")
        outputs: dict[str, str] = {}
        with open(record, encoding="utf-8") as f:
            for line in f:
                m = protocol.decode(line) or {}  # a packed line gives its message
                if m.get("type") == "stop" and m.get("stage") == "codegen" and m.get("output_path"):
                    outputs[f"{m['compile_id']} {m['graph_kind']}"] = m["output_path"]

        if a.pin_configs:
            with open(write_pins(runs, outputs, os.path.join(out_dir, f"{model}_pins.json")), encoding="utf-8") as f:
                pin_state["pins"] = json.load(f)
        phases = cuda_models.build(margs)
        t0 = time.perf_counter()
        with _phase(ctx, f"{model}: in-process compile, profile and plain loops"):
            for _ in range(3):  # compile + warm up
                for _, fn in phases:
                    fn()
            if cuda:
                torch.cuda.synchronize()
            print(f"  in-process compile + 3 warm-up iterations {time.perf_counter() - t0:.1f} s")
            prof = profile_phases(phases, a.iters, cuda)
            from inductor_step.tracer import timing  # noqa: PLC0415

            with timing.cupti_detached("cuda" if cuda else "cpu"):  # as in the agent's run: no profiler after-effect
                loop = plain_loop(phases, a.loop_iters, cuda)
        msum: dict[str, Any] = {"graphs": {}}
        for key, _ in phases:
            gsum = report_graph(key, runs.get(key), prof.get(key) or [], loop.get(key), outputs.get(key), ctx)
            if gsum is None:
                continue
            msum["graphs"][key] = gsum
            run = runs[key]
            if run.get("peak"):
                msum["peak"] = run["peak"]
        if msum.get("peak"):
            pk = msum["peak"]
            print(f"\n  peaks used (our run message): bandwidth {pk.get('bw_gbps')} GB/s ({pk.get('bw_source')})")
            print(f"  TFLOP/s {pk.get('tflops')} ({pk.get('tflops_source')}; fp32 mode: {pk.get('float32_mode')})")

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
            copy_pct = (100 * copy_gbps / peak_bw) if peak_bw else None
            print(f"\n  pointwise x * 2 + y, {n} fp32 elements ({x.nbytes / 1e6:.0f} MB per tensor)")
            print(f"    ours (run message):  {k.get('name')}  flushed {k.get('median_ms', float('nan')):.4f} ms "
                  f"(in-graph {k.get('in_graph_ms')}), gb {k.get('gb')} ({k.get('gb_source')}), "
                  f"{k.get('gbps', float('nan')):.0f} GB/s, {k.get('pct_peak_bw', float('nan')):.1f}% of peak")
            print(f"    compiled fn, do_bench here (bytes 3 x nbytes): {f_ms:.4f} ms, {f_gbps:.0f} GB/s"
                  + (f", {100 * f_gbps / peak_bw:.1f}% of peak" if peak_bw else ""))
            print(f"    y.copy_(x), do_bench here (bytes 2 x nbytes):  {copy_ms:.4f} ms, {copy_gbps:.0f} GB/s"
                  + (f", {copy_pct:.1f}% of peak" if copy_pct else ""))
            if k.get("pct_peak_bw") and copy_pct:
                print(f"    ours % of peak / copy % of peak: {k['pct_peak_bw'] / copy_pct:.3f}")
            msum["pointwise"] = {"ours_gbps": k.get("gbps"), "ours_pct_peak": k.get("pct_peak_bw"), "ours_gb": k.get("gb"),
                                 "ours_gb_source": k.get("gb_source"), "fn_do_bench_ms": f_ms, "fn_gbps": f_gbps,
                                 "copy_ms": copy_ms, "copy_gbps": copy_gbps, "copy_pct_peak": copy_pct}
        summary["models"][model] = msum
        del phases
        if cuda:
            torch.cuda.empty_cache()
    print("\n=== summary")
    for kind, label in (("model", "model (what the pane gives for a kernel inside the model: in_script_ms where the "
                                  "script's calls were profiled, else in_graph_ms)"),
                        ("model, same config", "model, only kernels that autotuned to the same launch config in both "
                                               "runs (or had one config)"),
                        ("in-script", "in-script (in_script_ms: CUPTI over the script's own calls 2-11; Triton kernels, and extern calls cut out between them)"),
                        ("in-graph", "in-graph (in_graph_ms: in a CUDA-graph replay of the whole graph; CUPTI for "
                                     "Triton kernels, events for extern calls)"),
                        ("events", "events (in_graph_events_ms: the timing-event pair around each call in the replay)"),
                        ("warm", "warm (warm_ms: do_bench_cudagraph, kernel alone; only where in-graph failed)"),
                        ("flushed", "flushed (median_ms: do_bench, L2 flushed, kernel alone)")):
        alld = [d for g in diffs.get(kind, {}).values() for d in g]
        if not alld:
            print(f"{label}: none matched")
            continue
        print(f"{label} vs profiler: {sum(abs(d) <= 10 for d in alld)}/{len(alld)} within 10%, "
              f"median |diff| {statistics.median(abs(d) for d in alld):.1f}%")
        for g in GROUPS:
            print(group_line(g, diffs.get(kind, {}).get(g, [])))
    whole = ctx.get("whole") or []
    if whole:
        dfl = [100 * (c - lp["flushed_ms"]) / lp["flushed_ms"] for _, c, lp in whole]
        dw = [100 * (c - lp["per_call_ms"]) / lp["per_call_ms"] for _, c, lp in whole]
        print(f"whole graph, our compiled_ms against a plain loop of the same graph in the plain run: "
              f"{sum(abs(d) <= 10 for d in dfl)}/{len(dfl)} within 10% of the L2-flushed loop "
              f"(diffs {', '.join(f'{d:+.1f}%' for d in dfl)}); {sum(abs(d) <= 10 for d in dw)}/{len(dw)} of the "
              f"L2-warm loop ({', '.join(f'{d:+.1f}%' for d in dw)})")
        summary["whole_graph"] = [{"graph": k, "compiled_ms": c, **lp} for k, c, lp in whole]
        for k, c, lp in whole:
            ours_r = ctx.get("graph_rounds", {}).get(k) or {}
            print(f"    {k}: ours {c:.4f} ms, rounds {'stable' if ours_r.get('rounds_stable') else 'NOT stable'} "
                  f"{[round(x, 3) for x in ours_r.get('compiled_rounds_ms') or []]}; plain loop L2 flushed "
                  f"{lp['flushed_ms']:.4f} ms, rounds {'stable' if lp.get('flushed_stable') else 'NOT stable'} "
                  f"{[round(x, 3) for x in lp.get('flushed_rounds_ms') or []]}")
    clocks = ctx.get("clocks")
    if clocks is not None:
        clocks.stop()
        summary["gpu_clocks"] = clocks.summary()
        print("\n".join(summary["gpu_clocks"]) + f"\n    (samples: {clocks.path})")
    print(f"kernels without in_graph_ms: {len(no_in_graph)}" + "".join(f"\n    {w}" for w in no_in_graph))
    print(f"byte sources of Triton kernels: {src_count}")
    print(f"matmul kernels with TFLOP/s: {len(mm_rows)}" + "".join(f"\n    {m}" for m in mm_rows))
    summary["vs_profiler"] = {kind: {"matched": sum(len(g) for g in d.values()),
                                     "within_10pct": sum(abs(x) <= 10 for g in d.values() for x in g),
                                     "groups": d} for kind, d in diffs.items()}
    summary["no_in_graph"] = no_in_graph
    summary["byte_sources"] = src_count
    summary["matmul"] = mm_rows
    with open(os.path.join(out_dir, "gpu_vs_profiler.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, default=str)
    print(f"summary JSON: {os.path.join(out_dir, 'gpu_vs_profiler.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
