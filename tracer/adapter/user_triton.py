"""User Triton kernels in a post-grad graph: torch's kernel side table, carried to the timing process so the graph runs eagerly there."""

from __future__ import annotations

import importlib
import importlib.util
import os
import tempfile
from typing import Any

_HOPS = ("triton_kernel_wrapper_mutation", "triton_kernel_wrapper_functional")


def _table() -> Any:
    from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table  # noqa: PLC0415

    return kernel_side_table


def _jit(kernel: Any) -> Any:
    """The ``triton.JITFunction`` under ``triton.autotune`` / ``triton.heuristics`` wrappers."""
    seen = 0
    while type(kernel).__name__ != "JITFunction" and hasattr(kernel, "fn") and seen < 8:
        kernel, seen = kernel.fn, seen + 1
    return kernel


def _src(jit: Any) -> str | None:
    """A JITFunction's source from its ``def`` on (``JITFunction.src``, else ``inspect.getsource``)."""
    import inspect  # noqa: PLC0415
    import re  # noqa: PLC0415
    import textwrap  # noqa: PLC0415

    src = getattr(jit, "src", None) if isinstance(getattr(jit, "src", None), str) else None
    if src is None:
        try:
            src = textwrap.dedent(inspect.getsource(getattr(jit, "fn", jit)))
        except (OSError, TypeError):
            return None
    m = re.search(r"^def\s+\w+\s*\(", src, re.M)
    return src[m.start():] if m else src


def _autotune_spec(kernel: Any, jit: Any) -> dict[str, Any] | None:
    """``{"configs": [...], "key": [...]}`` of a ``triton.autotune`` ``Autotuner`` wrapping ``jit``
    directly -- what Dynamo makes of a launch with ``num_warps=`` / ``num_stages=`` (one config) --
    or None (no Autotuner, another wrapper between, or hooks a copy cannot carry)."""
    if type(kernel).__name__ != "Autotuner" or getattr(kernel, "fn", None) is not jit:
        return None
    if getattr(kernel, "reset_to_zero", None) or getattr(kernel, "restore_value", None) \
            or getattr(kernel, "early_config_prune", None) or getattr(kernel, "perf_model", None):
        return None
    configs = []
    for c in getattr(kernel, "configs", None) or []:
        if getattr(c, "pre_hook", None):
            return None
        configs.append({"kwargs": dict(getattr(c, "kwargs", {}) or {}), "num_warps": getattr(c, "num_warps", 4),
                        "num_stages": getattr(c, "num_stages", 3), "num_ctas": getattr(c, "num_ctas", 1)})
    key = list(getattr(kernel, "keys", None) or getattr(kernel, "key", None) or [])
    return {"configs": configs, "key": key} if configs else None


def triton_side_table_entries(gm: Any) -> dict[str, Any]:
    """What a copy of post-grad graph ``gm`` needs, in another process, to run its user Triton
    kernels: ``{"kernels": {idx: {"name", "module", "qualname", "src", "wrapped"}}, "constant_args":
    {idx: {...}}}`` for every ``triton_kernel_wrapper_mutation`` / ``_functional`` node (torch's
    ``torch._higher_order_ops.triton_kernel_wrap.kernel_side_table``, which holds the kernel objects by
    index and is empty in a fresh process: "Kernel index 0 not found in id_to_kernel").  ``src`` is
    the ``@triton.jit`` function's source (``JITFunction.src``); ``wrapped`` names a ``triton.autotune``
    or ``triton.heuristics`` wrapper, which a source copy loses.  ``{"unavailable": ...}`` where torch
    has no side table."""
    try:
        table = _table()
    except Exception as e:  # noqa: BLE001
        return {"unavailable": f"kernel side table not available on this torch ({type(e).__name__}: {e})"}
    kernels: dict[int, dict[str, Any]] = {}
    consts: dict[int, Any] = {}
    for n in getattr(getattr(gm, "graph", None), "nodes", []):
        if n.op != "call_function" or getattr(n.target, "__name__", str(n.target)).split(".")[-1] not in _HOPS:
            continue
        ki, ci = n.kwargs.get("kernel_idx"), n.kwargs.get("constant_args_idx")
        if isinstance(ki, int) and ki not in kernels:
            try:
                k = table.get_kernel(ki)
                jit = _jit(k)
                fn = getattr(jit, "fn", None)
                kernels[ki] = {"name": getattr(fn, "__name__", None), "module": getattr(fn, "__module__", None),
                               "qualname": getattr(fn, "__qualname__", None), "src": _src(jit),
                               "wrapped": type(k).__name__ if k is not jit else None}
                tune = _autotune_spec(k, jit)
                if tune is not None:  # an Autotuner straight over the kernel: carried as its configs
                    kernels[ki].update(autotune=tune, wrapped=None)
            except Exception as e:  # noqa: BLE001
                kernels[ki] = {"error": f"{type(e).__name__}: {e}"}
        if isinstance(ci, int) and ci not in consts:
            try:
                consts[ci] = dict(table.get_constant_args(ci))
            except Exception:  # noqa: BLE001
                pass
    return {"kernels": kernels, "constant_args": consts} if kernels else {}


