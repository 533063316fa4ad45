"""Numerics (issue 29): inside a fused kernel, the first FX node whose value diverges from eager.

A fused kernel keeps its intermediates in registers, so the buffer it writes shows a divergence only after every
node in it.  :func:`localize_in_kernel` compiles the graph again with each of the kernel's FX nodes added to the
graph's outputs (Inductor then writes each one's value to memory, fused or not: tracer.adapter.numerics
``compile_materialized``), runs it once on the same inputs and compares each node with eager, in graph order.
"""

from __future__ import annotations

from typing import Any

import torch

from inductor_step.tracer.adapter import numerics as tn
from inductor_step.tracer.numerics import _clone_args, _dt, reduction_terms, stats, verdict


def localize_in_kernel(first: dict[str, Any], links: dict[str, Any], gm: Any, snapshot: dict[str, Any], args: list,
                       is_backward: bool, is_inference: bool) -> dict[str, Any]:
    """Inside the kernel of ``first`` (an answer of :func:`compare_graph`): recompile the graph with each of the
    kernel's FX nodes added to the outputs (so each node's value is written to memory, not kept in a register),
    compare each with eager (graph dtype and float64) and name the first node, in graph order, that diverges."""
    nodes_in = set(first.get("kernel_nodes") or []) | set(first.get("fx_nodes") or [])
    order = [n for n in gm.graph.nodes if n.name in nodes_in and isinstance(n.meta.get("val"), torch.Tensor)]
    names = [n.name for n in order]
    if len(names) < 2:
        return {"kernel": first["kernel"], "skipped": f"the kernel holds {len(names)} FX node(s): nothing to unfuse"}
    values, found = tn.compile_materialized(snapshot, names, args, is_backward, is_inference)
    got = dict(zip(found, values))
    ref: dict[str, Any] = {}
    tn.run_graph(gm, _clone_args(args), lambda n, v: ref.__setitem__(n.name, v) if n.name in got else None)
    ref64: dict[str, Any] = {}
    tn.run_graph(gm, _clone_args(args), lambda n, v: ref64.__setitem__(n.name, v) if n.name in got else None,
                 float64=True)
    out_nodes = []
    for n in names:
        if n not in got or not isinstance(got[n], torch.Tensor) or n not in ref:
            out_nodes.append({"node": n, "status": "not_compared", "why": "not materialized (the snapshot lacks it)"})
            continue
        s = stats(got[n], ref[n])
        c64 = stats(got[n], ref64[n]) if n in ref64 else None
        e64 = stats(ref[n], ref64[n]) if n in ref64 else None
        status, text = verdict(s, c64, e64, reduction_terms(gm, [n]), _dt(got[n]))
        out_nodes.append({"node": n, "status": status, "verdict": text, "vs_eager": s, "nan": s.get("nan", 0),
                          "inf": s.get("inf", 0), "user_line": _user_line(gm, n)})
    bad = next((x for x in out_nodes if x["status"] == "suspect"), None) or next(
        (x for x in out_nodes if x["status"] not in ("ok", "not_compared")), None)
    nan = next((x for x in out_nodes if x.get("nan") or x.get("inf")), None)
    return {"kernel": first["kernel"], "nodes": out_nodes, "first": bad["node"] if bad else None,
            "first_nonfinite": nan["node"] if nan else None,
            "how": (f"recompiled the graph with the {len(found)} FX node(s) of {first['kernel']} added to its outputs "
                    "(each one's value written to memory), compared each with eager")}


def _user_line(gm: Any, name: str) -> str | None:
    import re  # noqa: PLC0415

    for n in gm.graph.nodes:
        if n.name == name:
            m = re.findall(r'File "([^"]+)", line (\d+)', n.meta.get("stack_trace") or "")
            return f"{m[-1][0]}:{m[-1][1]}" if m else None
    return None
