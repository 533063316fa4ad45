"""The links a graph has before its codegen stop: buffer -> post-grad nodes, scheduler node and fused
node, read from the lowering, scheduling and loopbody stops already recorded, so the
panes follow the selection at every stop, not only after codegen."""

from __future__ import annotations

from typing import Any


def stop_links(lowering: dict[str, Any] | None, scheduling: dict[str, Any] | None,
               loopbody: dict[str, Any] | None, aot: dict[str, Any] | None = None,
               dynamo: dict[str, Any] | None = None) -> dict[str, Any]:
    """The part of a codegen stop's ``links`` that the earlier stops already tell, same shape:
    ``buffers`` (name -> ``fx_nodes``: the IR buffer's ``origins``, post-grad node names;
    ``scheduler_node``: its ``operation`` (``op6``); ``fused_node``: the scheduling stop's node whose
    ``buffers`` hold it), ``fx_nodes`` (post-grad name -> ``buffers``), ``scheduler_nodes``
    (``opN`` -> ``buffers``, ``fused_node``), ``fused_nodes`` (name -> ``members``, ``buffers``) and
    ``dynamo_nodes`` (name -> ``post_grad``, ``buffers``), the last from the aot stop's post-grad nodes'
    ``from_node`` (torch's node provenance, ``node.meta["from_node"]``, which also names the joint graph's
    nodes: only the names of the ``dynamo`` stop's FX nodes are kept); no kernels (those need codegen).  ``partial`` names the last stage
    read.  {} before lowering."""
    bufs_in = (lowering or {}).get("buffers")
    if not isinstance(bufs_in, list):
        return {}
    buffers: dict[str, dict[str, Any]] = {}
    fx: dict[str, dict[str, Any]] = {}
    sched: dict[str, dict[str, Any]] = {}
    for b in bufs_in:
        if not isinstance(b, dict) or not b.get("name"):
            continue
        name, op = b["name"], b.get("operation")
        buffers[name] = {"fx_nodes": list(b.get("origins") or []), "scheduler_node": op, "fused_node": None,
                         "dynamo_nodes": [], "kernels": [], "kernel_lines": {}, "user_lines": [], "notes": []}
        for n in b.get("origins") or []:
            fx.setdefault(n, {"buffers": []})["buffers"].append(name)
        if op:
            sched.setdefault(op, {"buffers": [], "fused_node": None})["buffers"].append(name)
    fused: dict[str, dict[str, Any]] = {}
    after = (scheduling or {}).get("after")
    for n in after if isinstance(after, list) else []:
        if not isinstance(n, dict) or not n.get("name"):
            continue
        members = list(n.get("members") or []) or [n["name"]]
        fused[n["name"]] = {"members": members, "buffers": list(n.get("buffers") or []), "kernels": []}
        for b in n.get("buffers") or []:
            if b in buffers:
                buffers[b]["fused_node"] = n["name"]
        for m in members:
            sched.setdefault(m, {"buffers": [], "fused_node": None})["fused_node"] = n["name"]
    bodies = (loopbody or {}).get("bodies")
    for body in bodies if isinstance(bodies, list) else []:
        if not isinstance(body, dict) or not body.get("node"):
            continue
        entry = sched.setdefault(body["node"], {"buffers": [], "fused_node": None})
        entry["fused_node"] = entry["fused_node"] or body.get("fused_node")
        for b in body.get("buffers") or []:
            if b in buffers:
                buffers[b]["scheduler_node"] = buffers[b]["scheduler_node"] or body["node"]
                buffers[b]["fused_node"] = buffers[b]["fused_node"] or body.get("fused_node")
            if b not in entry["buffers"]:
                entry["buffers"].append(b)
    stage = "loopbody" if loopbody else "scheduling" if scheduling else "lowering"
    return {"buffers": buffers, "fx_nodes": fx, "scheduler_nodes": sched, "fused_nodes": fused,
            "dynamo_nodes": _dynamo_nodes(aot, dynamo, buffers, fx), "kernels": {}, "partial": stage}


def _dynamo_nodes(aot: dict[str, Any] | None, dynamo: dict[str, Any] | None, buffers: dict[str, dict[str, Any]],
                  fx: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Dynamo node -> ``post_grad`` and ``buffers``, read from the aot stop's post-grad nodes' ``from_node``
    (kept where it names a node of the dynamo stop's graph); fills each buffer's and post-grad node's
    ``dynamo_nodes`` on the way.  {} where either stop is missing."""
    nodes = ((aot or {}).get("post_grad") or {}).get("nodes")
    graph = (dynamo or {}).get("graph") or {}
    known = {n.get("name") for n in graph.get("nodes") or [] if isinstance(n, dict)}
    out: dict[str, dict[str, Any]] = {}
    for n in nodes if isinstance(nodes, list) else []:
        # call_function nodes only, as torch's preToPost and codegen's links: a backward's placeholders for
        # saved activations keep the forward node's from_node
        if not isinstance(n, dict) or not n.get("name") or n.get("op", "call_function") != "call_function":
            continue
        for d in [d for d in n.get("from_node") or [] if d in known]:
            entry = out.setdefault(d, {"post_grad": [], "buffers": []})
            entry["post_grad"].append(n["name"])
            if n["name"] in fx:
                fx[n["name"]].setdefault("dynamo_nodes", []).append(d)
    for name, b in buffers.items():
        for pg in b["fx_nodes"]:
            for d in (fx.get(pg) or {}).get("dynamo_nodes") or []:
                if d not in b["dynamo_nodes"]:
                    b["dynamo_nodes"].append(d)
                    out[d]["buffers"].append(name)
    return out