def _from_source(name: str, src: str) -> Any:
    """A ``triton.jit`` kernel made again from its source, in a module of its own (Triton reads a
    kernel's source from its file); the module imports ``triton``, ``triton.language as tl`` and
    ``torch``, which is what most kernels use."""
    d = tempfile.mkdtemp(prefix="inductor_step_user_triton_")
    path = os.path.join(d, f"user_kernel_{name}.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write("import torch\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\n" + src + "\n")
    spec = importlib.util.spec_from_file_location(f"inductor_step_user_kernel_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def restore_triton_side_table(entries: dict[str, Any] | None) -> str | None:
    """Put :func:`triton_side_table_entries`' kernels back into this process's side table at the same
    indices: imported from their module where it is importable here (not the script's ``__main__``),
    else made again from their source.  Returns None, or one line naming the kernels that could not
    be restored and why (the eager run then fails on them, and says so)."""
    if not entries or "kernels" not in entries:
        return None
    try:
        table = _table()
    except Exception as e:  # noqa: BLE001
        return f"kernel side table not available on this torch ({type(e).__name__}: {e})"
    problems = []
    for idx, k in entries["kernels"].items():
        if "error" in k or not k.get("name"):
            problems.append(f"kernel {idx}: {k.get('error', 'no name')}")
            continue
        kernel = None
        if k.get("module") and k["module"] != "__main__" and k.get("qualname") and "<" not in k["qualname"]:
            try:
                obj: Any = importlib.import_module(k["module"])
                for part in k["qualname"].split("."):
                    obj = getattr(obj, part)
                kernel = obj
            except Exception:  # noqa: BLE001 - fall back to the source
                kernel = None
        if kernel is None:
            if k.get("wrapped"):
                problems.append(f"{k['name']}: under {k['wrapped']} in the script's __main__, whose configs a copy of its "
                                "source does not carry")
                continue
            try:
                kernel = _from_source(k["name"], k["src"])
            except Exception as e:  # noqa: BLE001
                problems.append(f"{k['name']}: not made again from its source ({type(e).__name__}: {e})")
                continue
        if k.get("autotune"):
            try:
                import triton  # noqa: PLC0415

                tune = k["autotune"]
                kernel = triton.autotune(configs=[triton.Config(c["kwargs"], num_warps=c["num_warps"],
                                                                num_stages=c["num_stages"], num_ctas=c["num_ctas"])
                                                  for c in tune["configs"]], key=tune["key"])(kernel)
            except Exception as e:  # noqa: BLE001
                problems.append(f"{k['name']}: its triton.autotune configs not restored ({type(e).__name__}: {e})")
                continue
        table.id_to_kernel[int(idx)] = kernel
        table.kernel_to_id[kernel] = int(idx)
    for idx, args in (entries.get("constant_args") or {}).items():
        table.constant_args[int(idx)] = args
    return "; ".join(problems) or None
