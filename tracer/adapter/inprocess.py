"""Recording inside the caller's own process (tracer.record, the pytest fixture): the settings the agent changes, saved and put back; Dynamo's caches cleared; the hooks' leftovers dropped.

The agent process sets its torch configuration once and never undoes it (:func:`configure_inductor`,
:func:`install_passes`).  A recording made inside a test process must leave that process as it found
it, so :func:`save_settings` reads every entry those two functions write -- the value and, on torch
2.13+ where ``setattr`` is a per-thread override (a ContextVar), the entry's default too
(``module._config[name].default``) -- and :func:`restore_settings` writes them back.
"""

from __future__ import annotations

import logging
from typing import Any

import torch

from inductor_step.tracer.adapter.base import log

#: every torch config entry the agent writes: (module, entry); configure_inductor's then install_passes'
_ENTRIES: tuple[tuple[str, str], ...] = (
    ("torch._inductor.config", "fx_graph_cache"),
    ("torch._inductor.config", "fx_graph_remote_cache"),
    ("torch._inductor.config", "autotune_local_cache"),
    ("torch._functorch.config", "enable_autograd_cache"),
    ("torch._functorch.config", "enable_remote_autograd_cache"),
    ("torch._inductor.config.trace", "provenance_tracking_level"),
    ("torch._inductor.config", "pre_grad_custom_pass"),
    ("torch._inductor.config", "post_grad_custom_pre_pass"),
    ("torch._inductor.config", "post_grad_custom_post_pass"),
    ("torch._inductor.config", "_pre_fusion_custom_pass"),
    ("torch._inductor.config", "_post_fusion_custom_pass"),
)
_MISSING = object()


def _module(name: str) -> Any:
    import importlib  # noqa: PLC0415

    if name == "torch._inductor.config.trace":
        return importlib.import_module("torch._inductor.config").trace
    return importlib.import_module(name)


def save_settings() -> list[tuple[Any, str, Any, Any]]:
    """The current value and default of every config entry the agent writes, as
    ``(module, name, value, default)`` (``_MISSING`` where this torch has no such entry or default)."""
    out = []
    for mod_name, name in _ENTRIES:
        try:
            mod = _module(mod_name)
        except Exception:  # noqa: BLE001
            continue
        if not hasattr(mod, name):
            continue
        cfg = getattr(mod, "_config", None)
        entry = cfg.get(name) if isinstance(cfg, dict) else None
        out.append((mod, name, getattr(mod, name), getattr(entry, "default", _MISSING)))
    return out


def restore_settings(saved: list[tuple[Any, str, Any, Any]]) -> None:
    """Write back what :func:`save_settings` read (never raises; an entry that cannot be written is logged)."""
    for mod, name, value, default in saved:
        try:
            setattr(mod, name, value)
            cfg = getattr(mod, "_config", None)
            entry = cfg.get(name) if isinstance(cfg, dict) else None
            if entry is not None and default is not _MISSING:
                entry.default = default
        except Exception:  # noqa: BLE001
            log.debug("restore %s", name, exc_info=True)


def fresh_dynamo() -> None:
    """Clear Dynamo's compiled code and counters (``torch._dynamo.reset``: frames numbered from ``[0/0]``
    again), without counting it as a reset of the script's (:data:`tracer.adapter.backends.RESETS`), so
    every compile made afterwards is compiled -- and recorded -- again."""
    from inductor_step.tracer.adapter.backends import RESETS  # noqa: PLC0415

    before = RESETS[0]
    torch._dynamo.reset()
    RESETS[0] = before


def drop_leftovers() -> None:
    """Empty the records the process-wide hooks keep between graphs (kernel definitions, byte estimates,
    autotuning choices): what compiles outside a recording left there belongs to no recorded graph."""
    from inductor_step.tracer.adapter.compile_modes import take_autotune  # noqa: PLC0415
    from inductor_step.tracer.adapter.hooks import take_kernel_defs, take_kernel_num_gb  # noqa: PLC0415

    for take in (take_kernel_defs, take_kernel_num_gb, take_autotune):
        try:
            take()
        except Exception:  # noqa: BLE001
            log.debug("drop leftovers", exc_info=True)


def listen(logger: logging.Logger, handler: logging.Handler, debug: bool) -> tuple[int, bool]:
    """Add ``handler`` to ``logger`` (at DEBUG, not propagating, when ``debug``); returns its level and
    propagation before, for :func:`unlisten`."""
    before = (logger.level, logger.propagate)
    logger.addHandler(handler)
    if debug and not logger.isEnabledFor(logging.DEBUG):
        logger.setLevel(logging.DEBUG)
        logger.propagate = False
    return before


def unlisten(logger: logging.Logger, handler: logging.Handler, before: tuple[int, bool]) -> None:
    """Undo :func:`listen`."""
    logger.removeHandler(handler)
    logger.setLevel(before[0])
    logger.propagate = before[1]


__all__ = ["drop_leftovers", "fresh_dynamo", "listen", "restore_settings", "save_settings", "unlisten"]
