"""A memo of Inductor's texts per graph (sympy str, MemoryDep repr, ``LoopBody.debug_str``): the same object's text is computed once while a graph compiles."""

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
