"""Every access to torch's private compiler internals, in one place.

A new torch that moves something breaks this module only, and each capture degrades to
``{"unavailable": "<why>"}`` instead of crashing the user's compile.  Checked on torch 2.11
(GPU box) and 2.15 (CPU, CI).  Where the data comes from:

- compile id: ``torch._guards.CompileContext.current_compile_id()``;
- structured events: a ``logging.Handler`` on ``torch._logging._internal.trace_log``
  (``record.metadata``, ``record.payload``), emitted whenever that logger has a handler;
- live graphs: ``config.pre_grad_custom_pass`` (Dynamo's FX graph),
  ``config.post_grad_custom_pre_pass``/``post_grad_custom_post_pass`` (AOT graph, post-grad graph),
  ``config._pre_fusion_custom_pass``/``_post_fusion_custom_pass`` (``V.graph`` IR and scheduler nodes);
- fusion reasons: logger ``torch._inductor.scheduler.__fusion`` at DEBUG (Inductor's WhyNoFuse text).
"""

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

log = logging.getLogger("inductor_step")

MAX_TEXT = 20_000  # characters kept of one IR/scheduler node's own text


def _unavailable(what: str, exc: BaseException | None = None) -> dict[str, Any]:
    why = f"{what}: not available on torch {torch.__version__}"
    if exc is not None:
        why += f" ({type(exc).__name__}: {exc})"
    return {"unavailable": why}


def safe(what: str) -> Callable:
    """Decorator: on any exception return ``{"unavailable": ...}`` naming ``what`` and the error."""

    def deco(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*a: Any, **k: Any) -> Any:
            try:
                return fn(*a, **k)
            except Exception as e:  # noqa: BLE001 - degrade, never break the user's compile
                log.debug("capture %s failed:\n%s", what, traceback.format_exc())
                return _unavailable(what, e)

        return wrapper

    return deco


# ----------------------------------------------------------------------------- versions, device

def versions() -> dict[str, Any]:
    """torch, triton and device names for the session header; device is ``"cpu"`` or the GPU's name."""
    info: dict[str, Any] = {"torch": torch.__version__, "triton": None, "device": "cpu",
                            "cuda": torch.version.cuda}
    try:
        import triton  # noqa: PLC0415

        info["triton"] = triton.__version__
    except Exception:  # noqa: BLE001
        pass
    if torch.cuda.is_available():
        info["device"] = "cuda"
        info["device_name"] = torch.cuda.get_device_name(0)
    return info


def current_compile_id() -> str:
    """Dynamo's compile id of the compile on this thread, as Inductor prints it: ``"[0/0]"``."""
    try:
        from torch._guards import CompileContext  # noqa: PLC0415

        cid = CompileContext.current_compile_id()
        return f"[{cid}]" if cid is not None else "[?]"
    except Exception:  # noqa: BLE001
        return "[?]"


# ----------------------------------------------------------------------------- configuration

