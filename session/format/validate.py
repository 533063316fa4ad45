"""Checks a decoded message or command against the format's TypedDicts (validate, validate_command)."""

from __future__ import annotations

import sys
import types
import typing
from typing import Any, Literal, Union

from inductor_step.session.format.commands import Command
from inductor_step.session.format.messages import MESSAGES
from inductor_step.session.format.reader import LAZY
from inductor_step.session.format.types import STOPS


# ----------------------------------------------------------------------------- validation

def _is_typeddict(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, dict) and hasattr(t, "__required_keys__")


def _check(value: Any, t: Any, where: str, out: list[str]) -> None:
    """Append to ``out`` what in ``value`` does not fit annotation ``t`` (``where``: its path)."""
    if t is Any:
        return
    origin = typing.get_origin(t)
    if origin is Union or (sys.version_info >= (3, 10) and origin is types.UnionType):
        options = typing.get_args(t)
        best: list[str] | None = None
        for opt in options:
            found: list[str] = []
            _check(value, opt, where, found)
            if not found:
                return
            if best is None or len(found) < len(best):
                best = found
        if best and len(best) == 1 and not any(_is_typeddict(o) or typing.get_origin(o) in (list, dict)
                                               for o in options):
            out.append(f"{where}: {value!r:.60} is not {_name(t)}")
        else:
            out.extend(best or [])
        return
    if origin is Literal:
        if value not in typing.get_args(t):
            out.append(f"{where}: {value!r:.60} is not one of {typing.get_args(t)}")
        return
    if t is None or t is type(None):
        if value is not None:
            out.append(f"{where}: {value!r:.60} is not null")
        return
    if _is_typeddict(t):
        if not isinstance(value, dict):
            out.append(f"{where}: expected an object ({t.__name__}), got {type(value).__name__}")
            return
        _check_typeddict(value, t, where, out)
        return
    if origin is list:
        if not isinstance(value, list):
            out.append(f"{where}: expected a list, got {type(value).__name__}")
            return
        (item,) = typing.get_args(t) or (Any,)
        for i, x in enumerate(value):
            _check(x, item, f"{where}[{i}]", out)
        return
    if origin is dict:
        if not isinstance(value, dict):
            out.append(f"{where}: expected an object, got {type(value).__name__}")
            return
        _, item = typing.get_args(t) or (str, Any)
        for k, x in value.items():
            _check(x, item, f"{where}[{k!r}]", out)
        return
    if t is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif t is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, t)
    if not ok:
        out.append(f"{where}: {value!r:.60} is not {_name(t)}")


def _name(t: Any) -> str:
    return getattr(t, "__name__", None) or str(t).replace("typing.", "")


_HINTS: dict[type, dict[str, Any]] = {}


def _check_typeddict(value: dict[str, Any], td: type, where: str, out: list[str]) -> None:
    hints = _HINTS.get(td)
    if hints is None:
        hints = _HINTS[td] = typing.get_type_hints(td)
    for k in td.__required_keys__:  # type: ignore[attr-defined]
        if k not in value:
            out.append(f"{where}: missing {k!r} ({td.__name__})")
    for k, v in value.items():
        if k not in hints:
            out.append(f"{where}: unknown key {k!r} ({td.__name__})")
            continue
        _check(v, hints[k], f"{where}.{k}", out)


def message_type(msg: dict[str, Any]) -> type | None:
    """The TypedDict a message should match: by ``type``, and a stop's by its ``stage``."""
    if msg.get("type") == "stop":
        return STOPS.get(str(msg.get("stage")))
    return MESSAGES.get(str(msg.get("type")))


def validate(msg: dict[str, Any]) -> list[str]:
    """What in a decoded message does not match its type here: missing required keys, unknown
    keys, values of the wrong type or outside a ``Literal``; ``[]`` when it matches."""
    if not isinstance(msg, dict):
        return [f"not an object: {type(msg).__name__}"]
    if LAZY in msg:
        msg = {k: v for k, v in msg.items() if k != LAZY}
    td = message_type(msg)
    if td is None:
        return [f"unknown message type {msg.get('type')!r}" + (f" (stage {msg.get('stage')!r})"
                                                             if msg.get("type") == "stop" else "")]
    out: list[str] = []
    _check_typeddict(msg, td, str(msg.get("type")), out)
    return out


def validate_command(cmd: dict[str, Any]) -> list[str]:
    """Like :func:`validate`, for a control command (UI -> agent)."""
    out: list[str] = []
    _check_typeddict(cmd, Command, "command", out)
    return out
