"""Run and time a compiled graph and each of its kernels (the `run` stage).

Times are medians in ms: on CPU from Inductor's own benchmarker
(``torch._inductor.runtime.benchmarking.benchmarker.benchmark_cpu`` runs the calls; median and
20-80% spread of their wall-clock times, :func:`cpu_quantiles`); on GPU from ``triton.testing.do_bench`` (CUDA events, L2 flushed before each run) with
quantiles 0.5/0.2/0.8, so the spread is reported too.  (Inductor's ``benchmark_gpu`` returns the
minimum, which is why it is not used here.)  The compiled graph is Inductor's output-code module
``call(args)``; "eager" is the same post-grad ATen graph run op by op by torch.fx on the same
inputs; kernels are timed one at a time on the arguments they received in one recorded ``call``.
Inputs come from the output module's own ``get_args()`` (random tensors of the compiled shapes),
except integer tensors (indices, masks), which are the script's own from its first call of the graph
when it made one (random indices can send a gather or scatter out of bounds).  On CUDA the script's
own calls 2-11 of each graph can also be profiled as they happen (:func:`script_times`).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import threading
from typing import Any, Callable

import torch

from inductor_step.tracer import adapter
from inductor_step.tracer.codeparse import parse_wrapper


_NUM_GB = re.compile(r"'kernel_num_gb':\s*([0-9.eE+-]+)")
_MM_OPS = {"mm", "addmm", "bmm", "baddbmm", "_int_mm", "addmm_", "mm_out"}


def device_peaks(device: str) -> dict[str, Any]:
    """The device's peak memory bandwidth (GB/s) and matmul throughput (TFLOP/s by dtype), with
    where each figure comes from; on CPU, none (no reliable peak to quote).

    GPU bandwidth: ``triton.testing.get_dram_gbps()`` (memory clock x bus width x 2 from the driver's
    device properties); TFLOP/s: ``triton.testing.get_max_tensorcore_tflops`` (SM count x clock x
    tensor-core ops per sub-core) at the driver's maximum SM clock.
    """
    if not device.startswith("cuda"):
        return {"bw_gbps": None, "bw_source": "not quoted on CPU", "tflops": {}, "tflops_source": "not quoted on CPU"}
    out: dict[str, Any] = {"bw_gbps": None, "tflops": {}}
    try:
        from triton.runtime import driver  # noqa: PLC0415
        from triton.testing import get_dram_gbps, get_max_tensorcore_tflops  # noqa: PLC0415

        out["bw_gbps"] = float(get_dram_gbps())
        out["bw_source"] = "triton.testing.get_dram_gbps() (driver memory clock x bus width x 2)"
        props = driver.active.utils.get_device_properties(torch.cuda.current_device())
        clock = props.get("sm_clock_rate") or props.get("max_clock_rate") or props.get("clock_rate")  # kHz
        if clock:
            from triton.testing import get_max_simd_tflops  # noqa: PLC0415

            for name, dt in (("float16", torch.float16), ("bfloat16", torch.bfloat16)):
                try:
                    out["tflops"][name] = float(get_max_tensorcore_tflops(dt, clock))
                except Exception:  # noqa: BLE001
                    pass
            try:
                # fp32 matmuls run on tensor cores only when TF32 is allowed
                tf32 = torch.backends.cuda.matmul.allow_tf32
                out["tflops"]["float32"] = float((get_max_tensorcore_tflops if tf32 else get_max_simd_tflops)(torch.float32, clock))
                out["float32_mode"] = "tf32 tensor cores" if tf32 else "fp32 CUDA cores (TF32 off)"
            except Exception:  # noqa: BLE001
                pass
            major = torch.cuda.get_device_capability()[0]
            if major == 9:
                # Triton's per-sub-core constants are Ampere's; Hopper (sm_90) does twice the FP32 and
                # dense tensor-core operations per SM per clock
                out["tflops"] = {k: 2 * v for k, v in out["tflops"].items()}
            out["tflops_source"] = (f"triton.testing.get_max_tensorcore_tflops / get_max_simd_tflops at the SM clock "
                                    f"the driver reports ({clock / 1e3:.0f} MHz), dense"
                                    + (", x2 for Hopper (sm_90 doubles Ampere's per-SM rates)" if major == 9 else ""))
        else:
            out["tflops_source"] = "not available: the driver reports no SM clock"
    except Exception as e:  # noqa: BLE001
        out.setdefault("bw_source", f"not available ({type(e).__name__}: {e})")
        out.setdefault("tflops_source", "not available")
    return out


def _nbytes(t: Any) -> int:
    return t.numel() * t.element_size() if isinstance(t, torch.Tensor) else 0


def kernel_gb(name: str, backend: str, source: str, args: tuple, params: list[str],
              estimate: float | None = None) -> tuple[float | None, str]:
    """Bytes moved by one kernel call, in GB, and where the figure comes from.

    In order: ``inductor_meta['kernel_num_gb']`` in the kernel's source (present when the user
    compiled with ``config.benchmark_kernel``); ``estimate``, the same Inductor estimate
    (``estimate_kernel_num_bytes``) recorded at codegen by
    :func:`tracer.adapter.install_kernel_bytes_hook`; otherwise the tensors passed to it counted in
    full, once per read and once per write (``in_out_ptr`` twice): an upper bound, since a kernel
    that reads a slice of a tensor is charged for all of it, so % of peak can pass 100% there.
    """
    if backend == "triton":
        m = _NUM_GB.search(source or "")
        if m:
            return float(m.group(1)), "inductor kernel_num_gb"
        if estimate:
            return float(estimate), "inductor estimate_kernel_num_bytes (recorded at codegen)"
    total = 0
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    if not tensors:
        return None, "no tensor arguments"
    for i, a in enumerate(args):
        if not isinstance(a, torch.Tensor):
            continue
        p = params[i] if i < len(params) else ""
        total += _nbytes(a) * (2 if p.startswith("in_out_ptr") else 1)
    return total / 1e9, "tensor arguments in full (an upper bound: a kernel reading part of a tensor counts all of it)"


def mm_flops(name: str, args: tuple, kwargs: dict) -> tuple[float | None, str | None]:
    """FLOPs of an extern matmul call (``extern_kernels.mm/addmm/bmm/baddbmm``): 2*M*N*K per
    matrix; None for anything else.  Also returns the operands' dtype name."""
    op = name.split(".")[-1].split("#")[0]
    if op not in _MM_OPS:
        return None, None
    mats = [a for a in args if isinstance(a, torch.Tensor)]
    if op in ("addmm", "baddbmm") and len(mats) >= 3:
        mats = mats[1:]
    if len(mats) < 2:
        return None, None
    a, b = mats[0], mats[1]
    if a.dim() == 2 and b.dim() == 2:
        flops = 2.0 * a.shape[0] * a.shape[1] * b.shape[1]
    elif a.dim() == 3 and b.dim() == 3:
        flops = 2.0 * a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2]
    else:
        return None, None
    return flops, str(a.dtype).replace("torch.", "")


