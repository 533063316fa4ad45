"""Collectives in a compiled graph, and the local stand-ins the timing harness runs in their place.

Inductor lowers a collective of ``torch.distributed`` (``dist.all_reduce`` under compile, DDP / FSDP2's
functional collectives, DTensor redistribution) to an op of the ``_c10d_functional`` library
(``torch/csrc/distributed/c10d/Functional.cpp``; Python side ``torch.distributed._functional_collectives``)
and calls it from the output module's ``call()`` as an extern kernel
(``torch/_inductor/ir.py``: ``_CollectiveKernel``, ``_AllReduce_Kernel``, ``_WaitKernel``; the call named
``FallbackKernel.python_kernel_name``: ``torch.ops._c10d_functional.all_reduce_.default(buf1, 'sum', '0')``,
``buf6 = torch.ops._c10d_functional.all_gather_into_tensor.default(buf1, 2, '0')``,
``torch.ops._c10d_functional.wait_tensor.default(buf6)``); the post-grad FX graph holds the same ops as
``call_function`` nodes.  Checked on torch 2.11 and 2.15.

Such a graph cannot be run alone: the op resolves its process group by name
(``_resolve_process_group``), which after the script is gone ("Could not resolve the process group
registered under the name 0") and in a timing worker never existed; and while the script runs, a real
collective would wait for the other ranks, who are not running it.  So the timing harness runs the graph
with every collective replaced by a local stand-in that does no communication and returns what a rank
could get back (:data:`STAND_INS`): ``all_reduce_`` the input unchanged, ``all_gather_into_tensor`` this
rank's input repeated ``group_size`` times, ``reduce_scatter_tensor`` this rank's first chunk,
``wait_tensor`` its argument.  Values and shapes let every compute kernel after it run as it would;
the collective itself is not timed.  An op of these libraries with no stand-in raises
:class:`NoStandIn` rather than calling the real one.
"""

from __future__ import annotations

import contextlib
import re
import types
from typing import Any, Callable, Iterator

import torch

from inductor_step.tracer.adapter.base import log

#: the op libraries whose ops are collectives (``torch.ops.<namespace>``)
NAMESPACES = ("_c10d_functional", "c10d_functional", "_c10d_functional_autograd", "_dtensor")
#: a kernel name as the timing harness and tracer.codeparse name it: ``torch.ops._c10d_functional.all_reduce_.default#0``
_NAME = re.compile(r"^torch\.ops\.(" + "|".join(NAMESPACES) + r")\.(\w+)\.(\w+)(?:#\d+)?$")
#: a post-grad FX node's target as the session records it: ``_c10d_functional.all_reduce_.default``
_TARGET = re.compile(r"^(?:torch\.ops\.)?(" + "|".join(NAMESPACES) + r")\.(\w+)(?:\.\w+)?$")

NOT_TIMED = "a collective: timing it alone needs every rank running it together; not timed"


class NoStandIn(RuntimeError):
    """A collective of the graph has no local stand-in: the graph is not timed (the real op is never called)."""


def collective_of(name: str) -> str | None:
    """The collective's op name (``"all_reduce_"``, ``"wait_tensor"``) of a kernel name
    (``torch.ops._c10d_functional.all_reduce_.default#0``) or an FX target text
    (``_c10d_functional.all_reduce_.default``), else None."""
    m = _NAME.match(name) or _TARGET.match(name)
    return m.group(2) if m else None


def collective_path(path: str) -> str | None:
    """For the timing hooks: ``"leaf"`` when ``path`` (``torch.ops._c10d_functional.all_reduce_.default``)
    names an overload of a collective, ``"prefix"`` when it leads to one (``torch.ops``,
    ``torch.ops._c10d_functional``, ``torch.ops._c10d_functional.all_reduce_``), else None."""
    parts = path.split(".")
    if parts[:2] != ["torch", "ops"]:
        return None
    if len(parts) == 2:
        return "prefix"
    if parts[2] not in NAMESPACES:
        return None
    return "leaf" if len(parts) == 5 else "prefix" if len(parts) < 5 else None


# ----------------------------------------------------------------------------- the stand-ins

def _gathered(t: torch.Tensor, group_size: int) -> torch.Tensor:
    """What all_gather_into_tensor returns when every rank holds ``t``: ``group_size`` copies along dim 0."""
    t = t.reshape(1) if t.dim() == 0 else t
    return torch.cat([t] * int(group_size)) if group_size != 1 else t.clone(memory_format=torch.contiguous_format)


