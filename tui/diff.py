"""Diff two compiled graphs level by level, top-down (issue 21): why it recompiled, the Dynamo graph,
the post-grad graph, IR buffers, scheduler nodes, kernels and timings.  No Textual, no torch: it reads
the session's messages only, so it works on ``--open`` sessions on a laptop.

The contract: :func:`diff_graphs` takes two :class:`Graph` (its stops by stage, its timing run, its
guards, its session's guards and header) and returns a :class:`GraphDiff`, one :class:`Level` per
level in the order a compile passes them; a level says ``changed`` and lists :class:`Change` items
(added / removed / changed, each naming the item in A and in B and the stage whose pane shows it),
or says why it could not be compared (``missing``).  :func:`render` prints it as plain text (what
``inductor-step diff --headless`` and the report print); :func:`pair_graphs` pairs the graphs of two
sessions (by compile id and kind, then by content).

Where each comparison comes from:

- why: the later graph's ``recompile_reasons`` (Dynamo's ``recompile_reasons`` of the dynamo stop:
  ``"0/0: tensor 'x' size mismatch at index 0. expected 8, actual 16"``), the guard of the named
  compile that failed (from its ``guards`` message, ``dynamo_cpp_guards_str``) with the user line
  Dynamo wrote after it (guard provenance, ``# code  # file:line in fn``), and the specializations
  read from the Dynamo graphs' placeholders (a size that became symbolic or was specialized, a dtype),
  and how each was compiled (the dynamo stops' ``compiled_with``: torch.compile's mode, options, dynamic,
  fullgraph, backend and the non-default Inductor config, tui.modes.compiled_with_changes);
- Dynamo and post-grad graphs: the stops' ``graph.nodes`` / ``post_grad.nodes`` aligned with
  :class:`difflib.SequenceMatcher` over (op, target), then compared by shape, dtype and device;
- IR buffers: the lowering stop's ``buffers`` aligned over (IR type, kind, reduction type, the op
  names of their origins), compared by ranges, reduction ranges, size and dtype;
- scheduler nodes: the scheduling stop's ``after`` (fused nodes), related through the buffer
  alignment: a node whose buffers went to several nodes was split, several whose buffers went to
  one were merged;
- kernels: the codegen stop's ``kernels`` matched by normalized source (the kernel's own name and
  buffer / argument numbering replaced), then by name stem, then by similarity; a unified diff
  (difflib) of the normalized sources for the changed ones;
- timings: the ``run`` messages (ms, as the tracer measured them), per graph and per matched kernel.
"""

from __future__ import annotations

import difflib
import functools
import os
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from inductor_step.tracer.protocol import VARIANT_SEP, split_part
from inductor_step.tui.modes import compiled_with_changes

#: (level key, title, the stage whose pane shows its items), top-down
LEVELS: tuple[tuple[str, str, str], ...] = (
    ("why", "why it recompiled", "dynamo"),
    ("dynamo", "Dynamo graph", "dynamo"),
    ("post_grad", "AOT/post-grad graphs", "aot"),
    ("buffers", "IR buffers", "lowering"),
    ("scheduling", "scheduler nodes", "scheduling"),
    ("kernels", "kernels", "codegen"),
    ("timing", "timings", "run"),
)

#: a graph time that moved by more than this fraction counts as a change
TIME_CHANGE = 0.10
#: kernels left unmatched by source and name are compared each with each (similarity) only up to
#: this many pairs; beyond, they are reported added and removed
SIMILAR_PAIRS = 2500


@dataclass
class Graph:
    """One compiled graph as the diff reads it: ``key`` (``"[0/1] forward"``), ``stops`` (stage ->
    stop message), ``run`` (its latest ``run`` message, None when not timed), ``guards`` (its
    compile's ``dynamo_cpp_guards_str``), ``all_guards`` (compile id -> guards text, the session's,
    for the guard a recompile reason names), ``header`` (the session's header), ``label`` (how the
    summary names it, e.g. the session file's name)."""

    key: str
    stops: dict[str, dict[str, Any]]
    run: dict[str, Any] | None = None
    guards: str | None = None
    all_guards: dict[str, str] = field(default_factory=dict)
    header: dict[str, Any] = field(default_factory=dict)
    label: str = ""

    @classmethod
    def from_session(cls, session: Any, key: str, label: str = "") -> "Graph":
        """Graph ``key`` of a :class:`inductor_step.tui.session.Session` (stops parsed on demand)."""
        stops = {}
        for stage in ("dynamo", "aot", "lowering", "scheduling", "loopbody", "codegen"):
            s = session.stop_for(key, stage)
            if s is not None:
                stops[stage] = s
        cid = key.split(" ", 1)[0]
        return cls(key=key, stops=stops, run=session.runs.get(key), guards=session.guards.get(cid),
                   all_guards=dict(session.guards), header=dict(session.header), label=label)

    @property
    def compile_id(self) -> str:
        return self.key.split(" ", 1)[0]

    @property
    def name(self) -> str:
        return f"{self.label} {self.key}".strip()


