"""The cross-level index of one compiled graph: FX node <-> buffer <-> scheduler node <-> kernel <-> lines.

Built once per graph by the agent at the codegen stop from data it already captured (standard
library only, so it is testable on recorded sessions).  Sources, in order of trust:

1. Inductor's provenance tracking: ``kernel:handle -> post-grad nodes``
   (``torch._inductor.debug._inductor_triton_kernel_to_post_grad_node_info``, the data behind the
   ``inductor_provenance_tracking_node_mappings`` artifact), matched to this wrapper by the
   ``# [Provenance debug handles] NAME:N`` comments;
2. the scheduler's live objects: ``buf.origins`` (post-grad nodes), ``get_operation_name()``,
   ``FusedSchedulerNode.get_nodes()``;
3. the wrapper's kernel calls: which buffer is passed to which kernel parameter.

Many-to-many throughout: one C++ kernel can cover several fused nodes, one FX node can lower into
several buffers.  Where a link cannot be made it says so in ``notes`` instead of guessing.
"""

from __future__ import annotations

import re
from typing import Any

_PROV = re.compile(r"#\s*\[Provenance debug handles\]\s*([\w.]+):(\d+)")
_TRITON_DEF = re.compile(r"^def \w+\(([^)]*)\)", re.M)
_CPP_DEF = re.compile(r'extern "C"\s+\w*\s*void\s+kernel\((.*?)\)', re.S)
_CPP_ALIAS = re.compile(r"^\s*auto (\w+) = (\w+);\s*$", re.M)
_NAME = re.compile(r"\b((?:buf|arg|primals_|tangents_)\w*)\b")


def _params(backend: str, source: str) -> list[str]:
    if backend == "triton":
        m = _TRITON_DEF.search(source)
        return [p.split(":")[0].strip() for p in m.group(1).split(",") if p.strip()] if m else []
    m = _CPP_DEF.search(source)
    if not m:
        return []
    return [re.split(r"[\s*&]+", p.strip())[-1] for p in m.group(1).split(",") if p.strip()]


