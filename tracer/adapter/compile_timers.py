"""Torch's own compile timers, read from inside: every ``dynamo_timed`` event as it starts and ends
(``torch._dynamo.utils.ChromiumEventLogger``), the lowering of each FX node (``GraphLowering.run_node``), each C++
kernel's build in the compile workers (``torch._inductor.codecache._worker_compile_cpp``), each Triton kernel's
compile time as the worker measured it (``torch._inductor.async_compile._add_triton_kernel_info``) and each
``select_algorithm`` autotuning (``AlgorithmSelectorCache.__call__``).  Each installer returns the hook's
description, or ``{"unavailable": ...}`` where this torch lacks the place; none ever raises into the compile.
"""

from __future__ import annotations

import bisect
import dis
import os
import sys
import threading
import time
from typing import Any, Callable

from inductor_step.tracer.adapter.base import _unavailable, install_wrapper, log, wrapped_by_us
from inductor_step.tracer.adapter.triton_cache import caller_kernel, triton_cache_entries

#: end-of-event data kept per event (torch adds cache states, compilation metrics, ...): scalar values, cut
_KEEP_CHARS = 400


def _scalars(data: Any) -> dict[str, Any]:
    """``data``'s scalar entries (str cut to _KEEP_CHARS), for the session; anything else dropped."""
    out: dict[str, Any] = {}
    if not isinstance(data, dict):
        return out
    for k, v in data.items():
        if isinstance(v, (bool, int, float)) or v is None:
            out[str(k)] = v
        elif isinstance(v, str):
            out[str(k)] = v[:_KEEP_CHARS]
    return out


def install_event_hook(on_event: Callable[[str, str, int, dict[str, Any]], None]) -> str | dict[str, Any]:
    """Call ``on_event(phase, name, time_ns, data)`` at the start (``"B"``) and end (``"E"``) of every
    ``dynamo_timed`` event, on the thread that runs it.  ``time_ns`` is torch's own stamp
    (``time.time_ns()``, taken by ``dynamo_timed``); ``data`` has ``compile_id`` (``"0/0"``, or ``"None"``
    outside a compile) and, at the end, the scalar entries torch collected for the event
    (``CompileEventLogger.add_data``: ``cache_state``, ``cache_bypass_reason``, the compilation metrics on
    ``dynamo``...).  Wraps ``ChromiumEventLogger.log_event_start``/``log_event_end`` (torch/_dynamo/utils.py)."""
    try:
        from torch._dynamo import utils as du  # noqa: PLC0415

        cls = du.ChromiumEventLogger
        real_start, real_end = cls.log_event_start, cls.log_event_end
    except Exception as e:  # noqa: BLE001
        return _unavailable("dynamo_timed events (ChromiumEventLogger)", e)
    if wrapped_by_us(real_start):
        return "ChromiumEventLogger.log_event_start/end (dynamo_timed events)"

    def log_event_start(self: Any, event_name: str, time_ns: int, metadata: Any, *a: Any, **k: Any) -> Any:
        out = real_start(self, event_name, time_ns, metadata, *a, **k)
        try:
            md = metadata or {}
            data = {"compile_id": str(md.get("compile_id"))}
            for k in ("kernel_name", "is_backward"):  # CachingAutotuner.benchmark_all_configs: which kernel
                if md.get(k) is not None:
                    data[k] = md[k] if isinstance(md[k], (bool, int)) else str(md[k])[:200]
            on_event("B", event_name, time_ns, data)
        except Exception:  # noqa: BLE001 - never in the compile's way
            log.debug("compile timer start", exc_info=True)
        return out

    def log_event_end(self: Any, event_name: str, time_ns: int, metadata: Any, *a: Any, **k: Any) -> Any:
        try:
            data = _scalars((self.get_event_data() or {}).get(event_name))
        except Exception:  # noqa: BLE001
            data = {}
        out = real_end(self, event_name, time_ns, metadata, *a, **k)
        try:
            data.update(_scalars(metadata))
            on_event("E", event_name, time_ns, data)
        except Exception:  # noqa: BLE001
            log.debug("compile timer end", exc_info=True)
        return out

    install_wrapper(cls, "log_event_end", log_event_end)
    install_wrapper(cls, "log_event_start", log_event_start)
    return "ChromiumEventLogger.log_event_start/end (dynamo_timed events)"


