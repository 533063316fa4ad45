"""The diff's IR buffer and scheduler node levels: buffers aligned, fused nodes split or merged."""

from __future__ import annotations

import re
from typing import Any

from inductor_step.session.diff.fx import _listed, align
from inductor_step.session.diff.model import Change


# --------------------------------------------------------------------------- IR buffers, scheduler nodes

_STEM = re.compile(r"_\d+$")


def _buffer_key(b: dict[str, Any]) -> tuple:
    ops = tuple(sorted({_STEM.sub("", o) for o in b.get("origins") or []}))
    return (b.get("ir_type"), b.get("kind"), b.get("reduction_type"), ops)


_BUFFER_FIELDS = ("ir_type", "kind", "ranges", "reduction_ranges", "size", "dtype")


def diff_buffers(ba: list[dict[str, Any]], bb: list[dict[str, Any]]) -> tuple[list[Change], dict[str, str]]:
    """IR buffers added, removed and changed (kind, ranges, reduction ranges, size, dtype), aligned
    over (IR type, kind, reduction type, the op names of their origins); and the buffer map A -> B."""
    ka, kb = [_buffer_key(b) for b in ba], [_buffer_key(b) for b in bb]
    out: list[Change] = []
    pairs: dict[str, str] = {}
    for tag, i1, i2, j1, j2 in align(ka, kb):
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            for x, y in zip(ba[i1:i2], bb[j1:j2]):
                pairs[x["name"]] = y["name"]
                diffs = [f"{k} {_listed(x.get(k))} -> {_listed(y.get(k))}" for k in _BUFFER_FIELDS
                         if x.get(k) != y.get(k)]
                if diffs:
                    out.append(Change("changed", x["name"], y["name"], "; ".join(diffs), buffers=[y["name"]]))
            continue
        for x in ba[i1:i2]:
            out.append(Change("removed", x["name"], None, _buffer_desc(x)))
        for y in bb[j1:j2]:
            out.append(Change("added", None, y["name"], _buffer_desc(y), buffers=[y["name"]]))
    return out, pairs


def _buffer_desc(b: dict[str, Any]) -> str:
    red = f" reduction {_listed(b.get('reduction_ranges'))}" if b.get("reduction_ranges") else ""
    return (f"{b.get('ir_type')} {b.get('kind')} ranges {_listed(b.get('ranges'))}{red} "
            f"{b.get('dtype')}; from {', '.join(b.get('origins') or []) or '-'}")


def diff_scheduler(na: list[dict[str, Any]], nb: list[dict[str, Any]], buf_map: dict[str, str]) -> list[Change]:
    """Scheduler nodes after fusion (the scheduling stop's ``after``) compared through the buffers they
    write (``buf_map``: A's buffer -> B's): fused groups split (one node's buffers now in several) or
    merged (several nodes' buffers now in one), type or loop group changed, nodes added or removed."""
    owner_b = {buf: n["name"] for n in nb for buf in n.get("buffers") or []}
    by_b = {n["name"]: n for n in nb}
    to_b: dict[str, list[str]] = {}
    from_a: dict[str, list[str]] = {}
    for n in na:
        tgt = []
        for buf in n.get("buffers") or []:
            t = owner_b.get(buf_map.get(buf, ""))
            if t and t not in tgt:
                tgt.append(t)
        to_b[n["name"]] = tgt
        for t in tgt:
            from_a.setdefault(t, []).append(n["name"])
    out: list[Change] = []
    done_b: set[str] = set()
    for n in na:
        tgt = to_b[n["name"]]
        if not tgt:
            out.append(Change("removed", n["name"], None, f"{n.get('type')} writing {', '.join(n.get('buffers') or [])}"))
            continue
        if len(tgt) > 1:
            out.append(Change("changed", n["name"], ", ".join(tgt),
                              f"fused group split: {n['name']} ({n.get('type')}) is now {len(tgt)} nodes: "
                              + ", ".join(f"{t} ({by_b[t].get('type')})" for t in tgt),
                              buffers=[b for t in tgt for b in by_b[t].get("buffers") or []]))
            done_b.update(tgt)
            continue
        t = tgt[0]
        if t in done_b:
            continue
        srcs = from_a.get(t, [])
        if len(srcs) > 1 and all(to_b[s] == [t] for s in srcs):
            out.append(Change("changed", ", ".join(srcs), t,
                              f"fused groups merged: {', '.join(srcs)} are now one {by_b[t].get('type')} {t}",
                              buffers=list(by_b[t].get("buffers") or [])))
            done_b.add(t)
            continue
        if len(srcs) > 1:
            continue  # part of a split/merge reported from another node
        y = by_b[t]
        diffs = []
        if n.get("type") != y.get("type"):
            diffs.append(f"type {n.get('type')} -> {y.get('type')}")
        if n.get("group") != y.get("group"):
            diffs.append(f"loop group {n.get('group')} -> {y.get('group')}")
        if len(n.get("members") or []) != len(y.get("members") or []):
            diffs.append(f"{len(n.get('members') or [])} -> {len(y.get('members') or [])} members")
        mapped = {buf_map.get(b) for b in n.get("buffers") or []}
        extra = [b for b in y.get("buffers") or [] if b not in mapped]
        if extra:
            diffs.append(f"now also writes {', '.join(extra)}")
        if diffs:
            out.append(Change("changed", n["name"], t, "; ".join(diffs), buffers=list(y.get("buffers") or [])))
        done_b.add(t)
    for y in nb:
        if y["name"] not in from_a:
            out.append(Change("added", None, y["name"], f"{y.get('type')} writing {', '.join(y.get('buffers') or [])}",
                              buffers=list(y.get("buffers") or [])))
    return out
