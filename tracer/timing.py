"""Run and time a compiled graph and each of its kernels (the `run` stage).

Times are medians in ms: on CPU from Inductor's own benchmarker
(``torch._inductor.runtime.benchmarking.benchmarker.benchmark_cpu``, median of repeated wall-clock
runs); on GPU from ``triton.testing.do_bench`` (CUDA events, L2 flushed before each run) with
quantiles 0.5/0.2/0.8, so the spread is reported too.  (Inductor's ``benchmark_gpu`` returns the
minimum, which is why it is not used here.)  The compiled graph is Inductor's output-code module
``call(args)``; "eager" is the same post-grad ATen graph run op by op by torch.fx on the same
inputs; kernels are timed one at a time on the arguments they received in one recorded ``call``.
Inputs come from the output module's own ``get_args()`` (random tensors of the compiled shapes).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import threading
from typing import Any, Callable

import torch

from tracer import adapter
from tracer.codeparse import parse_wrapper


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


def kernel_gb(name: str, backend: str, source: str, args: tuple, params: list[str]) -> tuple[float | None, str]:
    """Bytes moved by one kernel call, in GB, and where the figure comes from.

    Triton kernels compiled with ``config.benchmark_kernel`` carry Inductor's own estimate
    (``inductor_meta['kernel_num_gb']``); otherwise the tensors passed to it are counted in full,
    once per read and once per write (``in_out_ptr`` twice): an upper bound, since a kernel that
    reads a slice of a tensor is charged for all of it, so % of peak can pass 100% there.
    """
    if backend == "triton":
        m = _NUM_GB.search(source or "")
        if m:
            return float(m.group(1)), "inductor kernel_num_gb"
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


class _Recorder:
    """Stands in for a kernel in the output module and records each call's arguments."""

    def __init__(self, name: str, fn: Callable, calls: list):
        self.name, self.fn, self.calls = name, fn, calls

    def __call__(self, *a: Any, **k: Any) -> Any:
        self.calls.append((self.name, self.fn, a, k))
        return self.fn(*a, **k)


class _TritonRecorder:
    """Stands in for a Triton CachingAutotuner: records ``.run(...)`` calls."""

    def __init__(self, name: str, kernel: Any, calls: list):
        self._name, self._kernel, self._calls = name, kernel, calls

    def run(self, *a: Any, **k: Any) -> Any:
        self._calls.append((self._name, self._kernel.run, a, k))
        return self._kernel.run(*a, **k)

    def __getattr__(self, item: str) -> Any:
        return getattr(self._kernel, item)


class _ExternRecorder:
    """Stands in for ``extern_kernels``: records ``extern_kernels.mm(...)`` and friends."""

    def __init__(self, real: Any, calls: list):
        self._real, self._calls, self._n = real, calls, 0

    def __getattr__(self, item: str) -> Any:
        fn = getattr(self._real, item)
        if not callable(fn):
            return fn

        def rec(*a: Any, **k: Any) -> Any:
            name = f"extern_kernels.{item}#{self._n}"
            self._n += 1
            self._calls.append((name, fn, a, k))
            return fn(*a, **k)

        return rec


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
               cancel: threading.Event | None = None, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Time one compiled graph.

    ``output_path`` is Inductor's output-code file (from the ``inductor_output_code`` event),
    ``eager_gm`` the post-grad GraphModule it was compiled from (or None), ``device`` ``"cpu"`` or
    ``"cuda"``.  Returns ``compiled_ms`` and ``eager_ms`` (median, ms), ``kernel_sum_ms`` and
    ``kernels``: one dict per kernel call in call order with ``name``, ``call`` (1 for a kernel's
    first call in the graph, 2 for its second, ...), ``backend``, ``median_ms`` and, on GPU,
    ``p20_ms``/``p80_ms`` and ``warm_ms`` (L2 warm, CUDA-graph replay, as a profiler sees it
    inside the model; ``median_ms`` flushes L2 first and is what GB/s uses); ``gb`` (bytes moved, GB) with ``gb_source``, ``gbps`` and
    ``pct_peak_bw``; for matmuls ``tflops`` and ``pct_peak_tflops``.  ``peak`` says where the
    device's peak figures come from.  ``cancel`` (set from another thread) stops between kernels;
    the result then has ``cancelled: True`` and the kernels timed so far.  Raises whatever importing or running the module raises.
    """
    mod = adapter.load_output_module(output_path)
    with open(output_path, encoding="utf-8") as f:
        parsed = parse_wrapper(f.read())
    backends = {k["name"]: k["backend"] for k in parsed}
    sources = {k["name"]: k["source"] for k in parsed}
    from tracer.links import _params  # noqa: PLC0415 - parameter names of a kernel's source

    params = {k["name"]: _params(k["backend"], k["source"]) for k in parsed if k["backend"] in ("cpp", "triton")}
    peak = device_peaks(device)
    b = adapter.benchmarker()
    cuda = device.startswith("cuda")

    def bench_q(fn: Callable) -> tuple[float, float | None, float | None]:
        """(median, p20, p80) in ms; CPU gives only the median."""
        if cuda:
            from triton.testing import do_bench  # noqa: PLC0415

            q = do_bench(fn, warmup=25, rep=100, quantiles=[0.5, 0.2, 0.8])
            return float(q[0]), float(q[1]), float(q[2])
        return float(b.benchmark_cpu(fn, warmup=5, rep=rep)), None, None

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


    with torch.no_grad():
        args = _graph_args(mod)
        calls: list = []
        saved: dict[str, Any] = {}
        for name, backend in backends.items():
            if backend in ("cpp", "triton") and hasattr(mod, name):
                saved[name] = getattr(mod, name)
                rec = _TritonRecorder(name, saved[name], calls) if backend == "triton" else _Recorder(name, saved[name], calls)
                setattr(mod, name, rec)
        if hasattr(mod, "extern_kernels"):
            saved["extern_kernels"] = mod.extern_kernels
            mod.extern_kernels = _ExternRecorder(mod.extern_kernels, calls)
        try:
            mod.call(list(args))
        finally:
            for name, obj in saved.items():
                setattr(mod, name, obj)
        compiled_ms = bench(lambda: mod.call(list(args)))
        eager_ms = None
        if eager_gm is not None:
            try:
                eager_gm.recompile()
                eager_ms = bench(lambda: eager_gm(*args))
            except Exception:  # noqa: BLE001 - eager of a post-grad graph can fail on exotic ops
                eager_ms = None
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
            if cuda:
                entry["warm_ms"] = bench_warm(fn, a, k)
            gb, gb_source = kernel_gb(name, backend, sources.get(name, ""), a, params.get(name, []))
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
    return {"compiled_ms": compiled_ms, "eager_ms": eager_ms, "kernel_sum_ms": total, "kernels": kernels,
            "peak": peak, "cancelled": cancelled,
            "method": "triton.testing.do_bench (median, L2 flushed)" if cuda else "benchmarker.benchmark_cpu (median)",
            "threads": torch.get_num_threads(), "pid": os.getpid()}
