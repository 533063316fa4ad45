"""The diff of two graphs (every level, top-down) and of two sessions (graphs paired by id, kind, content)."""

from __future__ import annotations

import difflib
import os
import re
from typing import Any, Sequence

from inductor_step.session.format import GraphKey
from inductor_step.session.modes import compiled_with_changes
from inductor_step.session.diff.fx import EXACT_ALIGN, _node_key, diff_aot_graphs, diff_nodes, specializations
from inductor_step.session.diff.guards import _short_where, failed_guards, parse_guards, split_reason
from inductor_step.session.diff.ir import diff_buffers, diff_scheduler
from inductor_step.session.diff.kernels import diff_kernels, diff_timing
from inductor_step.session.diff.ctime import diff_compile_time
from inductor_step.session.diff.model import Change, DiffSide, GraphDiff, LEVELS, Level


# --------------------------------------------------------------------------- the diff

def _header_changes(ha: dict[str, Any], hb: dict[str, Any]) -> list[str]:
    out = []
    for k in ("torch", "triton", "python", "device", "device_name", "cuda"):
        if ha.get(k) != hb.get(k):
            out.append(f"session {k}: {ha.get(k)} -> {hb.get(k)}")
    sa, sb = ha.get("settings") or {}, hb.get("settings") or {}
    for k in sorted(set(sa) | set(sb)):
        if sa.get(k) != sb.get(k):
            out.append(f"setting {k}: {sa.get(k)} -> {sb.get(k)}")
    if (ha.get("argv") or []) != (hb.get("argv") or []):
        out.append(f"script arguments: {ha.get('argv')} -> {hb.get('argv')}")
    if ha.get("script") and hb.get("script") and os.path.basename(ha["script"]) != os.path.basename(hb["script"]):
        out.append(f"script: {ha['script']} -> {hb['script']}")
    return out


def diff_graphs(a: DiffSide, b: DiffSide, same_session: bool = True, rounds: dict[str, Any] | None = None) -> GraphDiff:
    """The level-by-level diff of graph ``a`` (the earlier) and ``b``; ``same_session`` False when
    they come from two recordings (the "why" level then lists what differs between the sessions'
    headers instead of a failed guard of A); ``rounds``: the pair's ``pair_timing`` message (both
    timed round by round, ``r`` in the diff view), said at the top."""
    levels = {k: Level(k, title, stage) for k, title, stage in LEVELS}
    _why_level(levels["why"], a, b, same_session)
    _graph_levels(levels, a, b)
    buf_map = _buffers_level(levels["buffers"], a, b)
    _scheduling_level(levels["scheduling"], a, b, buf_map)
    kmap = _kernels_level(levels["kernels"], a, b)
    diff_timing(a.run, b.run, kmap, levels["timing"], paired=(rounds or {}).get("status") == "done")
    top = _top_notes(a, b, same_session, rounds)
    # compile time per stage, where either session measured it (older sessions keep their levels)
    if a.compile_time is not None or b.compile_time is not None:
        diff_compile_time(a, b, levels["ctime"])
    else:
        del levels["ctime"]
    from inductor_step.session.memory_text import diff_note  # noqa: PLC0415

    ma, mb = (a.memory() if callable(a.memory) else None), (b.memory() if callable(b.memory) else None)
    return GraphDiff(a.name, b.name, [levels[k] for k, _t, _s in LEVELS if k in levels], kmap, notes=top,
                     memory=diff_note(ma, mb), memory_always=diff_note(ma, mb, always=True))


def _recompile_change(r: Any, a: DiffSide, b: DiffSide, same_session: bool, script_dir: str | None) -> Change:
    """One recompile reason of ``b``'s dynamo stop as a change of the "why" level: the guard of A (or,
    from two recordings, of B's session) that failed, its first three failing guards and who installed them."""
    cid, text = split_reason(r)
    guards_text = a.all_guards.get(cid or "", None) if same_session else b.all_guards.get(cid or "")
    g = failed_guards(text, parse_guards(guards_text)) if guards_text else []
    what = f"guard of {cid or '?'} failed: {text}"
    detail = []
    for x in g[:3]:
        detail.append(f"{x.kind} {x.expr}")
        detail.append("installed by: " + (_short_where(x.where, script_dir) + (f": {x.code}" if x.code else "")
                                          if x.where else "Dynamo itself (no user line recorded)"))
    if not guards_text:
        detail.append(f"the guards of {cid} are not in the session (Dynamo logs them once the backend compile ends)")
    src = g[0].source if g and g[0].source else (g[0].kind if g else "")
    return Change("changed", None, f"{cid or '?'} {src}".strip(), what, text="\n".join(detail))