@dataclass
class Change:
    """One item that differs: ``kind`` is ``added`` (only in B), ``removed`` (only in A) or ``changed``;
    ``a`` / ``b`` name the item in A / B (an FX node, ``buf3``, ``op0_op1``, a kernel), ``what`` says
    what changed in one line, ``text`` is the longer detail (a unified diff for a kernel),
    ``buffers`` the IR buffers of B it stands for (to open it in its pane)."""

    kind: str
    a: str | None
    b: str | None
    what: str
    text: str = ""
    buffers: list[str] = field(default_factory=list)

    @property
    def mark(self) -> str:
        return {"added": "+", "removed": "-", "changed": "~"}.get(self.kind, "!")

    @property
    def name(self) -> str:
        if self.a and self.b and self.a != self.b:
            return f"{self.a} -> {self.b}"
        return self.b or self.a or ""


@dataclass
class Level:
    """One level of the diff: ``key`` and ``title`` (see :data:`LEVELS`), ``stage`` (the pane that
    shows its items), ``changes``, ``notes`` (lines about the level as a whole: the failed guard,
    a graph time and its delta), ``missing`` (why it was not compared; empty when it was)."""

    key: str
    title: str
    stage: str
    changes: list[Change] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    missing: str = ""
    #: changed even without item changes (a size that became symbolic, a graph time that moved)
    flagged: bool = False
    #: the items are listed for reading (every kernel's time), only ``flagged`` makes it a change
    informational: bool = False

    @property
    def changed(self) -> bool:
        return self.flagged if self.informational else bool(self.changes) or self.flagged

    def summary(self) -> str:
        """``"2 changed, 1 added"``, ``"no change"`` or ``"not compared: <why>"``."""
        if self.missing:
            return f"not compared: {self.missing}"
        if self.informational:
            return f"moved > {100 * TIME_CHANGE:.0f}%" if self.flagged else f"within {100 * TIME_CHANGE:.0f}%"
        if not self.changes:
            return "changed" if self.flagged else "no change"
        return ", ".join(f"{v} {k}" for k, v in self.counts.items() if v)

    @functools.cached_property
    def counts(self) -> dict[str, int]:
        """How many changes of each kind (counted once, when the level is complete)."""
        n = {"changed": 0, "added": 0, "removed": 0}
        for c in self.changes:
            n[c.kind] = n.get(c.kind, 0) + 1
        return n


@dataclass
class GraphDiff:
    """Two graphs' diff: ``a`` and ``b`` (their names), ``levels`` top-down, ``kernel_pairs``
    (kernel of A -> kernel of B, for the ones matched)."""

    a: str
    b: str
    levels: list[Level]
    kernel_pairs: dict[str, str] = field(default_factory=dict)
    #: said at the top, before any level (issue 32): a variant compiled static from a dynamic graph, timings
    #: judged not reliable or a machine that moved between the two timings
    notes: list[str] = field(default_factory=list)

    def level(self, key: str) -> Level:
        return next(lv for lv in self.levels if lv.key == key)

    @property
    def changed_levels(self) -> list[Level]:
        return [lv for lv in self.levels if lv.changed or lv.missing]


# --------------------------------------------------------------------------- guards

_GUARD = re.compile(r"^(?P<indent>[| ]*)\+- (?P<kind>[A-Z_]+)(?::\s*(?P<rest>.*))?$")
_MANAGER = re.compile(r"^(?P<indent>[| ]*)\+- GuardManager: source=(?P<source>.*?), accessed_by=")
_WHERE = re.compile(r"#\s+(?P<where>[^#]*?\S+\.py:\d+ in [\w<>.]+)(?P<extra>.*)$")
_REASON = re.compile(r"^\s*(?P<cid>\d+/\d+(?:_\d+)?):\s*(?P<text>.*)$", re.S)


