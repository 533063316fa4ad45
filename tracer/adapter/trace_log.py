"""torch's structured trace (``torch._logging._internal.trace_log``): our handler, the filter that keeps torch from building events nobody reads, and the fusion logger."""

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


from inductor_step.tracer.adapter.base import MAX_TEXT, _unavailable, current_graph, log, safe  # noqa: F401


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
            if name in ("artifact", "graph_dump"):
                md = local["metadata_fn"]()
                name = f"{name}:{md.get('name')}" if isinstance(md, dict) else name
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
    ``artifact:<name>``, graph dumps ``graph_dump:<name>`` (AOTInductor's code:
    ``graph_dump:inductor_aot_wrapper_code``, ``graph_dump:inductor_aot_kernel_code``)."""
    md = getattr(record, "metadata", None) or {}
    if not md:
        return None, {}, ""
    key = next(iter(md))
    val = md[key]
    if key in ("artifact", "graph_dump") and isinstance(val, dict):
        key = f"{key}:{val.get('name')}"
    return key, md, getattr(record, "payload", "") or ""


def fusion_logger() -> logging.Logger:
    """Inductor's fusion decision logger (WhyNoFuse, 'fusing X with Y')."""
    return logging.getLogger("torch._inductor.scheduler.__fusion")