def _why_level(why: Level, a: DiffSide, b: DiffSide, same_session: bool) -> None:
    """Fill the "why" level: ``b``'s recompile reasons, the sessions' header differences (two
    recordings), shape specializations, a what-if variant's settings, how each was compiled."""
    da, db = a.stops.get("dynamo") or {}, b.stops.get("dynamo") or {}
    nodes_a = (da.get("graph") or {}).get("nodes") or []
    nodes_b = (db.get("graph") or {}).get("nodes") or []
    script_dir = os.path.dirname(str(b.header.get("script") or "")) or None
    for r in db.get("recompile_reasons") or []:
        why.changes.append(_recompile_change(r, a, b, same_session, script_dir))
    if not same_session:
        why.title = "why they differ"
        why.notes += _header_changes(a.header, b.header)
        if why.notes:
            why.flagged = True
    for s in specializations(nodes_a, nodes_b):
        why.notes.append(s)
        why.flagged = True
    kb = GraphKey.parse(b.key)
    variant = kb.variant if kb.variant and b.key.startswith(a.key) else None
    if variant is not None:  # a what-if variant is no recompile: its settings are why it differs
        why.title = "why they differ (what if)"
        why.notes.append(f"{b.key} is {a.key} recompiled by what-if with {variant}: not a recompile")
        why.flagged = True
    if not why.changes and not why.notes and same_session:
        why.notes.append(f"{b.key} has no recompile reason: not a recompile of {a.key}")
    for s in compiled_with_changes(da.get("compiled_with"), db.get("compiled_with")):
        why.notes.append(f"compiled differently: {s}")
        why.flagged = True


def _graph_levels(levels: dict[str, Level], a: DiffSide, b: DiffSide) -> None:
    """Fill the Dynamo graph and post-grad graph levels: their FX nodes' changes (and, post-grad,
    which AOT graphs each has and their changes), or why a side is missing."""
    for key, stage, get in (("dynamo", "dynamo", lambda s: (s.get("graph") or {}).get("nodes")),
                            ("post_grad", "aot", lambda s: (s.get("post_grad") or {}).get("nodes"))):
        lv = levels[key]
        sa, sb = a.stops.get(stage), b.stops.get(stage)
        if sa is None or sb is None:
            lv.missing = f"{'A' if sa is None else 'B'} has no {stage} stop"
            continue
        xa, xb = get(sa), get(sb)
        if xa is None or xb is None:
            lv.missing = "a graph's nodes were not captured"
            continue
        lv.changes = diff_nodes(xa, xb, named_inputs=key == "dynamo")
        if key == "post_grad":
            ga, gb = sa.get("aot_graphs") or {}, sb.get("aot_graphs") or {}
            if sorted(ga) != sorted(gb):
                lv.notes.append(f"AOT graphs: {', '.join(sorted(ga)) or '-'} -> {', '.join(sorted(gb)) or '-'}")
                lv.flagged = True
            lv.changes += diff_aot_graphs(ga, gb)


def _buffers_level(lb: Level, a: DiffSide, b: DiffSide) -> dict[str, str]:
    """Fill the IR buffers level from the lowering stops; return the buffer map A -> B it matched ({} when a side lacks one)."""
    sa_, sb_ = a.stops.get("lowering"), b.stops.get("lowering")
    if sa_ is None or sb_ is None:
        lb.missing = f"{'A' if sa_ is None else 'B'} has no lowering stop"
        return {}
    lb.changes, buf_map = diff_buffers(sa_.get("buffers") or [], sb_.get("buffers") or [])
    return buf_map


def _scheduling_level(ls: Level, a: DiffSide, b: DiffSide, buf_map: dict[str, str]) -> None:
    """Fill the scheduler nodes level from the scheduling stops' nodes after fusion (buffers matched by ``buf_map``)."""
    sa_, sb_ = a.stops.get("scheduling"), b.stops.get("scheduling")
    if sa_ is None or sb_ is None:
        ls.missing = f"{'A' if sa_ is None else 'B'} has no scheduling stop"
        return
    ls.changes = diff_scheduler(sa_.get("after") or [], sb_.get("after") or [], buf_map)
    ls.notes.append(f"scheduler nodes after fusion: {len(sa_.get('after') or [])} -> {len(sb_.get('after') or [])}")


def _kernels_level(lk: Level, a: DiffSide, b: DiffSide) -> dict[str, str]:
    """Fill the kernels level from the codegen stops; return the kernel map A -> B it matched ({} when a side lacks one)."""
    sa_, sb_ = a.stops.get("codegen"), b.stops.get("codegen")
    if sa_ is None or sb_ is None:
        lk.missing = f"{'A' if sa_ is None else 'B'} has no codegen stop"
        return {}
    ka, kb = sa_.get("kernels") or [], sb_.get("kernels") or []
    lk.changes, kmap, same = diff_kernels(ka, kb, sb_.get("links") or {})
    lk.notes.append(f"{len(ka)} -> {len(kb)} kernels; {same} compute the same (normalized source)")
    return kmap