@dataclass
class Guard:
    """One guard of ``dynamo_cpp_guards_str``: ``kind`` (``TENSOR_MATCH``), ``expr`` (the check),
    ``source`` (what it guards, ``L['x']``, from its GuardManager), ``code`` (the user's code Dynamo
    wrote after it), ``where`` (``path:line in fn``; empty when Dynamo wrote none), ``line``
    (1-based, in the guards text)."""

    kind: str
    expr: str
    source: str
    code: str
    where: str
    line: int

    @property
    def user_line(self) -> str:
        """``where`` and the code, as one line (``path:8 in f: return x * w``)."""
        if not self.where:
            return ""
        return self.where + (f": {self.code}" if self.code else "")


def parse_guards(text: str | None) -> list[Guard]:
    """The guards of a ``guards`` message's text (one per ``+- KIND: ...`` line; GuardManager lines
    give the source of the guards under them)."""
    out: list[Guard] = []
    sources: list[tuple[int, str]] = []
    for i, line in enumerate((text or "").split("\n")):
        m = _MANAGER.match(line)
        if m:
            depth = len(m.group("indent"))
            while sources and sources[-1][0] >= depth:
                sources.pop()
            sources.append((depth, m.group("source")))
            continue
        m = _GUARD.match(line)
        if not m or m.group("kind") in ("RootGuardManager",):
            continue
        depth = len(m.group("indent"))
        while sources and sources[-1][0] >= depth:
            sources.pop()
        rest = m.group("rest") or ""
        expr, code, where = rest, "", ""
        if "#" in rest:
            expr, _, comment = rest.partition("  #")
            if not _ and "#" in rest:  # a single space before the comment
                expr, _, comment = rest.partition(" #")
            comment = "#" + comment
            w = _WHERE.search(comment)
            if w:
                where = w.group("where").strip()
                code = comment[:w.start()].strip().lstrip("#").strip()
                if "#" in where:  # '# code  # where': the first part is the code
                    code, where = where.rsplit("#", 1)
                    code, where = code.strip(), where.strip()
            else:
                code = comment.lstrip("#").strip()
        out.append(Guard(m.group("kind"), expr.strip(), sources[-1][1] if sources else "", code, where, i + 1))
    return out


def split_reason(reason: str) -> tuple[str | None, str]:
    """A recompile reason as Dynamo writes it (``"0/0: tensor 'x' size mismatch ..."``): the compile
    id whose guards failed (``"[0/0]"``) and the reason's text; (None, reason) when it names none."""
    m = _REASON.match(str(reason))
    if not m:
        return None, str(reason).strip()
    return f"[{m.group('cid')}]", m.group("text").strip()


def failed_guards(reason: str, guards: list[Guard]) -> list[Guard]:
    """The guards a recompile reason's text is about: the guards whose check it quotes, else the
    tensor guards (``TENSOR_MATCH``) of the local it names (``tensor 'x'`` -> ``L['x']``), else
    every guard on that source."""
    text = split_reason(reason)[1]
    quoted = [g for g in guards if g.expr and (g.expr in text or (len(text) > 8 and text in g.expr))]
    if quoted:
        return quoted
    names = re.findall(r"'([^']+)'", text)
    srcs = re.findall(r"([LG]\[[^\]]+\](?:\[[^\]]+\]|\.\w+)*)", text)
    for n in names:
        srcs += [f"L['{n}']", f"G['{n}']"]
    for want in srcs:
        on = [g for g in guards if g.source == want or g.source.startswith(want + ".") or want in g.expr]
        tm = [g for g in on if g.kind == "TENSOR_MATCH"]
        if tm or on:
            return tm or on
    return []


