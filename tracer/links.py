"""The cross-level index of one compiled graph: FX node <-> buffer <-> scheduler node <-> kernel <-> lines.

Built once per graph by the agent at the codegen stop from data it already captured (standard
library only, so it is testable on recorded sessions).  Sources, in order of trust:

1. Inductor's provenance tracking: ``kernel:handle -> post-grad nodes``
   (``torch._inductor.debug._inductor_triton_kernel_to_post_grad_node_info``, the data behind the
   ``inductor_provenance_tracking_node_mappings`` artifact), matched to this wrapper by the
   ``# [Provenance debug handles] NAME:N`` comments;
2. the scheduler's live objects: ``buf.origins`` (post-grad nodes), ``get_operation_name()``,
   ``FusedSchedulerNode.get_nodes()``;
3. the pointer names each generated kernel uses for each buffer (Inductor's ``KernelArgs``,
   recorded per definition by ``tracer.adapter.install_kernel_args_hook``: one record per call);
4. the wrapper's kernel calls: which buffer is passed to which kernel parameter.

A kernel called more than once (the same source for several fused nodes) is linked per call: a
buffer's lines are those of the call that computes it, through that call's pointers only.

Many-to-many throughout: one C++ kernel can cover several fused nodes, one FX node can lower into
several buffers.  Where a link cannot be made it says so in ``notes`` instead of guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from inductor_step.tracer.kernel_lines import line_ranges as _ranges
from inductor_step.tracer.kernel_lines import ptr_lines as _ptr_lines
from inductor_step.tracer.kernel_lines import split_in_place as _split_in_place
from inductor_step.tracer.kernel_lines import split_mutation as _split_mutation

_PROV = re.compile(r"(?:#|//)\s*\[Provenance debug handles\]\s*([\w.]+):(\d+)")  # // in a C++ wrapper
_TRITON_DEF = re.compile(r"^def \w+\(([^)]*)\)", re.M)
_CPP_DEF = re.compile(r'extern "C"\s+\w*\s*void\s+\w+\((.*?)\)', re.S)  # kernel(...), or its name in a C++ wrapper
_CPP_ALIAS = re.compile(r"^[ \t]*auto (\w+) = (\w+);\s*$", re.M)
# buffer / argument names; a subgraph's function prefixes its own with its name (true_graph_0_buf3)
_NAME = re.compile(r"\b((?:\w+_)?(?:buf|arg)\d\w*|(?:buf|arg|primals_|tangents_)\w*)\b")
_VIEW = re.compile(r"^[ \t]*((?:\w+_)?buf\d+) = reinterpret_tensor\(((?:\w+_)?buf\d+)\b[^\n]*#\s*alias\s*$", re.M)


def _params(backend: str, source: str) -> list[str]:
    if backend == "triton":
        m = _TRITON_DEF.search(source)
        return [p.split(":")[0].strip() for p in m.group(1).split(",") if p.strip()] if m else []
    m = _CPP_DEF.search(source)
    if not m:
        return []
    return [re.split(r"[\s*&]+", p.strip())[-1] for p in m.group(1).split(",") if p.strip()]


def pointer_lines(kernel: dict[str, Any], storage: dict[str, set[str]]) -> dict[str, list[list[int]]]:
    """For a generated kernel and every call of it: buffer name -> 1-based line ranges of its
    source that use a pointer the call binds to the buffer's storage (the fallback when Inductor's
    own pointer names, ``kernel_defs``, are not available).

    ``storage`` maps a buffer name to every name sharing its storage (Inductor's ``# reuse``
    aliases).  Less exact than :func:`build_links`' own binding: C++ pointer aliases
    (``auto out_ptr2 = in_out_ptr0;``) are followed, so an in-place pair shares its lines.
    """
    out: dict[str, list[list[int]]] = {}
    for i in range(len(kernel.get("calls") or [])):
        for b, r in _fallback_call_lines(kernel, i, kernel.get("buffers") or [], storage).items():
            if r:
                out[b] = _ranges([n for a, e in (out.get(b, []) + r) for n in range(a, e + 1)])
    return out


def _fallback_call_lines(kernel: dict[str, Any], i: int, bufs: list[str],
                         storage: dict[str, set[str]]) -> dict[str, list[list[int]]]:
    src = kernel.get("source") or ""
    params = _params(kernel.get("backend", ""), src)
    aliases: dict[str, set[str]] = {p: {p} for p in params}
    for new, old in _CPP_ALIAS.findall(src):  # C++: auto out_ptr0 = in_out_ptr0;
        for group in aliases.values():
            if old in group:
                group.add(new)
    ptr_of: dict[str, set[str]] = {}
    for arg, param in zip(kernel["calls"][i], params):
        names = _NAME.findall(arg)
        if names:
            ptr_of.setdefault(names[0], set()).update(aliases.get(param, {param}))
    out = {}
    for b in bufs:
        ptrs: set[str] = set()
        for name in storage.get(b, {b}):
            ptrs |= ptr_of.get(name, set())
        out[b] = _ptr_lines(kernel, ptrs)
    return out


def _call_names(call: list[str]) -> list[str]:
    """The buffer/input names a call passes (the first name of each argument)."""
    out = []
    for a in call:
        names = _NAME.findall(a)
        if names:
            out.append(names[0])
    return out


def _match_defs(kernels: list[dict], kernel_defs: list[dict] | None) -> dict[tuple[str, int], dict]:
    """(kernel name, call index) -> the ``KernelArgs`` record of that call.  Inductor defines a
    kernel once per call, in call order; a record is matched to the call passing exactly its
    buffers, else taken in order."""
    by_name: dict[str, list[dict]] = {}
    for d in kernel_defs or []:
        by_name.setdefault(d["name"], []).append(d)
    out: dict[tuple[str, int], dict] = {}
    for k in kernels:
        recs = list(by_name.get(k["name"], []))
        if not recs or k.get("backend") == "extern":
            continue
        calls = k.get("calls") or []
        free = list(range(len(recs)))
        for i, call in enumerate(calls):
            names = set(_call_names(call))
            j = next((j for j in free if set(recs[j]["call_args"]) <= names and recs[j]["call_args"]), None)
            if j is None and free:
                j = free[0] if len(recs) == len(calls) else None
            if j is not None:
                free.remove(j)
                out[(k["name"], i)] = recs[j]
    return out


def _call_ptr(rec: dict, name: str, real: str) -> tuple[str | None, str]:
    """The pointer name a kernel's source uses for buffer ``name`` (stored as ``real``, the buffer
    it mutates, if any), per the call's ``KernelArgs`` record, and why there is none."""
    d = rec["ptrs"].get(real) or rec["ptrs"].get(name)
    if d is None:
        return None, "not among the kernel's arguments"
    out = d.get("out")
    if out and out != "REMOVED":
        return out, ""
    inplace = d.get("inplace")
    if inplace and inplace != "REMOVED":
        return inplace, ""
    if d.get("in"):
        return d["in"], ""
    return None, "its store was removed"


