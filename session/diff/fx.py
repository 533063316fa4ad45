"""The diff's Dynamo and post-grad levels: FX nodes aligned, compared by op, target, shape, dtype, device."""

from __future__ import annotations

import difflib
import re
from typing import Any, Sequence

from inductor_step.session.diff.model import Change


# --------------------------------------------------------------------------- alignment

#: above this many items in the part two sequences do not share at their ends, the alignment lets
#: difflib treat items that occur in over 1% of the sequence as junk (its autojunk), which keeps a
#: graph of thousands of repeated ops from taking seconds
EXACT_ALIGN = 2000


def align(ka: Sequence[Any], kb: Sequence[Any]) -> list[tuple[str, int, int, int, int]]:
    """difflib's opcodes (tag, i1, i2, j1, j2) turning ``ka`` into ``kb``: the common head and tail
    are equal blocks found in one pass, the middle is aligned by :class:`difflib.SequenceMatcher`."""
    n, m = len(ka), len(kb)
    head = 0
    while head < n and head < m and ka[head] == kb[head]:
        head += 1
    tail = 0
    while tail < n - head and tail < m - head and ka[n - 1 - tail] == kb[m - 1 - tail]:
        tail += 1
    out: list[tuple[str, int, int, int, int]] = []
    if head:
        out.append(("equal", 0, head, 0, head))
    mid_a, mid_b = ka[head:n - tail], kb[head:m - tail]
    if mid_a or mid_b:
        sm = difflib.SequenceMatcher(None, mid_a, mid_b, autojunk=max(len(mid_a), len(mid_b)) > EXACT_ALIGN)
        out += [(t, i1 + head, i2 + head, j1 + head, j2 + head) for t, i1, i2, j1, j2 in sm.get_opcodes()]
    if tail:
        out.append(("equal", n - tail, n, m - tail, m))
    return out


# --------------------------------------------------------------------------- FX nodes

def _listed(xs: Any) -> str:
    if isinstance(xs, list):
        return "[" + ", ".join(_listed(x) for x in xs) + "]"
    return str(xs)


def _node_key(n: dict[str, Any], named_inputs: bool) -> tuple:
    op = n.get("op")
    if op == "placeholder":
        if n.get("dtype") in ("SymInt", "SymFloat", "SymBool"):
            return (op, n.get("dtype"))
        return (op, n.get("target") if named_inputs else "tensor")
    if op == "output":
        return (op,)
    return (op, n.get("target"))


def _node_fields(n: dict[str, Any]) -> dict[str, str]:
    return {"shape": _listed(n.get("shape")), "dtype": str(n.get("dtype")), "device": str(n.get("device"))}


def diff_nodes(na: list[dict[str, Any]], nb: list[dict[str, Any]], named_inputs: bool) -> list[Change]:
    """FX nodes added, removed and changed (target, shape, dtype, device), aligned by structure: a
    sequence alignment (:func:`align`) over (op, target), so renamed nodes (``add_1`` -> ``add_2``) pair up
    and an inserted node does not shift every later one."""
    ka = [_node_key(n, named_inputs) for n in na]
    kb = [_node_key(n, named_inputs) for n in nb]
    out: list[Change] = []
    for tag, i1, i2, j1, j2 in align(ka, kb):
        if tag == "equal":
            for x, y in zip(na[i1:i2], nb[j1:j2]):
                if x.get("shape") == y.get("shape") and x.get("dtype") == y.get("dtype") \
                        and x.get("device") == y.get("device"):
                    continue
                fa, fb = _node_fields(x), _node_fields(y)
                diffs = [f"{k} {fa[k]} -> {fb[k]}" for k in fa if fa[k] != fb[k]]
                if diffs:
                    out.append(Change("changed", x.get("name"), y.get("name"), "; ".join(diffs)))
            continue
        pairs = []
        if tag == "replace" and i2 - i1 == j2 - j1:
            pairs = [(x, y) for x, y in zip(na[i1:i2], nb[j1:j2]) if x.get("op") == y.get("op")]
        if pairs and len(pairs) == i2 - i1:
            for x, y in pairs:
                fa, fb = _node_fields(x), _node_fields(y)
                diffs = [f"target {x.get('target')} -> {y.get('target')}"]
                diffs += [f"{k} {fa[k]} -> {fb[k]}" for k in fa if fa[k] != fb[k]]
                out.append(Change("changed", x.get("name"), y.get("name"), "; ".join(diffs)))
            continue
        for x in na[i1:i2]:
            out.append(Change("removed", x.get("name"), None, _node_desc(x)))
        for y in nb[j1:j2]:
            out.append(Change("added", None, y.get("name"), _node_desc(y)))
    return out


