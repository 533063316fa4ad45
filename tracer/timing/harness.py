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
import threading
from typing import Any, Callable

import torch

from inductor_step.tracer.timing.eager_nodes import EAGER_SLOW_S, _no_eager, _probe_eager  # noqa: F401 - moved there


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
                out[i] = _strided_copy(t)
        elif used + _nbytes(t) <= max_float_bytes:
            out[i] = _strided_copy(t)
            used += _nbytes(t)
    return out


def _strided_copy(t: Any) -> Any:
    """A copy of ``t`` with its strides, also where they are not dense: a view into a bigger tensor (nanoGPT's
    q, k, v: slices of one qkv output, stride 384 per token for 128 values) keeps them, which the compiled graph's
    ``assert_size_stride`` checks; ``clone(preserve_format)`` made such a view contiguous."""
    out = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=t.device)
    _copy_into(out, t.detach())
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
        _copy_into(a, t)  # the get_args tensor keeps the script's values: a CUDA-graph capture needs it (below)
        if a.device != t.device or a.stride() != t.stride():
            # where the script's tensor has other strides than get_args() made (a view into a bigger tensor, under
            # dynamic shapes), the script's: the graph asserts the strides it was compiled for
            args[i] = torch.empty_strided(a.shape, t.stride(), dtype=a.dtype, device=t.device)
            _copy_into(args[i], t)
        if t.is_floating_point() or t.is_complex():
            floats += 1
        else:
            ints += 1
    return ints, floats


def _copy_into(dst: Any, src: Any) -> None:
    """``dst.copy_(src)`` keeping ``dst``'s strides, also where ``dst`` is expanded (a 0 stride over a dim of
    more than one element, as ``get_args()`` makes for Hugging Face BERT's ``token_type_ids``: ``copy_`` into it
    raises "more than one element of the written-to tensor refers to a single memory location"). There the
    first element along each such dim is written, which every element of it reads."""
    idx = tuple(slice(0, 1) if st == 0 and n > 1 else slice(None) for st, n in zip(dst.stride(), dst.shape))
    if any(s != slice(None) for s in idx):
        dst, src = dst[idx], src[idx]
    dst.copy_(src)


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


def time_graph(output_path: str, eager_gm: Any, device: str, rep: float | None = None,
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
    from inductor_step.tracer.timing.graph_timer import GraphTimer  # noqa: PLC0415 - it builds on this module

    return GraphTimer(output_path, eager_gm, device, rep, cancel=cancel, progress=progress, num_gb=num_gb,
                      script=script, dynamo=dynamo).run()
