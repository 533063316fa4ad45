"""Messages as typed objects: one class per message type, generated from its TypedDict, read by attribute.

A record is the message's own dict (a ``dict`` subclass: every reader that takes a dict takes it,
``json.dumps`` writes it as it came) whose fields are attributes: ``stop.stage``,
``stop.graph.nodes[0].name``, ``run.compiled_ms``.  A field the message lacks reads None (the
format's optional keys).  The classes are generated from the format's TypedDicts
(:mod:`inductor_step.session.format.types`, ``messages``, ``compile_time``, ``numerics``), so each
type has one definition: the TypedDict says what a field holds, and a field that holds typed pieces
(``FxGraph``, ``list[FxNode]``, ``dict[str, LinkBuffer]``) is decoded into records when first read
(in place, once: ``stop["graph"]`` is then the same record).  :func:`decode` gives a message its
class by its ``type`` (and a stop's ``stage``); the session store decodes each message once.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Callable

from inductor_step.session.format.messages import MESSAGES
from inductor_step.session.format.types import STOPS


class Record(dict):
    """One message, or a typed piece of one, as a dict whose fields read as attributes (see the module).
    ``SCHEMA`` is the TypedDict it was generated from (None for a message of an unknown type, whose
    fields are read with ``[]`` / ``get`` only)."""

    __slots__ = ()
    SCHEMA: Any = None

    @property
    def type(self) -> Any:
        """The message's ``type`` (``"stop"``, ``"run"``, ...: what the session indexes it by and the UI routes it
        by), for a message of any type, known or not; a typed piece's own ``type`` field (a scheduler node's
        ``"FusedSchedulerNode"``); None where there is none."""
        return dict.get(self, "type")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict.__repr__(self)})"


_CLASSES: dict[Any, type[Record]] = {}


def _typed_dicts(hint: Any) -> tuple[type, ...]:
    """The TypedDicts a field's hint names at its top (``FxGraph | Unavailable`` -> both)."""
    if typing.is_typeddict(hint):
        return (hint,)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return tuple(a for a in typing.get_args(hint) if typing.is_typeddict(a))
    return ()


def _alternatives(hint: Any) -> list[Any]:
    """``A | B | None`` -> ``[A, B]``; any other hint -> ``[hint]``."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return [a for a in typing.get_args(hint) if a is not type(None)]
    return [hint]


def _reader(name: str, hint: Any) -> Callable[[Record], Any]:
    """The getter of field ``name`` whose hint is ``hint``: the raw value, or its typed pieces decoded in
    place by what the value is: a dict of a TypedDict (``FxGraph | Unavailable``), a list of them
    (``list[FxNode]``), a dict of them by name (``dict[str, LinkBuffer]``)."""
    alts = _alternatives(hint)
    one = tuple(t for a in alts for t in _typed_dicts(a))
    items = tuple(t for a in alts if typing.get_origin(a) is list and typing.get_args(a)
                  for t in _typed_dicts(typing.get_args(a)[0]))
    values = tuple(t for a in alts if typing.get_origin(a) is dict and len(typing.get_args(a)) == 2
                   for t in _typed_dicts(typing.get_args(a)[1]))
    if not (one or items or values):
        return lambda self: dict.get(self, name)

    def read(self: Record) -> Any:
        v = dict.get(self, name)
        if type(v) is dict:
            if one:
                v = record_class(one)(v)
                dict.__setitem__(self, name, v)
            elif values and any(type(x) is dict for x in v.values()):
                cls = record_class(values)
                v = {k: cls(x) if type(x) is dict else x for k, x in v.items()}
                dict.__setitem__(self, name, v)
        elif type(v) is list and items and v and any(type(x) is dict for x in v):
            cls = record_class(items)
            v[:] = [cls(x) if type(x) is dict else x for x in v]
        return v
    return read


def record_class(schema: Any) -> type[Record]:
    """The record class of a TypedDict (or of a tuple of them: a field that holds either, whose class
    has the fields of all), generated on first use and kept.  Raises TypeError for anything else."""
    tds = schema if isinstance(schema, tuple) else (schema,)
    key = tds[0] if len(tds) == 1 else tds
    cls = _CLASSES.get(key)
    if cls is not None:
        return cls
    if not tds or not all(typing.is_typeddict(t) for t in tds):
        raise TypeError(f"not a TypedDict: {schema!r}")
    fields: dict[str, Any] = {}
    for t in reversed(tds):
        fields.update(typing.get_type_hints(t))
    ns: dict[str, Any] = {"__slots__": (), "SCHEMA": key, "__doc__": tds[0].__doc__,
                          "__module__": __name__, "__qualname__": "_".join(t.__name__ for t in tds)}
    for name, hint in fields.items():
        if name.isidentifier() and not hasattr(Record, name):
            ns[name] = property(_reader(name, hint), doc=f"the message's ``{name}`` ({hint})")
    cls = type(ns["__qualname__"], (Record,), ns)
    _CLASSES[key] = cls
    return cls


def as_record(value: dict[str, Any], schema: Any) -> Record:
    """``value`` read by attribute as a ``schema`` record (a TypedDict): itself when it is a record already, else
    a record holding its items (for callers that pass a plain dict of that shape)."""
    return value if isinstance(value, Record) else record_class(schema)(value)


def schema_of(msg: dict[str, Any]) -> Any:
    """The TypedDict of a message by its ``type`` (a stop's by its ``stage``), None for an unknown type."""
    t = msg.get("type")
    if t == "stop":
        return STOPS.get(msg.get("stage"))  # type: ignore[arg-type]
    return MESSAGES.get(t)  # type: ignore[arg-type]


def decode(msg: dict[str, Any]) -> Record:
    """``msg`` (a decoded JSON line) as the record of its type: the same keys and values, read by
    attribute too.  A record is returned as it is; a message of an unknown type becomes a plain
    :class:`Record`."""
    if isinstance(msg, Record):
        return msg
    schema = schema_of(msg)
    return (record_class(schema) if schema is not None else Record)(msg)