def configure_inductor() -> dict[str, Any]:
    """Settings the agent needs on every compile; returns what was set, for the session header.

    Caches are turned off because an FX-graph or AOT-autograd cache hit skips every Inductor
    hook; provenance tracking level 1 gives ``inductor_provenance_tracking_node_mappings``.
    """
    from torch._inductor import config as ic  # noqa: PLC0415

    done: dict[str, Any] = {}
    for mod, name, value in (
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

    def uuid(self) -> Any:  # CustomGraphPass protocol: keeps Inductor from warning about caching
        return ("inductor-step", id(self))


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
        return ("inductor-step", id(self))


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
    for name, fn in (("_pre_fusion_custom_pass", on_pre_fusion), ("_post_fusion_custom_pass", on_post_fusion)):
        if hasattr(ic, name):
            _set_config(ic, name, _ChainedSchedulerPass(fn, getattr(ic, name)))
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
        if not getattr(real_run, "_inductor_step", False):
            def run(self: Any, *a: Any, **k: Any) -> Any:
                if type(self) is GraphLowering or type(self).__name__ == "GraphLowering":
                    try:
                        on_lowered_graph(self.module.graph)
                    except Exception as e:  # noqa: BLE001
                        if type(e).__name__ == "_Quit":
                            raise
                        log.debug("lowered graph hook", exc_info=True)
                return real_run(self, *a, **k)

            run._inductor_step = True  # type: ignore[attr-defined]
            GraphLowering.run = run
        done.append("GraphLowering.run")
    except Exception:  # noqa: BLE001
        pass
    try:
        from torch._inductor import debug  # noqa: PLC0415

        real_log = debug.log_ir_post_fusion
        if not getattr(real_log, "_inductor_step", False):
            def log_ir_post_fusion(nodes: Any) -> None:
                real_log(nodes)
                try:
                    on_final_order(list(nodes))
                except Exception as e:  # noqa: BLE001
                    if type(e).__name__ == "_Quit":
                        raise
                    log.debug("final order hook", exc_info=True)

            log_ir_post_fusion._inductor_step = True  # type: ignore[attr-defined]
            debug.log_ir_post_fusion = log_ir_post_fusion
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
    if getattr(real, "_inductor_step", False):
        return True

    def define_kernel(self: Any, src_code: str, node_schedule: Any, kernel: Any) -> str:
        name = real(self, src_code, node_schedule, kernel)
        try:
            if name not in _KERNEL_NUM_GB:
                _KERNEL_NUM_GB[name] = float(kernel.estimate_kernel_num_bytes()) / 1e9
        except Exception:  # noqa: BLE001 - an estimate we cannot get is left out, never fatal
            pass
        return name

    define_kernel._inductor_step = True  # type: ignore[attr-defined]
    TritonScheduling.define_kernel = define_kernel
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
        define_kernel._inductor_step = getattr(real, "_inductor_step", False)  # type: ignore[attr-defined]
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
    if getattr(real, "_inductor_step", False):
        return True

    def __call__(self: Any, inputs: Any) -> Any:
        key = getattr(self, "cache_key", None)
        if not key:
            code = getattr(getattr(self, "current_callable", None), "__code__", None)
            key = output_module_key(code.co_filename) if code is not None else None
        if not key or not isinstance(inputs, list):
            return real(self, inputs)
        return on_call(key, inputs, lambda: real(self, inputs))

    __call__._inductor_step = True  # type: ignore[attr-defined]
    CompiledFxGraph.__call__ = __call__
    return True


def triton_config_text(cfg: Any) -> str:
    """A Triton launch config as Inductor's autotuner picks it: block sizes, then ``num_warps`` and
    ``num_stages`` (e.g. ``"XBLOCK=256, num_warps=4, num_stages=1"``)."""
    kw = ", ".join(f"{k}={v}" for k, v in sorted((getattr(cfg, "kwargs", None) or {}).items()))
    return f"{kw}, num_warps={getattr(cfg, 'num_warps', '?')}, num_stages={getattr(cfg, 'num_stages', '?')}".lstrip(", ")


def _autotuners(namespace: dict) -> dict[str, Any]:
    """The Triton kernels of an output module: its ``CachingAutotuner`` globals by kernel name."""
    try:
        from torch._inductor.runtime.triton_heuristics import CachingAutotuner  # noqa: PLC0415
    except Exception:  # noqa: BLE001 - no Triton here
        return {}
    return {n: v for n, v in namespace.items() if isinstance(v, CachingAutotuner)}


def output_module(key: str) -> Any:
    """The output module the script's process loaded under code-cache key ``key`` (PyCodeCache
    registers it in ``sys.modules`` as ``<package>.<key>``; torch 2.11-2.15:
    ``torch._inductor.runtime.compile_tasks.<key>``), or None.

    Called at the script's first call of each graph, just after torch.compile has restored
    CPython's gen-2 collection threshold (torch 2.15 raises it while compiling): it must not
    allocate many GC-tracked objects at once (``list(sys.modules.items())``, a tuple per module,
    pushed the gen-0 count over its threshold and ran a full collection, 0.3 s, that plain python
    did not run), so it looks the name up directly and scans only the keys (str, untracked).
    """
    import sys  # noqa: PLC0415

    for name in ("torch._inductor.runtime.compile_tasks." + key, key):
        mod = sys.modules.get(name)
        if mod is not None:
            return mod
    for name in list(sys.modules):
        if name == key or name.endswith("." + key):
            return sys.modules.get(name)
    return None


def kernel_config_counts(key: str) -> dict[str, int]:
    """Kernel name -> how many launch configs its autotuner holds now, for the Triton kernels of the
    output module loaded under ``key``; taken before a graph's first call, this is how many configs
    autotuning will choose from."""
    mod = output_module(key)
    out = {}
    for name, k in _autotuners(vars(mod) if mod is not None else {}).items():
        n = len(getattr(k, "launchers", None) or []) or len(getattr(k, "configs", None) or [])
        out[name] = n
    return out


def autotuned_configs(key: str) -> dict[str, str]:
    """Kernel name -> the launch config (:func:`triton_config_text`) each Triton kernel of the output
    module loaded under ``key`` runs with, where it has settled on one (after the graph's first call,
    when ``CachingAutotuner`` has benchmarked its configs and kept the fastest in ``launchers``)."""
    mod = output_module(key)
    out = {}
    for name, k in _autotuners(vars(mod) if mod is not None else {}).items():
        launchers = getattr(k, "launchers", None) or []
        if len(launchers) == 1 and getattr(launchers[0], "config", None) is not None:
            out[name] = triton_config_text(launchers[0].config)
    return out


def pin_configs(mod: Any, configs: dict[str, str]) -> dict[str, str]:
    """Make each Triton kernel of a freshly loaded output module ``mod`` run with the config in
    ``configs`` (kernel name -> :func:`triton_config_text`, e.g. what the script's own run picked),
    so a timing run does not autotune again and perhaps settle elsewhere.  Filters the autotuner's
    compiled ``launchers`` (or, where it compiles lazily, its ``configs``) to the one that matches;
    a kernel whose config is not among them is left to autotune.  Returns kernel name -> the config
    it is pinned to."""
    pinned = {}
    for name, k in _autotuners(vars(mod)).items():
        want = configs.get(name)
        if not want:
            continue
        launchers = getattr(k, "launchers", None) or []
        if launchers:
            keep = [lz for lz in launchers if triton_config_text(getattr(lz, "config", None)) == want]
            if keep:
                k.launchers = keep[:1]
                pinned[name] = want
        elif getattr(k, "configs", None):
            keep = [c for c in k.configs if triton_config_text(c) == want]
            if keep:
                k.configs = keep[:1]
                pinned[name] = want
    return pinned


def take_kernel_num_gb() -> dict[str, float]:
    """Kernel name -> Inductor's estimated GB moved per call, for the Triton kernels defined since
    the last call (one graph's codegen; kernel names are unique only within one output module)."""
    out = dict(_KERNEL_NUM_GB)
    _KERNEL_NUM_GB.clear()
    return out


def profiler_active() -> bool:
    """Whether a torch profiler (the script's own) is running now; ours would fail to start."""
    try:
        return bool(torch.autograd.profiler._is_profiler_enabled)
    except Exception:  # noqa: BLE001
        return False


def register_inductor_ops() -> None:
    """Register the ops Inductor's post-grad graphs and output code use beyond ATen
    (``torch.ops.prims.inductor_seeds``, ``prims.prepare_softmax_online``, ...): importing
    ``torch._inductor.compile_fx`` does, as it does in the process that compiled them.  For a fresh
    process (the timing worker) that loads such a graph."""
    import torch._inductor.compile_fx  # noqa: F401, PLC0415
    import torch._inductor.inductor_prims  # noqa: F401, PLC0415


def current_raw_stream() -> int:
    """The raw handle of the current CUDA stream (``torch._C._cuda_getCurrentRawStream``): what a
    Triton launcher's ``stream=`` argument takes, e.g. inside a CUDA-graph capture."""
    import torch  # noqa: PLC0415

    return torch._C._cuda_getCurrentRawStream(torch.cuda.current_device())


def synchronize() -> None:
    """``torch.cuda.synchronize()`` where CUDA is initialised; nothing otherwise."""
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


_OP_NAME = re.compile(r"^[A-Za-z_]\w*::[\w.]+$")


def op_base_name(name: str) -> str:
    """The operator an extern call of a compiled graph or a profiler CPU op stands for, without
    namespace, overload or our call suffix: ``extern_kernels.mm#3`` -> ``mm``,
    ``torch.ops.aten.convolution_backward.default#2`` -> ``convolution_backward``,
    ``aten::addmm`` -> ``addmm``."""
    name = name.split("#")[0]
    if "::" in name:
        return name.rsplit("::", 1)[1]
    parts = name.split(".")
    if len(parts) > 1 and parts[-1] in ("default", "out", "Tensor", "Scalar", "self", "input"):
        parts = parts[:-1]
    return parts[-1]


def outermost_ops(events: list) -> dict[int, tuple[int, str]]:
    """Profiler CPU op correlation id -> ``(correlation id, name)`` of the outermost operator
    (``aten::mm``, ``mylib::op``; not autograd's or the user's ranges) around it on the same thread,
    itself where none encloses it.  ``events``: ``prof.profiler.kineto_results.events()`` of a
    torch.profiler run with CPU activity; a GPU kernel's ``linked_correlation_id()`` is the id of
    the op that launched it."""
    ops = []
    for e in events:
        name = e.name()
        if not _OP_NAME.match(name) or name.startswith("autograd::") or e.linked_correlation_id() != 0:
            continue
        ops.append((e.start_thread_id(), e.start_ns(), -e.end_ns(), e.correlation_id(), name))
    ops.sort()
    roots: dict[int, tuple[int, str]] = {}
    stack: list[tuple[int, int, int]] = []  # (thread, end, correlation id) of the ops still open
    for tid, start, neg_end, corr, name in ops:
        while stack and (stack[-1][0] != tid or stack[-1][1] <= start):
            stack.pop()
        roots[corr] = roots[stack[0][2]] if stack else (corr, name)
        stack.append((tid, -neg_end, corr))
    return roots


def cuda_kernel_records(fn: Callable[[], Any], cpu_ops: bool = False) -> list[tuple]:
    """Run ``fn`` under torch.profiler (CUDA activity: CUPTI) and return every GPU kernel it ran
    as ``(name, start_ns, duration_ms)`` in start order, kernels replayed from a CUDA graph included.

    ``cpu_ops``: also record CPU activity and add ``(op, op_id)`` to each record: the outermost
    operator that launched the kernel (:func:`outermost_ops`; e.g. ``aten::convolution`` for each
    of the several kernels cuDNN runs for one convolution) and that op call's correlation id, or
    ``(None, None)`` for kernels launched outside any operator (Inductor's Triton kernels).

    Reads ``prof.profiler.kineto_results`` (torch's private view of the CUPTI records), since the
    public ``prof.events()`` rounds to whole microseconds.  Raises where the profiler cannot start
    (another one is active, or this torch was built without kineto).
    """
    import warnings  # noqa: PLC0415

    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

    acts = [ProfilerActivity.CUDA] + ([ProfilerActivity.CPU] if cpu_ops else [])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with profile(activities=acts) as prof:
            fn()
            torch.cuda.synchronize()
    events = list(prof.profiler.kineto_results.events())
    roots = outermost_ops(events) if cpu_ops else {}
    out: list[tuple] = []
    for e in events:
        if e.device_type() != torch.autograd.DeviceType.CUDA:
            continue
        rec: tuple = (e.name(), int(e.start_ns()), e.duration_ns() / 1e6)
        if cpu_ops:
            root = roots.get(e.linked_correlation_id())
            rec += (root[1], root[0]) if root else (None, None)
        out.append(rec)
    out.sort(key=lambda r: r[1])
    return out


def trace_logger() -> logging.Logger:
    """torch's structured-trace logger (the one TORCH_TRACE writes from)."""
    from torch._logging._internal import trace_log  # noqa: PLC0415

    return trace_log


class _TraceHandlers(list):
    """``trace_log.handlers`` while the agent listens alone: a list whose truth, asked by torch's
    ``trace_structured``, says whether the agent reads that event.

    ``torch._logging._internal.trace_structured`` builds an event (its metadata, its payload, the
    payload's JSON and md5, a LogRecord) only ``if trace_log.handlers:``, and asks nothing else
    first, so an event the agent drops unread still costs what torch takes to build it (graphs
    printed before and after passes, tensor descriptions, chromium events: 0.06 s on nanoGPT's
    training step, 0.12 s on Hugging Face GPT-2's).  Asked from ``trace_structured`` itself (the
    caller's code object), with the agent's handler the only one, this reads the event's name from
    that frame (an artifact's name from its ``metadata_fn``, a small dict) and answers
    ``wants(name)``; anywhere else, with any other handler (``TORCH_TRACE``'s), or on any surprise,
    it is a plain list's truth, so every event is built as before.
    """

    def __init__(self, items: list, ours: logging.Handler, code: Any, wants: Callable[[str], bool]):
        super().__init__(items)
        self.ours = ours
        self.code = code
        self.wants = wants

    def __bool__(self) -> bool:
        if len(self) != 1 or self[0] is not self.ours:
            return len(self) > 0
        try:
            import sys  # noqa: PLC0415

            frame = sys._getframe(1)
            if frame.f_code is not self.code:
                return True
            local = frame.f_locals
            name = local["name"]
            if name == "artifact":
                md = local["metadata_fn"]()
                name = f"artifact:{md.get('name')}" if isinstance(md, dict) else name
            return bool(self.wants(name))
        except Exception:  # noqa: BLE001 - unsure: let torch build the event
            return True


def add_trace_handler(handler: logging.Handler, wants: Callable[[str], bool] | None = None) -> bool:
    """Listen on torch's structured trace (:func:`trace_logger`) with ``handler``.

    ``wants(name)`` (a :func:`trace_event` name: ``"inductor_output_code"``,
    ``"artifact:fx_graph_runnable"``), where given, says which events ``handler`` reads; while it is
    the logger's only handler, torch then does not build the others (see :class:`_TraceHandlers`).
    Returns whether that filter is in place (False where this torch's ``trace_structured`` is not
    found: every event is then built, as with a plain handler).
    """
    tl = trace_logger()
    tl.addHandler(handler)
    if wants is None:
        return False
    try:
        from torch._logging import _internal  # noqa: PLC0415

        code = _internal.trace_structured.__code__
        if "name" not in code.co_varnames or "metadata_fn" not in code.co_varnames:
            return False
        tl.handlers = _TraceHandlers(tl.handlers, handler, code, wants)
        return True
    except Exception:  # noqa: BLE001
        return False


def trace_event(record: logging.LogRecord) -> tuple[str | None, dict, str]:
    """(event name, its metadata, payload) of a structured-trace record; artifacts are named
    ``artifact:<name>``."""
    md = getattr(record, "metadata", None) or {}
    if not md:
        return None, {}, ""
    key = next(iter(md))
    val = md[key]
    if key == "artifact" and isinstance(val, dict):
        key = f"artifact:{val.get('name')}"
    return key, md, getattr(record, "payload", "") or ""


def fusion_logger() -> logging.Logger:
    """Inductor's fusion decision logger (WhyNoFuse, 'fusing X with Y')."""
    return logging.getLogger("torch._inductor.scheduler.__fusion")


def current_graph() -> Any:
    """``V.graph``, the live GraphLowering (lowering, scheduling and codegen hooks only)."""
    from torch._inductor.virtualized import V  # noqa: PLC0415

    return V.graph


# ----------------------------------------------------------------------------- FX graphs

def _short_path(filename: str) -> str:
    import os  # noqa: PLC0415

    try:
        rel = os.path.relpath(filename)
        return rel if not rel.startswith("..") else filename
    except ValueError:
        return filename


_TRACE_LINE = re.compile(r'File "([^"]+)", line (\d+)')


def user_line(stack_trace: str | None) -> str | None:
    """``file:line`` of the innermost user frame of an FX node's ``meta["stack_trace"]``."""
    if not stack_trace:
        return None
    frames = _TRACE_LINE.findall(stack_trace)
    frames = [f for f in frames if "/torch/" not in f[0].replace("\\", "/")] or frames
    if not frames:
        return None
    f, line = frames[-1]
    return f"{_short_path(f)}:{line}"


def _tensor_meta(val: Any) -> dict[str, Any]:
    if isinstance(val, torch.Tensor):
        return {"shape": [str(s) for s in val.shape], "dtype": str(val.dtype).replace("torch.", ""),
                "device": str(val.device), "stride": [str(s) for s in val.stride()] if val.layout == torch.strided else None}
    if isinstance(val, (list, tuple)) and val and all(isinstance(v, torch.Tensor) for v in val):
        return {"shape": [[str(s) for s in v.shape] for v in val], "dtype": str(val[0].dtype).replace("torch.", "")}
    if isinstance(val, (torch.SymInt, torch.SymFloat, torch.SymBool, int, float, bool)):
        return {"shape": [], "dtype": type(val).__name__, "value": str(val)}
    return {}


def _target_name(node: Any) -> str:
    t = node.target
    if node.op == "call_function":
        try:
            from torch.fx.node import _get_qualified_name  # noqa: PLC0415

            return _get_qualified_name(t) if not isinstance(t, torch._ops.OpOverload) else str(t)
        except Exception:  # noqa: BLE001
            return str(t)
    return str(t)


@safe("FX graph")
def fx_graph(graph: Any) -> dict[str, Any]:
    """A torch.fx Graph as readable code plus one dict per node.

    Node dict: ``name``, ``op`` (placeholder, call_function, ...), ``target``, ``shape`` (list of
    str, symbolic sizes as printed), ``dtype``, ``user_line`` (``file:line`` from
    ``meta["stack_trace"]``), ``from_node`` (names of the nodes this one came from, from
    ``meta["from_node"]`` where torch records it), ``args`` (names of input nodes).
    """
    gm = getattr(graph, "owning_module", None)
    code = None
    if gm is not None:
        try:
            code = gm.print_readable(print_output=False, include_stride=False, include_device=False, colored=False)
        except TypeError:
            code = gm.print_readable(print_output=False)
        except Exception:  # noqa: BLE001
            code = None
    if code is None:
        code = str(graph)
    nodes = []
    for n in graph.nodes:
        val = n.meta.get("val", n.meta.get("example_value"))
        d: dict[str, Any] = {"name": n.name, "op": n.op, "target": _target_name(n),
                             "user_line": user_line(n.meta.get("stack_trace")),
                             "args": [a.name for a in n.all_input_nodes]}
        d.update(_tensor_meta(val))
        src = n.meta.get("from_node")
        if src:
            try:
                d["from_node"] = [getattr(s, "name", str(s)) for s in src]
            except Exception:  # noqa: BLE001
                pass
        nodes.append(d)
    return {"code": code, "nodes": nodes}


def needs_autograd(graph: Any) -> bool:
    """AOTAutograd's own rule: any tensor input requires grad and grad mode is on -> training."""
    if not torch.is_grad_enabled():
        return False
    for n in graph.nodes:
        if n.op != "placeholder":
            continue
        val = n.meta.get("example_value", n.meta.get("val"))
        if isinstance(val, torch.Tensor) and val.requires_grad:
            return True
    return False


def is_backward_graph(graph: Any) -> bool:
    """A post-grad graph is a backward graph when its inputs include ``tangents_*``."""
    return any(n.op == "placeholder" and n.name.startswith("tangents") for n in graph.nodes)


# ----------------------------------------------------------------------------- text memo

_MEMO_LOCK = threading.Lock()
_MEMO_DEPTH = 0
_MEMO_PATCHES: list[tuple[Any, str, Any]] = []  # (class, attribute, original) while installed
_MEMO_ACTIVE = threading.local()


class TextMemo:
    """Inductor's own text for objects that cannot change, computed once per graph (a speed-up only).

    The lowering, scheduling and loopbody stops print the same objects again and again: each
    SchedulerNode's ``debug_str()`` holds its LoopBody's ``debug_str()``, which the loopbody stop
    prints once more; a FusedSchedulerNode's text holds its members' texts; and every MemoryDep and
    sympy expression of a node is printed before fusion and again after it.  Inside ``with memo:``
    on the thread that captures (the compile thread), these are answered from this memo:

    - sympy expressions (``Printable.__str__``/``__repr__``, sympy/core/_print_helpers.py): sympy
      objects are immutable, so their text is a function of the object;
    - ``MemoryDep.__repr__`` (torch/_inductor/dependencies.py): a frozen dataclass of a name, sympy
      expressions and a mode;
    - ``LoopBody.debug_str()`` (torch/_inductor/loop_body.py): reused only while the body and
      everything its text is made of (var_ranges, indexing_exprs, and each block's FX graph: its
      nodes with their names, ops, targets, types and argument tuples) are the same objects as when
      it was computed; otherwise computed again.

    Keys are object identities, and the memo holds the objects it keys on, so an id cannot be reused
    while it is cached.  The texts are exactly what Inductor computes.  The methods are wrapped (at
    class level) only while some thread is inside a ``with`` block; other threads, and code outside
    the block, call Inductor's and sympy's own.  Where this torch or sympy lacks one of them, that
    one is simply not memoized.  :func:`graph_memo` gives the one memo of the graph being compiled,
    which :func:`scheduler_nodes`, :func:`ir_buffers` and :func:`loop_bodies` share.
    """

    def __init__(self) -> None:
        # sympy and MemoryDep: id -> object, id -> text (two dicts, not one of tuples: the texts
        # dict holds no container the garbage collector has to track)
        self.objs: dict[int, Any] = {}
        self.texts: dict[int, str] = {}
        self.bodies: dict[int, tuple[list, str]] = {}  # id(LoopBody) -> (what the text was made of, text)
        self.hits = 0
        self.misses = 0
        self._prev: list[Any] = []

    def __enter__(self) -> TextMemo:
        global _MEMO_DEPTH
        self._prev.append(getattr(_MEMO_ACTIVE, "memo", None))
        _MEMO_ACTIVE.memo = self
        with _MEMO_LOCK:
            if _MEMO_DEPTH == 0:
                _install_memo_patches()
            _MEMO_DEPTH += 1
        return self

    def __exit__(self, *exc: Any) -> None:
        global _MEMO_DEPTH
        with _MEMO_LOCK:
            _MEMO_DEPTH -= 1
            if _MEMO_DEPTH == 0:
                _remove_memo_patches()
        _MEMO_ACTIVE.memo = self._prev.pop()

    def text(self, obj: Any, compute: Callable[[Any], str]) -> str:
        """``compute(obj)``, once per object (for immutable objects only)."""
        key = id(obj)
        if self.objs.get(key) is obj:
            self.hits += 1
            return self.texts[key]
        self.misses += 1
        s = compute(obj)
        self.objs[key] = obj
        self.texts[key] = s
        return s

    def body_text(self, body: Any, compute: Callable[[Any], str]) -> str:
        """``compute(body)`` for a LoopBody, reused while what its text is made of is unchanged."""
        try:
            parts = _loop_body_parts(body)
        except Exception:  # noqa: BLE001 - a LoopBody unlike torch 2.11-2.15's: not memoized
            return compute(body)
        hit = self.bodies.get(id(body))
        if hit is not None and len(hit[0]) == len(parts) and all(a is b for a, b in zip(hit[0], parts)):
            self.hits += 1
            return hit[1]
        self.misses += 1
        s = _loop_body_text(body, compute)
        self.bodies[id(body)] = (parts, s)
        return s


# LoopBody.debug_str() builds (and compiles) a torch.fx.GraphModule per block only to read its
# ``.code``, which GraphModule.recompile takes from ``graph.python_code(root_module="self", ...)``:
# _fast_loop_body_text asks the graph directly.  Each process checks it against Inductor's own
# text on its first _FAST_BODY_CHECKS bodies and uses it only if all of them matched.
_FAST_BODY_CHECKS = 16
_FAST_BODY = {"checked": 0, "ok": True}


def _loop_body_text(body: Any, compute: Callable[[Any], str]) -> str:
    """``LoopBody.debug_str()`` (``compute``), or the same text without the GraphModules once that
    has matched Inductor's own on this process's first bodies (see _FAST_BODY_CHECKS)."""
    if not _FAST_BODY["ok"]:
        return compute(body)
    if _FAST_BODY["checked"] >= _FAST_BODY_CHECKS:
        try:
            fast = _fast_loop_body_text(body)
        except Exception:  # noqa: BLE001
            fast = None
        return fast if fast is not None else compute(body)
    s = compute(body)
    try:
        fast = _fast_loop_body_text(body)
    except Exception:  # noqa: BLE001
        fast = None
    if fast is not None:
        if fast == s:
            _FAST_BODY["checked"] += 1
        else:
            _FAST_BODY["ok"] = False
            log.debug("fast LoopBody text differs from Inductor's; using Inductor's")
    return s


def _fast_loop_body_text(body: Any) -> str | None:
    """torch/_inductor/loop_body.py LoopBody.debug_str and LoopBodyBlock.debug_str, with each
    block's code from ``graph.python_code`` instead of a GraphModule; None where a GraphModule
    would be built differently (a module/attribute target missing from ``body.submodules``, on
    which Inductor's own raises)."""
    from torch.fx.experimental import _config as fx_experimental_config  # noqa: PLC0415

    lines = [f"var_ranges = {dict(body.var_ranges)}"]
    lines.extend([f"{name} = {val}" for name, val in body.indexing_exprs.items()])
    blocks = [("body", body.root_block)]
    blocks += list(body.subblocks.items())
    subs = body.submodules
    for name, block in blocks:
        g = block.graph
        for n in g.nodes:
            if n.op in ("call_module", "get_attr") and n.target not in subs:
                return None
        code = g.python_code(root_module="self", record_func=fx_experimental_config.enrich_profiler_metadata).src
        lines.append(re.sub(r";[^\n]*", "", code.strip().replace("def forward(", f"def {name}(")))
    return "\n".join(lines)


_GRAPH_MEMO: tuple[Any, TextMemo] | None = None  # (weakref to a GraphLowering, its memo)


def graph_memo() -> TextMemo:
    """The :class:`TextMemo` of the graph being compiled (``V.graph``), made on first use; the next
    graph's replaces it, so at most one graph's texts are held.  Outside a compile: a fresh memo."""
    global _GRAPH_MEMO
    try:
        gl = current_graph()
        ref = weakref.ref(gl)
    except Exception:  # noqa: BLE001 - no live graph here
        return TextMemo()
    cur = _GRAPH_MEMO
    if cur is not None and cur[0]() is gl:
        return cur[1]
    memo = TextMemo()
    _GRAPH_MEMO = (ref, memo)
    return memo


def with_graph_memo(fn: Callable) -> Callable:
    """Decorator: run ``fn`` inside ``with graph_memo():`` (the texts it asks Inductor for are memoized)."""

    @functools.wraps(fn)
    def wrapper(*a: Any, **k: Any) -> Any:
        with graph_memo():
            return fn(*a, **k)

    return wrapper


def _loop_body_parts(body: Any) -> list:
    """Every object ``LoopBody.debug_str()`` reads, flat, for an identity comparison: the body, its
    var_ranges and indexing_exprs items, and for each block (root, then subblocks) the block, its
    FX graph and, per node, the node, name, op, target, type and args/kwargs tuples (FX replaces
    those tuples on any change; their contents are immutable)."""
    from torch.fx.experimental import _config as fx_experimental_config  # noqa: PLC0415

    parts: list = [body, fx_experimental_config.enrich_profiler_metadata]
    for k, v in body.var_ranges.items():
        parts += (k, v)
    for k, v in body.indexing_exprs.items():
        parts += (k, v)
    blocks = [("body", body.root_block)]
    blocks += list(body.subblocks.items())
    for name, block in blocks:
        g = block.graph
        parts += (name, block, g, g._codegen)
        for n in g.nodes:
            parts += (n, n.name, n.op, n.target, n.type, n._args, n._kwargs)
    return parts


def _install_memo_patches() -> None:
    """Wrap the memoized methods at class level (under _MEMO_LOCK); each wrapper asks the memo of the
    calling thread, or calls the original where that thread has none."""

    def wrap(cls: Any, attr: str, via_body: bool = False) -> None:
        orig = cls.__dict__.get(attr)
        if orig is None or getattr(orig, "_inductor_step_memo", False):
            return

        def method(self: Any, *a: Any) -> str:
            memo = getattr(_MEMO_ACTIVE, "memo", None)
            if memo is None or a:
                return orig(self, *a)
            return memo.body_text(self, orig) if via_body else memo.text(self, orig)

        method._inductor_step_memo = True  # type: ignore[attr-defined]
        functools.update_wrapper(method, orig)
        _MEMO_PATCHES.append((cls, attr, orig))
        setattr(cls, attr, method)

    try:
        from sympy.core._print_helpers import Printable  # noqa: PLC0415

        wrap(Printable, "__str__")
        wrap(Printable, "__repr__")
    except Exception:  # noqa: BLE001 - another sympy: not memoized
        pass
    try:
        from torch._inductor.dependencies import MemoryDep  # noqa: PLC0415

        wrap(MemoryDep, "__repr__")
    except Exception:  # noqa: BLE001
        pass
    try:
        from torch._inductor.loop_body import LoopBody  # noqa: PLC0415

        wrap(LoopBody, "debug_str", via_body=True)
    except Exception:  # noqa: BLE001
        pass


def _remove_memo_patches() -> None:
    while _MEMO_PATCHES:
        cls, attr, orig = _MEMO_PATCHES.pop()
        setattr(cls, attr, orig)


# ----------------------------------------------------------------------------- lowering: IR buffers

def _s(x: Any) -> Any:
    if isinstance(x, (list, tuple)):
        return [str(v) for v in x]
    return None if x is None else str(x)


@safe("IR buffers")
@with_graph_memo
def ir_buffers(gl: Any) -> dict[str, Any]:
    """Every IR buffer of a GraphLowering (``V.graph.buffers``), in order.

    Buffer dict: ``name`` (``buf3``), ``operation`` (``op3``), ``ir_type`` (ComputedBuffer,
    ExternKernelOut, ...), ``kind`` (Pointwise, Reduction, Scan, ... for ComputedBuffer; else the
    IR type), ``ranges``, ``reduction_ranges``, ``reduction_type``, ``dtype``, ``device``,
    ``size``, ``stride`` (symbolic sizes as text), ``origins`` (post-grad FX node names, from
    ``buf.origins``), ``origin_node`` (the FX node whose lowering made it, ``buf.origin_node``) and ``text`` (Inductor's own ``str(buf)``, cut at MAX_TEXT characters).
    """
    out = []
    for buf in list(gl.buffers):
        d: dict[str, Any] = {"name": buf.get_name(), "ir_type": type(buf).__name__}
        try:
            d["operation"] = buf.get_operation_name()
        except Exception:  # noqa: BLE001
            d["operation"] = None
        data = getattr(buf, "data", None)
        kind = type(data).__name__ if data is not None and type(buf).__name__ == "ComputedBuffer" else type(buf).__name__
        d["kind"] = kind
        d["ranges"] = _s(getattr(data, "ranges", None)) if data is not None else None
        d["reduction_ranges"] = _s(getattr(data, "reduction_ranges", None)) if data is not None else None
        d["reduction_type"] = _s(getattr(data, "reduction_type", None)) if data is not None else None
        try:
            layout = buf.get_layout()
            d["dtype"] = str(layout.dtype).replace("torch.", "")
            d["device"] = str(layout.device)
            d["size"] = _s(layout.size)
            d["stride"] = _s(getattr(layout, "stride", None))
            d["layout"] = type(layout).__name__
        except Exception:  # noqa: BLE001
            pass
        try:
            d["origins"] = sorted(o.name for o in (buf.origins or ()))
        except Exception:  # noqa: BLE001
            d["origins"] = []
        try:  # the FX node whose lowering made this buffer (ir.Buffer.origin_node; None for some)
            on = getattr(buf, "origin_node", None) or getattr(data, "origin_node", None)
            d["origin_node"] = on.name if on is not None else None
        except Exception:  # noqa: BLE001
            d["origin_node"] = None
        try:
            d["text"] = str(buf)[:MAX_TEXT]
        except Exception as e:  # noqa: BLE001
            d["text"] = f"<str(buf) failed: {e}>"
        out.append(d)
    inputs = []
    for name, inp in getattr(gl, "graph_inputs", {}).items():
        m = {"name": name}
        try:
            m.update({"size": _s(inp.get_size()), "dtype": str(inp.get_dtype()).replace("torch.", "")})
        except Exception:  # noqa: BLE001
            pass
        inputs.append(m)
    return {"buffers": out, "graph_inputs": inputs,
            "is_inference": bool(getattr(gl, "is_inference", False)),
            "is_backward": bool(getattr(gl, "is_backward", False))}


# ----------------------------------------------------------------------------- scheduling

@safe("scheduler nodes")
@with_graph_memo
def scheduler_nodes(nodes: list) -> list[dict[str, Any]]:
    """Scheduler nodes as Inductor names them.

    Node dict: ``name`` (``op3`` or fused ``op3_op4``), ``type`` (SchedulerNode,
    FusedSchedulerNode, OuterLoopFusedSchedulerNode, ExternKernelSchedulerNode, ...),
    ``members`` (names from ``get_nodes()``), ``buffers`` (``get_buffer_names()``), ``device``,
    ``group`` (the loop group, as text) and ``text`` (``debug_str()``, cut at MAX_TEXT).
    """
    out = []
    for n in nodes:
        d: dict[str, Any] = {"name": n.get_name(), "type": type(n).__name__}
        try:
            d["members"] = [m.get_name() for m in n.get_nodes()]
        except Exception:  # noqa: BLE001
            d["members"] = [d["name"]]
        try:
            d["buffers"] = sorted(n.get_buffer_names(), key=lambda s: (len(s), s))
        except Exception:  # noqa: BLE001
            d["buffers"] = []
        try:
            d["device"] = str(n.get_device())
        except Exception:  # noqa: BLE001
            pass
        try:
            d["group"] = str(getattr(n, "group", ""))
        except Exception:  # noqa: BLE001
            pass
        try:
            d["text"] = n.debug_str()[:MAX_TEXT]
        except Exception as e:  # noqa: BLE001
            d["text"] = f"<debug_str() failed: {e}>"
        out.append(d)
    return out


def can_fuse(a: str, b: str) -> str:
    """``V.graph.scheduler.can_fuse(node_a, node_b)`` for two scheduler nodes named as Inductor
    names them (``op3`` or a fused ``op3_op4``), as ``"can fuse"`` / ``"cannot fuse"``; Inductor
    logs its reasons (WhyNoFuse) on the fusion logger while it decides.  Only while the graph's
    scheduler is live (a paused scheduling, loopbody or codegen stop, on the compile thread)."""
    try:
        sched = current_graph().scheduler
    except Exception as e:  # noqa: BLE001
        return f"not available: the scheduler is not live here ({type(e).__name__})"
    if sched is None:
        return "not available: the scheduler is not live here"
    by_name: dict[str, Any] = {}
    for n in sched.nodes:
        by_name[n.get_name()] = n
        for m in n.get_nodes():
            by_name.setdefault(m.get_name(), m)
    na, nb = by_name.get(a), by_name.get(b)
    if na is None or nb is None:
        return f"not available: no scheduler node named {a if na is None else b}"
    if na is nb:
        return "the same node"
    try:
        first, second = (na, nb) if _order(sched, na) <= _order(sched, nb) else (nb, na)
        return "can fuse" if sched.can_fuse(first, second) else "cannot fuse"
    except Exception as e:  # noqa: BLE001
        return f"can_fuse raised {type(e).__name__}: {e}"


def _order(sched: Any, node: Any) -> int:
    names = [n.get_name() for n in sched.nodes]
    try:
        return names.index(node.get_name())
    except ValueError:
        return min((names.index(x) for x in names if node.get_name() in x.split("_")), default=0)


# ----------------------------------------------------------------------------- LoopBody

@safe("LoopBody")
@with_graph_memo
def loop_bodies(nodes: list) -> list[dict[str, Any]]:
    """Each member SchedulerNode's LoopBody (``snode._body``, private).

    Body dict: ``node`` (``op3``), ``fused_node`` (the post-fusion node holding it), ``buffers``,
    ``var_ranges`` (index variable -> extent, as text), ``indexing_exprs`` (name -> sympy text),
    ``body`` (``LoopBody.debug_str()``: the ``ops.load``/``ops.store`` program), or ``none`` with
    the reason where a node has no LoopBody (extern kernels, templates).
    """
    out = []
    for fused in nodes:
        try:
            members = list(fused.get_nodes())
        except Exception:  # noqa: BLE001
            members = [fused]
        for m in members:
            d: dict[str, Any] = {"node": m.get_name(), "fused_node": fused.get_name(),
                                 "type": type(m).__name__}
            try:
                d["buffers"] = sorted(m.get_buffer_names(), key=lambda s: (len(s), s))
            except Exception:  # noqa: BLE001
                d["buffers"] = []
            body = getattr(m, "_body", None)
            if body is None:
                d["none"] = f"{type(m).__name__} has no LoopBody"
            else:
                try:
                    d["var_ranges"] = {str(k): str(v) for k, v in body.var_ranges.items()}
                    d["indexing_exprs"] = {str(k): str(v) for k, v in body.indexing_exprs.items()}
                except Exception:  # noqa: BLE001
                    pass
                try:
                    d["body"] = body.debug_str()[:MAX_TEXT]
                except Exception as e:  # noqa: BLE001
                    d["body"] = f"<LoopBody.debug_str() failed: {e}>"
            out.append(d)
    return out


# ----------------------------------------------------------------------------- codegen

@safe("scheduler membership")
def buffer_owners(gl: Any) -> dict[str, dict[str, str]]:
    """buffer name -> {``scheduler_node``: ``opN``, ``fused_node``: the post-fusion node holding it}."""
    sched = getattr(gl, "scheduler", None)
    out: dict[str, dict[str, str]] = {}
    if sched is None:
        return out
    for fused in sched.nodes:
        for m in fused.get_nodes():
            for b in m.get_buffer_names():
                out[b] = {"scheduler_node": m.get_name(), "fused_node": fused.get_name()}
    return out


@safe("scheduler mutations")
def buffer_mutations(gl: Any) -> dict[str, Any]:
    """What the scheduler knows about storage at codegen: ``mutation_real_name`` (a mutating
    buffer -> the buffer whose storage it writes, e.g. an index_put's ``buf75 -> buf74``,
    ``Scheduler.mutation_real_name``) and ``removed`` (``V.graph.removed_buffers``: buffers whose
    stores Inductor dropped, their values kept in registers)."""
    sched = getattr(gl, "scheduler", None)
    real = dict(getattr(sched, "mutation_real_name", {}) or {}) if sched is not None else {}
    return {"mutation_real_name": {str(k): str(v) for k, v in real.items()},
            "removed": sorted(str(b) for b in (getattr(gl, "removed_buffers", ()) or ()))}


def provenance_map_written() -> bool:
    """Whether torch writes this graph's ``inductor_provenance_tracking_node_mappings`` with kernel
    entries: ``dump_inductor_provenance_info`` (torch/_inductor/debug.py) writes only ``{"version"}``
    when ``_pre_grad_graph_id`` is unset, as for a lazily compiled backward."""
    try:
        from torch._inductor import debug  # noqa: PLC0415

        return bool(getattr(debug, "_pre_grad_graph_id", None))
    except Exception:  # noqa: BLE001
        return False


def current_attempt() -> int:
    """Dynamo's restart attempt of the compile on this thread (``[0/0_1]`` is attempt 1 of
    ``[0/0]``: Dynamo restarted the frame's analysis), from ``CompileContext.current_trace_id()``."""
    try:
        from torch._guards import CompileContext  # noqa: PLC0415

        tid = CompileContext.current_trace_id()
        return int(getattr(tid, "attempt", 0) or 0) if tid is not None else 0
    except Exception:  # noqa: BLE001
        return 0


def kernel_provenance() -> dict[str, list[str]]:
    """Inductor's provenance: ``"kernel_name:debug_handle"`` -> post-grad FX node names.

    Filled while kernels are generated when ``config.trace.provenance_tracking_level`` >= 1
    (``torch._inductor.debug._inductor_triton_kernel_to_post_grad_node_info``, global across
    graphs; the wrapper's ``# [Provenance debug handles]`` comments say which handles are its own).
    """
    try:
        from torch._inductor import debug  # noqa: PLC0415

        return {k: list(v) for k, v in getattr(debug, "_inductor_triton_kernel_to_post_grad_node_info", {}).items()}
    except Exception:  # noqa: BLE001
        return {}


def source_context(user_lines: list[str], around: int = 3) -> dict[str, str]:
    """``"file:line"`` -> that line of the user's source with ``around`` lines each side, the line
    itself marked ``>``; files that cannot be read are left out."""
    import linecache  # noqa: PLC0415
    import os  # noqa: PLC0415

    out: dict[str, str] = {}
    for ul in user_lines:
        path, _, num = ul.rpartition(":")
        if not num.isdigit():
            continue
        n = int(num)
        full = path if os.path.isabs(path) else os.path.abspath(path)
        rows = []
        for i in range(max(1, n - around), n + around + 1):
            text = linecache.getline(full, i)
            if not text and i > n:
                break
            rows.append(f"{'>' if i == n else ' '} {i:>5}  {text.rstrip()}")
        if any(r.strip() for r in rows):
            out[ul] = "\n".join(rows)
    return out


# ----------------------------------------------------------------------------- timing

def benchmarker() -> Any:
    """Inductor's benchmarker (``torch._inductor.runtime.benchmarking.benchmarker``)."""
    from torch._inductor.runtime.benchmarking import benchmarker as b  # noqa: PLC0415

    return b


def load_output_module(path: str) -> Any:
    """Import an Inductor output-code file as a fresh module (kernels compile from Inductor's cache)."""
    import importlib.util  # noqa: PLC0415
    import os  # noqa: PLC0415

    name = "inductor_step_run_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ----------------------------------------------------------------------------- what if (issue 22)

#: the common Inductor settings the what-if form offers (``torch._inductor.config`` names)
WHAT_IF_SETTINGS = ("max_autotune", "coordinate_descent_tuning", "benchmark_fusion", "aggressive_fusion",
                    "loop_ordering_after_fusion", "split_reductions", "realize_opcount_threshold",
                    "triton.cudagraphs", "emulate_precision_casts")
_FAKE_META = ("val", "tensor_meta", "example_value", "unbacked_bindings")


def inductor_setting(name: str) -> Any:
    """The current value of ``torch._inductor.config`` entry ``name`` (dotted: ``"triton.cudagraphs"``).
    Raises KeyError naming it when this torch has no such entry."""
    from torch._inductor import config as ic  # noqa: PLC0415

    obj: Any = ic
    for part in name.split("."):
        if part.startswith("_") or not hasattr(obj, part):
            raise KeyError(f"torch._inductor.config has no setting {name!r} (torch {torch.__version__})")
        obj = getattr(obj, part)
    if callable(obj) or hasattr(obj, "__dict__") and not isinstance(obj, (bool, int, float, str)):
        raise KeyError(f"torch._inductor.config.{name} is not a value setting")
    return obj


def inductor_settings(names: tuple[str, ...] = WHAT_IF_SETTINGS) -> dict[str, Any]:
    """``{name: current value}`` of the settings this torch has (JSON values; others as their repr)."""
    out: dict[str, Any] = {}
    for n in names:
        try:
            v = inductor_setting(n)
        except KeyError:
            continue
        out[n] = v if isinstance(v, (bool, int, float, str)) or v is None else repr(v)
    return out


def _hint(x: Any) -> Any:
    """An int for a size (a SymInt's hint, never a guard on its ShapeEnv)."""
    if isinstance(x, int):
        return x
    node = getattr(x, "node", None)
    if node is not None:
        hint = getattr(node, "hint", None)
        if isinstance(hint, int):
            return hint
        return int(node.shape_env.size_hint(node.expr))
    return int(x)


def graph_snapshot(gm: Any) -> dict[str, Any]:
    """A copy of ``gm``'s graph to compile again later (:func:`compile_variant`): ``graph`` (its nodes and
    their meta, without the fake values of the original compile's FakeTensorMode/ShapeEnv), ``attrs``
    (the tensors and submodules its ``get_attr`` nodes read, shared, not copied) and ``specs``: one per
    placeholder for :func:`example_inputs`: ``("tensor", shape, stride, dtype, device)`` (a symbolic size
    as its hint) or ``("int", value)``.  Taken at ``post_grad_custom_pre_pass``, this is the graph
    ``compile_fx_inner`` got, before Inductor's post-grad passes.  Costs about 10 us a node (the
    GraphModule, ten times that, is built only by :func:`compile_variant`)."""
    g = torch.fx.Graph()
    g.output(g.graph_copy(gm.graph, {}))
    specs: list[Any] = []
    attrs: dict[str, Any] = {}
    for n in gm.graph.nodes:
        if n.op == "get_attr":
            obj: Any = gm
            for part in str(n.target).split("."):
                obj = getattr(obj, part)
            # a subgraph (cond, invoke_subgraph, ...): Inductor's passes rewrite it in place, so its own copy
            attrs[str(n.target)] = {"snapshot": graph_snapshot(obj)} if isinstance(obj, torch.fx.GraphModule) else obj
        if n.op != "placeholder":
            continue
        v = n.meta.get("val", n.meta.get("example_value"))
        if isinstance(v, torch.Tensor):
            specs.append(("tensor", [_hint(s) for s in v.shape], [_hint(s) for s in v.stride()], v.dtype,
                          str(v.device)))
        elif isinstance(v, (int, torch.SymInt)):
            specs.append(("int", _hint(v)))
        elif isinstance(v, (float, bool)):
            specs.append(("scalar", v))
        else:
            specs.append(("none", None))
    for n in g.nodes:
        n.meta = {k: v for k, v in n.meta.items() if k not in _FAKE_META}
    return {"graph": g, "attrs": attrs, "specs": specs}


def _graph_module(snapshot: dict[str, Any]) -> Any:
    """A fresh GraphModule of a :func:`graph_snapshot` (its own copy of the graph: a compile mutates it)."""
    g = torch.fx.Graph()
    g.output(g.graph_copy(snapshot["graph"], {}))
    attrs = {k: _graph_module(v["snapshot"]) if isinstance(v, dict) else v for k, v in snapshot["attrs"].items()}
    return torch.fx.GraphModule(attrs, g)


def example_inputs(specs: list[Any], seed: int = 0) -> list[Any]:
    """Real inputs of the shapes, strides, dtypes and devices in ``specs`` (:func:`graph_snapshot`),
    random (``torch._dynamo.testing.rand_strided``, seeded)."""
    from torch._dynamo.testing import rand_strided  # noqa: PLC0415

    torch.manual_seed(seed)
    out: list[Any] = []
    for s in specs:
        if s[0] == "tensor":
            out.append(rand_strided(s[1], s[2], dtype=s[3], device=s[4]))
        else:
            out.append(s[1])
    return out


def _provenance_state() -> dict[str, Any]:
    """Copies of torch._inductor.debug's module-level provenance records (a compile fills them)."""
    import copy  # noqa: PLC0415

    from torch._inductor import debug  # noqa: PLC0415

    return {k: (v, copy.copy(v)) for k, v in vars(debug).items()
            if k.startswith(("_inductor_", "_pre_grad_graph_id", "_kernel_information")) and not callable(v)}


def compile_variant(snapshot: dict[str, Any], settings: dict[str, Any], is_backward: bool,
                    is_inference: bool) -> Any:
    """Compile a :func:`graph_snapshot` again with ``torch._inductor.compile_fx.compile_fx_inner``
    on real inputs of its ``specs``, under ``torch._inductor.config.patch(settings)`` (a per-thread override
    from torch 2.13); returns Inductor's compiled graph (its output code is logged as
    ``inductor_output_code``, so the stage hooks see every stage).  Inductor's module-level
    provenance records are restored afterwards, so a compile paused on another thread keeps its
    own.  Raises whatever the compile raises (a bad value of a setting: its TypeError/...)."""
    from torch._inductor import config as ic  # noqa: PLC0415
    from torch._inductor import debug  # noqa: PLC0415
    from torch._inductor.compile_fx import compile_fx_inner  # noqa: PLC0415

    saved = _provenance_state()
    try:
        with ic.patch(settings):
            return compile_fx_inner(_graph_module(snapshot), example_inputs(snapshot["specs"]),
                                    is_backward=is_backward, is_inference=is_inference)
    finally:
        for k, (obj, content) in saved.items():  # the same objects (others may hold them), as they were
            if isinstance(obj, dict):
                obj.clear()
                obj.update(content)
            setattr(debug, k, obj)