def later_failures(compile_id: str, dynamo_stops: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """(the later compile id, the reason) for every recompile reason of ``dynamo_stops`` that names
    compile ``compile_id``'s guards (``"[0/0]"``)."""
    out = []
    for s in dynamo_stops:
        for r in s.get("recompile_reasons") or []:
            cid, text = split_reason(r)
            if cid == compile_id:
                out.append((str(s.get("compile_id")), text))
    return out


def guard_list(compile_id: str, guards_text: str | None, dynamo_stops: Sequence[dict[str, Any]],
               script_dir: str | None = None, max_chars: int = 1_000_000) -> str:
    """The Dynamo pane's guard list for compile ``compile_id``: each guard (kind, check) with the user
    line that installed it (Dynamo's guard provenance) and, for the ones that failed in a later
    recompile (a later dynamo stop's ``recompile_reasons`` naming this compile), FAILED, where and
    why.  Commented lines (``# ``), failed guards first.  Guards over ``max_chars`` (a large graph's
    run to megabytes) list only the failed ones."""
    failures = later_failures(compile_id, dynamo_stops)
    text = guards_text or ""
    big = len(text) > max_chars
    if big:  # a large graph's guards are megabytes: list only the lines a failure names
        names = {n for _c, r in failures for n in re.findall(r"'([^']+)'", r)}
        keep = [ln if any(f"'{n}'" in ln for n in names) or "GuardManager: source=" in ln else ""
                for ln in text.split("\n")] if names else []
        text = "\n".join(keep)
    guards = parse_guards(text)
    if not guards:
        return (f"# ---- the guards of {compile_id} are {len(guards_text or '') // 1000} KB: listed with their user "
                "lines only when under 1 MB (the tree below has them) ----") if big else ""
    failed: dict[int, list[tuple[str, str]]] = {}
    for cid, why in failures:
        for g in failed_guards(why, guards):
            failed.setdefault(g.line, []).append((cid, why))
    if big:
        guards = [g for g in guards if g.line in failed]
    head = [f"# ---- {len(guards)} {'failed ' if big else ''}guards of {compile_id}, each with the user line "
            "that installed it"
            + (f"; {len(failed)} failed in a later recompile" if failed else "; none failed in a later recompile")
            + " ----"]
    lines: list[str] = []
    for g in sorted(guards, key=lambda g: (g.line not in failed, g.line)):
        where = _short_where(g.where, script_dir) if g.where else "(no user line: installed by Dynamo itself)"
        expr = g.expr if len(g.expr) <= 160 else g.expr[:157] + "..."
        if g.line in failed:
            for cid, text in failed[g.line]:
                lines.append(f"# FAILED in {cid}: {g.kind} {expr}")
                lines.append(f"#     why: {text}")
            lines.append(f"#     installed by: {where}" + (f": {g.code}" if g.code else ""))
        else:
            lines.append(f"# {g.kind} {expr}  <- {where}")
    return "\n".join(head + lines)


def _short_where(where: str, script_dir: str | None) -> str:
    from inductor_step.tui.paths import short_path  # noqa: PLC0415 - the one path rule (issue 33.3)

    return short_path(where, script_dir) or where


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


# --------------------------------------------------------------------------- kernels

_NUMBERED = [(re.compile(r"\bbuf\d+\b"), "buf#"), (re.compile(r"\barg\d+_\d+\b"), "arg#"),
             (re.compile(r"\b(primals|tangents|getitem)_\d+\b"), r"\1_#"),
             (re.compile(r"'backend_hash': '[0-9A-Fa-f]+'"), "'backend_hash': '#'")]


def normalize_kernel(k: dict[str, Any]) -> str:
    """A kernel's source with what renumbering changes replaced: its own name (``KERNEL``), buffer and
    argument names (``buf#``, ``arg#``, ``primals_#``) and Triton's backend hash; two kernels that
    compute the same thing normalize to the same text."""
    src = k.get("source") or ""
    name = str(k.get("name") or "")
    if name and "#" not in name:
        src = re.sub(rf"\b{re.escape(name)}\b", "KERNEL", src)
    for rx, rep in _NUMBERED:
        src = rx.sub(rep, src)
    return src


def _kernel_stem(name: str) -> str:
    return re.sub(r"(_\d+|#\d+)$", "", name)


def match_kernels(ka: list[dict[str, Any]], kb: list[dict[str, Any]]) -> tuple[list[tuple[int, int, str]], list[int], list[int]]:
    """Kernels of A and B paired by what they compute: (index in A, index in B, how) with how
    ``same`` (equal normalized source), ``name`` (the same name stem and backend, source differs)
    or ``similar`` (the most similar source of the same backend, ratio >= 0.6); and A's and B's
    indices left unpaired."""
    na, nb = [normalize_kernel(k) for k in ka], [normalize_kernel(k) for k in kb]
    left_a, left_b = list(range(len(ka))), list(range(len(kb)))
    pairs: list[tuple[int, int, str]] = []

    def take(key_a: list[Any], key_b: list[Any], how: str) -> None:
        """Pair A's and B's kernels with equal keys, in order (a multiset match: O(n))."""
        free: dict[Any, list[int]] = {}
        for j in left_b:
            free.setdefault(key_b[j], []).append(j)
        for i in list(left_a):
            js = free.get(key_a[i])
            if js:
                j = js.pop(0)
                pairs.append((i, j, how))
                left_a.remove(i)
                left_b.remove(j)

    take([(k.get("backend"), n) for k, n in zip(ka, na)], [(k.get("backend"), n) for k, n in zip(kb, nb)], "same")
    take([(k.get("backend"), _kernel_stem(k["name"])) for k in ka],
         [(k.get("backend"), _kernel_stem(k["name"])) for k in kb], "name")
    if len(left_a) * len(left_b) > SIMILAR_PAIRS:
        return pairs, left_a, left_b  # too many to compare each with each: the rest are added / removed
    lines_a = {i: na[i].split("\n") for i in left_a}
    lines_b = {j: nb[j].split("\n") for j in left_b}
    for i in list(left_a):
        best, score = None, 0.6
        for j in left_b:
            if ka[i].get("backend") != kb[j].get("backend"):
                continue
            sm = difflib.SequenceMatcher(None, lines_a[i], lines_b[j], autojunk=False)
            if sm.real_quick_ratio() < score or sm.quick_ratio() < score:
                continue
            r = sm.ratio()
            if r >= score:
                best, score = j, r
        if best is not None:
            pairs.append((i, best, "similar"))
            left_a.remove(i)
            left_b.remove(best)
    return pairs, left_a, left_b


def diff_kernels(ka: list[dict[str, Any]], kb: list[dict[str, Any]], links_b: dict[str, Any]) -> tuple[list[Change], dict[str, str], int]:
    """Kernels changed (a unified diff of the normalized sources), added and removed; the kernel map
    A -> B; how many are the same (renumbering is no change)."""
    pairs, left_a, left_b = match_kernels(ka, kb)
    kl = (links_b or {}).get("kernels") or {}
    out: list[Change] = []
    kmap: dict[str, str] = {}
    same = 0
    for i, j, how in pairs:
        a, b = ka[i]["name"], kb[j]["name"]
        kmap[a] = b
        if how == "same":
            same += 1
            continue
        sa, sb = normalize_kernel(ka[i]), normalize_kernel(kb[j])
        udiff = "\n".join(difflib.unified_diff(sa.split("\n"), sb.split("\n"), f"A {a}", f"B {b}", lineterm="", n=2))
        plus = sum(1 for ln in udiff.split("\n") if ln.startswith("+") and not ln.startswith("+++"))
        minus = sum(1 for ln in udiff.split("\n") if ln.startswith("-") and not ln.startswith("---"))
        out.append(Change("changed", a, b, f"source changed: -{minus} +{plus} lines"
                          + (" (matched by similarity)" if how == "similar" else ""), text=udiff,
                          buffers=list((kl.get(b) or {}).get("buffers") or kb[j].get("buffers") or [])))
    for i in left_a:
        out.append(Change("removed", ka[i]["name"], None, f"{ka[i].get('backend')} kernel",
                          text=ka[i].get("source") or ""))
    for j in left_b:
        out.append(Change("added", None, kb[j]["name"], f"{kb[j].get('backend')} kernel", text=kb[j].get("source") or "",
                          buffers=list((kl.get(kb[j]["name"]) or {}).get("buffers") or kb[j].get("buffers") or [])))
    return out, kmap, same


# --------------------------------------------------------------------------- timings

def _delta(a: float | None, b: float | None) -> str:
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return f"{_ms(a)} -> {_ms(b)}"
    pct = f" ({100 * (b - a) / a:+.0f}%)" if a else ""
    return f"{a:.4f} -> {b:.4f} ms, {b - a:+.4f} ms{pct}"


def _ms(v: Any) -> str:
    return f"{v:.4f} ms" if isinstance(v, (int, float)) else "-"


def _kernel_times(run: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in run.get("kernels") or []:
        if isinstance(k.get("median_ms"), (int, float)):
            out[k["name"]] = out.get(k["name"], 0.0) + k["median_ms"]
    return out


def diff_timing(ra: dict[str, Any] | None, rb: dict[str, Any] | None, kmap: dict[str, str], level: Level) -> None:
    """Fill ``level`` with the graph times (compiled, eager, kernel sum; ms from the ``run``
    messages) and each kernel's median (summed over its calls) in A and B, with the deltas."""
    for side, r in (("A", ra), ("B", rb)):
        if r is None:
            level.missing = f"{side} was not timed (r in the app, or --headless --run)"
            return
        if r.get("error"):
            level.missing = f"timing {side} failed: {r['error']}"
            return
    assert ra is not None and rb is not None
    from inductor_step.tui.trust import figure_tag  # noqa: PLC0415 - issue 32: each side's verdict beside it

    for label, k, w in (("compiled graph", "compiled_ms", "compiled"), ("eager", "eager_ms", "eager"),
                        ("sum of kernel times", "kernel_sum_ms", "kernels")):
        tags = [f"{side} {t.strip()}" for side, r in (("A", ra), ("B", rb)) if (t := figure_tag(r, w))
                and "NOT RELIABLE" in t]
        level.notes.append(f"{label}: {_delta(ra.get(k), rb.get(k))}" + (f"  [{'; '.join(tags)}]" if tags else ""))
    from inductor_step.tui.whatif import judgement_lines  # noqa: PLC0415

    level.notes += [n for n in judgement_lines(ra, rb, ("A", "B")) if not n.startswith(("A timing", "B timing"))]
    for side, r in (("A", ra), ("B", rb)):  # issue 23: the times above leave the graph's collectives out
        if r.get("collectives_stubbed"):
            level.notes.append(f"{side}: {len(r['collectives_stubbed'])} collective call(s), not timed: left out of "
                               "these times (each ran as a local stand-in; timing one needs every rank running it)")
    from inductor_step.tui.whatif import numerics_lines  # noqa: PLC0415 - B a what-if variant of A (issue 22)

    level.notes += numerics_lines(rb)
    level.informational = True
    for k in ("compiled_ms", "kernel_sum_ms"):
        ca, cb = ra.get(k), rb.get(k)
        if isinstance(ca, (int, float)) and isinstance(cb, (int, float)) and ca and abs(cb - ca) / ca > TIME_CHANGE:
            level.flagged = True
    if ra.get("device") != rb.get("device"):
        level.notes.append(f"devices differ: {ra.get('device')} -> {rb.get('device')}")
    ta, tb = _kernel_times(ra), _kernel_times(rb)
    for a, ms in ta.items():
        b = kmap.get(a)
        if b in tb:
            level.changes.append(Change("changed", a, b, _delta(ms, tb[b]), buffers=[]))
        else:
            level.changes.append(Change("removed", a, None, f"{ms:.4f} ms in A"))
    for b, ms in tb.items():
        if b not in {kmap.get(a) for a in ta}:
            level.changes.append(Change("added", None, b, f"{ms:.4f} ms in B"))
    level.changes.sort(key=lambda c: -abs(_num_delta(c, ta, tb)))


def _num_delta(c: Change, ta: dict[str, float], tb: dict[str, float]) -> float:
    return tb.get(c.b or "", 0.0) - ta.get(c.a or "", 0.0)


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


def diff_graphs(a: Graph, b: Graph, same_session: bool = True) -> GraphDiff:
    """The level-by-level diff of graph ``a`` (the earlier) and ``b``; ``same_session`` False when
    they come from two recordings (the "why" level then lists what differs between the sessions'
    headers instead of a failed guard of A)."""
    levels = {k: Level(k, title, stage) for k, title, stage in LEVELS}
    da, db = a.stops.get("dynamo") or {}, b.stops.get("dynamo") or {}
    nodes_a = (da.get("graph") or {}).get("nodes") or []
    nodes_b = (db.get("graph") or {}).get("nodes") or []

    # why
    why = levels["why"]
    script_dir = os.path.dirname(str(b.header.get("script") or "")) or None
    for r in db.get("recompile_reasons") or []:
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
        why.changes.append(Change("changed", None, f"{cid or '?'} {src}".strip(), what, text="\n".join(detail)))
    if not same_session:
        why.title = "why they differ"
        why.notes += _header_changes(a.header, b.header)
        if why.notes:
            why.flagged = True
    for s in specializations(nodes_a, nodes_b):
        why.notes.append(s)
        why.flagged = True
    if not why.changes and not why.notes and same_session:
        why.notes.append(f"{b.key} has no recompile reason: not a recompile of {a.key}")
    for s in compiled_with_changes(da.get("compiled_with"), db.get("compiled_with")):  # issue 27
        why.notes.append(f"compiled differently: {s}")
        why.flagged = True

    # Dynamo and post-grad graphs
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

    # IR buffers and scheduler nodes
    buf_map: dict[str, str] = {}
    lb, sa_, sb_ = levels["buffers"], a.stops.get("lowering"), b.stops.get("lowering")
    if sa_ is None or sb_ is None:
        lb.missing = f"{'A' if sa_ is None else 'B'} has no lowering stop"
    else:
        lb.changes, buf_map = diff_buffers(sa_.get("buffers") or [], sb_.get("buffers") or [])
    ls, sa_, sb_ = levels["scheduling"], a.stops.get("scheduling"), b.stops.get("scheduling")
    if sa_ is None or sb_ is None:
        ls.missing = f"{'A' if sa_ is None else 'B'} has no scheduling stop"
    else:
        ls.changes = diff_scheduler(sa_.get("after") or [], sb_.get("after") or [], buf_map)
        ls.notes.append(f"scheduler nodes after fusion: {len(sa_.get('after') or [])} -> {len(sb_.get('after') or [])}")

    # kernels
    kmap: dict[str, str] = {}
    lk, sa_, sb_ = levels["kernels"], a.stops.get("codegen"), b.stops.get("codegen")
    if sa_ is None or sb_ is None:
        lk.missing = f"{'A' if sa_ is None else 'B'} has no codegen stop"
    else:
        ka, kb = sa_.get("kernels") or [], sb_.get("kernels") or []
        lk.changes, kmap, same = diff_kernels(ka, kb, sb_.get("links") or {})
        lk.notes.append(f"{len(ka)} -> {len(kb)} kernels; {same} compute the same (normalized source)")

    diff_timing(a.run, b.run, kmap, levels["timing"])
    from inductor_step.tui.whatif import judgement_lines, static_variant_note  # noqa: PLC0415 - issue 32

    top = [n for n in [static_variant_note(b.key, a.stops, b.stops)] if n]
    if a.run and b.run and not a.run.get("error") and not b.run.get("error"):
        top += [n for n in judgement_lines(a.run, b.run, ("A", "B")) if "NOT RELIABLE" in n or "machine moved" in n]
    return GraphDiff(a.name, b.name, [levels[k] for k, _t, _s in LEVELS], kmap, notes=top)


# --------------------------------------------------------------------------- pairing

def default_partner(graphs: Sequence[str], key: str) -> str | None:
    """The graph to diff ``key`` with: for a recompile ``[f/n]`` (n > 0) of a kind, ``[f/n-1]`` of
    that kind (so ``[0/1] forward`` -> ``[0/0] forward``); otherwise the next recompile of the same
    frame and kind, else the nearest other graph of that kind, else any other graph."""
    # the kind with its part and subgraph (protocol.graph_key): a branch's partner is the same branch
    m = re.match(r"\[(\d+)/(\d+)\] (\w+(?: #\d+)?(?: › [^·]+?)?)(?: · |$)", key)
    others = [g for g in graphs if g != key]
    if VARIANT_SEP in key and key.split(VARIANT_SEP, 1)[0] in graphs:  # a what-if variant: its original
        return key.split(VARIANT_SEP, 1)[0]
    if not others:
        return None
    if m:
        f, n, kind = m.group(1), int(m.group(2)), m.group(3)
        for want in ([f"[{f}/{n - 1}] {kind}"] if n > 0 else []) + [f"[{f}/{n + 1}] {kind}"]:
            if want in graphs:
                return want
        same_kind = [g for g in others if g.endswith(" " + kind)]
        base = split_part(kind)[0]
        same_kind = same_kind or [g for g in others if split_part(g.split(" ", 1)[-1])[0] == base]
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
        kind = g.split(" ", 1)[-1]
        sig = _dynamo_sig(sa, g)
        best, score = None, 0.5
        for h in left_b:
            if h.split(" ", 1)[-1] != kind:
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
            d = diff_graphs(Graph.from_session(sa, ka, label_a), Graph.from_session(sb, kb, label_b), same_session=False)
        out.append((ka, kb, how, d))
    return out


# --------------------------------------------------------------------------- text

def level_lines(lv: Level, diffs: bool = True) -> list[str]:
    """A level as plain text lines: its notes, then each change (``~ a -> b: what``), with the
    change's longer text (a kernel's unified diff) indented under it when ``diffs``."""
    out = [f"  {n}" for n in lv.notes]
    for c in lv.changes:
        out.append(f"  {c.mark} {c.name}: {c.what}")
        if c.text and ((diffs and c.kind == "changed") or lv.key == "why"):
            out += ["      " + ln for ln in c.text.split("\n")]
    return out


def render(d: GraphDiff, diffs: bool = True) -> str:
    """The plain-text summary of one graph diff, top-down; unchanged levels are named on one line."""
    lines = [f"diff  A: {d.a}  ->  B: {d.b}"] + [f"! {n}" for n in d.notes]
    same = []
    for lv in d.levels:
        if not lv.changed and not lv.missing:
            same.append(lv.title)
            continue
        lines.append(f"== {lv.title}: {lv.summary()} ==")
        if not lv.missing:
            lines += level_lines(lv, diffs)
    if same:
        lines.append("no change: " + ", ".join(same))
    return "\n".join(lines)


def render_sessions(pairs: list[tuple[str | None, str | None, str, GraphDiff | None]], label_a: str, label_b: str,
                    diffs: bool = True) -> str:
    """The plain-text summary of two sessions' diff: the pairing, then each pair's diff."""
    lines = [f"A: {label_a}", f"B: {label_b}", "graphs paired:"]
    for ka, kb, how, _d in pairs:
        lines.append(f"  {ka or '-':<22} <-> {kb or '-':<22} {how}")
    for _ka, _kb, _how, d in pairs:
        if d is not None:
            lines += ["", render(d, diffs)]
    return "\n".join(lines)


__all__ = ["Change", "Graph", "GraphDiff", "Guard", "LEVELS", "Level", "default_partner", "diff_graphs",
           "diff_files", "diff_sessions", "failed_guards", "guard_list", "normalize_kernel", "pair_graphs", "parse_guards",
           "render", "render_recompiles", "render_sessions", "specializations", "split_reason"]


# --------------------------------------------------------------------------- files

def session_of(messages: Sequence[dict[str, Any]]) -> Any:
    """A :class:`inductor_step.tui.session.Session` holding ``messages``."""
    from inductor_step.tui.session import Session  # noqa: PLC0415

    s = Session()
    for m in messages:
        s.add(m)
    return s


def diff_files(path_a: str, path_b: str, diffs: bool = True) -> str:
    """The plain-text summary of two recorded sessions' diff (``inductor-step diff --headless A B``);
    one session file given twice diffs its own graphs: each recompile against its default partner.
    Raises OSError / ValueError as :func:`inductor_step.tui.session.load_session` does."""
    from inductor_step.tui.session import load_session  # noqa: PLC0415

    sb = session_of(load_session(path_b))
    if os.path.abspath(path_a) == os.path.abspath(path_b):
        return render_recompiles(sb, os.path.basename(path_b), diffs)
    sa = session_of(load_session(path_a))
    pairs = diff_sessions(sa, sb, os.path.basename(path_a), os.path.basename(path_b))
    from inductor_step.tui.compile_time import diff_text  # noqa: PLC0415 - issue 30: compile time per stage

    ctime = diff_text(sa, sb)
    return render_sessions(pairs, path_a, path_b, diffs) + (f"\n\n{ctime}" if ctime else "")


def render_recompiles(s: Any, label: str = "", diffs: bool = True) -> str:
    """Every recompile of one session (a graph ``[f/n]``, n > 0) against its default partner, as text;
    a line saying there is none otherwise."""
    out = []
    for g in s.graphs:
        m = re.match(r"\[\d+/(\d+)\]", g)
        if m and int(m.group(1)) > 0:
            p = default_partner(s.graphs, g)
            if p:
                out.append(render(diff_graphs(Graph.from_session(s, p), Graph.from_session(s, g)), diffs))
    return "\n\n".join(out) if out else f"{label}: no recompiles to diff (ctrl+p in the app diffs any two graphs)"
