"""A timing request's status, typed: the ``run_status`` message as a frozen dataclass, its TypedDict made from it.

The agent (``tracer/``) builds every ``run_status`` message through :class:`RunStatus` (:meth:`RunStatus.progress`,
:meth:`RunStatus.finished`, then :meth:`RunStatus.to_message`); the session store reads one back with
:meth:`RunStatus.from_message` and keeps the object; the UI notes its own (``"timing requested…"``) with
:meth:`RunStatus.noted`.  The dataclass's fields are the one definition of the message's: the format's TypedDict
(:data:`RunStatusMessage`, what :func:`~inductor_step.session.format.validate.validate` and the generated
records read) is made from them, each field's type on the wire being its type less ``None`` (a field left out)
and a tuple written as a JSON list.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict, Union

#: The message's ``type``.
RUN_STATUS = "run_status"


@dataclass(frozen=True)
class RunStatus:
    """Where a timing request stands (``r``, a what-if's timing, two graphs timed round by round), as the agent's
    ``run_status`` messages say it, or as the UI notes it before the agent answers.

    ``message``: the line the status bar and the run pane show; ``done``: the request's last status (nothing is
    being timed after it); ``timed``, ``failed`` (graph keys such as ``"[1/0] backward"``) and ``of``: what a done
    request came to (graphs timed, failed, asked for); ``cancelled``: ``c`` ended it; ``limit_s``: the per-graph
    time limit the timing runs under (``--timing-limit``), on the status that starts a graph; ``t``: when the agent
    sent it (its stream's clock, set by its writer).  ``local``: noted by the UI, not sent by the agent (never on
    the wire)."""

    message: str = ""
    done: bool = False
    timed: int | None = None
    failed: tuple[str, ...] | None = None
    of: int | None = None
    cancelled: bool = False
    limit_s: float | None = None
    t: float | None = None
    local: bool = field(default=False, metadata={"wire": False})

    @classmethod
    def progress(cls, message: str, limit_s: float | None = None) -> "RunStatus":
        """A status while the request runs (``"timing [0/0] forward (1/3): loading the graph's inputs"``); the one
        that starts a graph carries its time limit ``limit_s``."""
        return cls(message, limit_s=limit_s)

    @classmethod
    def finished(cls, message: str, timed: int = 0, failed: typing.Iterable[str] = (), of: int = 0,
                 cancelled: bool = False) -> "RunStatus":
        """A request's last status (``done``): ``timed`` of ``of`` graphs timed, the keys of those that ``failed``,
        whether ``c`` ``cancelled`` it; a request that timed nothing (none to time, cancelled while it waited)
        keeps the zeros."""
        return cls(message, done=True, timed=timed, failed=tuple(failed), of=of, cancelled=cancelled)

    @classmethod
    def noted(cls, message: str) -> "RunStatus":
        """A status the UI notes itself (``"timing requested…"``, ``"cancelling…"``) until the agent's next one."""
        return cls(message, local=True)

    def to_message(self) -> dict[str, Any]:
        """The ``run_status`` message of this status: ``type`` then each field that is set (a False flag and a
        None are left out, as readers take their absence), ``failed`` as a list."""
        msg: dict[str, Any] = {"type": RUN_STATUS}
        for f in _WIRE_FIELDS:
            v = getattr(self, f.name)
            if v is None or v is False:
                continue
            msg[f.name] = list(v) if isinstance(v, tuple) else v
        return msg

    @classmethod
    def from_message(cls, msg: typing.Mapping[str, Any]) -> "RunStatus":
        """The status a ``run_status`` message (decoded from the stream or a session file) says; a key this
        version does not know (a newer writer's) is ignored, a value of the wrong type reads as left out."""
        kw: dict[str, Any] = {}
        for f in _WIRE_FIELDS:
            v = msg.get(f.name)
            want = _WIRE_TYPES[f.name]
            if want is list:
                v = tuple(str(x) for x in v) if isinstance(v, list) else None
            elif want is float:
                v = v if isinstance(v, (int, float)) and not isinstance(v, bool) else None
            elif not isinstance(v, want) or (want is int and isinstance(v, bool)):
                v = None
            if v is not None:
                kw[f.name] = v
        return cls(**kw)


def _wire_type(hint: Any) -> Any:
    """A field's type in the message: its hint less ``None``, a ``tuple[X, ...]`` as ``list[X]``."""
    if typing.get_origin(hint) in (Union, types.UnionType):
        (hint,) = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) is tuple:
        return list[typing.get_args(hint)[0]]  # type: ignore[misc]
    return hint


_WIRE_FIELDS = tuple(f for f in dataclasses.fields(RunStatus) if f.metadata.get("wire", True))
_HINTS = {f.name: _wire_type(typing.get_type_hints(RunStatus)[f.name]) for f in _WIRE_FIELDS}
#: each field's plain type in the message (``list`` for ``list[str]``), what :meth:`RunStatus.from_message` checks
_WIRE_TYPES = {k: typing.get_origin(h) or h for k, h in _HINTS.items()}

#: The ``run_status`` message's TypedDict, made from :class:`RunStatus`'s fields (``type`` first; every key optional).
RunStatusMessage = TypedDict(  # type: ignore[misc]
    "RunStatusMessage", {"type": Literal[RUN_STATUS], **_HINTS}, total=False)
RunStatusMessage.__doc__ = ("A timing request's status (:class:`RunStatus` as a message): progress while it runs, "
                            "then one with ``done``.")
