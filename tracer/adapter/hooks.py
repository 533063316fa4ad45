"""Hooks and configuration: the Inductor settings the agent needs (caches off, provenance on), the custom passes and final hooks it chains onto the user's, and the wrappers that record each kernel's bytes, arguments and the script's calls of a compiled graph."""

from __future__ import annotations

import functools
import logging
import os
import re
import threading
import traceback
import weakref
from typing import Any, Callable

import torch


from inductor_step.tracer.adapter.base import (MAX_TEXT, _unavailable, current_graph, install_wrapper, log,  # noqa: F401
                                               safe, wrapped_by_us)


# ----------------------------------------------------------------------------- configuration

def configure_inductor(caches: bool = False) -> dict[str, Any]:
    """Settings the agent needs on every compile; returns what was set, for the session header.

    Caches are turned off because an FX-graph or AOT-autograd cache hit skips every Inductor
    hook, unless ``caches`` (``--caches on``, the caches' verdicts are then recorded);
    provenance tracking level 1 gives ``inductor_provenance_tracking_node_mappings``.
    """
    from torch._inductor import config as ic  # noqa: PLC0415

    done: dict[str, Any] = {}
    for mod, name, value in () if caches else (
        (ic, "fx_graph_cache", False),
        (ic, "fx_graph_remote_cache", False),
        (ic, "autotune_local_cache", False),
        (torch._functorch.config, "enable_autograd_cache", False),
        (torch._functorch.config, "enable_remote_autograd_cache", False),
    ):
        if _set_config(mod, name, value):
            done[f"{mod.__name__.split('.')[-2] if mod is not ic else 'inductor'}.{name}"] = value
    if hasattr(ic.trace, "provenance_tracking_level"):
        _set_config(ic.trace, "provenance_tracking_level", 1)
        done["inductor.trace.provenance_tracking_level"] = 1
    # config.benchmark_kernel would give Inductor's own per-kernel bytes (kernel_num_gb) but changes
    # the generated code (kernels Inductor would reuse get separate copies), so it stays as the user
    # set it; bytes then come from the kernel's tensor arguments (tracer.timing.kernel_gb)
    return done


def _set_config(mod: Any, name: str, value: Any) -> bool:
    """Set a torch config entry for every thread.

    From torch 2.13 a plain ``setattr`` is a per-thread override (a ContextVar), which the CUDA
    autograd threads that compile a lazy backward would not see; so the entry's default is set too.
    """
    if not hasattr(mod, name):
        return False
    setattr(mod, name, value)
    entry = getattr(mod, "_config", {}).get(name) if isinstance(getattr(mod, "_config", None), dict) else None
    if entry is not None and hasattr(entry, "default"):
        try:
            entry.default = value
        except Exception:  # noqa: BLE001
            pass
    return True


class _ChainedGraphPass:
    """A custom FX pass that runs ours, then whatever the user had set (a callable or a list)."""

    def __init__(self, ours: Callable[[Any], None], previous: Any):
        self.ours = ours
        self.previous = previous

    def __call__(self, graph: Any) -> None:
        self.ours(graph)
        prev = self.previous
        for p in (prev if isinstance(prev, (list, tuple)) else [prev] if prev is not None else []):
            p(graph)

    def __deepcopy__(self, memo: dict) -> Any:  # torch copies its config; ours holds live hooks
        return self

    def uuid(self) -> Any:  # CustomGraphPass protocol: ours only observe, so the cache key is the user's pass's
        return ("inductor-step", _previous_uuid(self.previous))

    def __reduce__(self) -> Any:  # Inductor pickles its config into the FX graph cache key
        return (_pass_token, (repr(self.uuid()),))


class _ChainedSchedulerPass:
    """A scheduler pass ``nodes -> nodes``: ours (observes) then the user's, if any."""

    def __init__(self, ours: Callable[[list], None], previous: Any):
        self.ours = ours
        self.previous = previous

    def __call__(self, nodes: list) -> list:
        self.ours(nodes)
        if self.previous is not None:
            nodes = self.previous(nodes)
        return nodes

    def __deepcopy__(self, memo: dict) -> Any:  # torch copies its config; ours holds live hooks
        return self

    def uuid(self) -> Any:
        return ("inductor-step", _previous_uuid(self.previous))

    def __reduce__(self) -> Any:  # torch 2.14 pickles _post_fusion_custom_pass into the FX graph cache key
        return (_pass_token, (repr(self.uuid()),))


def _pass_token(uuid: str) -> str:
    """What one of our chained passes pickles as (only ever hashed into Inductor's cache keys)."""
    return uuid