def _ranges(lines: list[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for n in sorted(set(lines)):
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return out


def pointer_lines(kernel: dict[str, Any], storage: dict[str, set[str]]) -> dict[str, list[list[int]]]:
    """For a generated kernel: buffer name -> 1-based line ranges of its source that use the
    buffer's pointer (loads, stores, in-place updates).

    ``storage`` maps a buffer name to every name sharing its storage (Inductor's ``# reuse``
    aliases); a buffer computed in place shares lines with the buffer whose storage it took.
    """
    src = kernel.get("source") or ""
    params = _params(kernel.get("backend", ""), src)
    if not params or not kernel.get("calls"):
        return {}
    aliases: dict[str, set[str]] = {p: {p} for p in params}
    for new, old in _CPP_ALIAS.findall(src):  # C++: auto out_ptr0 = in_out_ptr0;
        for group in aliases.values():
            if old in group:
                group.add(new)
    ptr_of: dict[str, set[str]] = {}
    for call in kernel["calls"]:
        for arg, param in zip(call, params):
            names = _NAME.findall(arg)
            if names:
                ptr_of.setdefault(names[0], set()).update(aliases.get(param, {param}))
    lines = src.split("\n")
    # Triton: the decorator's triton_meta/inductor_meta name every pointer; only the body counts
    body_from = 0
    if kernel.get("backend") == "triton":
        body_from = next((i + 1 for i, line in enumerate(lines) if line.startswith("def ")), 0)
    out: dict[str, list[list[int]]] = {}
    for buf in kernel.get("buffers") or []:
        ptrs: set[str] = set()
        for name in storage.get(buf, {buf}):
            ptrs |= ptr_of.get(name, set())
        if not ptrs:
            continue
        pat = re.compile(r"\b(" + "|".join(sorted(map(re.escape, ptrs))) + r")\b")
        hit = [i + 1 for i, line in enumerate(lines) if i >= body_from and pat.search(line)
               and not line.lstrip().startswith(("def ", '#include'))]
        # skip the parameter list itself
        hit = [n for n in hit if not re.match(r'^\s*(const\s+)?\w+\*?\s*\w+[,)]\s*$', lines[n - 1])
               and 'extern "C"' not in lines[n - 1]]
        if hit:
            out[buf] = _ranges(hit)
    return out


def build_links(*, dynamo_nodes: list[dict], post_grad_nodes: list[dict], buffers: list[dict],
                fused_nodes: list[dict], kernels: list[dict], wrapper: str,
                owners: dict[str, dict[str, str]] | None = None,
                provenance: dict[str, list[str]] | None = None,
                source_context: dict[str, str] | None = None) -> dict[str, Any]:
    """The ``links`` of a codegen stop (documented in README).

    Inputs are the graph's captured levels: Dynamo FX nodes and post-grad FX nodes (dicts with
    ``name``, ``from_node``, ``user_line``), IR buffers (``name``, ``operation``, ``origins``),
    post-fusion scheduler nodes (``name``, ``members``, ``buffers``), kernels from
    :func:`tracer.codeparse.parse_wrapper` (with ``buffers``/``fused_nodes``), the wrapper source
    Inductor's provenance map ``"kernel:handle" -> [post-grad node]``, ``owners`` (buffer ->
    ``{"scheduler_node", "fused_node"}`` from the live scheduler) and ``source_context``
    (``"file:line"`` -> the user's source around that line).
    """
    notes: list[str] = []
    pg = {n["name"]: n for n in post_grad_nodes}
    dyn_names = {n["name"] for n in dynamo_nodes}
    storage: dict[str, set[str]] = {}
    for new, old in re.findall(r"^\s*(buf\d+) = (buf\d+); del \2\s+# reuse", wrapper, re.M):
        group = storage.get(old, {old}) | storage.get(new, {new})
        for n in group:
            storage[n] = group

    owner: dict[str, tuple[str, str]] = {b: (o["scheduler_node"], o["fused_node"]) for b, o in (owners or {}).items()}
    for b in buffers:
        if b["name"] not in owner and b.get("operation"):
            owner[b["name"]] = (b["operation"], "")
    # kernel handles in this wrapper -> post-grad nodes (Inductor's own provenance)
    # extern kernels of one op (extern_kernels.addmm#0, #1, ...) take that op's handles in order
    prov_nodes: dict[str, list[str]] = {}
    extern_seen: dict[str, int] = {}
    for m in _PROV.finditer(wrapper):
        base, key = m.group(1), f"{m.group(1)}:{m.group(2)}"
        if base.startswith("extern_kernels."):
            i = extern_seen.get(base, 0)
            extern_seen[base] = i + 1
            ours = [k["name"] for k in kernels if k["name"].split("#")[0] == base]
            name = ours[i] if i < len(ours) else base
        else:
            name = base
        for n in (provenance or {}).get(key, []):
            prov_nodes.setdefault(name, [])
            if n not in prov_nodes[name]:
                prov_nodes[name].append(n)

    out_b: dict[str, dict[str, Any]] = {}
    for b in buffers:
        name = b["name"]
        origins = [o for o in b.get("origins") or [] if o in pg] or list(b.get("origins") or [])
        dyn: list[str] = []
        users: list[str] = []
        for o in origins:
            node = pg.get(o, {})
            for d in node.get("from_node") or []:
                if d in dyn_names and d not in dyn:
                    dyn.append(d)
            ul = node.get("user_line")
            if ul and ul not in users:
                users.append(ul)
        op, fused = owner.get(name, (b.get("operation"), ""))
        out_b[name] = {"fx_nodes": origins, "dynamo_nodes": dyn, "scheduler_node": op,
                       "fused_node": fused or op, "kernels": [], "kernel_lines": {}, "user_lines": users,
                       "notes": []}

    out_k: dict[str, dict[str, Any]] = {}
    for k in kernels:
        kname = k["name"]
        base = kname.split("#")[0]
        kb = [b for b in k.get("buffers") or [] if b in out_b]
        pkey = kname if kname in prov_nodes else base
        entry = {"backend": k.get("backend"), "buffers": kb, "fused_nodes": k.get("fused_nodes") or [],
                 "scheduler_nodes": sorted({out_b[b]["scheduler_node"] for b in kb if out_b[b]["scheduler_node"]},
                                           key=lambda s: (len(s), s)),
                 "post_grad_nodes": prov_nodes.get(pkey, []),
                 "source": "provenance+call-args" if pkey in prov_nodes else "call-args"}
        if pkey in prov_nodes and k.get("backend") != "extern":
            base = pkey
            # provenance names post-grad nodes; every buffer whose origins it covers belongs here too
            pset = set(prov_nodes[base])
            missing = [b for b, d in out_b.items() if b not in kb and d["fused_node"] in entry["fused_nodes"]
                       and set(d["fx_nodes"]) & pset]
            entry["buffers"] = kb = kb + missing
        out_k[kname] = entry
        lines = pointer_lines({**k, "buffers": kb}, storage) if k.get("backend") in ("cpp", "triton") else {}
        for b in kb:
            d = out_b[b]
            if kname not in d["kernels"]:
                d["kernels"].append(kname)
            if k.get("backend") == "extern":
                d["kernel_lines"][kname] = [[1, 1]]
            elif b in lines:
                d["kernel_lines"][kname] = lines[b]
            else:
                d["kernel_lines"][kname] = []
                d["notes"].append(f"{kname} has no load or store of {b} of its own: "
                                  "it is computed in registers inside the fused kernel")
    # outputs of multi-output kernels (bufK = bufJ[i]) belong to the kernel that made bufJ
    from inductor_step.tracer.codeparse import multi_outputs  # noqa: PLC0415

    for child, (parent, index) in multi_outputs(wrapper).items():
        d, pd = out_b.get(child), out_b.get(parent)
        if d is None or d["kernels"] or pd is None and not any(parent in (k.get("buffers") or []) for k in kernels):
            continue
        parent_kernels = pd["kernels"] if pd else [k["name"] for k in kernels if parent in (k.get("buffers") or [])]
        for kname in parent_kernels:
            d["kernels"].append(kname)
            d["kernel_lines"][kname] = [[1, 1]] if out_k[kname]["backend"] == "extern" else []
            d["notes"].append(f"output {index} of {parent}, which {kname} returns")
            if child not in out_k[kname]["buffers"]:
                out_k[kname]["buffers"].append(child)
    # a buffer no kernel writes may still be computed inside one (a fused reduction kept in
    # registers): Inductor's provenance says which kernel covers all of its origin FX nodes
    for name, d in out_b.items():
        if d["kernels"] or not d["fx_nodes"]:
            continue
        for kname, e in out_k.items():
            if e["backend"] != "extern" and set(d["fx_nodes"]) <= set(e["post_grad_nodes"]):
                d["kernels"].append(kname)
                d["kernel_lines"][kname] = []
                d["notes"].append(f"computed inside {kname} (Inductor's provenance covers its FX nodes); "
                                  "it has no load or store of its own")
                e["buffers"].append(name)
                if d["scheduler_node"] and d["scheduler_node"] not in e["scheduler_nodes"]:
                    e["scheduler_nodes"].append(d["scheduler_node"])
    for name, d in out_b.items():
        if not d["kernels"]:
            d["notes"].append("no kernel computes this buffer (an input view, a constant, or removed)")
        if not d["fx_nodes"]:
            d["notes"].append("Inductor recorded no origin FX node for this buffer")

    fx: dict[str, dict[str, Any]] = {}
    for name, d in out_b.items():
        for o in d["fx_nodes"]:
            fx.setdefault(o, {"buffers": [], "dynamo_nodes": pg.get(o, {}).get("from_node") or [],
                              "user_line": pg.get(o, {}).get("user_line")})["buffers"].append(name)
    dyn_map: dict[str, dict[str, list[str]]] = {}
    for o, d in fx.items():
        for dn in d["dynamo_nodes"]:
            e = dyn_map.setdefault(dn, {"post_grad": [], "buffers": []})
            e["post_grad"].append(o)
            e["buffers"] += [b for b in d["buffers"] if b not in e["buffers"]]
    sched: dict[str, dict[str, Any]] = {}
    for name, d in out_b.items():
        op = d["scheduler_node"]
        if op:
            e = sched.setdefault(op, {"buffers": [], "fused_node": d["fused_node"], "kernels": []})
            e["buffers"].append(name)
            e["kernels"] += [k for k in d["kernels"] if k not in e["kernels"]]
    fused: dict[str, dict[str, Any]] = {}
    for f in fused_nodes:
        fused[f["name"]] = {"members": f.get("members") or [], "buffers": f.get("buffers") or [],
                            "kernels": sorted({k for b in f.get("buffers") or [] for k in out_b.get(b, {}).get("kernels", [])})}
    unreached = [k for k, e in out_k.items() if not e["buffers"]]
    if unreached:
        notes.append("kernels with no buffer linked: " + ", ".join(unreached))
    return {"buffers": out_b, "kernels": out_k, "fx_nodes": fx, "dynamo_nodes": dyn_map,
            "scheduler_nodes": sched, "fused_nodes": fused, "user_source": source_context or {},
            "sources": (["inductor provenance"] if prov_nodes else []) + ["scheduler", "wrapper call arguments"],
            "notes": notes}
