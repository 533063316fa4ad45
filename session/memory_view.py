"""One graph's memory as pane M shows it: the wrapper's plan, saved tensors, lowered buffers, settings to try.

Built from the session alone (no Textual, no torch): :func:`memory_view` puts together
:func:`inductor_step.session.memory.plan` (the codegen stop's wrapper), :func:`~inductor_step.session.memory_saved.
saved_for_backward` (the AOT stops), :func:`lowered_buffers` (the lowering stop, before codegen) and
:mod:`inductor_step.session.memory_whatif` (the settings that trade memory for time, priced where a variant ran).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from inductor_step.session import memory as mem
from inductor_step.session import memory_whatif as mw
from inductor_step.session.format.records import as_record
from inductor_step.session.format.types import LoweringStop
from inductor_step.session.memory_saved import Saved, backward_key, saved_for_backward


@dataclass(frozen=True)
class SettingRow:
    """A setting that trades memory for time, offered for one graph: ``setting`` (:class:`~inductor_step.session.
    memory_whatif.MemorySetting`), ``why_not`` why it cannot run on this graph ("" when it can: a training setting
    on a graph without a backward cannot), ``priced`` its what-if variant against this graph where one was
    compiled (:class:`~inductor_step.session.memory_whatif.Priced`: planned peak and saved bytes, measured peak,
    time, each an (original, variant) pair), else None."""

    setting: mw.MemorySetting
    why_not: str
    priced: mw.Priced | None


@dataclass(frozen=True, eq=False)
class MemoryView:
    """Graph ``key``'s memory (pane M's data).

    - ``plan``: the wrapper's memory plan (:class:`~inductor_step.session.memory.Plan`: each buffer's bytes and
      lifetime in wrapper lines, the planned peak in bytes and what is live there); None before codegen or without
      a Python wrapper.
    - ``saved``: what a forward saves for its backward (:class:`~inductor_step.session.memory_saved.Saved`: tensors,
      bytes, what the backward recomputes); None for a graph that is not a forward.
    - ``lowered``: before codegen only, the lowering stop's buffers, largest first (bytes from each layout:
      :func:`lowered_buffers`); () once there is a plan.
    - ``change``: the settings that trade memory for time (:class:`SettingRow`).

    Compared by identity (the pane's caches are keyed by it)."""

    key: str
    plan: mem.Plan | None
    saved: Saved | None
    lowered: Sequence[mem.MemBuffer]
    change: Sequence[SettingRow]


def forward_backward(key: str) -> str | None:
    """The backward's key of a forward graph ``key`` (``"[0/0] forward"`` -> ``"[0/0] backward"``); None for any
    other graph."""
    return backward_key(key) if " forward" in key else None


def lowered_buffers(session: Any, key: str) -> list[mem.MemBuffer]:
    """Graph ``key``'s buffers as its lowering stop laid them out (``buffers[i]``: name, size, stride, dtype, layout),
    largest first: bytes = storage extent x dtype size, symbols at their hints (the graph's shape hints); a
    ``MultiOutput`` (no storage of its own) is left out."""
    low = session.stop_for(key, "lowering")
    hints = mem._hints(session, key)
    out = []
    for b in (as_record(low, LoweringStop).buffers if low is not None else None) or []:
        if not isinstance(b, dict) or "MultiOutput" in str(b.layout or ""):
            continue
        size, stride = mem._dims(b.size, hints), mem._dims(b.stride, hints)
        nbytes = mem.storage_bytes(size, stride, b.dtype) if size is not None else None
        out.append(mem.MemBuffer(str(b.name), "lowered", nbytes, str(b.name), 0, size, stride,
                                 b.dtype, source="the lowering stop's layout: storage extent x dtype size"))
    return sorted(out, key=lambda b: -(b.bytes or 0))


def memory_view(session: Any, key: str) -> MemoryView:
    """Graph ``key``'s :class:`MemoryView` from ``session`` (a session.store.Store)."""
    p = mem.plan(session, key)
    sv = saved_for_backward(session, key, p)
    priced = mw.priced(session, key)
    change = [SettingRow(st, why, next((x for x in priced if x.key == mw.setting_key(key, st)), None))
              for st, why in mw.candidates(session, key)]
    return MemoryView(key, p, sv, lowered_buffers(session, key) if p is None else (), change)


__all__ = ["MemoryView", "SettingRow", "forward_backward", "lowered_buffers", "memory_view"]
