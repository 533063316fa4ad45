"""Run and time a compiled graph and each of its kernels (the `run` stage).

Times are medians in ms: on CPU from Inductor's own benchmarker
(``torch._inductor.runtime.benchmarking.benchmarker.benchmark_cpu`` runs the calls; median and
20-80% spread of their wall-clock times, :func:`cpu_quantiles`); on GPU from ``triton.testing.do_bench`` (CUDA events, L2 flushed before each run) with
quantiles 0.5/0.2/0.8, so the spread is reported too.  (Inductor's ``benchmark_gpu`` returns the
minimum, which is why it is not used here.)  The compiled graph is Inductor's output-code module
``call(args)``; "eager" is Dynamo's graph, what the script runs without torch.compile
(:mod:`tracer.timing.eager_user`), and the post-grad ATen graph run op by op by torch.fx on the same
inputs is a third figure, ``decomposed_ms``; kernels are timed one at a time on the arguments they received in one recorded ``call``.
Inputs come from the output module's own ``get_args()`` (random tensors of the compiled shapes),
except integer tensors (indices, masks), which are the script's own from its first call of the graph
when it made one (random indices can send a gather or scatter out of bounds).  On CUDA the script's
own calls 2-11 of each graph can also be profiled as they happen (:func:`script_times`).
"""

from __future__ import annotations

import contextlib
import io
import os
import threading
from typing import Any, Callable

import torch

from inductor_step.tracer import adapter
from inductor_step.tracer.codeparse import parse_wrapper, subgraph_functions
from inductor_step.tracer.timing.subgraphs import split_by_subgraph, watch_subgraphs
from inductor_step.tracer.timing.collectives import collective_entry, collectives_summary
from inductor_step.tracer.timing.eager_nodes import EAGER_SLOW_S, _no_eager, _probe_eager  # noqa: F401 - moved there
from inductor_step.tracer.timing.hooks import _hooked
from inductor_step.tracer.timing.ingraph import (gpu_kernel_names, in_graph_times, partitioned_replay_time, replay_time,
                                                 script_times)
from inductor_step.tracer.timing.roofs import device_peaks, kernel_gb, op_flops, roofline
from inductor_step.tracer.timing.rounds import cpu_quantiles, whole_graph_rounds
from inductor_step.tracer.timing.template_flops import template_flops
from inductor_step.tracer.user_kernels import user_kernel_launch
from inductor_step.tracer.cpu_disasm import live_cpu_asm
from inductor_step.tracer.triton_stages import live_stages, stages_max


INPUT_BYTES = 1 << 30  # float tensors of a graph's first call kept for timing, at most (and a quarter of free GPU memory)


def integer_inputs(inputs: list, max_numel: int = 1 << 24) -> dict[int, Any]:
    """{position: copy} of the integer and bool tensors among a graph's inputs (indices, masks,
    token ids, philox seeds), up to ``max_numel`` elements each."""
    return script_inputs(inputs, max_float_bytes=0, max_numel=max_numel)