def install_node_timer(on_node: Callable[[str, int], None]) -> str | dict[str, Any]:
    """Call ``on_node(fx node name, ns)`` after ``GraphLowering.run_node`` lowers each post-grad FX node
    (torch/_inductor/graph.py); the time includes any autotuning the node's lowering ran, not the nodes of a
    subgraph lowered inside it (a ``torch.cond``'s branches: theirs)."""
    try:
        from torch._inductor.graph import GraphLowering  # noqa: PLC0415

        real = GraphLowering.run_node
    except Exception as e:  # noqa: BLE001
        return _unavailable("GraphLowering.run_node (lowering time per FX node)", e)
    if wrapped_by_us(real):
        return "GraphLowering.run_node (lowering time per FX node)"
    clock = time.perf_counter_ns
    tl = threading.local()  # ns of nodes lowered inside the node being lowered (a torch.cond's subgraphs)

    def run_node(self: Any, n: Any) -> Any:
        t0 = clock()
        outer = getattr(tl, "inner", 0)
        tl.inner = 0
        try:
            return real(self, n)
        finally:
            dt = clock() - t0
            own = dt - tl.inner  # a subgraph's nodes count as theirs, not again as the node that holds them
            tl.inner = outer + dt
            try:
                on_node(str(n.name), own)
            except Exception:  # noqa: BLE001
                pass

    install_wrapper(GraphLowering, "run_node", run_node)
    return "GraphLowering.run_node (lowering time per FX node)"


_STORES = {"STORE_NAME", "STORE_GLOBAL", "STORE_FAST", "STORE_DEREF"}
_stores_in: dict[Any, tuple[list[int], list[str]]] = {}  # code object -> its store instructions: offsets, names


def _assigned_name(frame: Any) -> str | None:
    """The name the caller's statement ``NAME = async_compile.cpp_pybinding(...)`` stores the call's
    result in (the output module's kernel name): the first store after the caller's current instruction
    (``f_lasti`` may point inside the call's inline caches), read from its bytecode."""
    if frame is None:
        return None
    code = frame.f_code
    stores = _stores_in.get(code)
    if stores is None:
        offs, names = [], []
        for ins in dis.get_instructions(code):
            if ins.opname in _STORES:
                offs.append(ins.offset)
                names.append(str(ins.argval))
        if len(_stores_in) > 64:
            _stores_in.clear()
        _stores_in[code] = stores = (offs, names)
    i = bisect.bisect_right(stores[0], frame.f_lasti)
    return stores[1][i] if i < len(stores[1]) else None


def install_kernel_timers(on_submit: Callable[[dict[str, Any]], None],
                          on_built: Callable[[str, int, int, bool], None],
                          on_triton: Callable[[str, dict[str, Any]], None]) -> list[str] | dict[str, Any]:
    """Per kernel compile times (torch/_inductor/async_compile.py, codecache.py).

    - ``on_submit({"name", "kind": "cpp", "key" | "memory_hit": True})`` when the output module asks
      ``AsyncCompile.cpp_pybinding``/``cpp`` for a kernel: ``key`` is the C++ code cache key of a new build,
      ``memory_hit`` says the kernel was already loaded in this process;
    - ``on_built(key, start_ns, end_ns, built)`` when ``codecache._worker_compile_cpp`` ends (in a compile worker
      thread, or on the compiling thread with ``compile_threads=1``); ``built`` is False when every target
      was already on disk (Inductor's on-disk C++ cache);
    - ``on_triton(kernel name, info)`` with torch's own per-kernel record (``compile_time_us`` measured in the
      compile worker, ``autotune_cache_state``...; ``_add_triton_kernel_info``) and ``info["triton_cache"]``,
      the kernel's entries in Triton's own on-disk cache (:func:`triton_cache_entries`);
    - ``on_submit({"name", "kind": "triton", "cached"})`` when the output module asks ``AsyncCompile.triton``
      for a kernel: ``cached`` says ``CompiledTritonKernels`` already held it (compiled earlier in this
      process, or loaded with an FX graph cache hit by TritonBundler): no Triton compile, no record above;
      ``t0`` (``time.time_ns()``) is when the output module asked, before any compile of it began.
    """
    try:
        from torch._inductor import async_compile as ac  # noqa: PLC0415
        from torch._inductor import codecache as cc  # noqa: PLC0415
    except Exception as e:  # noqa: BLE001
        return _unavailable("async_compile (per-kernel compile times)", e)
    return (_wrap_cpp_submit(ac, cc, on_submit) + _wrap_cpp_build(cc, on_built) + _wrap_triton_submit(ac, on_submit)
            + _wrap_triton_info(ac, on_triton))


