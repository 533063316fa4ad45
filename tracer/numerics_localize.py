"""Numerics: inside a fused kernel, the first FX node whose value diverges from eager.

A fused kernel keeps its intermediates in registers, so the buffer it writes shows a divergence only after every
node in it.  :func:`localize_kernels` compiles the graph again with each of the kernel's FX nodes as an output
(Inductor then writes each one's value to memory, fused or not: tracer.adapter.numerics ``compile_materialized``),
only the part of the graph those nodes are computed from where that is the same computation (no random op, no
in-place op but the final copies into the inputs), runs it once on the same inputs and compares each node with
eager, in graph order.  The first divergence's kernel and the first NaN's, where they differ, share that one
compile and one eager run (in the graph's dtypes and float64 side by side, over the same part of the graph).
"""

from __future__ import annotations

from typing import Any

import torch

from inductor_step.tracer.adapter import numerics as tn
from inductor_step.tracer.numerics import _clone_args, _dt, reduction_terms, stats, verdict


def _names(gm: Any, first: dict[str, Any]) -> list[str]:
    nodes_in = set(first.get("kernel_nodes") or []) | set(first.get("fx_nodes") or [])
    return [n.name for n in gm.graph.nodes if n.name in nodes_in and isinstance(n.meta.get("val"), torch.Tensor)]


def localize_kernels(targets: list[tuple[str, dict[str, Any]]], gm: Any, snapshot: dict[str, Any], args: list,
                     is_backward: bool, is_inference: bool) -> dict[str, dict[str, Any]]:
    """For each ``(field, answer)`` of ``targets`` (answers of :func:`tracer.numerics.compare_graph`), inside
    the answer's kernel: compare each of the kernel's FX nodes, materialized by one recompile of post-grad graph
    ``gm``'s snapshot, with eager (graph dtype and float64) and name the first node, in graph order, that
    diverges and the first that holds a NaN/Inf.  Returns {field: result}; raises what the compile raises."""
    out: dict[str, dict[str, Any]] = {}
    per = {field: _names(gm, first) for field, first in targets}
    for field, first in targets:
        if len(per[field]) < 2:
            out[field] = {"kernel": first["kernel"],
                          "skipped": f"the kernel holds {len(per[field])} FX node(s): nothing to unfuse"}
    todo = [(f, first) for f, first in targets if f not in out]
    if not todo:
        return out
    union = [n.name for n in gm.graph.nodes if any(n.name in per[f] for f, _ in todo)]
    values, found, pruned = tn.compile_materialized(snapshot, union, args, is_backward, is_inference)
    got = dict(zip(found, values))
    cmp: dict[str, dict[str, Any]] = {}

    def on_values(n: Any, v: Any, v64: Any) -> None:  # each node compared as eager makes it, nothing kept
        c = got.get(n.name)
        if not isinstance(c, torch.Tensor) or not isinstance(v, torch.Tensor):
            return
        s = stats(c, v)
        c64, e64 = ((stats(c, v64), stats(v, v64)) if isinstance(v64, torch.Tensor) and n.name not in fell
                    else (None, None))  # no float64 kernel: the float32 reference is eager's own
        status, text = verdict(s, c64, e64, reduction_terms(gm, [n.name]), _dt(c))
        cmp[n.name] = {"node": n.name, "status": status, "verdict": text, "vs_eager": s, "nan": s.get("nan", 0),
                       "inf": s.get("inf", 0), "user_line": _user_line(n)}

    part = tn.ancestors_graph(gm, [n for n in union if n in got]) if tn.prunable(gm) and got else gm
    fell: list[str] = []  # filled as the float64 run falls back (run_dual's list, before each node's compare)
    tn.run_dual(part, _clone_args(args), _clone_args(args), on_values, fell_back=fell)
    where = (", cut to what they are computed from," if pruned and part is not gm else "")
    for field, first in todo:
        names = per[field]
        nodes = [cmp.get(n) or {"node": n, "status": "not_compared",
                                "why": "not materialized (the snapshot lacks it)"} for n in names]
        bad = next((x for x in nodes if x["status"] == "suspect"), None) or next(
            (x for x in nodes if x["status"] not in ("ok", "not_compared")), None)
        nan = next((x for x in nodes if x.get("nan") or x.get("inf")), None)
        n_found = sum(1 for n in names if n in got)
        out[field] = {"kernel": first["kernel"], "nodes": nodes, "first": bad["node"] if bad else None,
                      "first_nonfinite": nan["node"] if nan else None,
                      "how": (f"recompiled the graph{where} with the {n_found} FX node(s) of {first['kernel']} "
                              "as outputs (each one's value written to memory), compared each with eager"
                              + (f"; one compile for {len(todo)} kernels" if len(todo) > 1 else ""))}
    return out


def _user_line(node: Any) -> str | None:
    import re  # noqa: PLC0415

    m = re.findall(r'File "([^"]+)", line (\d+)', node.meta.get("stack_trace") or "")
    return f"{m[-1][0]}:{m[-1][1]}" if m else None
