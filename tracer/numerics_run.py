"""Numerics in the agent: one ``numerics`` message per compiled graph, after the script or on request.

Runs :func:`tracer.numerics.compare_graph` in the agent's own process (the post-grad graph, the links and the
script's first-call inputs live here; a crash in a kernel would take the agent with it, as in-process timing
does).  The localizing recompile (:func:`tracer.numerics_localize.localize_kernels`) compiles on this thread under the
agent's what-if lock, as a what-if variant does, but its stops are not sent (``tl.silent``) and its graph state is
dropped afterwards: it is a measurement, not a graph of the session.
"""

from __future__ import annotations

import threading
import traceback
from typing import Any

from inductor_step.session import format as protocol
from inductor_step.tracer.agent_timing import script_record
from inductor_step.tracer.graph_device import on_graph_device


def _graph_flags(kind: str) -> tuple[bool, bool]:
    base = protocol.GraphKey.parse_kind(kind).kind
    return base == "backward", base == "inference"


def numerics_all(state: Any, only: str | list[str] | None = None) -> None:
    """Compare every compiled graph of the agent's ``state`` (tracer.agent_state.AgentState: its graphs, the
    script's calls and post-grad snapshots, the variants, the stream), or those named (``"[0/0] forward"``), with
    eager; sends one ``numerics`` message (:class:`session.format.GraphNumerics`) per graph, ``failed`` with
    ``error`` where it could not run."""
    names = [only] if isinstance(only, str) else list(only or [])
    if names and not state.script_done:  # e before the script's first call of a graph waits for it
        names = [n for n in names if not _wait_for_first_call(state, n)]
        if not names:
            return
    todo = [(k, g) for k, g in list(state.graphs.items())
            if g.get("output_path") and g.get("gm") is not None and not g.get("function")
            and (not names or f"{k[0]} {k[1]}" in names)]
    if not todo:
        state.send({"type": "numerics", "compile_id": "?", "graph_kind": "inference", "failed": True,
                    "error": "no compiled graph to compare yet (codegen not reached)"})
        return
    for (cid, kind), g in todo:
        msg: dict[str, Any] = {"type": "numerics", "compile_id": cid, "graph_kind": kind,
                               "device": g.get("device", "cpu")}
        orig = state.variants.original.get((cid, kind))
        rec = script_record(state.script_calls, g, state.graphs.get(orig) if orig else None)
        backward, inference = _graph_flags(kind)
        snapshot = state.variants.snapshots.get(orig or (cid, kind))
        try:
            with open(g["output_path"], encoding="utf-8") as f:
                if "def call(" not in f.read():
                    raise RuntimeError("a C++ wrapper (cpp_wrapper or AOTInductor): its kernel calls cannot be "
                                       "instrumented from Python")
            with on_graph_device(g.get("device")):  # this thread starts on cuda:0
                msg.update(_compare(state, cid, kind, g, rec, snapshot, backward, inference))
        except Exception as e:  # noqa: BLE001 - never takes the agent down
            msg.update(failed=True, error=f"{type(e).__name__}: {e}".splitlines()[0][:500])
            msg["method"] = traceback.format_exc()[-2000:]
        state.send(msg)


def _compare(state: Any, cid: str, kind: str, g: Any, rec: Any, snapshot: Any, backward: bool,
             inference: bool) -> dict[str, Any]:
    from inductor_step.tracer.numerics import compare_graph  # noqa: PLC0415

    key = (cid, f"{kind}{protocol.VARIANT_SEP}numerics")
    with state.variants.lock, state.fusion.kept():  # (a variant keeps its own AgentState.current)
        state.tl.silent = True
        state.tl.variant = key
        try:
            return compare_graph(g["output_path"], g["gm"], g.get("links") or {}, rec, snapshot=snapshot,
                                 is_backward=backward, is_inference=inference)
        finally:
            state.tl.silent = False
            state.tl.variant = None
            state.graphs.pop(key, None)


#: the numerics message of a graph the script has not called yet
WAITING = ("waiting for the script's first call of this graph; its real inputs are compared then "
           "(automatically, when it calls it)")


def _called(state: Any, g: dict[str, Any] | None) -> bool:
    from inductor_step.tracer import adapter  # noqa: PLC0415

    if not g or not g.get("output_path"):
        return False
    rec = state.script_calls.get(adapter.output_module_key(g["output_path"]))
    return bool(rec and rec.get("calls"))


def _wait_for_first_call(state: Any, name: str) -> bool:
    """Whether graph ``name`` (``"[0/0] forward"``) waits for the script's first call of it before it is compared
    (random inputs made a batch norm's running variance negative and every buffer NaN): a graph of the
    script (not a what-if variant or a subgraph) that it has not called yet, while it runs.  Then sends the
    ``waiting`` message and :func:`on_first_call` compares it when the call comes."""
    key = protocol.GraphKey.parse(name)
    cid, kind = key.pair
    if not key.kind or key.variant is not None or key.subgraph or state.script_done:
        return False
    g = state.graphs.get((cid, kind))
    if g is not None and (g.get("function") or state.variants.original.get((cid, kind))) or _called(state, g):
        return False
    waiting = state.numerics_waiting
    waiting.add(name)
    state.send({"type": "numerics", "compile_id": cid, "graph_kind": key.kind,
                **({"part": key.part} if key.part else {}),
                "waiting": True, "message": WAITING, "inputs_origin": "waiting"})
    return True


def on_first_call(state: Any, module_key: str) -> None:
    """The script called a compiled graph for the first time (its output module ``module_key``): compare every
    graph that waits for that call (:func:`_wait_for_first_call`) on a thread of its own, on those inputs."""
    from inductor_step.tracer import adapter  # noqa: PLC0415

    waiting = state.numerics_waiting
    for name in list(waiting):
        g = state.graphs.get(protocol.GraphKey.parse(name).pair)
        if g and g.get("output_path") and adapter.output_module_key(g["output_path"]) == module_key:
            waiting.discard(name)
            threading.Thread(target=numerics_all, args=(state, name), daemon=True,
                             name="inductor-step numerics").start()


def flush_waiting(state: Any) -> None:
    """The script ended: compare the graphs still waiting for a first call that never came (random inputs, said
    so in their ``inputs``)."""
    waiting = state.numerics_waiting
    names = sorted(waiting)
    waiting.clear()
    if names:
        numerics_all(state, names)