def _wrap_cpp_submit(ac: Any, cc: Any, on_submit: Callable[[dict[str, Any]], None]) -> list[str]:
    """``AsyncCompile.cpp_pybinding`` and ``.cpp`` wrapped to call ``on_submit`` (install_kernel_timers): the names
    of those wrapped now."""
    done: list[str] = []
    caches = [getattr(cc, n).cache for n in ("CppPythonBindingsCodeCache", "CppCodeCache")
              if isinstance(getattr(getattr(cc, n, None), "cache", None), dict)]
    for meth in ("cpp_pybinding", "cpp"):
        real = getattr(ac.AsyncCompile, meth, None)
        if real is None or wrapped_by_us(real):
            continue

        def wrapper(self: Any, *a: Any, _real: Callable = real, **k: Any) -> Any:
            sizes = [len(c) for c in caches]
            out = _real(self, *a, **k)
            try:
                rec: dict[str, Any] = {"name": _assigned_name(sys._getframe(1)), "kind": "cpp"}
                for c, n in zip(caches, sizes):
                    if len(c) > n:
                        rec["key"] = next(reversed(c))
                        break
                else:
                    rec["memory_hit"] = True
                on_submit(rec)
            except Exception:  # noqa: BLE001
                log.debug("kernel submit", exc_info=True)
            return out

        install_wrapper(ac.AsyncCompile, meth, wrapper)
        done.append(f"AsyncCompile.{meth} (kernel names)")
    return done


def _wrap_cpp_build(cc: Any, on_built: Callable[[str, int, int, bool], None]) -> list[str]:
    """``codecache._worker_compile_cpp`` wrapped to call ``on_built`` (install_kernel_timers): its name, if wrapped
    now."""
    real_worker = getattr(cc, "_worker_compile_cpp", None)
    if real_worker is None or wrapped_by_us(real_worker):
        return []

    def _worker_compile_cpp(lock_path: str, cpp_builders: Any, *a: Any, **k: Any) -> Any:
        t0 = time.time_ns()
        try:
            built = any(not os.path.exists(b.get_target_file_path()) for b in cpp_builders)
        except Exception:  # noqa: BLE001
            built = True
        try:
            return real_worker(lock_path, cpp_builders, *a, **k)
        finally:
            try:
                on_built(os.path.basename(str(lock_path)).removesuffix(".lock"), t0, time.time_ns(), built)
            except Exception:  # noqa: BLE001
                pass

    install_wrapper(cc, "_worker_compile_cpp", _worker_compile_cpp)
    return ["codecache._worker_compile_cpp (C++ build per kernel)"]


def _wrap_triton_submit(ac: Any, on_submit: Callable[[dict[str, Any]], None]) -> list[str]:
    """``AsyncCompile.triton`` wrapped to call ``on_submit`` (install_kernel_timers): its name, if wrapped now."""
    real_triton = getattr(ac.AsyncCompile, "triton", None)
    kernels = getattr(ac, "CompiledTritonKernels", None)
    if real_triton is None or kernels is None or wrapped_by_us(real_triton):
        return []

    def triton(self: Any, kernel_name: str, source_code: str, *a: Any, **k: Any) -> Any:
        t0 = time.time_ns()  # before the compile: Triton's cache entries written earlier are older
        try:  # Inductor's kernels already compiled or loaded (an FX graph cache hit's TritonBundler)
            cached = kernels.get(source_code) is not None
        except Exception:  # noqa: BLE001
            cached = None
        out = real_triton(self, kernel_name, source_code, *a, **k)
        try:
            on_submit({"name": str(kernel_name), "kind": "triton", "cached": cached, "t0": t0})
        except Exception:  # noqa: BLE001
            pass
        return out

    install_wrapper(ac.AsyncCompile, "triton", triton)
    return ["AsyncCompile.triton (Triton kernels served from Inductor's compiled kernels)"]


def _wrap_triton_info(ac: Any, on_triton: Callable[[str, dict[str, Any]], None]) -> list[str]:
    """``async_compile._add_triton_kernel_info`` wrapped to call ``on_triton`` (install_kernel_timers): its name, if
    wrapped now."""
    real_info = getattr(ac, "_add_triton_kernel_info", None)
    if real_info is None or wrapped_by_us(real_info):
        return []

    def _add_triton_kernel_info(kernel_name: str, info: Any, *a: Any, **k: Any) -> Any:
        try:
            rec = _scalars(info)
            rec["triton_cache"] = triton_cache_entries(caller_kernel(sys._getframe(1)))
            on_triton(str(kernel_name), rec)
        except Exception:  # noqa: BLE001
            pass
        return real_info(kernel_name, info, *a, **k)

    install_wrapper(ac, "_add_triton_kernel_info", _add_triton_kernel_info)
    return ["async_compile._add_triton_kernel_info (Triton compile time per kernel)"]


