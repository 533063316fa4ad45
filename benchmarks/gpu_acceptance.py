"""The GPU acceptance run: what inductor-step records on real models, checked against references that owe it nothing.

    python benchmarks/gpu_acceptance.py --out DIR [--models nanogpt,hf_gpt2,timm]
        [--modes default,reduce-overhead,max-autotune] [--nanogpt-dir DIR] [--job] [--lanes N]

For each model and mode (benchmarks/acceptance_models.py), two fresh processes on one GPU:
``inductor-step --headless --run --record`` of the training script, and the script's ``--reference`` run,
where inductor-step is never imported.  Then, per model and mode:

* **kernels**: every ``output_code.py`` torch wrote for the recording's own compiles (``TORCH_COMPILE_DEBUG=1``
  set for it: the same process, so max-autotune's choices are the same) is one of our codegen stops with the
  same Triton launches (names, counts) and extern calls, and no codegen stop is left over;
* **eager**: our eager figures summed over the step's graphs against plain eager under ``do_bench``
  (forward + ``loss.backward()``, no compile; the mean of two processes, one before the recording and one
  after: one process's figure moved by 5% from the next's): within 10%;
* **call**: the script's compiled call timed whole (``script_call``: the compiled forward, and the module under
  ``force_eager``) against plain ``do_bench`` of the module's forward without compile and of the compiled
  forward: each within 10%;
* **profiler**: our in-graph Triton kernel times against ``torch.profiler``'s device times of the same
  kernels in the compiled step, summed: within 10% (each kernel's ratio is listed too);
* **roofs**: no kernel over 100% of peak bandwidth or peak TFLOP/s;
* **CUDA graphs**: in a CUDA-graph mode every graph says whether cudagraph trees captured it.

``--autotune-cache DIR`` (max-autotune on one GPU): every process of a case, ours and plain, compiles with
``TORCHINDUCTOR_CACHE_DIR=DIR/<case>`` and only Inductor's autotune caches on (``select_algorithm``'s local
cache of each selection's timings, Triton's ``.best_config`` files; the FX-graph and AOTAutograd caches off by
``TORCHINDUCTOR_FX_GRAPH_CACHE=0``, ``TORCHINDUCTOR_AUTOGRAD_CACHE=0``, the recording with ``--caches on`` so that
the agent leaves the autotune cache on): a user's second run, where both sides make the same choices and no
selection is benchmarked again, while every stage still runs.  ``--phase warm`` fills it: each case's training
script, plain, all cases at once (the compile is serial Triton builds more than GPU time: GPT-2 x8 spent 386 s of
its compile benchmarking 27 selections, 30-42 s each in its backward).  GPT-2 x8 with it: 0 selections benchmarked
by either side, our compile 103.5 s against ~470 s cold, the whole case 293 s (BENCHMARKS.md, "Session 39 on the
GPU"); the template choices are still compiled (precompiled) on each side, only their benchmarking is skipped.

``--job``: ``examples/ddp_train.py`` as a two-GPU torchrun job (``--nproc-per-node 2``): every rank timed every
graph and the ranks compare without a false divergence.  Lanes (``--lanes N``) run side by
side, each on its own GPU (``CUDA_VISIBLE_DEVICES``); one at a time by default, as the ratios need.  Prints a Markdown table (also ``DIR/acceptance.md``,
all figures in ``DIR/acceptance.json``); exits 1 when a check fails.  Results: BENCHMARKS.md, "GPU acceptance".
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import glob
import json
import os
import queue
import re
import statistics
import subprocess
import sys
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "benchmarks", "acceptance_models.py")
TOL = 0.10
BESIDE = False  # --beside
PLAIN_PROCESSES = 1  # --plain-processes
SCALE = 1  # --scale
PHASE = "all"  # --phase
AUTOTUNE_CACHE: str | None = None  # --autotune-cache
_TRITON_DEF = re.compile(r"^(\w+) = async_compile\.triton\(", re.M)
# extern calls: extern_kernels.mm(...), and ATen fallbacks called directly (torch.ops.aten.convolution_backward...)
_EXTERN = re.compile(r"^\s*(?:\w+ = )?(?:extern_kernels\.\w+|(?:torch\.ops|aten)\.[\w.]+)\(", re.M)


def _read(path: str) -> list[dict[str, Any]]:
    from inductor_step.session.format import read_session  # noqa: PLC0415

    return list(read_session(path))


def code_launches(code: str) -> tuple[dict[str, int], int]:
    """``({triton kernel: launches}, extern calls)`` in one output code (torch's text, parsed here alone); extern
    calls are ``extern_kernels.*`` and the ATen fallbacks the wrapper calls directly (``torch.ops.aten.*``)."""
    names = _TRITON_DEF.findall(code)
    launches = {n: len(re.findall(rf"\b{re.escape(n)}\.run\(", code)) for n in names}
    return {n: c for n, c in launches.items() if c}, len(_EXTERN.findall(code))


def our_launches(stop: dict[str, Any]) -> tuple[dict[str, int], int]:
    """The same counts from our codegen stop's kernel list."""
    triton: dict[str, int] = {}
    extern = 0
    for k in stop.get("kernels") or []:
        n = len(k.get("calls") or []) or 1
        if k.get("backend") == "triton":
            triton[k["name"]] = triton.get(k["name"], 0) + n
        elif k.get("backend") == "extern" or str(k.get("name", "")).startswith("extern_kernels."):
            extern += n
    return triton, extern


def check_kernels(msgs: list[dict[str, Any]], codes: list[str]) -> dict[str, Any]:
    """Every torch output code matched by one codegen stop with equal launches; none of ours left over."""
    ours = {f"{m['compile_id']} {m['graph_kind']}": our_launches(m) for m in msgs
            if m.get("type") == "stop" and m.get("stage") == "codegen"}
    free = dict(ours)
    problems, matched = [], 0
    for i, code in enumerate(codes):
        ref = code_launches(code)
        hit = next((k for k, v in free.items() if v[0] == ref[0] and v[1] == ref[1]), None)
        if hit is None:
            near = next((k for k, v in free.items() if set(v[0]) == set(ref[0])), None)
            problems.append(f"torch's output code #{i} ({sum(ref[0].values())} Triton launches, {ref[1]} extern) "
                            + (f"differs from {near}: ours {free[near]}, torch's {ref}" if near else "has no codegen stop"))
            continue
        matched += 1
        free.pop(hit)
    problems += [f"{k}: a codegen stop with no output code of torch's" for k in free]
    return {"ok": not problems and matched == len(codes), "codes": len(codes), "matched": matched, "problems": problems}


Before = "dict[str, Any] | list[dict[str, Any]] | None"


def _plains(ref: dict[str, Any], before: Any) -> list[dict[str, Any]]:
    """The reference processes: ``ref`` (after the recording) and the plain-only ones before it (one or a list)."""
    return [ref] + ([before] if isinstance(before, dict) else list(before or []))


def _runs_spread(ref: dict[str, Any], before: Before, key: str) -> tuple[list[float], float]:
    """Every plain ``do_bench`` run under ``key`` of all reference processes, and their spread ((max - min) / min)."""
    every = [x for d in _plains(ref, before) for x in d.get(key) or []]
    return every, (max(every) - min(every)) / min(every) if every else 0.0


def check_eager(runs: list[dict[str, Any]], ref: dict[str, Any], before: Before = None) -> dict[str, Any]:
    """Our eager figures summed over the step's graphs against plain eager's forward + backward (``ref``, and
    ``before``: a plain-only reference taken before the recording, in a process of its own)."""
    ours = [r.get("eager_ms") for r in runs]
    if not runs or any(v is None for v in ours):
        why = "; ".join(f"{r['compile_id']} {r['graph_kind']}: {r.get('eager_error') or r.get('eager_note')}"
                        for r in runs if r.get("eager_ms") is None)
        return {"ok": False, "why": f"no eager figure: {why or 'no run message'}"}
    total = sum(ours)
    # plain eager measured in two processes or more (before our recording and after it): their mean is the reference
    plain = [d["eager_step_ms"] for d in _plains(ref, before)]
    ratio = total / statistics.mean(plain)
    fwd = sum(r["eager_ms"] for r in runs if not str(r["graph_kind"]).startswith("backward"))
    # every do_bench run of the plain step (three per process): where they spread over more than the tolerance, the
    # reference cannot judge a figure at 10% (HF GPT-2's Python-heavy eager step read 4.77-7.04 ms on one H200)
    every, spread = _runs_spread(ref, before, "eager_step_runs_ms")
    unstable = spread > TOL
    return {"ok": abs(ratio - 1) <= TOL and not unstable, "ours_ms": total,
            "plain_spread": round(spread, 3), "plain_range_ms": [round(min(every), 3), round(max(every), 3)] if every else None,
            **({"why": f"plain reference unstable: its do_bench runs spread {spread:.0%} ({min(every):.3f}-{max(every):.3f} "
                       f"ms), ours {total:.3f} ms, ratio to their mean {ratio:.3f}, within 10% of "
                       f"{sum(abs(total / x - 1) <= TOL for x in plain)} of {len(plain)} plain processes' medians "
                       f"{[round(x, 3) for x in plain]}"} if unstable else {}), "plain_ms": statistics.mean(plain), "plain_runs_ms": [round(x, 3) for x in plain],
            "ratio": ratio, "plain_fwd_ms": ref["eager_fwd_ms"], "ours_fwd_ms": fwd,
            # where plain's processes disagree: is ours within 10% of any one of them (descriptive, not the check)
            "near_a_plain_process": any(abs(total / x - 1) <= TOL for x in plain),
            "per_graph_ms": {f"{r['compile_id']} {r['graph_kind']}": r["eager_ms"] for r in runs},
            "eager_how": sorted({str(r.get("eager_how"))[:160] for r in runs}),
            "compiled_ms": sum(r.get("compiled_ms") or 0 for r in runs),
            "plain_compiled_step_ms": ref.get("compiled_step_ms")}


def check_call(runs: list[dict[str, Any]], ref: dict[str, Any], before: Before = None) -> dict[str, Any]:
    """The script's call timed whole (a run's ``script_call``: the compiled module's forward, and the module
    itself under ``force_eager``) against plain ``do_bench`` of the same forward: eager against the module
    without compile (``eager_fwd_ms``, the mean of the two processes), compiled against the compiled forward
    (``compiled_fwd_ms``), each within 10%.  Both sides time the module's call alone: timm's loss, outside its
    module, is in plain's ``*_fwd_loss_ms`` figures only (references before session 39 timed it in
    ``*_fwd_ms``)."""
    figs = {}
    for r in runs:
        f = r.get("script_call") or {}
        if f:
            figs.setdefault(tuple(f.get("graphs") or ()), f)
    timed = [f for f in figs.values() if isinstance(f.get("compiled_ms"), (int, float))]
    if not timed:
        return {"ok": False, "why": "no script_call figure: " + "; ".join(str(f.get("missing")) for f in figs.values())}
    eager = sum(f.get("eager_ms") or 0 for f in timed)
    compiled = sum(f["compiled_ms"] for f in timed)
    plain = statistics.mean([d["eager_fwd_ms"] for d in _plains(ref, before)])
    _every, spread = _runs_spread(ref, before, "eager_fwd_runs_ms")
    out = {"ours_eager_ms": eager, "plain_eager_ms": plain, "eager_ratio": eager / plain, "plain_spread": round(spread, 3),
           "ours_compiled_ms": compiled, "plain_compiled_ms": ref.get("compiled_fwd_ms"),
           "compiled_ratio": compiled / ref["compiled_fwd_ms"] if ref.get("compiled_fwd_ms") else None,
           "names": sorted({f.get("name") for f in timed}),
           "verdicts": [{k: v.get("reliable") for k, v in (f.get("verdicts") or {}).items()} for f in timed]}
    cruns = [x for x in ref.get("compiled_fwd_runs_ms") or [] if x]
    cspread = (max(cruns) - min(cruns)) / min(cruns) if cruns else 0.0
    out["plain_compiled_runs_ms"] = [round(x, 3) for x in cruns]
    if ref.get("compiled_fwd_loss_runs_ms"):  # timm: the call with its loss after it, for comparison only
        out["plain_compiled_with_loss_runs_ms"] = [round(x, 3) for x in ref["compiled_fwd_loss_runs_ms"]]
    out["ok"] = (abs(out["eager_ratio"] - 1) <= TOL and out["compiled_ratio"] is not None
                 and abs(out["compiled_ratio"] - 1) <= TOL and spread <= TOL and cspread <= TOL)
    if spread > TOL:
        out["why"] = f"plain forward reference unstable: its do_bench runs spread {spread:.0%}"
    elif cspread > TOL:  # a launch-bound compiled forward (timm x8: ~2 ms of ~70 launches) reads the host's speed
        near = min(cruns, key=lambda x: abs(compiled / x - 1))
        out["why"] = (f"plain compiled forward unstable: its do_bench runs spread {cspread:.0%} "
                      f"({min(cruns):.3f}-{max(cruns):.3f} ms); ours {compiled:.3f} is {compiled / near:.3f} of the "
                      "nearest")
    return out


def check_profiler(runs: list[dict[str, Any]], ref: dict[str, Any]) -> dict[str, Any]:
    """Our in-graph Triton times against the profiler's medians of the same kernel names."""
    prof = {n: statistics.median(v) / 1000 for n, v in ref["profiler_us"].items() if v}
    rows, ours_sum, prof_sum = [], 0.0, 0.0
    for r in runs:
        for k in r.get("kernels") or []:
            name = k.get("name", "")
            if k.get("backend") != "triton" or k.get("in_graph_ms") is None or name not in prof:
                continue
            ours_sum += k["in_graph_ms"]
            prof_sum += prof[name]
            rows.append((name, k["in_graph_ms"], prof[name], k["in_graph_ms"] / prof[name]))
    if not rows:
        return {"ok": False, "why": "no Triton kernel with an in-graph time matched the profiler's names"}
    within = sum(1 for r in rows if abs(r[3] - 1) <= TOL)
    big = [r for r in rows if r[2] >= 0.005]
    return {"ok": abs(ours_sum / prof_sum - 1) <= TOL, "ratio": ours_sum / prof_sum, "kernels": len(rows),
            "within_10pct": within, "big_within_10pct": sum(1 for r in big if abs(r[3] - 1) <= TOL), "big": len(big),
            "worst": sorted(rows, key=lambda r: -abs(r[3] - 1))[:3]}


def check_roofs(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """No kernel over the ceilings it cannot pass: the driver's DRAM bandwidth (``bw_datasheet_gbps``) and the
    matmul peak.  Over the measured copy (``pct_peak_bw`` > 100) but under the driver's figure is listed, not a
    failure: on an H200 a 2-reads-1-write add ran at 104% of ``copy_`` (BENCHMARKS.md, 'Session 37 on the GPU')."""
    over, above_copy = [], []
    for r in runs:
        sheet = (r.get("peak") or {}).get("bw_datasheet_gbps")
        for k in r.get("kernels") or []:
            where = f"{r['compile_id']} {r['graph_kind']} {k.get('name')}"
            if (k.get("pct_peak_tflops") or 0) > 100:
                over.append(f"{where}: {k['pct_peak_tflops']:.0f}% of pct_peak_tflops")
            if (k.get("pct_peak_bw") or 0) > 100:
                gbps = k.get("gbps") or 0
                if sheet and gbps <= sheet:
                    above_copy.append(f"{where}: {k['pct_peak_bw']:.0f}% of the copy, {100 * gbps / sheet:.0f}% of "
                                      f"the driver's {sheet:.0f} GB/s")
                else:
                    over.append(f"{where}: {k['pct_peak_bw']:.0f}% of pct_peak_bw" + (f", over the driver's {sheet:.0f} GB/s" if sheet else ""))
    return {"ok": not over, "over": over, "above_copy": above_copy}


def check_cudagraphs(runs: list[dict[str, Any]], mode: str) -> dict[str, Any]:
    """In a CUDA-graph mode: each graph's verdict (captured / partitioned / skipped with torch's reason)."""
    if mode not in ("reduce-overhead", "max-autotune"):
        return {"ok": True, "n/a": True}
    how = {f"{r['compile_id']} {r['graph_kind']}": (r.get("cudagraphs") or {}) for r in runs}
    missing = [k for k, v in how.items() if not v.get("enabled") or ("captured" not in v and not v.get("skipped"))]
    return {"ok": not missing and bool(how), "graphs": {k: v.get("how") or v.get("skipped") for k, v in how.items()},
            "missing": missing}


def cache_env(case: str) -> dict[str, str]:
    """The environment that gives a case's processes ``--autotune-cache``'s warm autotune cache and no other
    cache (empty without ``--autotune-cache``)."""
    if not AUTOTUNE_CACHE:
        return {}
    return {"TORCHINDUCTOR_CACHE_DIR": os.path.join(os.path.abspath(AUTOTUNE_CACHE), case),
            "TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_CACHE": "0"}


def _keep(proc: "subprocess.CompletedProcess[str]", path: str) -> "subprocess.CompletedProcess[str]":
    """Write a finished reference process's output to ``path`` (torch's autotune lines among it); ``proc``."""
    if proc.stdout or proc.stderr:
        with open(path, "w", encoding="utf-8") as f:
            f.write((proc.stdout or "") + (proc.stderr or ""))
    return proc


def autotune_log(path: str) -> dict[str, Any]:
    """What torch's log in ``path`` says was benchmarked: ``{"selections", "seconds"}`` summed over its
    "SingleProcess AUTOTUNE benchmarking takes S seconds" lines (printed only for a selection benchmarked in that
    process, not for one read from the autotune cache)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            secs = [float(x) for x in re.findall(r"AUTOTUNE benchmarking takes ([\d.]+) seconds", f.read())]
    except OSError:
        return {"selections": None, "seconds": None}
    return {"selections": len(secs), "seconds": round(sum(secs), 1)}


def warm(cases: list[tuple[str, str]], out: str, nanogpt_dir: str | None, timeout_s: float) -> list[dict[str, Any]]:
    """``--phase warm``: each case's training script run plain (``--steps 1``: its forward and backward compiled
    once), every case at the same time, into its own ``--autotune-cache`` folder, each killed after ``timeout_s``
    seconds (the selections it benchmarked by then stay cached); per case the seconds it took, its exit status,
    and what it benchmarked (:func:`autotune_log`)."""
    extra = (["--nanogpt-dir", nanogpt_dir] if nanogpt_dir else []) + (["--scale", str(SCALE)] if SCALE != 1 else [])
    procs, t0 = {}, time.time()
    for model, mode in cases:
        case = f"{model}_{mode}" + (f"_x{SCALE}" if SCALE != 1 else "")
        log = open(os.path.join(out, case + ".warm.log"), "w", encoding="utf-8")  # noqa: SIM115 - closed below
        procs[case] = (subprocess.Popen([sys.executable, MODELS, model, "--mode", mode, "--steps", "1", *extra],
                                        env=dict(os.environ, PYTHONUNBUFFERED="1", **cache_env(case)),
                                        stdout=log, stderr=subprocess.STDOUT, text=True), log, model, mode)
    res = []
    for case, (p, log, model, mode) in procs.items():
        try:
            rc = p.wait(timeout=max(t0 + timeout_s - time.time(), 1))
        except subprocess.TimeoutExpired:
            p.kill()
            rc = f"killed after {timeout_s:.0f} s"
            p.wait()
        log.close()
        res.append({"model": model, "mode": mode, "scale": SCALE, "phase": "warm", "warm_rc": rc,
                    "warm_s": round(time.time() - t0, 1), "cache": cache_env(case)["TORCHINDUCTOR_CACHE_DIR"],
                    "benchmarked": autotune_log(os.path.join(out, case + ".warm.log"))})
        print(json.dumps(res[-1]), flush=True)
    return res


def run_case(model: str, mode: str, out: str, slots: "queue.Queue[int]", lanes: int, nanogpt_dir: str | None) -> dict[str, Any]:
    """Record and reference one model in one mode on a GPU of its own (a slot taken from ``slots`` for the
    case, its processes pinned to that lane's share of the CPU cores, so that another lane's compile does not
    slow this lane's launch-bound eager timings); the checks' results."""
    slot = slots.get()
    try:
        return _run_case(model, mode, out, slot, lanes, nanogpt_dir)
    finally:
        slots.put(slot)


def siblings(cpu: int) -> frozenset[int]:
    """The logical CPUs sharing ``cpu``'s physical core (``/sys/devices/system/cpu/cpuN/topology/thread_siblings_list``,
    "0,16" or "0-1"); ``{cpu}`` where that is not readable."""
    try:
        with open(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list", encoding="ascii") as f:
            text = f.read().strip()
    except OSError:
        return frozenset({cpu})
    out: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return frozenset(out & set(os.sched_getaffinity(0))) or frozenset({cpu})


def lane_cores(cores: list[int], parts: int, slot: int) -> set[int]:
    """Lane ``slot``'s share of ``cores`` when split into ``parts``, by whole physical cores (both hyperthreads of a
    core in one lane): a lane beside a compiling lane on the sibling hyperthreads runs its host-bound eager steps
    slower, and its plain references did read 14-66% apart between processes that way."""
    groups = sorted({siblings(c) for c in cores}, key=min)
    share = max(len(groups) // parts, 1)
    mine = {c for g in groups[slot * share:(slot + 1) * share] for c in g}
    return mine or set(cores)


def _run_case(model: str, mode: str, out: str, slot: int, lanes: int, nanogpt_dir: str | None) -> dict[str, Any]:
    cores = sorted(os.sched_getaffinity(0))
    visible = [v for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    beside = BESIDE and len(visible) >= 2
    mine = lane_cores(cores, 2 if beside else lanes, slot)
    env = dict(os.environ, PYTHONUNBUFFERED="1", CUDA_VISIBLE_DEVICES=visible[slot] if slot < len(visible) else str(slot),
               TORCHINDUCTOR_COMPILE_THREADS=str(len(mine) if beside else max(len(mine) // 2, 1)))
    pin = {"preexec_fn": lambda: os.sched_setaffinity(0, mine)}
    case = f"{model}_{mode}" + (f"_x{SCALE}" if SCALE != 1 else "")
    env.update(cache_env(case))
    base = os.path.join(out, case)
    extra = (["--nanogpt-dir", nanogpt_dir] if nanogpt_dir else []) + (["--scale", str(SCALE)] if SCALE != 1 else [])
    plain_cmds = [[sys.executable, MODELS, model, "--mode", mode, "--reference", base + f".plain{i or ''}.json",
                   "--plain-only", *extra] for i in range(PLAIN_PROCESSES)]
    ref_cmd = [sys.executable, MODELS, model, "--mode", mode, "--reference", base + ".ref.json", *extra]
    # --beside: the references run at the same time as the recording, on the other GPU and the other half of the
    # cores (a max-autotune compile is ~6 minutes on each side; one after the other they outlast a 10-minute call)
    if PHASE == "reference":  # the references alone (a later call records, or recorded before)
        ref = subprocess.run(ref_cmd, env=env, capture_output=True, text=True, timeout=900, **pin)
        _keep(ref, base + ".ref.log")
        return {"model": model, "mode": mode, "scale": SCALE, "phase": PHASE, "reference_rc": ref.returncode,
                "benchmarked_in_reference": autotune_log(base + ".ref.log"),
                "error": None if ref.returncode == 0 else (ref.stderr or ref.stdout).strip().splitlines()[-1:]}
    if PHASE == "check":  # every process ran in earlier calls: the checks over the files in --out
        beside = False
    elif beside:
        other = set(cores) - mine or set(cores)
        benv = dict(env, CUDA_VISIBLE_DEVICES=visible[(slot + 1) % len(visible)])
        bpin = {"preexec_fn": lambda: os.sched_setaffinity(0, other)}
        side = cf.ThreadPoolExecutor(1).submit(lambda: ([subprocess.run(c, env=benv, capture_output=True, text=True,
                                                                        timeout=300, **bpin) for c in plain_cmds],
                                                        subprocess.run(ref_cmd, env=benv, capture_output=True, text=True,
                                                                       timeout=900, **bpin))[1])
    elif PHASE != "check":
        for c in plain_cmds:
            subprocess.run(c, env=env, capture_output=True, text=True, timeout=300, **pin)
    t0 = time.time()
    debug = base + ".torch_compile_debug"
    if PHASE == "check":
        rec = subprocess.CompletedProcess([], 0 if os.path.exists(base + ".jsonl") else 1)
    else:
        with open(base + ".log", "w", encoding="utf-8") as log:  # written as it goes: a case cut short shows how far
            rec = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--run",
                                  *(["--caches", "on"] if AUTOTUNE_CACHE else []), "--record",
                                  base + ".jsonl", MODELS, model, "--mode", mode, *extra],
                                 env=dict(env, TORCH_COMPILE_DEBUG="1", TORCH_COMPILE_DEBUG_DIR=debug),
                                 stdout=log, stderr=subprocess.STDOUT, text=True, timeout=900, **pin)
    t1 = time.time()
    if PHASE == "record":  # the references in a later call (--phase reference), the checks after (--phase check)
        return {"model": model, "mode": mode, "scale": SCALE, "phase": PHASE, "record_s": round(t1 - t0, 1),
                "record_rc": rec.returncode}
    ref = (side.result() if beside else subprocess.CompletedProcess([], 0) if PHASE == "check"
           else _keep(subprocess.run(ref_cmd, env=env, capture_output=True, text=True, timeout=900, **pin),
                      base + ".ref.log"))
    res: dict[str, Any] = {"model": model, "mode": mode, "scale": SCALE, "record_s": round(t1 - t0, 1),
                           "reference_s": round(time.time() - t1, 1), "record_rc": rec.returncode,
                           "autotune_cache": env.get("TORCHINDUCTOR_CACHE_DIR") if AUTOTUNE_CACHE else None,
                           "benchmarked_in_recording": autotune_log(base + ".log"),
                           "benchmarked_in_reference": autotune_log(base + ".ref.log")}
    if ref.returncode != 0 or not os.path.exists(base + ".ref.json"):
        res["error"] = f"reference failed: {(ref.stderr or ref.stdout or 'no ' + base + '.ref.json').strip().splitlines()[-1:]}"
        return res
    with open(base + ".ref.json", encoding="utf-8") as f:
        refd = json.load(f)
    msgs = _read(base + ".jsonl") if os.path.exists(base + ".jsonl") else []
    runs = [m for m in msgs if m.get("type") == "run" and not m.get("variant")]
    res["run_errors"] = [f"{r['compile_id']} {r['graph_kind']}: {r['error']}" for r in runs if r.get("error")]
    codes = [open(p, encoding="utf-8").read()
             for p in sorted(glob.glob(os.path.join(debug, "**", "output_code.py"), recursive=True))]
    res["kernels"] = check_kernels(msgs, codes)
    ok_runs = [r for r in runs if not r.get("error")]
    before = []
    for path in sorted(glob.glob(base + ".plain*.json")):
        with open(path, encoding="utf-8") as f:
            before.append(json.load(f))
    res["eager"] = check_eager(ok_runs, refd, before)
    res["call"] = check_call(ok_runs, refd, before)
    res["profiler"] = check_profiler(ok_runs, refd)
    res["roofs"] = check_roofs(ok_runs)
    res["cudagraphs"] = check_cudagraphs(ok_runs, mode)
    # each graph after the first is timed with CUPTI detached (the worker's in-graph profiling of the graph before)
    res["cupti"] = {f"{r['compile_id']} {r['graph_kind']}": r.get("cupti") for r in ok_runs}
    res["ok"] = (rec.returncode == 0 and not res["run_errors"]
                 and all(res[c]["ok"] for c in ("kernels", "eager", "call", "profiler", "roofs", "cudagraphs")))
    return res


def run_job(out: str) -> dict[str, Any]:
    """examples/ddp_train.py on two GPUs: every rank's run messages without an error, the ranks compared."""
    rec = os.path.join(out, "ddp.jsonl")
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--run", "--nproc-per-node", "2",
                        "--record", rec, os.path.join(ROOT, "examples", "ddp_train.py")],
                       capture_output=True, text=True, timeout=900, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    with open(os.path.join(out, "ddp.log"), "w", encoding="utf-8") as f:
        f.write(p.stdout + p.stderr)
    ranks: dict[int, dict[str, Any]] = {}
    for r in (0, 1):
        path = os.path.join(out, f"ddp.rank{r}.jsonl")
        runs = [m for m in _read(path) if m.get("type") == "run"] if os.path.exists(path) else []
        ranks[r] = {"timed": sum(1 for m in runs if m.get("compiled_ms") is not None),
                    "failed": [f"{m['compile_id']} {m['graph_kind']}: {m['error']}" for m in runs if m.get("error")]}
    diverge = [ln for ln in p.stdout.splitlines() if "diverge" in ln]
    ok = p.returncode == 0 and all(v["timed"] and not v["failed"] for v in ranks.values())
    return {"ok": ok, "rc": p.returncode, "ranks": ranks, "diverge_lines": diverge[:5]}