def _previous_uuid(prev: Any) -> Any:
    """The cache identity of the user's own pass(es) that ours chain to: their ``uuid()``; a pass without one
    gets its id (no two processes share it: Inductor's cache misses, as it would bypass for theirs)."""
    if prev is None:
        return None
    if isinstance(prev, (list, tuple)):
        return tuple(_previous_uuid(p) for p in prev)
    try:
        return prev.uuid()
    except Exception:  # noqa: BLE001
        return ("no uuid", id(prev))


def _scheduler_pass_base() -> type:
    """What Inductor's FX graph cache accepts as a scheduler pass: CustomSchedulerPass (torch 2.14), else
    CustomGraphPass (torch 2.11 checks for that); anything else makes the cache bypass."""
    try:
        from torch._inductor import custom_graph_pass as cgp  # noqa: PLC0415

        return getattr(cgp, "CustomSchedulerPass", None) or cgp.CustomGraphPass
    except Exception:  # noqa: BLE001
        return object


def _graph_pass_base() -> type:
    try:
        from torch._inductor.custom_graph_pass import CustomGraphPass  # noqa: PLC0415

        return CustomGraphPass
    except Exception:  # noqa: BLE001
        return object


def install_passes(on_pre_grad: Callable, on_post_grad_pre: Callable, on_post_grad_post: Callable,
                   on_pre_fusion: Callable, on_post_fusion: Callable) -> list[str]:
    """Chain our observers into Inductor's custom-pass hooks; returns the hooks that exist here."""
    from torch._inductor import config as ic  # noqa: PLC0415

    base = _graph_pass_base()
    graph_cls = type("InductorStepGraphPass", (_ChainedGraphPass, base), {}) if base is not object else _ChainedGraphPass
    installed = []
    for name, fn in (("pre_grad_custom_pass", on_pre_grad),
                     ("post_grad_custom_pre_pass", on_post_grad_pre),
                     ("post_grad_custom_post_pass", on_post_grad_post)):
        if hasattr(ic, name):
            _set_config(ic, name, graph_cls(fn, getattr(ic, name)))
            installed.append(name)
    sched = _scheduler_pass_base()  # torch 2.14 bypasses the FX graph cache for a pass that is not one
    sched_cls = type("InductorStepSchedulerPass", (_ChainedSchedulerPass, sched), {}) if sched is not object \
        else _ChainedSchedulerPass
    for name, fn in (("_pre_fusion_custom_pass", on_pre_fusion), ("_post_fusion_custom_pass", on_post_fusion)):
        if hasattr(ic, name):
            _set_config(ic, name, sched_cls(fn, getattr(ic, name)))
            installed.append(name)
    return installed


def install_final_hooks(on_lowered_graph: Callable[[Any], None],
                        on_final_order: Callable[[list], None]) -> list[str]:
    """Observe the post-grad graph Inductor lowers and the node order it generates code in.

    ``on_lowered_graph(graph)``: at the start of ``GraphLowering.run`` (torch/_inductor/graph.py),
    after every post-grad pass (``post_grad_custom_post_pass`` runs before Inductor's last ones);
    subgraph lowerings are skipped.  ``on_final_order(nodes)``: ``torch._inductor.debug.log_ir_post_fusion``,
    which the scheduler calls after ``reorder_for_peak_memory`` and its other reorders, just
    before codegen, with the nodes in the order ``ir_post_fusion.txt`` lists them.  Returns the
    hooks installed.
    """
    done = []
    try:
        from torch._inductor.graph import GraphLowering  # noqa: PLC0415

        real_run = GraphLowering.run
        if not wrapped_by_us(real_run):
            def run(self: Any, *a: Any, **k: Any) -> Any:
                if type(self) is GraphLowering or type(self).__name__ == "GraphLowering":
                    try:
                        on_lowered_graph(self.module.graph)
                    except Exception as e:  # noqa: BLE001
                        if type(e).__name__ == "_Quit":
                            raise
                        log.debug("lowered graph hook", exc_info=True)
                return real_run(self, *a, **k)

            install_wrapper(GraphLowering, "run", run)
        done.append("GraphLowering.run")
    except Exception:  # noqa: BLE001
        pass
    try:
        from torch._inductor import debug  # noqa: PLC0415

        real_log = debug.log_ir_post_fusion
        if not wrapped_by_us(real_log):
            def log_ir_post_fusion(nodes: Any) -> None:
                real_log(nodes)
                try:
                    on_final_order(list(nodes))
                except Exception as e:  # noqa: BLE001
                    if type(e).__name__ == "_Quit":
                        raise
                    log.debug("final order hook", exc_info=True)

            install_wrapper(debug, "log_ir_post_fusion", log_ir_post_fusion)
        done.append("torch._inductor.debug.log_ir_post_fusion")
    except Exception:  # noqa: BLE001
        pass
    return done