def _order_origins(b: dict, pg_order: dict[str, int]) -> list[str]:
    """A buffer's origin FX nodes, the node whose lowering made it first, then graph order."""
    origins = [o for o in b.get("origins") or [] if o in pg_order] or list(b.get("origins") or [])
    origins.sort(key=lambda o: pg_order.get(o, 1 << 30))
    producer = b.get("origin_node")
    if producer not in origins:
        producer = origins[-1] if origins else None  # the last in graph order produces the value
    return ([producer] if producer else []) + [o for o in origins if o != producer]


def _provenance_by_call(wrapper: str, kernels: list[dict], provenance: dict[str, list[str]] | None
                        ) -> tuple[dict[str, list[str]], dict[tuple[str, int], list[str]]]:
    """Inductor's provenance matched to this wrapper's ``# [Provenance debug handles] NAME:N``
    comments: kernel -> post-grad nodes (all calls), and (kernel, call index) -> those of one call.
    Extern and fallback calls (``extern_kernels.addmm#1``, ``torch.ops.aten.X.default#0``) take
    their op's handles in order, one per call."""
    numbered: dict[str, list[str]] = {}
    for k in kernels:
        if "#" in k["name"]:
            numbered.setdefault(k["name"].split("#")[0], []).append(k["name"])
    by_kernel: dict[str, list[str]] = {}
    by_call: dict[tuple[str, int], list[str]] = {}
    seen: dict[str, int] = {}
    for m in _PROV.finditer(wrapper):
        base, key = m.group(1), f"{m.group(1)}:{m.group(2)}"
        i = seen.get(base, 0)
        seen[base] = i + 1
        if base in numbered:
            name, call = (numbered[base][i] if i < len(numbered[base]) else base), 0
        else:
            name, call = base, i
        nodes = list((provenance or {}).get(key, []))
        if not nodes:
            continue
        by_call.setdefault((name, call), [])
        acc = by_kernel.setdefault(name, [])
        for n in nodes:
            if n not in acc:
                acc.append(n)
            if n not in by_call[(name, call)]:
                by_call[(name, call)].append(n)
    return by_kernel, by_call


