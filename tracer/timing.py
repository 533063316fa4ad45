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
from typing import Any, Callable

import torch

from tracer import adapter
from tracer.codeparse import parse_wrapper


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


def time_graph(output_path: str, eager_gm: Any, device: str, rep: int = 50) -> dict[str, Any]:
    """Time one compiled graph.

    ``output_path`` is Inductor's output-code file (from the ``inductor_output_code`` event),
    ``eager_gm`` the post-grad GraphModule it was compiled from (or None), ``device`` ``"cpu"`` or
    ``"cuda"``.  Returns ``compiled_ms`` and ``eager_ms`` (median, ms), ``kernel_sum_ms`` and
    ``kernels``: one dict per kernel call in call order with ``name``, ``call`` (1 for a kernel's
    first call in the graph, 2 for its second, ...), ``backend``, ``median_ms`` and, on GPU,
    ``p20_ms``/``p80_ms``.  Raises whatever importing or running the module raises.
    """
    mod = adapter.load_output_module(output_path)
    with open(output_path, encoding="utf-8") as f:
        parsed = parse_wrapper(f.read())
    backends = {k["name"]: k["backend"] for k in parsed}
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
        for name, fn, a, k in calls:
            base = name.split("#")[0]
            med, lo, hi = bench_q(lambda fn=fn, a=a, k=k: fn(*a, **k))
            seen[name] = seen.get(name, 0) + 1
            kernels.append({"name": name, "call": seen[name],
                            "backend": "extern" if base.startswith("extern_kernels") else backends.get(name, "?"),
                            "median_ms": med, "p20_ms": lo, "p80_ms": hi})
    total = sum(k["median_ms"] for k in kernels)
    for k in kernels:
        k["share"] = (k["median_ms"] / total) if total else 0.0
    return {"compiled_ms": compiled_ms, "eager_ms": eager_ms, "kernel_sum_ms": total, "kernels": kernels,
            "method": "triton.testing.do_bench (median, L2 flushed)" if cuda else "benchmarker.benchmark_cpu (median)",
            "threads": torch.get_num_threads(), "pid": os.getpid()}