# A hook sees every kernel call of the output module: hook(name, fn, args, kwargs) -> fn's result.
Hook = Callable[[str, Callable, tuple, dict], Any]


class _Recorder:
    """Stands in for a kernel in the output module and passes each call through ``hook``."""

    def __init__(self, name: str, fn: Callable, hook: Hook):
        self.name, self.fn, self.hook = name, fn, hook

    def __call__(self, *a: Any, **k: Any) -> Any:
        return self.hook(self.name, self.fn, a, k)


class _TritonRecorder:
    """Stands in for a Triton CachingAutotuner: passes ``.run(...)`` calls through ``hook``."""

    def __init__(self, name: str, kernel: Any, hook: Hook):
        self._name, self._kernel, self._hook = name, kernel, hook

    def run(self, *a: Any, **k: Any) -> Any:
        return self._hook(self._name, self._kernel.run, a, k)

    def __getattr__(self, item: str) -> Any:
        return getattr(self._kernel, item)


class _ExternRecorder:
    """Stands in for ``extern_kernels``: passes ``extern_kernels.mm(...)`` and friends through
    ``hook`` as ``extern_kernels.mm#N`` (N counts extern calls in the graph)."""

    def __init__(self, real: Any, hook: Hook):
        self._real, self._hook, self._n = real, hook, 0

    def __getattr__(self, item: str) -> Any:
        fn = getattr(self._real, item)
        if not callable(fn):
            return fn

        def rec(*a: Any, **k: Any) -> Any:
            name = f"extern_kernels.{item}#{self._n}"
            self._n += 1
            return self._hook(name, fn, a, k)

        return rec


class _OpPath:
    """Stands in for ``torch.ops``, ``torch.ops.aten``, ``torch.ops.aten.op`` ... in an output module.

    Calls of the ATen fallbacks Inductor calls directly (``buf3 = torch.ops.aten.convolution_backward.
    default(...)``, the SDPA kernels), as :func:`tracer.codeparse.parse_wrapper` lists them in ``ops``,
    go through ``hook`` named as parse_wrapper names them: ``torch.ops.aten.X.default#N``, N counting
    that op's calls in the graph.  Every other attribute is the real one.
    """

    def __init__(self, path: str, real: Any, hook: Hook, ops: set[str], counts: dict[str, int]):
        self._path, self._real, self._hook, self._ops, self._counts = path, real, hook, ops, counts

    def __getattr__(self, item: str) -> Any:
        real = getattr(self._real, item)
        path = f"{self._path}.{item}"
        if path in self._ops and callable(real):
            def call(*a: Any, **k: Any) -> Any:
                n = self._counts.get(path, 0)
                self._counts[path] = n + 1
                return self._hook(f"{path}#{n}", real, a, k)

            return call
        if any(op.startswith(path + ".") for op in self._ops):
            return _OpPath(path, real, self._hook, self._ops, self._counts)
        return real

    def __call__(self, *a: Any, **k: Any) -> Any:
        return self._real(*a, **k)


