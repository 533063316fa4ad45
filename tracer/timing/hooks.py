"""Routing every kernel call of an Inductor output module through a hook (the timing harness's eyes)."""

from __future__ import annotations

import contextlib
from typing import Any, Callable

import torch

from inductor_step.tracer.adapter.collectives import collective_path

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
    and of every collective (``torch.ops._c10d_functional.*``, :func:`tracer.adapter.collectives.collective_path`)
    go through ``hook`` named as parse_wrapper names them: ``torch.ops.aten.X.default#N``, N counting
    that op's calls in the graph.  Every other attribute is the real one (``real``: torch.ops, or the
    stand-ins of :func:`tracer.adapter.collectives.stand_ins_in_module`, whose collectives the hook then gets).
    """

    def __init__(self, path: str, real: Any, hook: Hook, ops: set[str], counts: dict[str, int]):
        self._path, self._real, self._hook, self._ops, self._counts = path, real, hook, ops, counts

    def __getattr__(self, item: str) -> Any:
        real = getattr(self._real, item)
        path = f"{self._path}.{item}"
        coll = collective_path(path)  # a collective is always seen, whether or not the wrapper's parse listed it
        if (path in self._ops or coll == "leaf") and callable(real):
            def call(*a: Any, **k: Any) -> Any:
                n = self._counts.get(path, 0)
                self._counts[path] = n + 1
                return self._hook(f"{path}#{n}", real, a, k)

            return call
        if coll == "prefix" or any(op.startswith(path + ".") for op in self._ops):
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
    mod_torch = getattr(mod, "torch", None)
    stand_ins = getattr(mod_torch, "_inductor_step_stand_ins", False)  # collectives replaced: see them too
    if ops or stand_ins:
        counts: dict[str, int] = {}
        if mod_torch is torch or stand_ins:
            saved["torch"] = mod_torch
            mod.torch = _TorchModule(mod_torch, _OpPath("torch.ops", mod_torch.ops, hook, ops, counts))
        if getattr(mod, "aten", None) is torch.ops.aten:  # the wrapper's alias: aten = torch.ops.aten
            saved["aten"] = mod.aten
            mod.aten = _OpPath("torch.ops.aten", torch.ops.aten, hook, ops, counts)
    try:
        yield
    finally:
        for name, obj in saved.items():
            setattr(mod, name, obj)