def install_autotune_timer(on_event: Callable[[str, str, int, dict[str, Any]], None]) -> str | dict[str, Any]:
    """Send ``on_event("B"/"E", "select_algorithm <op>", time.time_ns(), {})`` around each
    ``AlgorithmSelectorCache.__call__`` (torch/_inductor/select_algorithm.py: a template's autotuning,
    precompiling and benchmarking its choices), as if torch timed it."""
    try:
        from torch._inductor import select_algorithm as sa  # noqa: PLC0415

        cls = sa.AlgorithmSelectorCache
        real = cls.__call__
    except Exception as e:  # noqa: BLE001
        return _unavailable("AlgorithmSelectorCache (autotuning time)", e)

    def __call__(self: Any, name: Any, *a: Any, **k: Any) -> Any:
        label = f"select_algorithm {name}"
        on_event("B", label, time.time_ns(), {"thread": threading.get_ident()})
        try:
            return real(self, name, *a, **k)
        finally:
            on_event("E", label, time.time_ns(), {})

    if wrapped_by_us(real):  # keep the earlier wrapper's marker (compile_modes.install_autotune_hook)
        install_wrapper(cls, "__call__", __call__)
    else:
        cls.__call__ = __call__
    return "AlgorithmSelectorCache.__call__ (autotuning time)"


#: the name our clock gives the C++ compiler's probes of the CPU's vector ISAs (tracer.compile_time: "kernels")
ISA_PROBE = "C++ vector ISA probe (cpu_vec_isa.valid_vec_isa_list)"


def install_isa_probe_timer(on_event: Callable[[str, str, int, dict[str, Any]], None]) -> str | dict[str, Any]:
    """Send an ``ISA_PROBE`` event (start and end, ``time.time_ns()``) around each call of
    ``torch._inductor.cpu_vec_isa.valid_vec_isa_list``: the first C++ codegen of a process compiles and runs a
    test program per vector ISA (seconds, inside ``Scheduler.codegen``, untimed by torch 2.14); later calls hit
    its cache (microseconds)."""
    try:
        from torch._inductor import cpu_vec_isa as isa  # noqa: PLC0415

        real = isa.valid_vec_isa_list
    except Exception as e:  # noqa: BLE001
        return _unavailable("cpu_vec_isa.valid_vec_isa_list (the C++ ISA probe's time)", e)
    if wrapped_by_us(real):
        return "cpu_vec_isa.valid_vec_isa_list (the C++ compiler's ISA probe)"

    def valid_vec_isa_list(*a: Any, **k: Any) -> Any:
        on_event("B", ISA_PROBE, time.time_ns(), {})  # before: torch's compile_file events inside are its children
        try:
            return real(*a, **k)
        finally:
            on_event("E", ISA_PROBE, time.time_ns(), {})

    for attr in ("cache_clear", "cache_info"):  # callers may clear torch's cache through the name
        if hasattr(real, attr):
            setattr(valid_vec_isa_list, attr, getattr(real, attr))
    install_wrapper(isa, "valid_vec_isa_list", valid_vec_isa_list)
    return "cpu_vec_isa.valid_vec_isa_list (the C++ compiler's ISA probe)"


def subgraph_scope() -> Callable[[], str | None] | dict[str, Any]:
    """A function of nothing giving the higher-order op subgraph Inductor lowers or generates (or runs the
    post-grad passes on: ``tracer.adapter.subgraphs.post_grad_subgraph_path``) on this thread now: ``V.graph``
    is a ``SubgraphLowering`` (torch/_inductor/graph.py) -> its path from the root graph,
    joined as graph keys join it (``"true_graph_0"``; tracer.adapter.subgraphs.lowering_subgraph); None
    outside one.  ``{"unavailable": ...}`` where this torch has no ``V.graph``."""
    try:
        from torch._inductor.virtualized import V  # noqa: PLC0415

        from inductor_step.session.format import SUBGRAPH_SEP  # noqa: PLC0415
        from inductor_step.tracer.adapter.subgraphs import lowering_subgraph, post_grad_subgraph_path  # noqa: PLC0415
    except Exception as e:  # noqa: BLE001
        return _unavailable("V.graph (which subgraph is being compiled)", e)

    def scope() -> str | None:
        gl = V.graph
        if getattr(gl, "parent", None) is None:  # a root GraphLowering, or none (NullHandler)
            path = post_grad_subgraph_path()  # the post-grad passes on a subgraph, before any lowering
            return SUBGRAPH_SEP.join(path) if path else None
        sub = lowering_subgraph(gl)
        return SUBGRAPH_SEP.join(sub[0]) if sub else None

    return scope