class _TorchModule:
    """Stands in for the output module's global ``torch``: ``torch.ops`` is an :class:`_OpPath`,
    everything else the real torch."""

    def __init__(self, real: Any, ops: _OpPath):
        self._real, self._ops = real, ops

    def __getattr__(self, item: str) -> Any:
        return self._ops if item == "ops" else getattr(self._real, item)


@contextlib.contextmanager
def _hooked(mod: Any, backends: dict[str, str], hook: Hook):
    """Route every cpp/triton/extern kernel call of output module ``mod`` through ``hook``: its
    generated kernels, ``extern_kernels.*`` and the ATen fallbacks it calls as ``torch.ops.*``."""
    saved: dict[str, Any] = {}
    for name, backend in backends.items():
        if backend in ("cpp", "triton") and hasattr(mod, name):
            saved[name] = getattr(mod, name)
            setattr(mod, name, _TritonRecorder(name, saved[name], hook) if backend == "triton"
                    else _Recorder(name, saved[name], hook))
    if hasattr(mod, "extern_kernels"):
        saved["extern_kernels"] = mod.extern_kernels
        mod.extern_kernels = _ExternRecorder(mod.extern_kernels, hook)
    ops = {n.split("#")[0] for n, b in backends.items() if b == "extern" and n.startswith("torch.ops.")}
    if ops:
        counts: dict[str, int] = {}
        if getattr(mod, "torch", None) is torch:
            saved["torch"] = mod.torch
            mod.torch = _TorchModule(torch, _OpPath("torch.ops", torch.ops, hook, ops, counts))
        if getattr(mod, "aten", None) is torch.ops.aten:  # the wrapper's alias: aten = torch.ops.aten
            saved["aten"] = mod.aten
            mod.aten = _OpPath("torch.ops.aten", torch.ops.aten, hook, ops, counts)
    try:
        yield
    finally:
        for name, obj in saved.items():
            setattr(mod, name, obj)


