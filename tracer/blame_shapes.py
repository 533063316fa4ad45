"""Recompile blame: where Dynamo's shape environment specialized a dynamic size to a constant, or constrained it
(a guard on its symbol: ``s77 > 16``, ``Eq(Mod(s17, 4), 0)``), with the symbol, the user's line and the torch
function that did it, sent as ``blame`` messages of kind ``recompile``.

Read from torch's structured trace, torch 2.11 and 2.13 alike: ``symbolic_shape_specialization``
(``ShapeEnv._set_replacement`` in torch/fx/experimental/symbolic_shapes.py: ``symbol``, ``sources``, ``value``,
``reason``, ``stack`` (torch's frames), ``user_stack`` (the user's, from ``TracingContext.extract_stack``)) and
``guard_added_fast`` (``ShapeEnv._log_guard``: ``expr``, ``stack``, ``user_stack``; its prefix and the symbols'
sources read from that frame, tracer.adapter.blame.guard_origin); file names interned in
``torch._logging.structured.INTERN_TABLE``.  A later compile of the frame whose guard on that size failed is the
recompile it explains.
"""

from __future__ import annotations

import os
import re
from typing import Any, Callable

#: torch's own frames that only carry the specialization along (the innermost other torch frame is the one named)
_PLUMBING = ("fx/experimental/symbolic_shapes.py", "fx/experimental/sym_node.py", "_logging/", "torch/__init__.py",
             "utils/_sympy/", "fx/experimental/recording.py", "_dynamo/utils.py")


def _frame(f: dict[str, Any], files: dict[int, str]) -> dict[str, Any]:
    fn = f.get("filename")
    name = files.get(fn, str(fn)) if isinstance(fn, int) else str(fn)
    return {"file": name, "line": f.get("line"), "function": f.get("name"), "code": (f.get("loc") or "").strip()}


def _where(md: dict[str, Any]) -> dict[str, str]:
    """``user_line``, ``user_code`` and ``torch_line`` of an event's ``user_stack`` and ``stack``."""
    from inductor_step.tracer.adapter.blame import interned_files  # noqa: PLC0415

    files = interned_files()
    user = [_frame(f, files) for f in md.get("user_stack") or [] if isinstance(f, dict)]
    stack = [_frame(f, files) for f in md.get("stack") or [] if isinstance(f, dict)]
    torch_frames = [f for f in stack if f"{os.sep}torch{os.sep}" in f["file"]
                    and not any(p in f["file"].replace(os.sep, "/") for p in _PLUMBING)]
    out: dict[str, str] = {}
    if user:
        u = user[-1]
        out["user_line"] = f"{u['file']}:{u['line']} in {u['function']}"
        if u["code"]:
            out["user_code"] = u["code"]
    if torch_frames:
        t = torch_frames[-1]
        out["torch_line"] = f"{t['file'].split(os.sep + 'torch' + os.sep, 1)[-1]}:{t['line']} in {t['function']}"
    return out


def specialization(md: dict[str, Any]) -> dict[str, Any]:
    """The message's ``specialization`` (session.format.BlameSpecialization) from the event's metadata."""
    out: dict[str, Any] = {"symbol": str(md.get("symbol")), "sources": [str(s) for s in md.get("sources") or []],
                           "value": str(md.get("value")), "reason": str(md.get("reason") or "")}
    out.update(_where(md))
    return out


#: a guard that pins a symbol to a constant: a specialization, sent as such (symbolic_shape_specialization)
_PINNED = re.compile(r"^Eq\((?:[a-z]\d+, -?\d+|-?\d+, [a-z]\d+)\)$")


def constraint(md: dict[str, Any], prefix: str | None, sources: dict[str, list[str]]) -> dict[str, Any] | None:
    """The message's ``constraint`` (session.format.BlameConstraint) from a ``guard_added_fast`` event's metadata,
    the guard's ``prefix`` and its symbols' ``sources`` (tracer.adapter.blame.guard_origin); None for a guard the
    user's code did not add (no user frame: Inductor's own size checks, a cache's guards evaluated again), one
    torch suppressed (not installed), and one that pins a symbol to a constant (a specialization)."""
    expr = str(md.get("expr") or "")
    if not expr or (prefix or "").endswith("[guard suppressed]") or _PINNED.match(expr):
        return None
    where = _where(md)
    if "user_line" not in where:
        return None
    syms = sorted(set(re.findall(r"\b[a-z]\d+\b", expr)) & set(sources) or sources)
    return {"expr": expr, "symbols": syms, "sources": {k: list(sources.get(k) or []) for k in syms},
            "kind": "runtime_assert" if prefix == "runtime_assert" else "guard", **where}


def on_event(send: Callable[[dict[str, Any]], None], cid: str, md: dict[str, Any]) -> None:
    """``symbolic_shape_specialization`` during compile ``cid``: ``send`` it (a ``blame`` message, kind recompile)."""
    send({"type": "blame", "kind": "recompile", "event": "specialization", "compile_id": cid,
                "specialization": specialization(md.get("symbolic_shape_specialization") or md)})


def on_guard(send: Callable[[dict[str, Any]], None], seen: set[tuple[str, str]], cid: str,
             md: dict[str, Any]) -> None:
    """``guard_added_fast`` during compile ``cid``: a guard the user's line put on a dynamic size, sent once per
    compile and expression (a ``blame`` message, kind recompile, event constraint; ``seen``: the ``(cid, expression)``
    pairs sent so far, added to)."""
    from inductor_step.tracer.adapter.blame import guard_origin  # noqa: PLC0415

    prefix, sources = guard_origin()
    c = constraint(md.get("guard_added_fast") or md, prefix, sources)
    if c is None:
        return
    if (cid, c["expr"]) in seen:
        return
    seen.add((cid, c["expr"]))
    send({"type": "blame", "kind": "recompile", "event": "constraint", "compile_id": cid, "constraint": c})


__all__ = ["constraint", "on_event", "on_guard", "specialization"]