def _buffer_entries(buffers: list[dict], pg: dict[str, dict], pg_order: dict[str, int], dyn_names: set[str],
                    owners: dict[str, dict[str, str]] | None) -> dict[str, dict[str, Any]]:
    """One ``links.buffers`` entry per IR buffer, without kernels yet."""
    out: dict[str, dict[str, Any]] = {}
    for b in buffers:
        name = b["name"]
        origins = _order_origins(b, pg_order)
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
        notes: list[str] = []
        if owners:
            o = owners.get(name)
            op, fused = (o["scheduler_node"], o["fused_node"]) if o else (None, None)
            if o is None:
                notes.append("removed before scheduling: no scheduler node holds it")
        else:
            op, fused = b.get("operation"), b.get("operation")
        out[name] = {"fx_nodes": origins, "dynamo_nodes": dyn, "scheduler_node": op,
                     "fused_node": fused or op, "kernels": [], "kernel_lines": {}, "user_lines": users,
                     "notes": notes}
    return out


def _written(kernel: dict, i: int) -> list[str]:
    """Names call ``i`` of a generated kernel passes to parameters it writes."""
    from inductor_step.tracer.codeparse import _param_is_output  # noqa: PLC0415

    flags = _param_is_output(kernel.get("backend", ""), kernel.get("source") or "") or []
    out = []
    for a, is_out in zip(kernel["calls"][i], flags):
        if is_out:
            out += _NAME.findall(a)[:1]
    return out


def _link_generated_calls(k: dict, out_b: dict[str, dict], entry: dict, defs: dict[tuple[str, int], dict],
                          members: dict[str, list[str]], owners: dict[str, dict[str, str]],
                          storage: dict[str, set[str]], real_name: dict[str, str],
                          prov_call: dict[tuple[str, int], list[str]], removed: set[str]) -> None:
    """Link a C++/Triton kernel call by call: the buffers each call computes and their lines."""
    kname = k["name"]
    calls = k.get("calls") or []
    call_lines = k.get("call_lines") or []
    entry["calls"] = []
    for i in range(len(calls)):
        rec = defs.get((kname, i))
        if rec and rec.get("nodes"):  # the scheduler nodes Inductor generated this call's code for
            computed = list(rec.get("buffers") or [])
        else:
            written = _written(k, i)
            fused = []
            for w in written:
                o = owners.get(w)
                if o and o["fused_node"] not in fused:
                    fused.append(o["fused_node"])
            computed = [b for f in fused for b in members.get(f, [])] if owners else list(dict.fromkeys(written))
        computed = [b for b in dict.fromkeys(computed) if b in out_b]
        fallback = None if rec else _fallback_call_lines(k, i, computed, storage)
        ptr_of: dict[str, str | None] = {}
        why_of: dict[str, str] = {}
        split: dict[str, list[list[int]]] = {}
        if rec:
            for b in computed:
                ptr_of[b], why_of[b] = _call_ptr(rec, b, real_name.get(b, b))
                if b in removed:
                    ptr_of[b], why_of[b] = None, "Inductor removed its store (V.graph.removed_buffers)"
            split = _split_in_place(k, rec, [b for b in computed if b not in removed])
            for b in computed:  # a buffer and its mutation stored through one pointer, loop after loop
                t = real_name.get(b, b)
                if t != b and t in computed and ptr_of[b] and ptr_of.get(t) == ptr_of[b] \
                        and b not in split and t not in split:
                    split.update(_split_mutation(k, ptr_of[b], t, b) or {})
        entry["calls"].append({"index": i, "line": call_lines[i] if i < len(call_lines) else None,
                               "buffers": computed, "pointers": "kernel args" if rec else "call arguments",
                               "post_grad_nodes": prov_call.get((kname, i), [])})
        for b in computed:
            d = out_b[b]
            if kname not in d["kernels"]:
                d["kernels"].append(kname)
            if b not in entry["buffers"]:
                entry["buffers"].append(b)
            if len(calls) > 1:
                d["call"] = {"kernel": kname, "index": i, "line": call_lines[i] if i < len(call_lines) else None}
            if rec:
                ptr, why = ptr_of[b], why_of[b]
                lines = split[b] if b in split else _ptr_lines(k, {ptr} if ptr else set())
                # a scatter (index_put with accumulate) into a buffer this call also computes: both
                # write through one pointer; the atomic updates are the mutation's, the rest its target's
                mutator = next((m for m in computed if m != b and real_name.get(m) == b and ptr_of.get(m) == ptr), None)
                if ptr and (real_name.get(b, b) != b and real_name[b] in computed and ptr_of.get(real_name[b]) == ptr
                            or mutator):
                    src = (k.get("source") or "").split("\n")
                    atomic = [n for a, e in lines for n in range(a, e + 1) if "atomic_" in src[n - 1]]
                    if atomic:
                        keep = set(atomic) if mutator is None else \
                            {n for a, e in lines for n in range(a, e + 1)} - set(atomic)
                        lines = _ranges(sorted(keep))
                if not lines and b in split:
                    why = "computed in place in the same loop as the buffer stored after it there"
                if not lines:
                    why = why or f"no line uses its pointer {ptr}"
            else:
                lines, why = fallback.get(b, []), "no argument of the call is its storage"
            d["kernel_lines"][kname] = lines
            if not lines:
                d["notes"].append(f"{kname} has no load or store of {b} of its own ({why}): "
                                  "its value stays in registers inside the kernel")