def in_graph_times(mod: Any, backends: dict[str, str], args: list, names: list[str],
                   replays: int = 30) -> tuple[list[dict[str, Any]] | None, str, str]:
    """Per-kernel GPU time inside the whole graph: one dict per kernel call in call order, or None
    with the reason; returns ``(times, status, cupti_status)``.

    The output module's ``call`` is captured once into a CUDA graph with a pair of timing events
    (``torch.cuda.Event(enable_timing=True, external=True)``: event-record nodes) around every
    kernel launch, then replayed.  Each kernel thus runs in the model's own order, with L2 as the
    kernels before it leave it and no launch gaps.  ``names`` must match the calls recorded earlier
    (same graph, same order).  Each dict has ``in_graph_events_ms`` (median over ``replays`` of the
    event pair) and ``in_graph_ms`` with ``in_graph_source``:

    * ``"cupti"`` for Triton kernels: the kernel's own duration in ``replays`` more replays of the same
      graph under torch.profiler (CUPTI), k-th launch of a kernel name in a replay = its k-th call.
      The event pair is not used for them because, measured on an H200 against CUPTI on the very
      same replays, it adds about 3 us (2.4-5.4 us) of graph-node latency to every kernel whatever
      its size (the kernels themselves run no slower): +15-30% on 10-30 us kernels, x3 on 1-2 us ones.
    * ``"events"`` for extern calls (cuBLAS and other library ops launch zero, one or several kernels
      of names we do not know), and for every kernel where the profiler is unavailable (another
      profiler active) or did not see a Triton kernel exactly once per replay per call.
    """
    events: list = []

    def timed(name: str, fn: Callable, a: tuple, k: dict) -> Any:
        start = torch.cuda.Event(enable_timing=True, external=True)
        end = torch.cuda.Event(enable_timing=True, external=True)
        start.record()
        out = fn(*a, **k)
        end.record()
        events.append((name, start, end))
        return out

    graph = None
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            mod.call(list(args))  # warm-up outside the capture (lazy inits, autotuning)
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        # thread_local: the capture runs on the agent's timing thread; in the UI (`r`) the script's own
        # thread may still be using CUDA, and under the default "global" mode its cudaMalloc or
        # synchronize during our capture would raise in the user's script
        with _hooked(mod, backends, timed), torch.cuda.graph(graph, capture_error_mode="thread_local"):
            mod.call(list(args))
        if [n for n, _, _ in events] != names:
            return None, "the captured graph launched different kernels than the recorded call", "not run"
        samples: list[list[float]] = [[] for _ in events]
        for r in range(replays + 3):
            graph.replay()
            torch.cuda.synchronize()
            if r >= 3:
                for i, (_, s, e) in enumerate(events):
                    samples[i].append(s.elapsed_time(e))
        out = [{"in_graph_ms": sorted(x)[len(x) // 2], "in_graph_source": "events",
                "in_graph_events_ms": sorted(x)[len(x) // 2]} for x in samples]
        cupti, cupti_status = _cupti_in_graph(graph, names, backends, replays)
        seen: dict[str, int] = {}
        for name, t in zip(names, out):
            seen[name] = seen.get(name, 0) + 1
            if (name, seen[name]) in cupti:
                t["in_graph_ms"], t["in_graph_source"] = cupti[(name, seen[name])], "cupti"
        return out, "ok", cupti_status
    except Exception as e:  # noqa: BLE001 - a graph that cannot be captured still gets the other times
        try:
            torch.cuda.synchronize()
        except Exception:  # noqa: BLE001
            pass
        return (None, f"not capturable in a CUDA graph ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})",
                "not run")
    finally:
        del graph


def _cupti_in_graph(graph: Any, names: list[str], backends: dict[str, str],
                    replays: int) -> tuple[dict[tuple[str, int], float], str]:
    """{(Triton kernel name, call k): median CUPTI duration in ms} over ``replays`` replays of
    ``graph`` under torch.profiler, and a status ("ok" or what went wrong)."""
    counts: dict[str, int] = {}
    for n in names:
        if backends.get(n) == "triton":
            counts[n] = counts.get(n, 0) + 1
    if not counts:
        return {}, "ok (no Triton kernels)"
    try:
        records = adapter.cuda_kernel_records(lambda: [graph.replay() for _ in range(replays)])
    except Exception as e:  # noqa: BLE001 - fall back to the event pairs
        try:
            torch.cuda.synchronize()
        except Exception:  # noqa: BLE001
            pass
        return {}, f"profiler unavailable, event pairs used ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
    by_name: dict[str, list[float]] = {}
    for name, _, ms in records:
        if name in counts:
            by_name.setdefault(name, []).append(ms)
    out: dict[tuple[str, int], float] = {}
    missed = []
    for name, c in counts.items():
        v = by_name.get(name, [])
        if len(v) != c * replays:  # launches per replay in capture order: v[r * c + j] is call j+1 of replay r
            missed.append(f"{name} ({len(v)} of {c * replays})")
            continue
        for j in range(c):
            x = sorted(v[j::c])
            out[(name, j + 1)] = x[len(x) // 2]
    if missed:
        return out, f"event pairs used for {len(missed)} Triton kernel(s) the profiler saw a different number of times: {', '.join(missed[:5])}"
    return out, "ok"


def integer_inputs(inputs: list, max_numel: int = 1 << 24) -> dict[int, Any]:
    """{position: copy} of the integer and bool tensors among a graph's inputs (indices, masks,
    token ids), up to ``max_numel`` elements each; float tensors are left out (their values do
    not change which memory a kernel touches, and copying weights would double memory)."""
    out: dict[int, Any] = {}
    for i, t in enumerate(inputs):
        if isinstance(t, torch.Tensor) and not t.is_floating_point() and not t.is_complex() \
                and t.numel() <= max_numel and t.layout == torch.strided:
            out[i] = t.detach().clone()
    return out


def _use_script_inputs(args: list, kept: dict[int, Any]) -> int:
    """Copy the script's integer inputs into ``args`` where shape, strides and dtype match; returns
    how many were used."""
    used = 0
    for i, t in kept.items():
        a = args[i] if i < len(args) else None
        if isinstance(a, torch.Tensor) and a.shape == t.shape and a.stride() == t.stride() and a.dtype == t.dtype:
            a.copy_(t)
            used += 1
    return used


_NOT_A_KERNEL = ("##", "Memcpy", "Memset", "Torch-Compiled Region", "CompiledFunction")


def script_times(names: list[str], backends: dict[str, str],
                 profiles: list[list[tuple]]) -> dict[tuple[str, int], tuple[float, int]]:
    """{(kernel name, call k): (median ms, number of calls)} from the script's own calls of the
    graph, each recorded by :func:`tracer.adapter.cuda_kernel_records` (CUPTI kernel durations,
    with ``cpu_ops``: the operator that launched each kernel).

    ``names``: the graph's kernel calls in order, as the timing harness names them (Triton kernels
    by name, extern calls ``extern_kernels.mm#3``, ATen fallbacks ``torch.ops.aten....#7``).

    Triton kernels: a profiled call counts for a kernel only if that name appears in it exactly as
    many times as the graph launches it; its k-th appearance is call k.  Extern calls (cuBLAS,
    cuDNN, attention: kernels whose names we cannot predict): where the records say which operator
    launched each kernel, the k-th extern call gets the sum of every kernel its operator call
    launched (``extern_kernels.mm`` <- ``aten::mm``; one call may launch several kernels, e.g.
    cuDNN's helper kernels or cuBLAS's split-K reduction), walking our extern calls and the
    profiled operator calls in step and skipping operators of other names (a copy outside the
    harness).  Extern calls left over fall back to the Triton kernels as anchors: where a profiled
    call launched the graph's Triton kernels in the graph's order, they cut both sequences into the
    same gaps; a gap holding one extern call gets the sum of the kernels in it, a gap with as many
    kernels as extern calls pairs them in order, and other gaps are left out.  Copies and memsets
    are not counted.
    """
    from inductor_step.tracer.adapter import op_base_name  # noqa: PLC0415

    counts: dict[str, int] = {}
    trit: list[str] = []
    externs: list[str] = []
    ours_gaps: list[list[str]] = [[]]
    for n in names:
        if backends.get(n) == "triton":
            counts[n] = counts.get(n, 0) + 1
            trit.append(n)
            ours_gaps.append([])
        else:
            externs.append(n)
            ours_gaps[-1].append(n)
    samples: dict[tuple[str, int], list[float]] = {}
    for records in profiles:
        by_name: dict[str, list[float]] = {}
        anchors: list[str] = []
        gaps: list[list[float]] = [[]]
        ops: list[list] = []  # [op name, ms, op id] per operator call that launched non-Triton kernels
        for rec in records:
            name, ms = rec[0], rec[2]
            if name.startswith(_NOT_A_KERNEL):
                continue
            if name in counts:
                by_name.setdefault(name, []).append(ms)
                anchors.append(name)
                gaps.append([])
                continue
            gaps[-1].append(ms)
            if len(rec) > 4 and rec[3] is not None:
                if ops and ops[-1][2] == rec[4]:
                    ops[-1][1] += ms
                else:
                    ops.append([rec[3], ms, rec[4]])
        for name, c in counts.items():
            v = by_name.get(name, [])
            if len(v) == c:
                for j, ms in enumerate(v):
                    samples.setdefault((name, j + 1), []).append(ms)
        by_op: set[str] = set()
        j = 0
        for n in externs:
            want = op_base_name(n)
            k = j
            while k < len(ops) and op_base_name(ops[k][0]) != want:
                k += 1
            if k == len(ops):
                continue  # not found: the next extern call may still be
            samples.setdefault((n, 1), []).append(ops[k][1])
            by_op.add(n)
            j = k + 1
        if anchors != trit or len(by_op) == len(externs):
            continue
        for mine, theirs in zip(ours_gaps, gaps):
            if len(mine) == 1 and theirs and mine[0] not in by_op:
                samples.setdefault((mine[0], 1), []).append(sum(theirs))
            elif len(mine) > 1 and len(theirs) == len(mine):
                for n, ms in zip(mine, theirs):
                    if n not in by_op:
                        samples.setdefault((n, 1), []).append(ms)
    return {key: (sorted(v)[len(v) // 2], len(v)) for key, v in samples.items()}


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


GRAPH_ROUNDS = 5  # whole-graph timing rounds on CUDA (compiled and eager alternating) that must agree
MAX_GRAPH_ROUNDS = 20
ROUNDS_SPREAD = 0.10  # the last GRAPH_ROUNDS rounds agree when (max - min) / min is at most this


def stable_window(rounds: list[float], n: int = GRAPH_ROUNDS, spread: float = ROUNDS_SPREAD) -> list[float] | None:
    """The last ``n`` of ``rounds`` (ms) when they agree within ``spread`` ((max - min) / min),
    else None.  ``[1.83, 2.69, 2.64, 2.68, 1.77]`` (a slow spell in the middle): None."""
    last = rounds[-n:]
    if len(last) < n or min(last) <= 0:
        return None
    return last if (max(last) - min(last)) / min(last) <= spread else None


def whole_graph_rounds(compiled: Callable, eager: Callable | None, cuda: bool,
                       bench: Callable[[Callable], float]) -> dict[str, Any]:
    """``compiled_ms`` and ``eager_ms`` (ms) of one graph.

    CUDA: rounds of ``triton.testing.do_bench`` (L2 flushed, 40 ms each, median), compiled and
    eager alternating, until the last :data:`GRAPH_ROUNDS` compiled rounds agree within
    :data:`ROUNDS_SPREAD` (:func:`stable_window`) or :data:`MAX_GRAPH_ROUNDS` are done; each time
    is the median of the last :data:`GRAPH_ROUNDS` rounds.  Every round is kept
    (``compiled_rounds_ms``, ``eager_rounds_ms``) and ``rounds_stable`` says whether they agreed.
    CPU: one ``bench`` call each.

    Why rounds: a launch-bound graph's time is set by the CPU, and the GPU box has slow spells.
    On an H200 one do_bench of ResNet-18's training forward read 2.96 ms where runs before and after
    read 1.71-1.77 ms. A freshly started box read rounds of [1.83, 2.69, 2.64, 2.68, 1.77] ms, and even
    the GPU-bound backward graph read 10-20% slow in the same spell.  A median over five
    consecutive rounds was not enough; waiting for rounds that agree is."""

    def try_eager(fn: Callable[[], float]) -> float | None:
        try:
            return fn()
        except Exception:  # noqa: BLE001 - eager of a post-grad graph can fail on exotic ops
            return None

    if not cuda:
        out: dict[str, Any] = {"compiled_ms": bench(compiled)}
        if eager is not None and (e := try_eager(lambda: bench(eager))) is not None:
            out["eager_ms"] = e
        return out
    from triton.testing import do_bench  # noqa: PLC0415

    c_rounds: list[float] = []
    e_rounds: list[float] = []
    while len(c_rounds) < MAX_GRAPH_ROUNDS:
        c_rounds.append(float(do_bench(compiled, warmup=10, rep=40, return_mode="median")))
        if eager is not None:
            e = try_eager(lambda: float(do_bench(eager, warmup=10, rep=40, return_mode="median")))
            if e is None:
                eager, e_rounds = None, []
            else:
                e_rounds.append(e)
        if stable_window(c_rounds) is not None and (not e_rounds or stable_window(e_rounds) is not None
                                                    or len(c_rounds) >= 2 * GRAPH_ROUNDS):
            break
    med = lambda xs: sorted(xs[-GRAPH_ROUNDS:])[len(xs[-GRAPH_ROUNDS:]) // 2]  # noqa: E731 - the middle one
    out = {"compiled_ms": med(c_rounds), "compiled_rounds_ms": c_rounds,
           "rounds_stable": stable_window(c_rounds) is not None}
    if e_rounds:
        out.update(eager_ms=med(e_rounds), eager_rounds_ms=e_rounds)
    return out


@contextlib.contextmanager
def cupti_detached(device: str):
    """Detach CUPTI from the process for the duration of a timing run (CUDA; nothing on CPU).

    Yields a one-line status for the run message.  Why: a torch.profiler session (the agent
    profiles the script's calls 2-11 of each graph, ``Agent.on_graph_call``) leaves Kineto's CUPTI
    subscriber attached after it ends, and every later kernel launch pays for its callbacks.
    Measured on an H200 (benchmarks/profiler_after_effect.py, ResNet-18 training, small): the
    launch-bound forward graph took 1.21-1.30x its time before the sessions, graphs whose time is
    GPU-bound 1.00x; after an empty session ended with ``TEARDOWN_CUPTI=1`` 0.96-1.05x.

    Kineto reads ``TEARDOWN_CUPTI`` whenever a session ends (``CuptiActivityApi::teardownContext``),
    so this sets it, runs one empty session (~12 ms) and keeps it set until the run ends: the run's
    own CUPTI sessions (:func:`in_graph_times`) then detach as they end too, and re-attach lazily
    (``DISABLE_CUPTI_LAZY_REINIT`` unset).  Restored afterwards: with it set, sessions started one
    right after another lost kernel records (seen when it was set for the whole agent), which the
    script's own profiled calls must not.  Skipped when the user set ``TEARDOWN_CUPTI`` themselves,
    when a profiler is running (the script's) or CUDA is not initialised.
    """
    if not device.startswith("cuda"):
        yield "CPU: not applicable"
        return
    if "TEARDOWN_CUPTI" in os.environ:
        yield f"TEARDOWN_CUPTI={os.environ['TEARDOWN_CUPTI']} set by the user; left as is"
        return
    if adapter.profiler_active() or not (torch.cuda.is_available() and torch.cuda.is_initialized()):
        yield "not detached (a profiler is running, or CUDA is not initialised)"
        return
    os.environ["TEARDOWN_CUPTI"] = "1"
    try:
        try:
            from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]):
                torch.cuda.synchronize()
            torch.empty(1, device=device).zero_()  # a runtime call after the session: finalisation runs there
            torch.cuda.synchronize()
            status = ("detached before timing (an empty profiler session ended with TEARDOWN_CUPTI=1): earlier "
                      "profiler sessions leave CUPTI attached, which slows every kernel launch")
        except Exception as e:  # noqa: BLE001 - timing goes on, attached
            status = f"not detached ({type(e).__name__}: {e})"
        yield status
    finally:
        os.environ.pop("TEARDOWN_CUPTI", None)


def cpu_quantiles(benchmarker: Any, fn: Callable[[], Any], warmup_ms: float = 5,
                  rep_ms: float = 50) -> tuple[float, float, float]:
    """(median, p20, p80) in ms of ``fn``'s calls on the CPU, run by Inductor's
    ``benchmarker.benchmark_cpu`` (``warmup_ms`` of calls, then ``rep_ms`` of timed calls).

    ``benchmark_cpu`` returns only the median of its per-call wall-clock times, so each call also
    reads ``time.perf_counter`` around ``fn`` itself; the warm-up calls are told apart by the same
    rule benchmark_cpu uses (they end with the first call that ends ``warmup_ms`` after the first
    began), and the three figures are quantiles of the timed calls.  Raises what ``fn`` raises."""
    import statistics  # noqa: PLC0415
    import time  # noqa: PLC0415

    calls: list[tuple[float, float]] = []

    def timed() -> Any:
        t0 = time.perf_counter()
        out = fn()
        calls.append((t0, time.perf_counter()))
        return out

    benchmarker.benchmark_cpu(timed, warmup=warmup_ms, rep=rep_ms)
    start = calls[0][0]
    first = next((i + 1 for i, (_, end) in enumerate(calls) if (end - start) * 1e3 > warmup_ms), 0)
    ms = [(end - t0) * 1e3 for t0, end in calls[first:]] or [(end - t0) * 1e3 for t0, end in calls]
    if len(ms) < 2:
        return ms[0], ms[0], ms[0]
    q = statistics.quantiles(ms, n=10, method="inclusive")  # q[1] is the 20th percentile, q[7] the 80th
    return statistics.median(ms), q[1], q[7]


def time_graph(output_path: str, eager_gm: Any, device: str, rep: int = 50,
               cancel: threading.Event | None = None, progress: Callable[[str], None] | None = None,
               num_gb: dict[str, float] | None = None, script: dict[str, Any] | None = None) -> dict[str, Any]:
    """Time one compiled graph.

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
    what the agent saw of the script's own calls of this graph (``calls``, ``int_inputs`` from the
    first call, ``profiles``: CUPTI records of later calls, ``status``); with it, integer inputs are
    the script's (``inputs`` says so) and Triton kernels get ``in_script_ms`` (median over the
    profiled calls, ``in_script_calls`` of them; top-level ``in_script`` says what happened, and
    ``in_script_sum_ms`` sums the kernel times where every kernel has one).  ``script["configs"]``
    (kernel name -> ``{"config", "of"}``: the launch config each Triton kernel autotuned to in the
    script's first call, out of how many) pins the timed kernels to the same configs
    (tracer.adapter.pin_configs); each such kernel gets ``config``, ``configs_tried`` and
    ``config_pinned``, and top-level ``configs`` says how many were pinned.  ``cancel`` (set from another thread) stops between kernels;
    the result then has ``cancelled: True`` and the kernels timed so far.  Raises whatever importing or running the module raises.
    """
    mod = adapter.load_output_module(output_path)
    with open(output_path, encoding="utf-8") as f:
        parsed = parse_wrapper(f.read())
    backends = {k["name"]: k["backend"] for k in parsed}
    sources = {k["name"]: k["source"] for k in parsed}
    from inductor_step.tracer.links import _params  # noqa: PLC0415 - parameter names of a kernel's source

    params = {k["name"]: _params(k["backend"], k["source"]) for k in parsed if k["backend"] in ("cpp", "triton")}
    peak = device_peaks(device)
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
        if not cuda:
            return None
        try:
            from triton.testing import do_bench_cudagraph  # noqa: PLC0415

            def call() -> Any:
                kw = dict(kwargs)
                if "stream" in kw:  # the wrapper's stream handle: use the capturing stream instead
                    kw["stream"] = torch._C._cuda_getCurrentRawStream(torch.cuda.current_device())
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
    with torch.no_grad():
        args = _graph_args(mod)
        used = _use_script_inputs(args, (script or {}).get("int_inputs") or {})
        inputs = ("random tensors of the compiled shapes (get_args)" if not used else
                  f"random floats (get_args); {used} integer tensor(s) (indices, masks, counters) from the script's first call")
        calls: list = []

        def record(name: str, fn: Callable, a: tuple, k: dict) -> Any:
            calls.append((name, fn, a, k))
            return fn(*a, **k)

        with _hooked(mod, backends, record):
            mod.call(list(args))
        eager_fn = None
        if eager_gm is not None:
            try:
                eager_gm.recompile()
                eager_fn = lambda: eager_gm(*args)  # noqa: E731
            except Exception:  # noqa: BLE001
                eager_fn = None
        graph_rounds = whole_graph_rounds(lambda: mod.call(list(args)), eager_fn, cuda, bench)
        compiled_ms, eager_ms = graph_rounds["compiled_ms"], graph_rounds.get("eager_ms")
        in_graph, in_graph_status, cupti_status = (None, "CPU: not applicable", "CPU: not applicable")
        if cuda:
            if progress is not None:
                progress("every kernel inside one CUDA-graph replay of the graph")
            in_graph, in_graph_status, cupti_status = in_graph_times(mod, backends, args, [c[0] for c in calls])
        in_script, in_script_status = {}, "CPU: not applicable"
        if cuda:
            profiles = (script or {}).get("profiles") or []
            in_script = script_times([c[0] for c in calls], backends, profiles) if profiles else {}
            in_script_status = ((script or {}).get("status") or
                                (f"ok: {len(profiles)} of the script's calls profiled" if profiles else
                                 f"the script called this graph {(script or {}).get('calls', 0)} time(s); "
                                 "calls after the first are profiled when timing is asked for at start (--run) "
                                 "or in the UI"))
        kernels = []
        seen: dict[str, int] = {}
        cancelled = False
        for i, (name, fn, a, k) in enumerate(calls):
            if cancel is not None and cancel.is_set():
                cancelled = True
                break
            if progress is not None:
                progress(f"kernel {i + 1}/{len(calls)}: {name}")
            base = name.split("#")[0]
            backend = "extern" if base.startswith(("extern_kernels", "torch.ops")) else backends.get(name, "?")
            med, lo, hi = bench_q(lambda fn=fn, a=a, k=k: fn(*a, **k))
            seen[name] = seen.get(name, 0) + 1
            entry: dict[str, Any] = {"name": name, "call": seen[name], "backend": backend,
                                     "median_ms": med, "p20_ms": lo, "p80_ms": hi}
            if (name, seen[name]) in in_script:
                entry["in_script_ms"], entry["in_script_calls"] = in_script[(name, seen[name])]
            if backend == "triton":
                cfg = script_configs.get(name) or {}
                if cfg.get("config"):
                    entry["config"] = cfg["config"]
                    if cfg.get("of"):
                        entry["configs_tried"] = cfg["of"]
                    entry["config_pinned"] = name in pinned
            if in_graph is not None:
                entry.update(in_graph[i])
            elif cuda:
                entry["warm_ms"] = bench_warm(fn, a, k)
            gb, gb_source = kernel_gb(name, backend, sources.get(name, ""), a, params.get(name, []),
                                      (num_gb or {}).get(name))
            if gb is not None and med > 0:
                entry.update(gb=gb, gb_source=gb_source, gbps=gb / (med / 1e3))
                if peak.get("bw_gbps"):
                    entry["pct_peak_bw"] = 100.0 * entry["gbps"] / peak["bw_gbps"]
            flops, dtype = mm_flops(name, a, k)
            if flops and med > 0:
                entry["tflops"] = flops / (med / 1e3) / 1e12
                entry["dtype"] = dtype
                key = dtype if dtype in ("float16", "bfloat16", "float32") else None
                if key and peak["tflops"].get(key):
                    entry["pct_peak_tflops"] = 100.0 * entry["tflops"] / peak["tflops"][key]
            kernels.append(entry)
    total = sum(k["median_ms"] for k in kernels)
    for k in kernels:
        k["share"] = (k["median_ms"] / total) if total else 0.0
    out_extra: dict[str, Any] = {}
    if kernels and all(k.get("in_graph_ms") is not None for k in kernels):
        out_extra["in_graph_sum_ms"] = sum(k["in_graph_ms"] for k in kernels)
    if cuda:
        out_extra["in_script"] = in_script_status
    out_extra["inputs"] = inputs
    if script_configs:
        tuned = sum(1 for c in script_configs.values() if (c.get("of") or 0) > 1)
        out_extra["configs"] = (f"{len(pinned)} of {len(script_configs)} Triton kernels timed with the launch config "
                                f"the script's run autotuned to ({tuned} chose among several)")
    out_extra["graph_rounds"] = {k: v for k, v in graph_rounds.items() if k.endswith("_rounds_ms") or k == "rounds_stable"}
    return {**out_extra, "compiled_ms": compiled_ms, "eager_ms": eager_ms, "kernel_sum_ms": total, "kernels": kernels,
            "peak": peak, "cancelled": cancelled, "in_graph": in_graph_status, "in_graph_cupti": cupti_status,
            "method": "triton.testing.do_bench (median, L2 flushed)" if cuda else "benchmarker.benchmark_cpu (median, 20-80% spread of the same calls)",
            "threads": torch.get_num_threads(), "pid": os.getpid()}