_KERNEL_NUM_GB: dict[str, float] = {}


def install_kernel_bytes_hook() -> bool:
    """Record Inductor's own byte estimate for every Triton kernel it defines, without changing
    the code it generates.

    Inductor computes ``kernel_num_gb`` (``SIMDKernel.estimate_kernel_num_bytes() / 1e9``: each
    argument's accessed elements x dtype size, slices counted by the part read) only when
    ``config.benchmark_kernel`` is on, and that flag also changes the emitted kernels.  Instead we
    wrap ``TritonScheduling.define_kernel`` (torch/_inductor/codegen/triton.py) and ask the kernel
    object for the same estimate once its name is known.  Results are collected per graph by
    :func:`take_kernel_num_gb`.  Returns False where this torch has no such hook (CPU-only use is
    unaffected: C++ kernels have no estimate).
    """
    try:
        from torch._inductor.codegen.triton import TritonScheduling  # noqa: PLC0415
    except Exception:  # noqa: BLE001
        return False
    real = TritonScheduling.define_kernel
    if wrapped_by_us(real):
        return True

    def define_kernel(self: Any, src_code: str, node_schedule: Any, kernel: Any) -> str:
        name = real(self, src_code, node_schedule, kernel)
        try:
            if name not in _KERNEL_NUM_GB:
                _KERNEL_NUM_GB[name] = float(kernel.estimate_kernel_num_bytes()) / 1e9
        except Exception:  # noqa: BLE001 - an estimate we cannot get is left out, never fatal
            pass
        return name

    install_wrapper(TritonScheduling, "define_kernel", define_kernel)
    return True


_KERNEL_DEFS: list[dict[str, Any]] = []


def _kernel_args_snapshot(args: Any) -> dict[str, Any]:
    """One ``KernelArgs`` (torch/_inductor/codegen/common.py) as plain data: buffer name ->
    ``{"in": ptr, "out": ptr | "REMOVED", "inplace": ptr, "chain": [names]}`` (the pointer names
    the kernel's source uses for that buffer), and ``call_args``: the buffer names the wrapper's
    call passes (an in-place group passes its last name)."""
    ptrs: dict[str, dict[str, Any]] = {}
    for name, inner in dict(getattr(args, "input_buffers", {}) or {}).items():
        if isinstance(inner, str):
            ptrs.setdefault(str(name), {})["in"] = inner
    for name, inner in dict(getattr(args, "output_buffers", {}) or {}).items():
        ptrs.setdefault(str(name), {})["out"] = inner if isinstance(inner, str) else "REMOVED"
    call_args: list[str] = []
    seen: set[int] = set()
    for name, ib in dict(getattr(args, "inplace_buffers", {}) or {}).items():
        inner = getattr(ib, "inner_name", None)
        if not isinstance(inner, str):
            ptrs.setdefault(str(name), {})["inplace"] = "REMOVED"
            continue
        chain = [str(n) for n in getattr(ib, "other_names", [])]
        ptrs.setdefault(str(name), {}).update({"inplace": inner, "chain": chain})
        if id(ib) not in seen:
            seen.add(id(ib))
            call_args.append(chain[-1] if chain else str(name))
    for name, d in ptrs.items():
        if "inplace" in d:
            continue
        if "in" in d or d.get("out") not in (None, "REMOVED"):
            call_args.append(name)
    return {"ptrs": ptrs, "call_args": call_args}