@dataclass
class _Graph:
    """One graph's inputs to the link builders and the links built so far."""

    kernels: list[dict]
    wrapper: str
    owners: dict[str, dict[str, str]]
    pg: dict[str, dict]
    storage: dict[str, set[str]]
    real_name: dict[str, str]
    removed: set[str]
    provenance_written: bool
    prov_nodes: dict[str, list[str]]
    prov_call: dict[tuple[str, int], list[str]]
    defs: dict[tuple[str, int], dict]
    members: dict[str, list[str]]
    extern_nodes: set[str] = field(default_factory=set)  # ExternKernelSchedulerNode names
    buffers: dict[str, dict[str, Any]] = field(default_factory=dict)   # links.buffers
    kernel_links: dict[str, dict[str, Any]] = field(default_factory=dict)  # links.kernels
    notes: list[str] = field(default_factory=list)

    @property
    def prov_word(self) -> str:
        return "Inductor's provenance" if self.provenance_written else \
            "Inductor's kernel-to-node record (torch wrote an empty provenance map for this graph)"


def _storage_groups(wrapper: str) -> dict[str, set[str]]:
    """Buffer -> every name sharing its storage through the wrapper's ``# reuse`` lines."""
    storage: dict[str, set[str]] = {}
    for new, old in re.findall(r"^[ \t]*((?:\w+_)?buf\d+) = (?:reinterpret_tensor\()?((?:\w+_)?buf\d+)\b.*; del \2[ \t]+# reuse", wrapper, re.M) + \
            re.findall(r"^[ \t]*auto (buf\d+) = std::move\((buf\d+)\);[ \t]*// reuse", wrapper, re.M):  # a C++ wrapper's
        group = storage.get(old, {old}) | storage.get(new, {new})
        for n in group:
            storage[n] = group
    return storage