def script_inputs(inputs: list, max_float_bytes: int | None = None, max_numel: int = 1 << 24) -> dict[int, Any]:
    """{position: copy} of a graph call's tensor inputs, for timing the graph on the script's own
    values (the honest inputs) instead of random ones.

    Integer and bool tensors (indices, masks, counters, philox seed and offset) are always kept, up
    to ``max_numel`` elements each: random ones can send a gather out of bounds.  Float tensors are
    kept in call order while their total stays under ``max_float_bytes`` (default
    :data:`INPUT_BYTES`, and on CUDA a quarter of the free memory, ``torch.cuda.mem_get_info``):
    random floats are harmless to most kernels but not to all (an attention backward's
    ``logsumexp``).  Copies stay on the tensor's own device, strides kept."""
    if max_float_bytes is None:
        max_float_bytes = INPUT_BYTES
        if any(isinstance(t, torch.Tensor) and t.is_cuda for t in inputs):
            try:
                max_float_bytes = min(max_float_bytes, torch.cuda.mem_get_info()[0] // 4)
            except Exception:  # noqa: BLE001
                max_float_bytes = 0
    out: dict[int, Any] = {}
    used = 0
    for i, t in enumerate(inputs):
        if not isinstance(t, torch.Tensor) or t.layout != torch.strided:
            continue
        if not t.is_floating_point() and not t.is_complex():
            if t.numel() <= max_numel:
                out[i] = t.detach().clone(memory_format=torch.preserve_format)
        elif used + _nbytes(t) <= max_float_bytes:
            out[i] = t.detach().clone(memory_format=torch.preserve_format)
            used += _nbytes(t)
    return out


def _use_script_inputs(args: list, kept: dict[int, Any]) -> tuple[int, int]:
    """Put the script's own input values (:func:`script_inputs`) into ``args`` (from ``get_args()``)
    where shape and dtype match: copied into the random tensor on the same device, or put in its
    place (a copy) where the script's tensor lives on another device -- ``get_args()`` puts every
    tensor on the graph's device, but some are not there at run time (the philox seed and offset of
    ``_scaled_dot_product_efficient_attention`` are CPU tensors outside CUDA-graph capture, and its
    backward reads them from the host: a CUDA one made it crash with SIGSEGV).  The replaced
    ``get_args()`` tensor still gets the script's values: under CUDA-graph capture the same op reads
    the seed and offset through device pointers, so the capture (:func:`capture_args`) uses it.
    Returns ``(integer tensors used, float tensors used)``."""
    ints = floats = 0
    for i, t in kept.items():
        a = args[i] if i < len(args) else None
        if not isinstance(a, torch.Tensor) or a.shape != t.shape or a.dtype != t.dtype:
            continue
        a.copy_(t)  # the get_args tensor keeps the script's values: a CUDA-graph capture needs it (below)
        if a.device != t.device:
            args[i] = t.clone(memory_format=torch.preserve_format)
        if t.is_floating_point() or t.is_complex():
            floats += 1
        else:
            ints += 1
    return ints, floats


def capture_args(args: list, random_args: list) -> list:
    """``args`` for a CUDA-graph capture: where :func:`_use_script_inputs` put a CPU tensor in place of
    a CUDA one, the CUDA one (holding the same values) instead -- ops that read a CPU scalar from the
    host when run eagerly read it through a device pointer while captured (the efficient-attention
    backward's philox seed and offset: a CPU tensor there is an illegal memory access at replay)."""
    return [r if isinstance(a, torch.Tensor) and isinstance(r, torch.Tensor) and a.device != r.device else a
            for a, r in zip(args, random_args)]


def _nbytes(t: Any) -> int:
    return t.numel() * t.element_size() if isinstance(t, torch.Tensor) else 0


def settled(rounds: dict[str, Any], compiled_ms: float, kernel_sum_ms: float, cuda: bool,
            kernels_wait: dict[str, Any] | None = None) -> dict[str, Any]:
    """Whether a graph's times can be trusted and what the gap between the kernel sum and the graph
    time means: ``contended`` (CPU and GPU -- a launch-bound GPU graph is as slow as its CPU -- this process's threads waited for a core more than
    :data:`tracer.timing.contention.WAIT_SHARE_LIMIT` of the time in the rounds the compiled or eager time
    came from, measured per round from schedstat -- the load average is too slow and coarse to
    tell), ``verdicts`` (one per CPU figure: ``compiled``, ``eager``, ``decomposed``, ``kernels`` -> ``{"reliable", "wait_share",
    "text"}``, :func:`tracer.timing.contention.judge`), ``settled`` (the rounds agreed and nothing competed),
    ``sum_vs_graph`` (kernel sum / graph time), ``gap_cause`` -- ``"overhead"`` (sum at most the graph: the
    rest is launch and Python overhead), ``"kernels_alone"`` (sum above the graph, times settled: each kernel
    timed on its own, from a cold cache (L2 flushed on GPU), adds up to more than the graph), ``"unsettled"``
    (the rounds did not agree or other processes competed for the cores: neither figure is reliable, and the
    gap says nothing about overhead) -- ``reliable`` (False when any CPU figure is not), ``unreliable``
    (one line saying which figures are not and why, with ``press r to time again``) and ``warnings``, one
    sentence per reason."""
    from inductor_step.tracer.timing.contention import judge  # noqa: PLC0415

    verdicts: dict[str, Any] = {}
    if cuda:  # GPU rounds block in CUDA syncs: only the run-queue wait (schedstat) tells contention there
        rounds = {k: (v if not k.endswith("_wait") or (v or {}).get("source") == "schedstat" else None)
                  for k, v in rounds.items()}
        kernels_wait = None
    verdicts["compiled"] = judge(rounds.get("compiled_wait"), "the compiled graph's rounds")
    if rounds.get("eager_ms") is not None:
        verdicts["eager"] = judge(rounds.get("eager_wait"), "the eager rounds")
    if rounds.get("decomposed_ms") is not None:  # the third figure is judged too
        verdicts["decomposed"] = judge(rounds.get("decomposed_wait"), "the decomposed post-grad graph's rounds")
    if kernels_wait:
        verdicts["kernels"] = judge(kernels_wait, "the kernels' timing")
    contended = any(v.get("reliable") is False for k, v in verdicts.items() if k in ("compiled", "eager"))
    stable = rounds.get("rounds_stable")
    warnings = []
    c = rounds.get("compiled_rounds_ms") or []
    if stable is False and c:
        warnings.append(f"the compiled graph's {len(c)} timing rounds did not agree within 10% "
                        f"({min(c):.4g} to {max(c):.4g} ms): its time is not reliable")
    for v in verdicts.values():
        if v.get("reliable") is False:
            warnings.append(v["text"])
    ratio = kernel_sum_ms / compiled_ms if compiled_ms else None
    if stable is False or contended:
        cause = "unsettled"
        if ratio is not None and ratio > 1.5:
            warnings.append(f"the kernel sum is {ratio:.3g}x the graph time: the times did not settle, so this says "
                            "nothing about launch overhead or caches")
    elif ratio is not None and ratio <= 1.0:
        cause = "overhead"
    else:
        cause = "kernels_alone"
    bad = [k for k, v in verdicts.items() if v.get("reliable") is False]
    if stable is False and "compiled" not in bad:
        bad.insert(0, "compiled")
    reliable = not bad
    out: dict[str, Any] = {"settled": not (stable is False or contended), "contended": contended,
                           "sum_vs_graph": ratio, "gap_cause": cause, "warnings": warnings, "reliable": reliable}
    if verdicts:
        out["verdicts"] = verdicts
    if not reliable:
        names = {"compiled": "compiled time", "eager": "eager time", "kernels": "kernel times",
                 "decomposed": "decomposed post-grad time"}
        why = ("other processes held the cores" if contended or {"kernels", "decomposed"} & set(bad)
               else "the rounds did not agree")
        out["unreliable"] = (f"{', '.join(names[b] for b in bad)} not reliable ({why}"
                             + (f": threads waited for a core up to "
                                f"{100 * max(verdicts[b].get('wait_share') or 0 for b in bad if b in verdicts):.0f}% "
                                "of the time" if any(b in verdicts for b in bad) else "")
                             + "); press r to time again")
    return out


def _inputs_text(ints: int, floats: int, n_tensors: int) -> str:
    """What ``time_graph``'s ``inputs`` field says about where the timed inputs came from."""
    if not ints and not floats:
        return "random tensors of the compiled shapes (get_args)"
    if ints + floats >= n_tensors:
        return f"the script's own inputs from its first call of the graph (all {n_tensors} tensors)"
    return (f"the script's own inputs from its first call for {ints + floats} of {n_tensors} tensors ({ints} integer, "
            f"{floats} float); the rest random of the compiled shapes (get_args): floats over the copy budget")


def input_sizes(args: list) -> list[str]:
    """The concrete sizes a graph is timed at, one text per argument of its ``call``: a tensor's
    ``"2x5x8 float32"`` (a 0-d tensor ``"scalar float32"``), an int's value (a dynamic size: ``"5"``),
    anything else its type name."""
    out = []
    for a in args:
        if isinstance(a, torch.Tensor):
            dims = "x".join(str(d) for d in a.shape) or "scalar"
            out.append(f"{dims} {str(a.dtype).replace('torch.', '')}")
        elif isinstance(a, (bool, int, float)):
            out.append(str(a))
        else:
            out.append(type(a).__name__)
    return out


def script_args(script: dict[str, Any] | None) -> list | None:
    """A graph's whole argument list from the script's first call (``script``: the agent's record of it, with
    ``inputs`` {position: tensor}, ``scalars`` {position: int/float/bool} and ``n_inputs``), tensors copied; None
    where any position is missing (a float tensor over the copy budget, a record from before these fields).
    Used where the output module's ``get_args()`` fails: torch's generated code for a jagged NestedTensor graph
    leaves out its SymInt input (``NameError: name 'arg0_1' is not defined``)."""
    n = (script or {}).get("n_inputs")
    if not isinstance(n, int):
        return None
    kept = {**((script or {}).get("scalars") or {}), **((script or {}).get("inputs") or {})}
    if any(i not in kept for i in range(n)):
        return None
    return [kept[i].clone() if isinstance(kept[i], torch.Tensor) else kept[i] for i in range(n)]


def _graph_args(mod: Any) -> list:
    """Inputs for ``mod.call``: ``get_args()`` (torch >= 2.13), else captured from the harness."""
    if hasattr(mod, "get_args"):
        return list(mod.get_args())
    captured: list = []
    real_call = mod.call

    def capture(args: list) -> Any:
        captured.extend(args)
        return real_call(list(args))

    mod.call = capture
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            mod.benchmark_compiled_module(times=1, repeat=1)
    finally:
        mod.call = real_call
    return captured


def time_graph(output_path: str, eager_gm: Any, device: str, rep: int = 50,
               cancel: threading.Event | None = None, progress: Callable[[str], None] | None = None,
               num_gb: dict[str, float] | None = None, script: dict[str, Any] | None = None,
               dynamo: dict[str, Any] | None = None) -> dict[str, Any]:
    """Time one compiled graph.

    ``eager_ms`` is what the script runs without torch.compile: ``dynamo`` (Dynamo's graph and its
    first-call inputs, :func:`tracer.timing.eager_user.user_eager`; ``eager_how`` says how it was run, and
    ``eager_error`` why there is none); ``decomposed_ms`` is ``eager_gm`` (the post-grad graph) run op by op
    (``decomposed_how``), timed in the same rounds, and ``eager_nodes_ms`` its nodes one by one.

    ``output_path`` is Inductor's output-code file (from the ``inductor_output_code`` event),
    ``eager_gm`` the post-grad GraphModule it was compiled from (or None), ``device`` ``"cpu"`` or
    ``"cuda"``.  Returns ``compiled_ms`` and ``eager_ms`` (median, ms; on CUDA the median of
:data:`GRAPH_ROUNDS` rounds, each round's median in ``graph_rounds``, see :func:`whole_graph_rounds`), ``kernel_sum_ms`` and
    ``kernels``: one dict per kernel call in call order with ``name``, ``call`` (1 for a kernel's
    first call in the graph, 2 for its second, ...), ``backend``, ``median_ms`` and, on GPU,
    ``p20_ms``/``p80_ms`` and ``in_graph_ms`` (the kernel inside a CUDA-graph replay of the whole
    graph, as a profiler sees it inside the model: CUPTI's duration for Triton kernels, the timing
    events around the call for extern calls; ``in_graph_source`` says which, ``in_graph_events_ms``
    keeps the event time; see :func:`in_graph_times`) or, where the graph cannot be captured, ``warm_ms`` (the kernel alone
    replayed in a CUDA graph, L2 warm); ``median_ms`` flushes L2 first and is what GB/s uses;
    ``gb`` (bytes moved, GB) with ``gb_source``, ``gbps`` and ``pct_peak_bw``; for matmuls
    ``tflops`` and ``pct_peak_tflops``.  ``num_gb`` is Inductor's byte estimate per Triton kernel
    recorded at codegen (:func:`tracer.adapter.take_kernel_num_gb`).  ``peak`` says where the
    device's peak figures come from; ``in_graph`` whether in-graph times were taken, or why not, and
    ``in_graph_cupti`` whether the profiler gave the Triton kernels' in-graph times.  ``script`` is
    what the agent saw of the script's own calls of this graph (``calls``, ``inputs``: its first call's tensors
    (:func:`script_inputs`), ``profiles``: CUPTI records of later calls, ``status``); with it, integer inputs are
    the script's (``inputs`` says so) and Triton kernels get ``in_script_ms`` (median over the
    profiled calls, ``in_script_calls`` of them; top-level ``in_script`` says what happened, and
    ``in_script_sum_ms`` sums the kernel times where every kernel has one).  ``script["configs"]``
    (kernel name -> ``{"config", "of"}``: the launch config each Triton kernel autotuned to in the
    script's first call, out of how many) pins the timed kernels to the same configs
    (tracer.adapter.pin_configs); each such kernel gets ``config``, ``configs_tried`` and
    ``config_pinned``, and top-level ``configs`` says how many were pinned.  ``cancel`` (set from another thread) stops between kernels;
    the result then has ``cancelled: True`` and the kernels timed so far.  Raises whatever importing or running the module raises.
    """
    if progress is not None:
        progress("loading the output module")
    mod = adapter.load_output_module(output_path)
    with open(output_path, encoding="utf-8") as f:
        source = f.read()
    parsed = parse_wrapper(source)
    backends = {k["name"]: k["backend"] for k in parsed}
    sources = {k["name"]: k["source"] for k in parsed}
    from inductor_step.tracer.links import _params  # noqa: PLC0415 - parameter names of a kernel's source

    params = {k["name"]: _params(k["backend"], k["source"]) for k in parsed if k["backend"] in ("cpp", "triton")}
    gpu_names = gpu_kernel_names(sources, backends)  # a user @triton.jit kernel: the GPU knows it by its def name
    peak = device_peaks(device)
    try:  # the ledger's three roofs, measured once per device and cached
        from inductor_step.tracer.timing import machine  # noqa: PLC0415

        roofs: dict[str, Any] = machine.device_roofs(device)
    except Exception as e:  # noqa: BLE001
        roofs = {"missing": f"roofs not measured ({type(e).__name__}: {e})"}
    try:
        limits = machine.device_limits() if device.startswith("cuda") else None
    except Exception:  # noqa: BLE001
        limits = None
    b = adapter.benchmarker()
    cuda = device.startswith("cuda")

    def bench_q(fn: Callable) -> tuple[float, float | None, float | None]:
        """(median, p20, p80) in ms."""
        if cuda:
            from triton.testing import do_bench  # noqa: PLC0415

            q = do_bench(fn, warmup=25, rep=100, quantiles=[0.5, 0.2, 0.8])
            return float(q[0]), float(q[1]), float(q[2])
        return cpu_quantiles(b, fn, warmup_ms=5, rep_ms=rep)

    def bench(fn: Callable) -> float:
        return bench_q(fn)[0]

    def bench_warm(fn: Callable, args: tuple, kwargs: dict) -> float | None:
        """GPU: median time with L2 warm and no launch overhead (``triton.testing.do_bench_cudagraph``:
        the call replayed inside a CUDA graph), which is what a profiler sees inside a running
        model; None where the call cannot be captured."""
        if not cuda or any(isinstance(x, torch.Tensor) and not x.is_cuda for x in args):
            return None  # a CPU operand (a philox seed) is read through a device pointer once captured
        try:
            from triton.testing import do_bench_cudagraph  # noqa: PLC0415

            def call() -> Any:
                kw = dict(kwargs)
                if "stream" in kw:  # the wrapper's stream handle: use the capturing stream instead
                    kw["stream"] = adapter.current_raw_stream()
                return fn(*args, **kw)

            return float(do_bench_cudagraph(call, rep=50, return_mode="median"))
        except Exception:  # noqa: BLE001
            try:
                torch.cuda.synchronize()
            except Exception:  # noqa: BLE001
                pass
            return None


    script_configs = (script or {}).get("configs") or {}
    pinned = adapter.pin_configs(mod, {n: c["config"] for n, c in script_configs.items()}) if script_configs else {}
    # every collective of the graph runs as a local stand-in, never the real one (tracer.adapter.collectives)
    with torch.no_grad(), adapter.stand_ins_in_module(mod, source):
        inputs_fallback = ""
        try:
            args = _graph_args(mod)
        except Exception as e:  # noqa: BLE001 - a jagged graph's get_args() omits its SymInt input
            args = script_args(script)
            if args is None:
                sc = script or {}
                have = sorted({*(sc.get("scalars") or {}), *(sc.get("inputs") or {})})
                raise RuntimeError(f"{type(e).__name__}: {e} (the output module's get_args(); the script's first call "
                                   f"gave {len(have)} of {sc.get('n_inputs', '?')} arguments to build them from: "
                                   f"{'no call recorded' if not sc.get('calls') else 'positions ' + str(have)})") from e
            inputs_fallback = f"get_args() raised ({type(e).__name__}: {e}); "
        random_args = list(args)
        ints, floats = _use_script_inputs(args, (script or {}).get("inputs") or (script or {}).get("int_inputs") or {})
        n_tensors = sum(1 for t in args if isinstance(t, torch.Tensor))
        inputs = inputs_fallback + _inputs_text(ints, floats, n_tensors)
        sizes = input_sizes(args)
        calls: list = []

        def record(name: str, fn: Callable, a: tuple, k: dict) -> Any:
            calls.append((name, fn, a, k))
            return fn(*a, **k)

        if progress is not None:
            progress("recording the kernels' calls (one call of the graph)")
        functions = list(subgraph_functions(source))  # higher-order ops' subgraphs (tracer.timing.subgraphs)
        with _hooked(mod, backends, record), watch_subgraphs(mod, functions, calls, "" if cuda else source) as sub_rec:
            mod.call(list(args))
        eager_fn = None
        eager_stubbed: dict[str, str] = {}
        eager_error: str | None = None if eager_gm is not None else "no post-grad graph to run op by op"
        eager_fixes: list[str] = []
        # checked before the one eager call below: flex attention's backward run eagerly is torch's math
        # reference, over 140 s a call on an H100 (that call made the GPU flex test run past 150 s)
        skip = _no_eager(eager_gm) if eager_gm is not None else None
        if eager_gm is not None and not skip:
            try:
                eager_stubbed = adapter.stand_ins_in_graph(eager_gm)
                eager_fixes = adapter.runnable_eager(eager_gm)  # in-place foreach getitems
                eager_gm.recompile()
                if progress is not None:
                    progress("running the decomposed post-grad graph op by op once")
                eager_gm(*args)  # once: a graph that cannot run eagerly says why, and the compiled time stays
                eager_fn = lambda: eager_gm(*args)  # noqa: E731
            except Exception as e:  # noqa: BLE001
                eager_fn = None
                eager_error = f"the post-grad graph does not run eagerly ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
        eager_probe: dict[str, Any] = {}
        if skip:
            eager_fn, eager_probe = None, {"note": skip, "slow": True}
        if eager_fn is not None:
            if progress is not None:
                progress("one call of the decomposed post-grad graph (to see that rounds of it can finish)")
            eager_fn, eager_probe = _probe_eager(eager_fn, cuda)
        if progress is not None:
            progress("running Dynamo's graph eagerly once (the eager baseline: the script without torch.compile)")
        from inductor_step.tracer.timing.eager_user import DECOMPOSED_HOW, user_eager  # noqa: PLC0415

        user = user_eager(dynamo, cuda)
        if progress is not None:
            progress("timing the whole graph in rounds (compiled, eager, decomposed post-grad graph)")
        graph_rounds = whole_graph_rounds(lambda: mod.call(list(args)), user.get("fn"), cuda, bench,
                                          eager_round=user.get("round"), decomposed=eager_fn)
        compiled_ms, eager_ms = graph_rounds["compiled_ms"], graph_rounds.get("eager_ms")
        decomposed_ms = graph_rounds.get("decomposed_ms")
        from inductor_step.tracer.timing.memory import measured_peak  # noqa: PLC0415

        measured_mem = measured_peak(lambda: mod.call(list(args)), cuda, dynamo or {})  # and eager's, same graph
        eager_nodes: dict[str, float] = {}
        eager_nodes_how = f"not measured: {eager_error or 'no post-grad graph to run eagerly'}"
        if eager_probe.get("slow"):  # too slow (or flex attention's backward): node by node would be as slow
            eager_nodes_how = f"not measured: {eager_probe['note']}"
        if eager_fn is not None or eager_probe.get("raised"):  # a graph that fails whole may still run node by node
            try:  # each FX node's eager time, for the ledger's lines
                from inductor_step.tracer.timing.eager_nodes import eager_node_times  # noqa: PLC0415

                eager_nodes, eager_nodes_how = eager_node_times(eager_gm, list(args), cuda)
            except Exception as e:  # noqa: BLE001
                eager_nodes_how = f"not measured ({type(e).__name__}: {e})"
            if eager_stubbed and eager_nodes:
                eager_nodes = {n: ms for n, ms in eager_nodes.items() if n not in eager_stubbed}
                eager_nodes_how += (f"; the collective node(s) {', '.join(eager_stubbed)} ran as local stand-ins and "
                                    "have no eager time")
        in_graph, in_graph_status, cupti_status = (None, "CPU: not applicable", "CPU: not applicable")
        if cuda:
            if progress is not None:
                progress("every kernel inside one CUDA-graph replay of the graph")
            in_graph, in_graph_status, cupti_status = in_graph_times(mod, backends, args, [c[0] for c in calls],
                                                                     capture=capture_args(args, random_args),
                                                                     gpu_names=gpu_names)
        replay = None
        if cuda and (script or {}).get("cudagraphs"):  # mode="reduce-overhead": the graph as CUDA graphs replay it
            if progress is not None:
                progress("the whole graph replayed as a CUDA graph")
            replay = replay_time(mod, backends, args, bench, capture=capture_args(args, random_args))
            if replay.get("missing") and getattr(getattr(mod, "runner", None), "partitions", None):
                # a statement outside the partitions (a host copy, a CPU op) stops a whole-call capture: replay the
                # partitions as cudagraph trees do, the rest run as written
                whole = replay["missing"]
                replay = partitioned_replay_time(mod, args, bench)
                replay["whole"] = whole
        in_script, in_script_status = {}, "CPU: not applicable"
        if cuda:
            profiles = (script or {}).get("profiles") or []
            in_script = script_times([c[0] for c in calls], backends, profiles, gpu_names) if profiles else {}
            in_script_status = ((script or {}).get("status") or
                                (f"ok: {len(profiles)} of the script's calls profiled" if profiles else
                                 f"the script called this graph {(script or {}).get('calls', 0)} time(s); "
                                 "calls after the first are profiled when timing is asked for at start (--run) "
                                 "or in the UI"))
        kernels = []
        seen: dict[str, int] = {}
        cancelled = False
        from inductor_step.tracer.timing.contention import Span  # noqa: PLC0415

        again: list[tuple[dict[str, Any], Any, str, str]] = []  # kernels to compile again, after timing
        kspan = Span().__enter__()  # did the kernels' timing get the cores?
        for i, (name, fn, a, k) in enumerate(calls):
            if cancel is not None and cancel.is_set():
                cancelled = True
                break
            if progress is not None:
                progress(f"kernel {i + 1}/{len(calls)}: {name}")
            base = name.split("#")[0]
            backend = "extern" if base.startswith(("extern_kernels", "torch.ops")) else backends.get(name, "?")
            seen[name] = seen.get(name, 0) + 1
            coll = adapter.collective_of(name)
            if coll is not None:  # run as a stand-in (fn): listed, not timed
                entry = collective_entry(name, seen[name], coll, bench(lambda fn=fn, a=a, k=k: fn(*a, **k)))
                if (name, seen[name]) in in_script:
                    entry["in_script_ms"], entry["in_script_calls"] = in_script[(name, seen[name])]
                kernels.append(entry)
                continue
            med, lo, hi = bench_q(lambda fn=fn, a=a, k=k: fn(*a, **k))
            entry: dict[str, Any] = {"name": name, "call": seen[name], "backend": backend,
                                     "median_ms": med, "p20_ms": lo, "p80_ms": hi}
            if (name, seen[name]) in in_script:
                entry["in_script_ms"], entry["in_script_calls"] = in_script[(name, seen[name])]
            if backend == "triton":
                launch = user_kernel_launch(sources.get(name, ""), a)
                if launch is not None:  # a user @triton.jit kernel: its grid, constexprs, num_warps
                    entry["user_kernel"], entry["launch"] = True, launch
                cfg = script_configs.get(name) or {}
                if cfg.get("config"):
                    entry["config"] = cfg["config"]
                    if cfg.get("of"):
                        entry["configs_tried"] = cfg["of"]
                    if cfg.get("tuned"):  # each candidate's benchmark time and the winner
                        entry["autotune_candidates"] = cfg["tuned"]
                    entry["config_pinned"] = name in pinned
            if in_graph is not None:
                entry.update(in_graph[i])
            elif cuda:
                entry["warm_ms"] = bench_warm(fn, a, k)
            # an extern call's output comes as out=buf: its bytes are written too (the roofline's bytes)
            counted = a + tuple(v for v in k.values() if isinstance(v, torch.Tensor)) if backend == "extern" else a
            gb, gb_source = kernel_gb(name, backend, sources.get(name, ""), counted, params.get(name, []),
                                      (num_gb or {}).get(name))
            if gb is not None and med > 0:
                entry.update(gb=gb, gb_source=gb_source, gbps=gb / (med / 1e3))
                if peak.get("bw_gbps"):
                    entry["pct_peak_bw"] = 100.0 * entry["gbps"] / peak["bw_gbps"]
            flops, dtype, op = op_flops(fn, a, k) if backend == "extern" else (None, None, None)
            if backend == "triton" and base.startswith("triton_tem_"):  # a template: FLOPs of the op it implements
                flops, dtype, op, entry["flops_source"] = template_flops(base, params.get(name, []), a)
            roofline(entry, peak, flops, dtype, op)
            if backend == "triton" and limits is not None:
                try:
                    entry["resources"] = machine.kernel_resources(adapter.triton_binary_info(fn),
                                                                  params.get(name, []), a, limits)
                except Exception as e:  # noqa: BLE001
                    entry["resources"] = {"missing": f"not read ({type(e).__name__}: {e})"}
                if entry["call"] == 1:  # TTIR ... SASS of the binary that ran, once per kernel
                    src = sources.get(name) or sources.get(base, "")
                    entry["stages"] = live_stages(fn, base, src, compile_again=False)
                    if entry["stages"].get("compile_again"):
                        again.append((entry, fn, base, src))
            if backend == "cpp" and entry["call"] == 1:  # the compiled function, disassembled
                entry["stages"] = live_cpu_asm(fn, sources.get(name) or sources.get(base, ""))
            kernels.append(entry)
        kspan.__exit__()
        # the launcher kept no asm: compile the slowest kernels again (same source, Triton, config, target),
        # after the timing (its contention check is over)
        again.sort(key=lambda e: -(e[0].get("median_ms") or 0.0))
        for entry, fn, base, src in again[:stages_max()]:
            entry["stages"] = live_stages(fn, base, src)
    subgraphs: dict[str, Any] = {}
    if functions:  # each subgraph's calls under its own key; the parent keeps its own
        kernels, subgraphs = split_by_subgraph(kernels, sub_rec, functions, eager_gm, bench_q)
    timed = [k for k in kernels if k["median_ms"] is not None]
    total = sum(k["median_ms"] for k in timed)
    for k in kernels:
        k["share"] = ((k["median_ms"] / total) if total else 0.0) if k["median_ms"] is not None else None
    out_extra: dict[str, Any] = collectives_summary(kernels, eager_stubbed)
    if timed and all(k.get("in_graph_ms") is not None for k in timed):
        out_extra["in_graph_sum_ms"] = sum(k["in_graph_ms"] for k in timed)
    if cuda:
        out_extra["in_script"] = in_script_status
    if replay is not None:
        out_extra["cudagraph_replay"] = replay
    out_extra["inputs"] = inputs
    out_extra["input_sizes"] = sizes
    if eager_probe.get("note"):
        out_extra["decomposed_note"] = eager_probe["note"]
    if decomposed_ms is None and eager_error is None:
        eager_error = eager_probe.get("note") or "its rounds failed (the post-grad graph raised while being timed)"
    out_extra["decomposed_ms"] = decomposed_ms
    out_extra["decomposed_how"] = DECOMPOSED_HOW
    if decomposed_ms is None:
        out_extra["decomposed_error"] = f"decomposed post-grad graph not timed: {eager_error}"
    if user.get("how"):
        out_extra["eager_how"] = user["how"]
    if eager_ms is None:
        out_extra["eager_error"] = user.get("error") or "the eager rounds failed (Dynamo's graph raised while being timed)"
    if eager_fixes:
        out_extra["eager_fixes"] = (f"{len(eager_fixes)} getitem node(s) of in-place foreach ops read the input they "
                                    "mutated (the in-place overload returns nothing when run eagerly)")
    if script_configs:
        tuned = sum(1 for c in script_configs.values() if (c.get("of") or 0) > 1)
        out_extra["configs"] = (f"{len(pinned)} of {len(script_configs)} Triton kernels timed with the launch config "
                                f"the script's run autotuned to ({tuned} chose among several)")
    out_extra["graph_rounds"] = {k: v for k, v in graph_rounds.items()
                                 if k.endswith(("_rounds_ms", "_wait_shares", "_wait")) or k in ("rounds_stable", "load")}
    out_extra.update(settled(graph_rounds, compiled_ms, total, cuda, kspan.result if calls and not cuda else None))
    if subgraphs:
        out_extra["subgraphs"] = subgraphs
        out_extra["warnings"] = list(out_extra.get("warnings") or []) + [
            f"compiled_ms includes the subgraph function(s) {', '.join(subgraphs)} it calls; kernel_sum_ms and the "
            "kernels here are the graph's own (each subgraph's kernels are timed under its own key)"]
    out_extra["memory"] = measured_mem
    return {**out_extra, "compiled_ms": compiled_ms, "eager_ms": eager_ms, "kernel_sum_ms": total, "kernels": kernels,
            "peak": peak, "roofs": roofs, "eager_nodes_ms": eager_nodes, "eager_nodes": eager_nodes_how, "cancelled": cancelled, "in_graph": in_graph_status, "in_graph_cupti": cupti_status,
            "method": "triton.testing.do_bench (median, L2 flushed)" if cuda else "benchmarker.benchmark_cpu (median, 20-80% spread of the same calls)",
            "threads": torch.get_num_threads(), "pid": os.getpid()}