def _node_desc(n: dict[str, Any]) -> str:
    f = _node_fields(n)
    shape = f" {f['shape']}" if n.get("shape") not in (None, []) else ""
    return f"{n.get('op')} {n.get('target')}{shape} {f['dtype'] if n.get('dtype') else ''}".rstrip()


def specializations(na: list[dict[str, Any]], nb: list[dict[str, Any]]) -> list[str]:
    """What changed in the Dynamo graphs' inputs (placeholders, by target): a size that became
    symbolic, a size that was specialized, a dtype or device, a new symbolic size."""
    pa = {n.get("target"): n for n in na if n.get("op") == "placeholder"}
    out = []
    for n in nb:
        if n.get("op") != "placeholder":
            continue
        t = n.get("target")
        if n.get("dtype") in ("SymInt", "SymFloat", "SymBool") and t not in pa:
            out.append(f"a new symbolic size is a graph input: {n.get('value') or t}")
            continue
        a = pa.get(t)
        if a is None:
            continue
        sa, sb = a.get("shape") or [], n.get("shape") or []
        if len(sa) == len(sb):
            for i, (x, y) in enumerate(zip(sa, sb)):
                if x == y:
                    continue
                xd, yd = str(x).isdigit(), str(y).isdigit()
                if xd and not yd:
                    out.append(f"a size became symbolic: {t}.size()[{i}] was {x}, now {y}")
                elif yd and not xd:
                    out.append(f"a size was specialized: {t}.size()[{i}] was {x}, now {y}")
                else:
                    out.append(f"a size changed: {t}.size()[{i}] was {x}, now {y}")
        elif sa != sb:
            out.append(f"the rank changed: {t} was {_listed(sa)}, now {_listed(sb)}")
        if a.get("dtype") != n.get("dtype"):
            out.append(f"a dtype changed: {t} was {a.get('dtype')}, now {n.get('dtype')}")
        if a.get("device") != n.get("device"):
            out.append(f"a device changed: {t} was {a.get('device')}, now {n.get('device')}")
    return out


_NODE_NUMBER = re.compile(r"(?<=[A-Za-z])_\d+\b")
#: AOT graph texts longer than this many lines are compared, not diffed line by line
AOT_DIFF_LINES = 5000


def diff_aot_graphs(ga: dict[str, str], gb: dict[str, str]) -> list[Change]:
    """The AOT graphs (``aot_joint_graph``, ``aot_forward_graph``, ...) both stops hold whose text
    differs once node numbering (``add_1``, ``primals_3``) is replaced: one change each, with a
    unified diff of the normalized texts (under :data:`AOT_DIFF_LINES` lines)."""
    out = []
    for name in ("joint", "inference", "forward", "backward"):
        a, b = ga.get(name), gb.get(name)
        if not a or not b or a == b:
            continue
        na, nb = _NODE_NUMBER.sub("_#", a), _NODE_NUMBER.sub("_#", b)
        if na == nb:
            continue
        la, lb = na.split("\n"), nb.split("\n")
        if max(len(la), len(lb)) > AOT_DIFF_LINES:
            out.append(Change("changed", f"AOT {name} graph", None, f"text differs ({len(la)} -> {len(lb)} lines; "
                              "too long to diff here: the nodes above say what changed)"))
            continue
        udiff = "\n".join(difflib.unified_diff(la, lb, f"A aot_{name}_graph", f"B aot_{name}_graph", lineterm="", n=1))
        n = sum(1 for ln in udiff.split("\n") if ln[:1] in "+-" and ln[:3] not in ("+++", "---"))
        out.append(Change("changed", None, f"AOT {name} graph", f"text differs: {n} lines (node numbering ignored)",
                          text=udiff))
    return out