def install_kernel_args_hook() -> list[str]:
    """Record, for every C++ and Triton kernel Inductor defines, which pointer names its source
    uses for which buffer (the kernel's ``KernelArgs``), without changing the generated code.

    Wraps ``CppScheduling.define_kernel(src_code, nodes, kernel_args)`` (torch/_inductor/codegen/cpp.py)
    and ``TritonScheduling.define_kernel(src_code, node_schedule, kernel)`` (codegen/triton.py):
    Inductor defines a kernel once per generated call (a repeated source gets the same name), so
    each record belongs to one call of the wrapper.  Collected per graph by :func:`take_kernel_defs`.
    Returns the hooks installed (none where this torch has neither).
    """
    done = []
    def nodes_of(a: tuple, k: dict) -> dict[str, list[str]]:
        nodes = a[1] if len(a) > 1 else k.get("nodes", k.get("node_schedule"))
        names: list[str] = []
        bufs: list[str] = []
        for n in nodes or []:
            if not hasattr(n, "get_buffer_names"):  # Triton's EnableReduction/DisableReduction markers
                continue
            for m in (n.get_nodes() if hasattr(n, "get_nodes") else [n]):
                names.append(m.get_name())
                bufs += [b for b in sorted(m.get_buffer_names(), key=lambda s: (len(s), s)) if b not in bufs]
        return {"nodes": names, "buffers": bufs}

    def cpp_args(self: Any, a: tuple, k: dict) -> Any:
        # CppScheduling.flush passes no kernel_args: the kernel group's own KernelArgs
        args = a[2] if len(a) > 2 else k.get("kernel_args")
        return args if args is not None else getattr(getattr(self, "kernel_group", None), "args", None)

    def triton_args(self: Any, a: tuple, k: dict) -> Any:
        return getattr(a[2] if len(a) > 2 else k.get("kernel"), "args", None)

    for mod, cls_name, get_args in (("torch._inductor.codegen.cpp", "CppScheduling", cpp_args),
                                    ("torch._inductor.codegen.triton", "TritonScheduling", triton_args)):
        try:
            import importlib  # noqa: PLC0415

            cls = getattr(importlib.import_module(mod), cls_name)
        except Exception:  # noqa: BLE001
            continue
        real = cls.define_kernel
        if getattr(real, "_inductor_step_args", False):
            done.append(f"{cls_name}.define_kernel")
            continue

        def define_kernel(self: Any, *a: Any, _real: Callable = real, _get: Callable = get_args, **k: Any) -> str:
            name = _real(self, *a, **k)
            try:
                args = _get(self, a, k)
                if args is not None:
                    _KERNEL_DEFS.append({"name": str(name), **_kernel_args_snapshot(args), **nodes_of(a, k)})
            except Exception:  # noqa: BLE001 - a record we cannot make is left out, never fatal
                pass
            return name

        define_kernel._inductor_step_args = True  # type: ignore[attr-defined]
        if wrapped_by_us(real):  # keep the marker of the wrapper it wraps (install_kernel_bytes_hook's)
            install_wrapper(cls, "define_kernel", define_kernel)
        else:
            setattr(cls, "define_kernel", define_kernel)
        done.append(f"{cls_name}.define_kernel")
    return done


def take_kernel_defs() -> list[dict[str, Any]]:
    """The kernel definitions recorded since the last call (:func:`install_kernel_args_hook`), in
    the order Inductor generated them: ``[{"name", "ptrs", "call_args", "nodes", "buffers"}]``
    (``nodes``/``buffers``: the scheduler nodes the definition generated code for, and their buffers)."""
    out = list(_KERNEL_DEFS)
    _KERNEL_DEFS.clear()
    return out


def output_module_key(output_path: str) -> str:
    """The code-cache key of an output module: its file name without ``.py`` (PyCodeCache names the
    file after the key), which is also ``CompiledFxGraph.cache_key``."""
    return os.path.splitext(os.path.basename(output_path))[0]


def install_graph_call_hook(on_call: Callable[[str, list, Callable[[], Any]], Any]) -> bool:
    """Call ``on_call(key, inputs, run)`` for every call the script makes into a compiled graph;
    ``run()`` performs the real call exactly once and returns its outputs, and ``on_call`` must
    return them.

    Wraps ``CompiledFxGraph.__call__`` (torch/_inductor/output_code.py), the object AOTAutograd's
    runtime calls for each forward, backward and inference graph.  ``key`` is the graph's
    ``cache_key``, the code-cache key its output module was loaded under (see
    :func:`output_module_key`); ``current_callable`` itself may be a wrapper (input alignment on
    CUDA, CUDA graphs under ``mode="reduce-overhead"``).  Inductor's ``call`` empties ``inputs``, so
    ``on_call`` must read them before ``run()``.  Returns False where this torch has no such class.
    """
    try:
        from torch._inductor.output_code import CompiledFxGraph  # noqa: PLC0415
    except Exception:  # noqa: BLE001
        return False
    real = CompiledFxGraph.__call__
    if wrapped_by_us(real):
        return True

    def __call__(self: Any, inputs: Any) -> Any:
        key = getattr(self, "cache_key", None)
        if not key:
            code = getattr(getattr(self, "current_callable", None), "__code__", None)
            key = output_module_key(code.co_filename) if code is not None else None
        if not key or not isinstance(inputs, list):
            return real(self, inputs)
        return on_call(key, inputs, lambda: real(self, inputs))

    install_wrapper(CompiledFxGraph, "__call__", __call__)
    return True


def take_kernel_num_gb() -> dict[str, float]:
    """Kernel name -> Inductor's estimated GB moved per call, for the Triton kernels defined since
    the last call (one graph's codegen; kernel names are unique only within one output module)."""
    out = dict(_KERNEL_NUM_GB)
    _KERNEL_NUM_GB.clear()
    return out
