"""Graphs Dynamo handed to a backend other than Inductor, and scripts whose compiles gave Inductor nothing.

With ``backend="aot_eager"``, ``"eager"`` or a custom backend, none of Inductor's
passes run, so the agent's stage hooks never fired and the session said "never compiled a graph".
Now every graph Dynamo hands to a backend is seen (:func:`tracer.adapter.install_backend_hook`):
a non-Inductor graph gets its dynamo stop (the live FX graph, nodes and all) and, where AOTAutograd
ran (``aot_eager``), its aot stop with AOT's graphs, each naming the backend.  The compiled
autograd graph (compile ids ``[!0/...]``) keeps the live graph too, so its dynamo stop has FX nodes.
:func:`done_fields` says at the end which graphs went elsewhere and, when no graph reached
Inductor, why: Dynamo's graph breaks and the frames it skipped or failed.
"""

from __future__ import annotations

from typing import Any

from inductor_step.session.format import PART_SEP, GraphKey


def on_backend_before(state: Any, gm: Any, name: str) -> None:
    """Dynamo hands ``gm`` to backend ``name``: keep the live graph where Inductor's own pre-grad
    snapshot will not come (another backend) or may miss (compiled autograd's graph)."""
    from inductor_step.tracer import adapter  # noqa: PLC0415

    cid = adapter.current_compile_id()
    fr = state.frame(cid)
    fr["backend"] = name
    fr["inductor_calls_before"] = fr.get("calls", 0)  # Capture.new_part counts Inductor's compiles of the frame
    fr["seq_before"] = state.seq  # and every stop Inductor's hooks send counts in state.seq
    if not adapter.is_inductor(name) or cid.startswith("[!"):
        fr["dynamo_live"] = adapter.fx_graph(getattr(gm, "graph", gm))


def on_backend_after(state: Any, gm: Any, name: str, error: BaseException | None) -> None:
    """Backend ``name`` returned (or raised ``error``) for ``gm``: a non-Inductor graph's stops."""
    from inductor_step.tracer import adapter  # noqa: PLC0415

    cid = adapter.current_compile_id()
    fr = state.frame(cid)
    inductor_ran = fr.get("calls", 0) > fr.get("inductor_calls_before", 0) or (
        state.seq > fr.get("seq_before", state.seq) and (state.current or ("",))[0] == cid)
    if adapter.is_inductor(name) or inductor_ran:
        return  # Inductor compiled it (under whatever wrapper: DDPOptimizer, a debug backend): its own stops
    kind = fr.get("kind") or ("forward" if adapter.needs_autograd(gm.graph) else "inference")
    n = sum(1 for k in state.other_backends if GraphKey.parse(k).replace(part=None) == GraphKey(cid, kind))
    key = GraphKey(cid, kind, n + 1 if n else None)
    key_kind = key.kind_text
    state.other_backends[str(key)] = name
    what = ("AOTAutograd's graphs are at the aot stop; no Inductor lowering, scheduling or code"
            if fr["aot"] else "no AOTAutograd, lowering, scheduling or code")
    note = (f"Dynamo handed this graph to backend {name!r}, not Inductor: {what}"
            + (f" (the backend raised {type(error).__name__}: {error})" if error is not None else "") + ".")
    snap = fr.get("dynamo_live") or {"code": fr.get("dynamo_text") or "", "nodes": []}
    state.stop(cid, key_kind, "dynamo", {"graph": snap, "graph_breaks": fr["graph_breaks"],
                                        "recompile_reasons": fr["recompile_reasons"], "resume": fr.get("resume"),
                                        "note": note, "backend": name, **state.breaks_before(cid)})
    if fr["aot"]:
        state.stop(cid, key_kind, "aot", {
            "aot_graphs": dict(fr["aot"]), "backend": name,
            "post_grad": {"unavailable": f"no post-grad graph: backend {name!r} ran AOTAutograd without Inductor's "
                                         "post-grad passes"}})
    fr["aot"] = {}
    fr["kind"] = None


def done_fields(state: Any) -> dict[str, Any]:
    """What the ``done`` message adds: ``other_backends`` ({graph key: backend}), ``inductor_graphs``
    and, when no graph reached Inductor, ``break_reasons`` (Dynamo's graph breaks, failed and
    skipped frames, one line each) and ``message`` saying so."""
    inductor = sum(1 for (cid, kind), g in state.graphs.items()
                   if g.get("last_stage") and f"{cid} {kind}" not in state.other_backends)
    out: dict[str, Any] = {"inductor_graphs": inductor}
    if state.other_backends:
        out["other_backends"] = dict(state.other_backends)
    if inductor:
        return out
    reasons: list[str] = []
    for cid, fr in state.frames.items():
        if PART_SEP in cid:
            continue
        for b in fr.get("graph_breaks") or []:
            line = f"{cid} graph break: {_first_line(b)}"
            if line not in reasons:
                reasons.append(line)
        if fr.get("fail"):
            reasons.append(f"{cid} {_first_line(fr['fail'])}")
    out["break_reasons"] = reasons[:20]
    if state.other_backends:
        names = sorted(set(state.other_backends.values()))
        out["message"] = (f"no graph reached Inductor: Dynamo compiled {len(state.other_backends)} graph(s) with "
                          f"{', '.join(repr(n) for n in names)} instead (their dynamo and aot stops are recorded)")
    elif state.frames:
        out["message"] = ("no graph reached Inductor: Dynamo traced the script's compiled functions but every frame "
                          "broke or was skipped"
                          + (f" ({len(reasons)} reason(s): {reasons[0]}{' ...' if len(reasons) > 1 else ''})"
                             if reasons else " (Dynamo gave no reason)"))
    return out


def _first_line(payload: Any) -> str:
    """One line of a Dynamo graph-break payload: ``file:line: the break's kind: its explanation``
    (torch writes "Graph break in user code at F:L", "Graph Break Reason: ...", then the kind and an
    "Explanation:" line); the first non-empty line of anything else."""
    text = payload if isinstance(payload, str) else str(payload)
    lines = [x.strip() for x in text.splitlines()]
    where = next((x[len("Graph break in user code at "):] for x in lines
                  if x.startswith("Graph break in user code at ")), "")
    kind = expl = ""
    if any(x.startswith("Graph Break Reason:") for x in lines):
        i = next(i for i, x in enumerate(lines) if x.startswith("Graph Break Reason:"))
        kind = next((x for x in lines[i + 1:] if x), "") or lines[i][len("Graph Break Reason:"):].strip()
        expl = next((x[len("Explanation:"):].strip() for x in lines[i + 1:] if x.startswith("Explanation:")), "")
    if kind:
        return ": ".join(p for p in (where, kind, expl) if p)[:300]
    return next((x for x in lines if x), "")[:300]