def _link_kernels(g: _Graph) -> None:
    """``links.kernels`` and each buffer's kernels and lines, call by call (extern calls: their outputs)."""
    for k in g.kernels:
        kname = k["name"]
        pkey = kname if kname in g.prov_nodes else kname.split("#")[0]
        entry = {"backend": k.get("backend"), "buffers": [], "fused_nodes": k.get("fused_nodes") or [],
                 "scheduler_nodes": [], "post_grad_nodes": g.prov_nodes.get(pkey, []),
                 "source": ("provenance+" if pkey in g.prov_nodes and g.provenance_written else
                            "kernel-info+" if pkey in g.prov_nodes else "") + "call-args"}
        g.kernel_links[kname] = entry
        if k.get("backend") in ("cpp", "triton"):
            _link_generated_calls(k, g.buffers, entry, g.defs, g.members, g.owners, g.storage, g.real_name,
                                  g.prov_call, g.removed)
        else:
            for b in [b for b in k.get("buffers") or [] if b in g.buffers]:
                d = g.buffers[b]
                entry["buffers"].append(b)
                if kname not in d["kernels"]:
                    d["kernels"].append(kname)
                d["kernel_lines"][kname] = [[1, 1]]
        if any(key[0] == kname for key in g.defs):
            entry["source"] += "+kernel-args"


def _link_multi_outputs(g: _Graph) -> None:
    """Outputs of multi-output kernels (``bufK = bufJ[i]``) and a fallback's single output
    (``bufK = bufJ``) belong to the kernel that made ``bufJ``."""
    from inductor_step.tracer.codeparse import multi_outputs, sole_outputs  # noqa: PLC0415

    children: dict[str, tuple[str, int | None]] = dict(multi_outputs(g.wrapper))
    children.update({c: (p, None) for c, p in sole_outputs(g.wrapper).items() if c not in children})
    for child, (parent, index) in children.items():
        d, pd = g.buffers.get(child), g.buffers.get(parent)
        if d is None or d["kernels"] or pd is None and not any(parent in (k.get("buffers") or []) for k in g.kernels):
            continue
        parent_kernels = pd["kernels"] if pd else [k["name"] for k in g.kernels if parent in (k.get("buffers") or [])]
        for kname in parent_kernels:
            d["kernels"].append(kname)
            d["kernel_lines"][kname] = [[1, 1]] if g.kernel_links[kname]["backend"] == "extern" else []
            d["notes"].append(f"output {index} of {parent}, which {kname} returns" if index is not None else
                              f"the output of {kname} ({parent}, which it returns)")
            if child not in g.kernel_links[kname]["buffers"]:
                g.kernel_links[kname]["buffers"].append(child)


def _link_views(g: _Graph) -> None:
    """A buffer written through views of itself (a concatenation: ``bufK = reinterpret_tensor(buf31,
    ...)  # alias``) is computed by the calls that compute its views, through their lines."""
    views: dict[str, list[str]] = {}
    for view, parent in _VIEW.findall(g.wrapper):
        views.setdefault(parent, []).append(view)
    for parent, vs in views.items():
        d = g.buffers.get(parent)
        if d is None or d["kernels"]:
            continue
        for v in vs:
            vd = g.buffers.get(v)
            for kname in (vd or {}).get("kernels", []):
                r = d["kernel_lines"].get(kname, []) + vd["kernel_lines"].get(kname, [])
                d["kernel_lines"][kname] = _ranges([n for a, e in r for n in range(a, e + 1)])
                if kname not in d["kernels"]:
                    d["kernels"].append(kname)
                    g.kernel_links[kname]["buffers"].append(parent)
                if vd.get("call", {}).get("kernel") == kname:
                    d["call"] = dict(vd["call"])
        if d["kernels"]:
            d["notes"].append(f"written through its views {', '.join(vs)} (they are parts of it, e.g. a concatenation)")


def _link_by_provenance(g: _Graph) -> None:
    """A buffer no kernel call computes may still be computed inside one (a value kept in registers
    in a kernel whose fused node does not hold it): the provenance says which kernel covers all of
    its origin FX nodes.  Only then: a kernel that writes the buffer always wins."""
    for name, d in g.buffers.items():
        if d["kernels"] or not d["fx_nodes"] or (g.owners and d["scheduler_node"] is None) \
                or d["scheduler_node"] in g.extern_nodes:  # an extern call's output (a collective's) is its own
            continue
        for kname, e in g.kernel_links.items():
            if e["backend"] != "extern" and set(d["fx_nodes"]) <= set(e["post_grad_nodes"]):
                d["kernels"].append(kname)
                d["kernel_lines"][kname] = []
                d["notes"].append(f"computed inside {kname} ({g.prov_word} covers its FX nodes); "
                                  "it has no load or store of its own")
                e["buffers"].append(name)


