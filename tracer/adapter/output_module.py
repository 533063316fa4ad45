"""The output module Inductor writes for a compiled graph, its Triton autotuners and their launch configs, and the benchmarker the run stage uses."""

from __future__ import annotations

import os
from typing import Any

from inductor_step.tracer.adapter.base import MAX_TEXT, _unavailable, current_graph, log, safe  # noqa: F401


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


def triton_binary_info(run: Any) -> dict[str, Any] | None:
    """The compiled Triton binary behind a kernel's ``.run`` (a ``CachingAutotuner``'s bound method),
    after at least one call: ``config`` (block sizes), ``num_warps``, ``num_stages``, ``n_regs``
    (registers per thread), ``n_spills``, ``shared`` (bytes of shared memory per block), from its
    single launcher (``launchers[0]``: ``n_regs``/``n_spills``/``shared``, else the ``CompiledKernel``'s
    ``metadata``); None where there is no single launcher."""
    k = getattr(run, "__self__", None)
    launchers = getattr(k, "launchers", None) or []
    if len(launchers) != 1:
        return None
    lz = launchers[0]
    cfg = getattr(lz, "config", None)
    meta = getattr(getattr(lz, "bin", None), "metadata", None)

    def pick(name: str, meta_name: str | None = None) -> Any:
        v = getattr(lz, name, None)
        if v is None and meta is not None:
            v = getattr(meta, meta_name or name, None)
        return v

    return {"config": dict(getattr(cfg, "kwargs", None) or {}),
            "num_warps": getattr(cfg, "num_warps", None) or pick("num_warps"),
            "num_stages": getattr(cfg, "num_stages", None) or pick("num_stages"),
            "n_regs": pick("n_regs"), "n_spills": pick("n_spills"), "shared": pick("shared")}


def triton_asm(run: Any) -> dict[str, Any] | None:
    """The compiled Triton binary's ``asm`` (``CompiledKernel.asm``: ttir, ttgir, llir, ptx, cubin) behind a
    kernel's ``.run`` (a ``CachingAutotuner``'s bound method) after at least one call, with its
    ``enable_fp_fusion`` option and ``where`` it was found: the single launcher's ``bin`` (kept when
    ``store_cubin``), else the ``compile_results`` entry (``TritonCompileResult.kernel``) whose config is the
    launcher's.  None where neither holds it (Inductor drops the binary once the launcher is made; a kernel
    compiled in a worker process comes back as a cubin only)."""
    k = getattr(run, "__self__", None)
    launchers = getattr(k, "launchers", None) or []
    if len(launchers) != 1:
        return None
    binary, where = getattr(launchers[0], "bin", None), "the launcher's binary"
    if not getattr(binary, "asm", None):
        want = triton_config_text(getattr(launchers[0], "config", None))
        binary, where = None, ""
        for r in getattr(k, "compile_results", None) or []:
            kern = getattr(r, "kernel", None)
            if getattr(kern, "asm", None) and triton_config_text(getattr(r, "config", None)) == want:
                binary, where = kern, "the autotuner's compile result for the launched config"
                break
    if binary is None:
        return None
    meta = getattr(binary, "metadata", None)
    return {"asm": dict(binary.asm), "enable_fp_fusion": bool(getattr(meta, "enable_fp_fusion", True)),
            "where": where}


def use_inductor_ptxas() -> str | None:
    """Make Triton assemble with the ptxas Inductor uses (``TRITON_PTXAS_PATH`` set to torch's own
    ``torch/bin/ptxas`` where the wheel ships one: ``torch._inductor.runtime.compile_tasks._set_triton_ptxas_path``,
    which Inductor calls before compiling), so a kernel compiled again matches the one Inductor built
    (its PTX version follows the ptxas).  Returns the path in force, or None (Triton's bundled ptxas)."""
    try:
        from torch._inductor.runtime.compile_tasks import _set_triton_ptxas_path  # noqa: PLC0415

        _set_triton_ptxas_path()
    except Exception:  # noqa: BLE001 - older/newer torch: Triton's own ptxas
        pass
    return os.environ.get("TRITON_PTXAS_PATH")