def _top_notes(a: DiffSide, b: DiffSide, same_session: bool, rounds: dict[str, Any] | None) -> list[str]:
    """The lines said above the levels: a static what-if variant's note, the numerics' differences,
    and the timing notes (with the pair's ``rounds``, if any)."""
    from inductor_step.session.diff.moments import top_notes  # noqa: PLC0415
    from inductor_step.session.numerics import diff_lines as numerics_diff  # noqa: PLC0415
    from inductor_step.session.whatif import static_variant_note  # noqa: PLC0415

    top = [n for n in [static_variant_note(b.key, a.stops, b.stops)] if n]
    top += numerics_diff(a.numerics, b.numerics)
    top += top_notes(b.key, a.run, b.run, a.header, b.header, same_session, rounds)  # with the rounds, if any
    return top


# --------------------------------------------------------------------------- pairing

def default_partner(graphs: Sequence[str], key: str) -> str | None:
    """The graph to diff ``key`` with: for a recompile ``[f/n]`` (n > 0) of a kind, ``[f/n-1]`` of
    that kind (so ``[0/1] forward`` -> ``[0/0] forward``); otherwise the next recompile of the same
    frame and kind, else the nearest other graph of that kind, else any other graph."""
    # the kind with its part and subgraph (protocol.graph_key): a branch's partner is the same branch
    m = re.match(r"\[(\d+)/(\d+)\] (\w+(?: #\d+)?(?: › [^·]+?)?)(?: · |$)", key)
    others = [g for g in graphs if g != key]
    original = str(GraphKey.parse(key).original)
    if original != key and original in graphs:  # a what-if variant: its original
        return original
    if not others:
        return None
    if m:
        f, n, kind = m.group(1), int(m.group(2)), m.group(3)
        for want in ([f"[{f}/{n - 1}] {kind}"] if n > 0 else []) + [f"[{f}/{n + 1}] {kind}"]:
            if want in graphs:
                return want
        same_kind = [g for g in others if g.endswith(" " + kind)]
        k = GraphKey.parse(key)
        base = k.kind_label if k.subgraph else k.kind  # a subgraph's partner: the same subgraph of the same part
        same_kind = same_kind or [g for g in others if (h := GraphKey.parse(g)).variant is None
                                  and (h.kind_label if h.subgraph else h.kind) == base]
        if same_kind:
            i = graphs.index(key) if key in graphs else 0
            return min(same_kind, key=lambda g: abs(graphs.index(g) - i))
    return others[0]


def _dynamo_sig(session: Any, key: str) -> list[tuple]:
    s = session.stop_for(key, "dynamo") or {}
    return [_node_key(n, True) for n in (s.get("graph") or {}).get("nodes") or []]


def pair_graphs(sa: Any, sb: Any) -> list[tuple[str | None, str | None, str]]:
    """The graphs of sessions ``sa`` and ``sb`` paired: by compile id and kind first, then the rest by
    content (the most similar Dynamo graph of the same kind, ratio >= 0.5); (key in A or None, key
    in B or None, how)."""
    out: list[tuple[str | None, str | None, str]] = []
    left_b = [g for g in sb.graphs]
    rest_a = []
    for g in sa.graphs:
        if g in left_b:
            out.append((g, g, "same compile id and kind"))
            left_b.remove(g)
        else:
            rest_a.append(g)
    for g in rest_a:
        kind = GraphKey.parse(g).replace(compile_id="")
        sig = _dynamo_sig(sa, g)
        best, score = None, 0.5
        for h in left_b:
            if GraphKey.parse(h).replace(compile_id="") != kind:
                continue
            other = _dynamo_sig(sb, h)
            sm = difflib.SequenceMatcher(None, sig, other, autojunk=max(len(sig), len(other)) > EXACT_ALIGN)
            if sm.real_quick_ratio() < score or sm.quick_ratio() < score:
                continue
            r = sm.ratio()
            if r >= score:
                best, score = h, r
        if best is not None:
            out.append((g, best, f"by content ({100 * score:.0f}% of the Dynamo graph alike)"))
            left_b.remove(best)
        else:
            out.append((g, None, "only in A"))
    out += [(None, h, "only in B") for h in left_b]
    return out


def diff_sessions(sa: Any, sb: Any, label_a: str = "A", label_b: str = "B") -> list[tuple[str | None, str | None, str, GraphDiff | None]]:
    """Every graph pair of two sessions (:func:`pair_graphs`) with its diff (None for a graph only
    one session has)."""
    out = []
    for ka, kb, how in pair_graphs(sa, sb):
        d = None
        if ka and kb:
            d = diff_graphs(DiffSide.from_session(sa, ka, label_a), DiffSide.from_session(sb, kb, label_b), same_session=False)
        out.append((ka, kb, how, d))
    return out