def _finish(g: _Graph) -> None:
    """Kernels' scheduler nodes, and the notes of what could not be linked."""
    for e in g.kernel_links.values():
        e["scheduler_nodes"] = sorted({g.buffers[b]["scheduler_node"] for b in e["buffers"]
                                       if g.buffers[b]["scheduler_node"]}, key=lambda s: (len(s), s))
    for name, d in g.buffers.items():
        if not d["kernels"]:
            d["notes"].append("no kernel computes this buffer (an input view, a constant, or removed)")
        if not d["fx_nodes"]:
            d["notes"].append("Inductor recorded no origin FX node for this buffer")
        real = g.real_name.get(name)
        if real and real != name:
            d["storage_of"] = real
            d["notes"].append(f"writes into {real}'s storage (it mutates {real})")
    unreached = [k for k, e in g.kernel_links.items() if not e["buffers"]]
    if unreached:
        g.notes.append("kernels with no buffer linked: " + ", ".join(unreached))
    if not g.provenance_written:
        g.notes.append("torch wrote an empty provenance map for this graph (inductor_provenance_tracking_node_mappings "
                       "has no kernel entries): kernel -> FX node links come from its kernel-to-node record")


def build_links(*, dynamo_nodes: list[dict], post_grad_nodes: list[dict], buffers: list[dict],
                fused_nodes: list[dict], kernels: list[dict], wrapper: str,
                owners: dict[str, dict[str, str]] | None = None,
                provenance: dict[str, list[str]] | None = None,
                provenance_written: bool = True,
                kernel_defs: list[dict] | None = None,
                mutations: dict[str, Any] | None = None,
                source_context: dict[str, str] | None = None) -> dict[str, Any]:
    """The ``links`` of a codegen stop (documented in README).

    Inputs are the graph's captured levels: Dynamo FX nodes and post-grad FX nodes (dicts with
    ``name``, ``from_node``, ``user_line``), IR buffers (``name``, ``operation``, ``origins``,
    ``origin_node``), post-fusion scheduler nodes (``name``, ``members``, ``buffers``), kernels
    from :func:`tracer.codeparse.parse_wrapper` (with ``buffers``/``fused_nodes``), the wrapper
    source, Inductor's provenance map ``"kernel:handle" -> [post-grad node]`` and whether torch
    wrote it for this graph (``provenance_written``), ``kernel_defs`` (each generated kernel
    call's pointer names, :func:`tracer.adapter.take_kernel_defs`), ``mutations``
    (``{"mutation_real_name", "removed"}``, :func:`tracer.adapter.buffer_mutations`), ``owners``
    (buffer -> ``{"scheduler_node", "fused_node"}`` from the live scheduler) and ``source_context``
    (``"file:line"`` -> the user's source around that line).  Builders, in order: buffers,
    kernels (call by call), multi-output children, concatenations' views, provenance-only
    buffers, notes, then the reverse indexes.
    """
    owners = owners or {}
    pg = {n["name"]: n for n in post_grad_nodes}
    members: dict[str, list[str]] = {}
    for b, o in owners.items():
        members.setdefault(o["fused_node"], []).append(b)
    prov_nodes, prov_call = _provenance_by_call(wrapper, kernels, provenance)
    g = _Graph(kernels=kernels, wrapper=wrapper, owners=owners, pg=pg, storage=_storage_groups(wrapper),
               real_name=dict((mutations or {}).get("mutation_real_name") or {}),
               removed=set((mutations or {}).get("removed") or []), provenance_written=provenance_written,
               prov_nodes=prov_nodes, prov_call=prov_call, defs=_match_defs(kernels, kernel_defs), members=members,
               extern_nodes={f["name"] for f in fused_nodes if f.get("type") == "ExternKernelSchedulerNode"})
    g.buffers = _buffer_entries(buffers, pg, {n["name"]: i for i, n in enumerate(post_grad_nodes)},
                                {n["name"] for n in dynamo_nodes}, owners)
    for builder in (_link_kernels, _link_multi_outputs, _link_views, _link_by_provenance, _finish):
        builder(g)
    sources = ([("inductor provenance" if provenance_written else "inductor kernel-to-node record")] if prov_nodes else []) \
        + ["scheduler"] + (["kernel args"] if g.defs else []) + ["wrapper call arguments"]
    return {"buffers": g.buffers, "kernels": g.kernel_links, "fx_nodes": _fx_index(g.buffers, pg),
            "dynamo_nodes": _dynamo_index(_fx_index(g.buffers, pg), post_grad_nodes, {n["name"] for n in dynamo_nodes}),
            "scheduler_nodes": _scheduler_index(g.buffers),
            "fused_nodes": _fused_index(g.buffers, fused_nodes), "user_source": source_context or {},
            "sources": sources, "provenance_map": "written" if provenance_written else "empty", "notes": g.notes}