def _cell(c: dict[str, Any], fmt: str) -> str:
    if c.get("n/a"):
        return "n/a"
    if c.get("why") and "unstable" in c["why"]:
        return f"UNJUDGED {c['why']}"
    mark = "ok" if c.get("ok") else "FAIL"
    try:
        return f"{mark} " + fmt.format(**c)
    except (KeyError, ValueError, TypeError):
        return f"{mark} {c.get('why') or c.get('problems') or c.get('missing') or c.get('over') or ''}"[:160]


def table(results: list[dict[str, Any]]) -> str:
    """The Markdown table BENCHMARKS.md gets."""
    head = ("| model | mode | kernels (torch's codes matched) | eager: ours / plain do_bench | script's call: eager, "
            "compiled: ours / plain do_bench | in-graph / profiler (Triton, summed) | roofs | CUDA graphs |\n"
            "|---|---|---|---|---|---|---|---|")
    rows = []
    for r in results:
        if r.get("error"):
            rows.append(f"| {r['model']} | {r['mode']} | {r['error']} | | | | | |")
            continue
        rows.append("| " + " | ".join([
            r["model"] + (f" (batch x{r['scale']})" if r.get("scale", 1) != 1 else ""), r["mode"],
            _cell(r["kernels"], "{matched}/{codes}"),
            _cell(r["eager"], "{ours_ms:.4f} / {plain_ms:.4f} ms = {ratio:.3f} (plain {plain_runs_ms})"),
            _cell(r.get("call") or {"n/a": True}, "{ours_eager_ms:.4f} / {plain_eager_ms:.4f} = {eager_ratio:.3f}; "
                                                  "{ours_compiled_ms:.4f} / {plain_compiled_ms:.4f} = {compiled_ratio:.3f}"),
            _cell(r["profiler"], "{ratio:.3f} over {kernels} kernels ({within_10pct} within 10%)"),
            _cell(r["roofs"], "none over the driver's peak" + (f"; {len(r['roofs'].get('above_copy') or [])} over the "
                                                               "measured copy" if r["roofs"].get("above_copy") else "")),
            _cell(r["cudagraphs"], "{graphs}")[:120]]) + " |")
    return head + "\n" + "\n".join(rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--models", default="nanogpt,hf_gpt2,timm")
    p.add_argument("--modes", default="default,reduce-overhead,max-autotune")
    p.add_argument("--nanogpt-dir", default=os.environ.get("NANOGPT_DIR"))
    p.add_argument("--job", action="store_true", help="also the two-GPU DDP job (needs 2 GPUs)")
    p.add_argument("--lanes", type=int, default=1,
                   help="cases run side by side, one GPU and a share of the cores each (default 1: one case at a "
                        "time, the machine to itself; beside another lane's max-autotune compile, plain eager's own "
                        "runs spread 14-61%%, BENCHMARKS.md 'Session 35 on the GPU')")
    p.add_argument("--beside", action="store_true",
                   help="run each case's plain references at the same time as its recording, on the next GPU and the "
                        "other cores (two GPUs, one lane): for max-autotune, whose compile runs ~6 min on each side")
    p.add_argument("--plain-processes", type=int, default=1,
                   help="plain-only reference processes before each recording (default 1; each ~15 s): where plain "
                        "eager reads apart between processes (GPT-2, timm: 14-66%%), more of them show its modes")
    p.add_argument("--autotune-cache", metavar="DIR",
                   help="compile every process of a case with DIR/<case> as Inductor's cache dir and only its "
                        "autotune caches on (--phase warm fills it): max-autotune's choices read, not benchmarked")
    p.add_argument("--warm-timeout", type=float, default=900, help="--phase warm: seconds before a case is killed")
    p.add_argument("--phase", choices=["all", "record", "reference", "check", "warm"], default="all",
                   help="one GPU and a max-autotune case (a ~6 min compile on each side) outlast a 10-minute call: the "
                        "plain references and the recording in one call (record), the compiled reference in the next "
                        "(reference), the checks over the files anywhere after (check: no GPU needed); warm: fill "
                        "--autotune-cache, every case at once")
    p.add_argument("--scale", type=int, default=1,
                   help="batch multiplier for every model (8: a step bound by the GPU, not by the host's Python, "
                        "whose speed on the device machine varies 30-70%% between do_bench runs)")
    a = p.parse_args()
    global BESIDE, PLAIN_PROCESSES, SCALE, PHASE, AUTOTUNE_CACHE
    BESIDE, PLAIN_PROCESSES, SCALE, PHASE = a.beside, max(a.plain_processes, 1), max(a.scale, 1), a.phase
    AUTOTUNE_CACHE = a.autotune_cache
    if PHASE == "warm" and not AUTOTUNE_CACHE:
        p.error("--phase warm needs --autotune-cache DIR")
    os.makedirs(a.out, exist_ok=True)
    import torch  # noqa: PLC0415

    gpus = torch.cuda.device_count()
    lanes = max(min(a.lanes, gpus), 1) if gpus else 1
    cases = [(m, mode) for m in a.models.split(",") if m for mode in a.modes.split(",") if mode]
    if PHASE == "warm":
        res = warm(cases, a.out, a.nanogpt_dir, a.warm_timeout)
        sys.exit(0 if all(r["warm_rc"] == 0 for r in res) else 1)
    results: list[dict[str, Any]] = []
    slots: queue.Queue[int] = queue.Queue()
    for i in range(lanes):
        slots.put(i % max(gpus, 1))
    with cf.ThreadPoolExecutor(lanes) as pool:
        futs = {pool.submit(run_case, m, mode, a.out, slots, lanes, a.nanogpt_dir): (m, mode) for m, mode in cases}
        for f in cf.as_completed(futs):
            try:
                results.append(f.result())
            except Exception as e:  # noqa: BLE001 - one case's failure is a row, not the end of the run
                m, mode = futs[f]
                results.append({"model": m, "mode": mode, "error": f"{type(e).__name__}: {e}"})
            print(json.dumps(results[-1], default=str)[:600], flush=True)
    results.sort(key=lambda r: cases.index((r["model"], r["mode"])))
    job = run_job(a.out) if a.job and gpus >= 2 else None
    cores = sorted(os.sched_getaffinity(0))
    smt = sorted({tuple(sorted(siblings(c))) for c in cores})
    md = (f"{torch.cuda.get_device_name(0) if gpus else 'no GPU'} x{gpus}, torch {torch.__version__}, "
          f"Triton {__import__('triton').__version__}; {len(cores)} CPUs in {len(smt)} physical cores "
          f"(hyperthread pairs: {[p for p in smt if len(p) > 1][:4]})\n\n" + table(results))
    if AUTOTUNE_CACHE:
        md += ("\n\nAutotune cache (--autotune-cache " + AUTOTUNE_CACHE + ", FX-graph and AOTAutograd caches off): "
               + "; ".join(f"{r['model']} {r['mode']}: the recording benchmarked "
                           f"{(r.get('benchmarked_in_recording') or {}).get('selections')} selection(s) itself"
                           for r in results if "benchmarked_in_recording" in r))
    if job is not None:
        md += (f"\n\nTwo-GPU DDP job (examples/ddp_train.py): {'ok' if job['ok'] else 'FAIL'}; "
               + "; ".join(f"rank {r}: {v['timed']} graphs timed, {len(v['failed'])} failed" for r, v in job["ranks"].items())
               + (f"; {job['diverge_lines']}" if job["diverge_lines"] else ""))
    print(md)
    with open(os.path.join(a.out, "acceptance.md"), "w", encoding="utf-8") as f:
        f.write(md + "\n")
    with open(os.path.join(a.out, "acceptance.json"), "w", encoding="utf-8") as f:
        json.dump({"results": results, "job": job, "cpus": cores, "smt": smt}, f, default=str)
    sys.exit(0 if all(r.get("ok") for r in results) and (job is None or job["ok"]) else 1)


if __name__ == "__main__":
    main()
