"""Recompile blame: where Dynamo's shape environment specialized a dynamic size to a constant (the symbol, the
user's line and the torch function that forced it), sent as ``blame`` messages of kind ``recompile``.

Read from torch's structured trace event ``symbolic_shape_specialization`` (``ShapeEnv._set_replacement`` in
torch/fx/experimental/symbolic_shapes.py, torch 2.11 and 2.13 alike: ``symbol``, ``sources``, ``value``, ``reason``,
``stack`` (torch's frames), ``user_stack`` (the user's, from ``TracingContext.extract_stack``), file names interned
in ``torch._logging.structured.INTERN_TABLE``).  A later compile of the frame whose guard on that size failed is
the recompile it explains.
"""

from __future__ import annotations

import os
from typing import Any

#: torch's own frames that only carry the specialization along (the innermost other torch frame is the one named)
_PLUMBING = ("fx/experimental/symbolic_shapes.py", "fx/experimental/sym_node.py", "_logging/", "torch/__init__.py",
             "utils/_sympy/", "fx/experimental/recording.py", "_dynamo/utils.py")


def _files() -> dict[int, str]:
    try:
        from torch._logging import structured  # noqa: PLC0415

        return {v: k for k, v in structured.INTERN_TABLE.items()}
    except Exception:  # noqa: BLE001
        return {}


def _frame(f: dict[str, Any], files: dict[int, str]) -> dict[str, Any]:
    fn = f.get("filename")
    name = files.get(fn, str(fn)) if isinstance(fn, int) else str(fn)
    return {"file": name, "line": f.get("line"), "function": f.get("name"), "code": (f.get("loc") or "").strip()}


def specialization(md: dict[str, Any]) -> dict[str, Any]:
    """The message's ``specialization`` (session.format.BlameSpecialization) from the event's metadata."""
    files = _files()
    user = [_frame(f, files) for f in md.get("user_stack") or [] if isinstance(f, dict)]
    stack = [_frame(f, files) for f in md.get("stack") or [] if isinstance(f, dict)]
    torch_frames = [f for f in stack if f"{os.sep}torch{os.sep}" in f["file"]
                    and not any(p in f["file"].replace(os.sep, "/") for p in _PLUMBING)]
    out: dict[str, Any] = {"symbol": str(md.get("symbol")), "sources": [str(s) for s in md.get("sources") or []],
                           "value": str(md.get("value")), "reason": str(md.get("reason") or "")}
    if user:
        u = user[-1]
        out["user_line"] = f"{u['file']}:{u['line']} in {u['function']}"
        if u["code"]:
            out["user_code"] = u["code"]
    if torch_frames:
        t = torch_frames[-1]
        out["torch_line"] = f"{t['file'].split(os.sep + 'torch' + os.sep, 1)[-1]}:{t['line']} in {t['function']}"
    return out


def on_event(agent: Any, cid: str, md: dict[str, Any]) -> None:
    """``symbolic_shape_specialization`` during compile ``cid``: send it (a ``blame`` message, kind recompile)."""
    agent.send({"type": "blame", "kind": "recompile", "event": "specialization", "compile_id": cid,
                "specialization": specialization(md.get("symbolic_shape_specialization") or md)})


__all__ = ["on_event", "specialization"]
