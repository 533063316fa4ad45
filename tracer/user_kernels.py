"""User Triton kernels (``@triton.jit`` / ``triton_op`` / ``wrap_triton`` inside a compiled function): their launch config, read from the output module's source and call."""

from __future__ import annotations

import ast
import re
from typing import Any, Sequence

_META = re.compile(r"^\s*(inductor_meta|triton_meta)=(\{.*\}),\s*$", re.M)
_CONFIGS = re.compile(r"^\s*configs=(\[.*\]),\s*$", re.M)
_DEF = re.compile(r"^def (\w+)\(", re.M)


def is_user_kernel(source: str) -> bool:
    """True for a user's Triton kernel as Inductor emits it: decorated with
    ``triton_heuristics.user_autotune(..., custom_kernel=True)`` (torch/_inductor/codegen/wrapper.py,
    ``define_user_defined_triton_kernel``)."""
    return "user_autotune(" in source and "custom_kernel=True" in source


def _literal(text: str) -> Any:
    """A dict/list literal of the source, with the reprs ast cannot read (``DeviceProperties(...)``) as None."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        try:
            return ast.literal_eval(re.sub(r"\b[A-Z]\w*\([^()]*\)", "None", text))
        except (ValueError, SyntaxError):
            return None


def user_kernel_launch(source: str, call: Sequence[Any]) -> dict[str, Any] | None:
    """The launch config of one call of a user Triton kernel, or None for any other kernel.

    ``source`` is the kernel's code in the output module, ``call`` the arguments of its
    ``NAME.run(...)`` call in the wrapper (strings as the wrapper spells them, or values).  Returns
    ``def_name`` (the ``@triton.jit`` function's own name: what torch.profiler calls the kernel),
    ``grid`` (the launch grid: the call's trailing ``extra_launcher_args``, ``_grid_0.._grid_2``
    of a ``FixedGrid``), ``grid_type``, ``constants`` (constexpr values Inductor baked in,
    ``triton_meta["constants"]``), ``num_warps`` / ``num_stages`` (the config, or the first of several
    when the user autotunes: ``configs`` lists them all) and ``source`` (where these come from)."""
    if not is_user_kernel(source):
        return None
    meta = {m.group(1): _literal(m.group(2)) for m in _META.finditer(source)}
    im, tm = meta.get("inductor_meta") or {}, meta.get("triton_meta") or {}
    cm = _CONFIGS.search(source)
    configs = _literal(cm.group(1)) if cm else None
    d = _DEF.search(source)
    out: dict[str, Any] = {"def_name": d.group(1) if d else None, "grid_type": im.get("grid_type"),
                           "source": "the output module: user_autotune's configs, inductor_meta and triton_meta, and the "
                                     "wrapper's call (its trailing grid arguments)"}
    extra = im.get("extra_launcher_args") or []
    if extra and len(call) >= len(extra):
        grid = []
        for v in list(call)[len(call) - len(extra):]:
            try:
                grid.append(int(v))
            except (TypeError, ValueError):
                grid.append(str(v))
        out["grid"] = grid
    if isinstance(tm.get("constants"), dict):
        out["constants"] = tm["constants"]
    if isinstance(configs, list) and configs:
        first = configs[0] if isinstance(configs[0], dict) else {}
        out["num_warps"], out["num_stages"] = first.get("num_warps"), first.get("num_stages")
        if len(configs) > 1:
            out["configs"] = configs
    return out