def _scattered(t: torch.Tensor, group_size: int) -> torch.Tensor:
    """This rank's part of a reduce_scatter: the first ``1 / group_size`` of ``t`` along dim 0 (a copy)."""
    return t.narrow(0, 0, t.shape[0] // int(group_size)).clone(memory_format=torch.contiguous_format)


def _all_to_all(t: torch.Tensor, out_splits: Any, _in_splits: Any, *_: Any) -> torch.Tensor:
    rows = sum(int(s) for s in out_splits) if out_splits else t.shape[0]
    if rows == t.shape[0]:
        return t.clone(memory_format=torch.contiguous_format)
    return t.new_zeros((rows, *t.shape[1:]))


#: op name -> (stand-in called with the op's own arguments, what it returns in words)
STAND_INS: dict[str, tuple[Callable[..., Any], str]] = {
    "all_reduce": (lambda t, *_: t.clone(), "a copy of the input (the reduction over 1 rank)"),
    "all_reduce_": (lambda t, *_: t, "the input unchanged (in place: the reduction over 1 rank)"),
    "all_reduce_coalesced": (lambda ts, *_: [t.clone() for t in ts], "copies of the inputs (the reduction over 1 rank)"),
    "all_reduce_coalesced_": (lambda ts, *_: ts, "the inputs unchanged (in place: the reduction over 1 rank)"),
    "broadcast": (lambda t, *_: t.clone(), "a copy of the input (as if this rank were the source)"),
    "broadcast_": (lambda t, *_: t, "the input unchanged (as if this rank were the source)"),
    "all_gather_into_tensor": (lambda t, n, *_: _gathered(t, n),
                               "the input repeated group_size times along dim 0 (every rank holding this rank's data)"),
    "all_gather_into_tensor_out": (lambda t, n, *_, out: out.copy_(_gathered(t, n)),
                                   "the input repeated group_size times along dim 0, into out"),
    "all_gather_into_tensor_coalesced": (lambda ts, n, *_: [_gathered(t, n) for t in ts],
                                         "each input repeated group_size times along dim 0"),
    "reduce_scatter_tensor": (lambda t, _op, n, *_: _scattered(t, n),
                              "the input's first 1/group_size along dim 0 (this rank's part, reduced over 1 rank)"),
    "reduce_scatter_tensor_out": (lambda t, _op, n, *_, out: out.copy_(_scattered(t, n)),
                                  "the input's first 1/group_size along dim 0, into out"),
    "reduce_scatter_tensor_coalesced": (lambda ts, _op, n, *_: [_scattered(t, n) for t in ts],
                                        "each input's first 1/group_size along dim 0"),
    "all_to_all_single": (_all_to_all, "a copy of the input (zeros where the output split sizes differ)"),
    "wait_tensor": (lambda t: t, "its argument (nothing to wait for)"),
    "wait_tensors": (lambda ts: ts, "its arguments (nothing to wait for)"),
    "isend": (lambda t, *_: t, "its argument (nothing sent)"),
    "irecv": (lambda t, *_: t, "its argument unchanged (nothing received)"),
}


def stand_in_text(op: str) -> str:
    """What the stand-in of collective ``op`` returns, in words ("" when it has none)."""
    return STAND_INS[op][1] if op in STAND_INS else ""


class _StandIn:
    """Called in place of one collective overload (``torch.ops._c10d_functional.all_reduce_.default``)."""

    _inductor_step_stand_in = True

    def __init__(self, namespace: str, op: str, overload: str):
        self.namespace, self.op, self.overload = namespace, op, overload
        self.__name__ = f"stand_in_{op}"
        self.__qualname__ = self.__name__

    def __call__(self, *a: Any, **k: Any) -> Any:
        entry = STAND_INS.get(self.op)
        if entry is None:
            raise NoStandIn(f"torch.ops.{self.namespace}.{self.op}.{self.overload} is a collective with no local "
                            "stand-in: the graph cannot be timed without running it on every rank")
        return entry[0](*a, **k)

    def __repr__(self) -> str:
        return f"<stand-in for torch.ops.{self.namespace}.{self.op}.{self.overload}>"


class _Packet:
    """Stands in for ``torch.ops._c10d_functional.all_reduce_``: each overload is a :class:`_StandIn`."""

    def __init__(self, namespace: str, op: str, real: Any):
        self._namespace, self._op, self._real = namespace, op, real

    def __getattr__(self, overload: str) -> Any:
        if overload.startswith("__"):
            return getattr(self._real, overload)
        return _StandIn(self._namespace, self._op, overload)

    def __call__(self, *a: Any, **k: Any) -> Any:
        return _StandIn(self._namespace, self._op, "default")(*a, **k)


class _Namespace:
    """Stands in for ``torch.ops._c10d_functional``."""

    def __init__(self, namespace: str, real: Any):
        self._namespace, self._real = namespace, real

    def __getattr__(self, op: str) -> Any:
        if op.startswith("__"):
            return getattr(self._real, op)
        return _Packet(self._namespace, op, None)


def stand_in_torch() -> Any:
    """A stand-in for an output module's global ``torch`` whose ``torch.ops.<collective library>`` are
    :class:`_Namespace` stand-ins.  A module object holding a copy of torch's own attributes (and of
    ``torch.ops``'s loaded libraries), so every other ``torch.X`` the wrapper reads is a plain module
    attribute, as fast as the real one: the graph is timed with no proxy in its way; anything not
    copied is looked up on the real module (PEP 562 ``__getattr__``)."""
    ops = types.ModuleType("torch.ops")
    ops.__dict__.update(vars(torch.ops))
    for ns in NAMESPACES:
        ops.__dict__[ns] = _Namespace(ns, None)
    ops.__dict__["__getattr__"] = lambda name: getattr(torch.ops, name)
    t = types.ModuleType("torch")
    t.__dict__.update(vars(torch))
    t.__dict__.update(ops=ops, _inductor_step_stand_ins=True, __getattr__=lambda name: getattr(torch, name))
    return t


def _stand_in_for(value: Any) -> Any:
    """A stand-in for a module global that is a collective library, op or overload; None otherwise."""
    try:
        if isinstance(value, torch._ops.OpOverload):
            ns, op, overload = value.namespace, value._schema.name.split("::")[-1], value._overloadname
            return _StandIn(ns, op, overload) if ns in NAMESPACES else None
        if isinstance(value, torch._ops.OpOverloadPacket):
            ns, op = value._qualified_op_name.split("::")
            return _Packet(ns, op, value) if ns in NAMESPACES else None
        if isinstance(value, torch._ops._OpNamespace) and getattr(value, "name", None) in NAMESPACES:
            return _Namespace(value.name, value)
    except Exception:  # noqa: BLE001 - not one of ours
        return None
    return None


def uses_collectives(source: str) -> bool:
    """Whether an output module's source names a collective library (``_c10d_functional`` ...)."""
    return any(ns in source for ns in NAMESPACES)


@contextlib.contextmanager
def stand_ins_in_module(mod: Any, source: str | None = None) -> Iterator[bool]:
    """While active, output module ``mod`` calls every collective through a local stand-in
    (:data:`STAND_INS`): its global ``torch`` becomes :func:`stand_in_torch` and any global that is a
    collective library, op or overload (an alias) its stand-in.  Restored on exit.  ``source``: the
    module's source; where it names no collective library (:func:`uses_collectives`) the module is left
    exactly as it is.  Yields whether stand-ins were put in."""
    saved: dict[str, Any] = {}
    if source is not None and not uses_collectives(source):
        yield False
        return
    if getattr(mod, "torch", None) is torch:
        saved["torch"] = mod.torch
        mod.torch = stand_in_torch()
    for name, value in list(vars(mod).items()):
        if name in saved or name.startswith("__"):
            continue
        stand_in = _stand_in_for(value)
        if stand_in is not None:
            saved[name] = value
            setattr(mod, name, stand_in)
    try:
        yield True
    finally:
        for name, value in saved.items():
            setattr(mod, name, value)


def packets_to_overloads(gm: Any) -> None:
    """Point each collective call of Dynamo's graph ``gm`` that names an op packet
    (``torch.ops._c10d_functional.all_reduce``, ``torch._ops.OpOverloadPacket``) at its ``.default`` overload,
    the form AOTAutograd's graphs call and :func:`stand_ins_in_graph` replaces.  In place; never raises."""
    for node in getattr(getattr(gm, "graph", None), "nodes", []):
        t = node.target
        try:
            if node.op == "call_function" and isinstance(t, torch._ops.OpOverloadPacket) \
                    and t._qualified_op_name.split("::")[0] in NAMESPACES and hasattr(t, "default"):
                node.target = t.default
        except Exception:  # noqa: BLE001 - a node left as it is runs as it is
            continue


def stand_ins_in_graph(gm: Any) -> dict[str, str]:
    """Replace, in place, every ``call_function`` node of FX GraphModule ``gm`` (the post-grad graph) whose
    target is a collective overload with its stand-in, and recompile; returns {node name: op name} of the
    nodes replaced."""
    out: dict[str, str] = {}
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        stand_in = _stand_in_for(node.target)
        if isinstance(stand_in, _StandIn):
            node.target = stand_in
            out[node.name] = stand_in.op
    if out:
        try:
            gm.recompile()
        except Exception:  # noqa: BLE001
            log.debug("recompiling the graph with stand-ins", exc_info=True)
            raise
    return out