def _fx_index(out_b: dict[str, dict], pg: dict[str, dict]) -> dict[str, dict[str, Any]]:
    """``links.fx_nodes``: post-grad FX node -> its buffers, Dynamo nodes and user line (and
    ``torch_line`` where the node's innermost frame is inside torch)."""
    fx: dict[str, dict[str, Any]] = {}
    for name, d in out_b.items():
        for o in d["fx_nodes"]:
            e = fx.setdefault(o, {"buffers": [], "dynamo_nodes": pg.get(o, {}).get("from_node") or [],
                                  "user_line": pg.get(o, {}).get("user_line")})
            e["buffers"].append(name)
            if pg.get(o, {}).get("torch_line"):  # the innermost frame, torch's own, where torch shows the node
                e["torch_line"] = pg[o]["torch_line"]
    return fx


def _dynamo_index(fx: dict[str, dict[str, Any]], post_grad_nodes: list[dict],
                  dyn_names: set[str]) -> dict[str, dict[str, list[str]]]:
    """``links.dynamo_nodes``: Dynamo FX node -> the post-grad nodes made from it (every one whose
    ``from_node`` names it, as torch's provenance map's preToPost: a node compilation removed, such as
    a dropout with p=0, maps to the node that replaced it) and the buffers made from those.  Only
    ``call_function`` nodes, as torch's map (``get_graph_provenance_json``): a backward's placeholders for
    saved activations (``amax_1``, named after the forward's node) keep their ``from_node`` but are no
    node made from the Dynamo node in this graph."""
    dyn_map: dict[str, dict[str, list[str]]] = {}
    for n in post_grad_nodes:
        if n.get("op", "call_function") != "call_function":
            continue
        for dn in n.get("from_node") or []:
            if dn in dyn_names:
                e = dyn_map.setdefault(dn, {"post_grad": [], "buffers": []})
                if n["name"] not in e["post_grad"]:
                    e["post_grad"].append(n["name"])
    for o, d in fx.items():
        for dn in d["dynamo_nodes"]:
            e = dyn_map.setdefault(dn, {"post_grad": [], "buffers": []})
            if o not in e["post_grad"]:
                e["post_grad"].append(o)
            e["buffers"] += [b for b in d["buffers"] if b not in e["buffers"]]
    return dyn_map


def _scheduler_index(out_b: dict[str, dict]) -> dict[str, dict[str, Any]]:
    """``links.scheduler_nodes``: scheduler node -> its buffers, fused node and kernels."""
    sched: dict[str, dict[str, Any]] = {}
    for name, d in out_b.items():
        op = d["scheduler_node"]
        if op:
            e = sched.setdefault(op, {"buffers": [], "fused_node": d["fused_node"], "kernels": []})
            e["buffers"].append(name)
            e["kernels"] += [k for k in d["kernels"] if k not in e["kernels"]]
    return sched


def _fused_index(out_b: dict[str, dict], fused_nodes: list[dict]) -> dict[str, dict[str, Any]]:
    """``links.fused_nodes``: post-fusion node -> its members, buffers and kernels."""
    fused: dict[str, dict[str, Any]] = {}
    for f in fused_nodes:
        fused[f["name"]] = {"members": f.get("members") or [], "buffers": f.get("buffers") or [],
                            "kernels": sorted({k for b in f.get("buffers") or [] for k in out_b.get(b, {}).get("kernels", [])})}
    return fused
