"""The compile's own time as data (no Textual, no torch): per graph and stage, the three rankings
(graphs, kernels, user lines), the headless summary line, the report's section and the diff's rows, from a
session's ``compile_time`` messages (tracer.compile_time sends one per finished compile).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from inductor_step.session.format import COMPILE_STAGES, GraphKey, graph_key
from inductor_step.session.format.compile_time import CompileTimeKernel
from inductor_step.session.format.records import Record, as_record
from inductor_step.session.format.types import LinkFxNode, Links

LABELS = dict(COMPILE_STAGES)
#: the key of a frame's own time when DDPOptimizer compiled it in parts: ``"[4/0] frame"``
FRAME = " frame"
FRAME_NOTE = "the frame's own time outside its parts: Dynamo's tracing, DDPOptimizer's split, the guards"
#: a frame Dynamo traced that gave Inductor no graph (pane T listed it as a graph g did not have)
NO_GRAPH_NOTE = "Dynamo traced this frame and made no Inductor graph of it (nothing to compile: it runs as Python)"
ORDER = [s for s, _ in COMPILE_STAGES]
INLINED_NOTE = ("inlined: Inductor lowers this subgraph inside its parent's node (flex attention's score / mask "
                "mod into the attention kernel): that time is the parent's")
#: the stages an FX graph cache hit skips (Inductor loads the compiled module instead), and an
#: AOTAutograd cache hit skips too (it also skips AOTAutograd's trace and the partitioner)
_FX_SKIPS = ("post_grad", "lowering", "scheduling", "codegen")
_AOT_SKIPS = ("aot", "partition") + _FX_SKIPS
#: a graph's stage at our stops -> the compile-time stages that finished by then (tui/bars.py)
AT_STOP = {"dynamo": ("dynamo", "pre_grad", "guards"), "aot": ("aot", "partition", "post_grad"),
           "lowering": ("lowering", "autotune"), "scheduling": ("scheduling",), "loopbody": (),
           "codegen": ("codegen", "kernels", "load")}


@dataclass(frozen=True)
class CacheVerdict:
    """One of torch's cache verdicts on a graph's compile (a compile_time message's ``cache``, tracer.compile_time):
    ``cache`` which (``"fx_graph"``, ``"aot_autograd"``, ``" (backward)"`` appended for a backward's), ``status``
    (``"hit"``, ``"miss"``, ``"bypass"``, ...), ``reason`` torch's why ("" when it gave none)."""

    cache: str
    status: str | None
    reason: str = ""


@dataclass(frozen=True)
class FrameTraced:
    """The frame Dynamo traced for a graph (a compile_time message's ``frame``): ``function``, ``file``, ``line``
    (the frame's first line), ``tracing_ms`` (ms) Dynamo's bytecode tracing of it (torch's dynamo_timed events);
    None where not recorded."""

    function: str | None = None
    file: str | None = None
    line: int | None = None
    tracing_ms: float | None = None


@dataclass
class GraphTime:
    """The compile's own time of one graph (key ``"[0/0] forward"``): its compile_time messages added up.
    Times in ms; ``total_ms`` is the sum of ``stages`` (torch's event time, minus ``paused_ms`` and ``ours_ms``)."""

    key: str
    total_ms: float = 0.0
    wall_ms: float = 0.0
    paused_ms: float = 0.0
    ours_ms: float = 0.0
    stages: dict[str, float] = field(default_factory=dict)
    events: dict[str, list[list[Any]]] = field(default_factory=dict)
    kernels: list[dict[str, Any]] = field(default_factory=list)
    nodes: dict[str, float] = field(default_factory=dict)
    frame: dict[str, Any] | None = None
    cache: dict[str, dict[str, str]] = field(default_factory=dict)
    compiles: int = 0

    def skipped(self) -> dict[str, str]:
        """Stages a cache hit skipped: stage -> "cache hit (AOTAutograd)" / "cache hit (FX graph)"."""
        out: dict[str, str] = {}
        if any(v.get("status") == "hit" for k, v in self.cache.items() if k.startswith("aot_autograd")):
            out.update({s: "cache hit (AOTAutograd cache)" for s in _AOT_SKIPS})
        elif any(v.get("status") == "hit" for k, v in self.cache.items() if k.startswith("fx_graph")):
            out.update({s: "cache hit (FX graph cache)" for s in _FX_SKIPS})
        return {s: why for s, why in out.items() if not self.stages.get(s)}

    def cache_verdicts(self) -> list[CacheVerdict]:
        """torch's cache verdicts on this graph's compiles, in the order they came."""
        return [CacheVerdict(k, v.get("status"), v.get("reason") or "") for k, v in self.cache.items()]

    def traced(self) -> FrameTraced | None:
        """The frame Dynamo traced (:class:`FrameTraced`), None when no message named it."""
        f = self.frame
        return FrameTraced(f.get("function"), f.get("file"), f.get("line"), f.get("tracing_ms")) if f else None

    def kernel(self, name: str | None) -> Record | None:
        """The first kernel compile named ``name`` (a CompileTimeKernel record: kind, compile_ms (ms), cache,
        source ...), None when there is none."""
        return next((as_record(k, CompileTimeKernel) for k in self.kernels
                     if as_record(k, CompileTimeKernel).name == name), None)

    def named_share(self) -> float:
        """The share of ``total_ms`` under a named stage (not "other"), 0..1."""
        return 1.0 - (self.stages.get("other", 0.0) / self.total_ms) if self.total_ms else 1.0


def graph_times(session: Any) -> dict[str, GraphTime]:
    """Every graph's compile time, in the order its first message came.  ``session`` has ``compile_times``
    (session.store.Store)."""
    out: dict[str, GraphTime] = {}
    by_graph = getattr(session, "by_graph", None)
    ids = {GraphKey.parse(k).compile_id for k in by_graph} if by_graph is not None else None
    for m in getattr(session, "compile_times", None) or []:
        key = f"{m.get('compile_id', '[?]')}{FRAME}" if m.get("frame_own") else graph_key(m)
        if ids is not None and key not in by_graph and m.get("compile_id") not in ids and not any(
                isinstance(v, dict) and v.get("status") == "hit" for v in (m.get("cache") or {}).values()):
            key = f"{m.get('compile_id', '[?]')}{FRAME}"  # no stop and no cache hit: Inductor got no graph
        g = out.setdefault(key, GraphTime(key))
        g.compiles += 1
        for f in ("total_ms", "wall_ms", "paused_ms", "ours_ms"):
            setattr(g, f, getattr(g, f) + float(m.get(f) or 0.0))
        for s, ms in (m.get("stages") or {}).items():
            g.stages[s] = g.stages.get(s, 0.0) + float(ms)
        for s, evs in (m.get("events") or {}).items():
            g.events.setdefault(s, []).extend(evs)
        g.kernels += m.get("kernels") or []
        for n, ms in (m.get("lowering_nodes") or {}).items():
            g.nodes[n] = g.nodes.get(n, 0.0) + float(ms)
        if m.get("frame"):
            g.frame = m["frame"]
        g.cache.update(m.get("cache") or {})
    return out


def no_graph_note(session: Any, key: str) -> str | None:
    """:data:`NO_GRAPH_NOTE` where ``key`` (``"[2/0] frame"``) is a frame whose compile id has no graph in the
    session, else None."""
    cid = GraphKey.parse(key).compile_id
    if not key.endswith(FRAME) or any(GraphKey.parse(k).compile_id == cid for k in getattr(session, "by_graph", {}) or {}):
        return None
    return NO_GRAPH_NOTE


def graph_count(times: dict[str, GraphTime], session: Any) -> str:
    """``"2 graph(s)"``, ``"2 graph(s) and 1 frame(s) with no Inductor graph"``: ``times``' keys that are graphs."""
    none = sum(1 for k in times if no_graph_note(session, k))
    return f"{len(times) - none} graph(s)" + (f" and {none} frame(s) with no Inductor graph" if none else "")


@dataclass
class FrameTime:
    """A compile id whose compile holds several graphs (DDP parts, higher-order op subgraphs, a backward):
    ``total_ms`` and its graphs' keys and ms in the order they came, adding up to it."""

    compile_id: str
    total_ms: float = 0.0
    graphs: list[tuple[str, float]] = field(default_factory=list)

    def text(self) -> str:
        """``[4/0]: 4.78 s = frame 703.0 ms + forward #1 2.29 s + ...``."""
        parts = " + ".join(f"{k[len(self.compile_id) + 1:]} {fmt_time(ms)}" for k, ms in self.graphs)
        return f"{self.compile_id}: {fmt_time(self.total_ms)} = {parts}"


def frame_times(times: dict[str, GraphTime]) -> dict[str, FrameTime]:
    """Per compile id (what-if variants left out), its graphs' compile times, which add up to the compile id's:
    only ids with more than one graph (a forward and its backward, DDP parts, subgraphs)."""
    out: dict[str, FrameTime] = {}
    for key, g in times.items():
        k = GraphKey.parse(key)
        if k.variant:
            continue
        cid = k.compile_id
        f = out.setdefault(cid, FrameTime(cid))
        f.total_ms += g.total_ms
        f.graphs.append((key, g.total_ms))
    return {c: f for c, f in out.items() if len(f.graphs) > 1}


def frame_of(times: dict[str, GraphTime], key: str) -> FrameTime | None:
    """The frame graph ``key`` is part of (:func:`frame_times`), None when it is the frame's only graph."""
    return frame_times(times).get(GraphKey.parse(key).compile_id)


def fmt_time(ms: float | None) -> str:
    """``1.23 s``, ``45.6 ms``, ``0.12 ms``; ``-`` for a missing number."""
    if not isinstance(ms, (int, float)):
        return "-"
    if ms >= 1000:
        return f"{ms / 1000:.2f} s"
    return f"{ms:.1f} ms" if ms >= 1 else f"{ms:.2f} ms"


def stage_rows(g: GraphTime) -> list[tuple[str, str, float | None, str]]:
    """``(stage, label, ms, note)`` in pipeline order: every stage with time, and those a cache hit skipped
    (ms None, note "cache hit (...)"); a subgraph Inductor inlines has a lowering row saying so (``INLINED_NOTE``)."""
    skipped = g.skipped()
    if GraphKey.parse(g.key).subgraph and g.stages and not skipped and not any(g.stages.get(s) for s in _FX_SKIPS[1:]):
        # flex attention's score / mask mods: post-grad passes of their own, then lowered inside the parent's node
        skipped = {"lowering": INLINED_NOTE}
    rows = []
    for s in ORDER:
        if s in skipped:
            rows.append((s, LABELS[s], None, skipped[s]))
        elif g.stages.get(s):
            top = ", ".join(f"{n} {fmt_time(ms)}" for n, ms in sorted(g.events.get(s) or [], key=lambda x: -x[1])[:3])
            rows.append((s, LABELS[s], g.stages[s], top))
    return rows


def bar_times(session: Any, key: str | None) -> dict[str, str]:
    """Each of our stops' stages of graph ``key`` -> its compile time as the stage bar shows it (``"57ms"``,
    ``"1.9s"``, ``"cache hit"``): from the graph's finished compile when it came, else from its latest stop's
    ``compile_ms`` (the time so far, while the compile is paused); {} when neither is there."""
    if not key:
        return {}
    # only the messages of graph ``key`` can add up to its time (graph_times files each under its graph_key or its
    # frame): the bar is drawn again and again, and a session's messages carry every compile's events and kernels
    mine = [m for m in getattr(session, "compile_times", None) or [] if graph_key(m) == key]
    g = graph_times(SimpleNamespace(by_graph=getattr(session, "by_graph", None), compile_times=mine)).get(key) \
        if mine else None
    if g is not None:
        stages, skipped = g.stages, g.skipped()
    else:
        stops = (getattr(session, "by_graph", {}) or {}).get(key) or {}
        latest = max((st for st in stops.values() if st.get("compile_ms")), key=lambda st: st.get("seq", 0),
                     default=None)
        if latest is None:
            return {}
        stages, skipped = latest["compile_ms"], {}
    out = {}
    for stop, parts in AT_STOP.items():
        ms = sum(stages.get(p, 0.0) for p in parts)
        if ms:
            out[stop] = fmt_time(ms).replace(" ", "")
        elif parts and any(p in skipped for p in parts):
            out[stop] = "cache hit"
    return out


@dataclass
class Rank:
    """One row of a ranking: ``what`` it is ("graph", "kernel", "line", "frame"), its label, ms, a note, and
    where Enter goes (``graph`` key, and ``kernel`` name or user ``line`` "file.py:12")."""

    what: str
    label: str
    ms: float | None
    note: str = ""
    graph: str | None = None
    kernel: str | None = None
    line: str | None = None


def rankings(session: Any) -> dict[str, list[Rank]]:
    """The three rankings, slowest first: ``graphs`` (each graph's compile time, its largest stage),
    ``kernels`` (each kernel's compile in the workers, and its cache verdict) and ``lines`` (lowering time
    per user line, rolled up from each post-grad FX node through the graph's links, and Dynamo's tracing
    time per frame)."""
    times = graph_times(session)
    graphs, kernels, lines = [], [], []
    per_line: dict[str, list[Any]] = {}
    for key, g in times.items():
        big = max(g.stages.items(), key=lambda x: x[1], default=None)
        caches = ", ".join(f"{k} {v.get('status')}" for k, v in g.cache.items())
        note = (f"most in {big[0]} {fmt_time(big[1])}" if big else "") + (f"; {caches}" if caches else "")
        if key.endswith(FRAME):
            note = f"{no_graph_note(session, key) or FRAME_NOTE}; {note}"
        graphs.append(Rank("graph", key, g.total_ms, note, graph=key))
        for k in g.kernels:
            cache = k.get("cache")
            note = (cache or "") + (f" ({k['cache_note']})" if k.get("cache_note") else "")
            if k.get("compile_ms") is None:
                note = f"missing: {k.get('missing') or 'not reported'}"
            if k.get("kind") == "autotune":
                note = f"autotuning · {k.get('source', '')}"
            kernels.append(Rank("kernel", f"{k.get('name')}", k.get("compile_ms"),
                                note if k.get("kind") == "autotune" else f"{k.get('kind')} · {note}",
                                graph=key, kernel=k.get("name")))
        fx = (session.links(key) or {}).get("fx_nodes") or {} if hasattr(session, "links") else {}
        for node, ms in g.nodes.items():
            where = (fx.get(node) or {}).get("user_line") or "(no user line: inputs, outputs, torch's own code)"
            rec = per_line.setdefault(where, [0.0, [], key])
            rec[0] += ms
            rec[1].append(node)
        if g.frame and g.frame.get("tracing_ms") is not None:
            f = g.frame
            lines.append(Rank("frame", f"tracing {f.get('function')} ({_short(f.get('file'))}:{f.get('line')})",
                              f["tracing_ms"], "Dynamo's bytecode tracing of this frame", graph=key,
                              line=f"{f.get('file')}:{f.get('line')}"))
    for where, (ms, nodes, key) in per_line.items():
        shown = ", ".join(nodes[:4]) + (f" +{len(nodes) - 4}" if len(nodes) > 4 else "")
        lines.append(Rank("line", f"lowering {where if where.startswith('(') else _short(where)}", ms,
                          f"FX nodes {shown}", graph=key, line=None if where.startswith("(") else where))
    key_ms = lambda r: -(r.ms or 0.0)  # noqa: E731
    return {"graphs": sorted(graphs, key=key_ms), "kernels": sorted(kernels, key=key_ms),
            "lines": sorted(lines, key=key_ms)}


def line_nodes(links: dict[str, Any], line: str) -> list[str]:
    """The post-grad FX nodes of a graph's ``links`` (its codegen stop's, session.store.Store.links) whose stack trace
    ends at user line ``line`` (``"train.py:12"``: their ``fx_nodes[n].user_line``), in the links' order."""
    fx = as_record(links, Links).fx_nodes or {}
    return [n for n, v in fx.items() if as_record(v, LinkFxNode).user_line == line]


def _short(path: Any) -> str:
    return str(path or "?").rsplit("/", 1)[-1]


def totals(session: Any) -> dict[str, float]:
    """The whole session's compile time: ``total_ms``, ``paused_ms``, ``ours_ms``, ``wall_ms``."""
    out = {"total_ms": 0.0, "paused_ms": 0.0, "ours_ms": 0.0, "wall_ms": 0.0}
    for g in graph_times(session).values():
        for k in out:
            out[k] += getattr(g, k)
    return out


def summary_line(session: Any) -> str | None:
    """One line for ``--headless``: the compile's own time, the pauses and our hooks taken out, the slowest
    graph, kernel and line; None when the session has no compile_time message (an older recording)."""
    times = graph_times(session)
    if not times:
        return None
    t = totals(session)
    r = rankings(session)
    parts = [f"compile time: {fmt_time(t['total_ms'])} in {graph_count(times, session)} (torch's dynamo_timed events; "
             f"paused {fmt_time(t['paused_ms'])} and our hooks {fmt_time(t['ours_ms'])} taken out)"]
    if r["graphs"]:
        parts.append(f"slowest graph {r['graphs'][0].label} {fmt_time(r['graphs'][0].ms)} ({r['graphs'][0].note})")
    if r["kernels"] and r["kernels"][0].ms is not None:
        k = r["kernels"][0]  # its kind and verdict ("triton · hit", "cpp · miss") or "autotuning"
        what = "autotuning" if k.note.startswith("autotuning") else k.note.split(" (")[0]
        parts.append(f"kernel {k.label} {fmt_time(k.ms)} ({what})")
    if r["lines"]:
        parts.append(f"{r['lines'][0].label} {fmt_time(r['lines'][0].ms)}")
    return "; ".join(parts)


def report_section(session: Any, top: int = 5) -> str:
    """REPORT.md's "Compile time" section (markdown): per graph and stage, and the top of each ranking;
    "" when the session has no compile_time message."""
    times = graph_times(session)
    if not times:
        return ""
    t = totals(session)
    out = ["## Compile time", "",
           f"The compile's own time: {fmt_time(t['total_ms'])} in {graph_count(times, session)}, from torch's `dynamo_timed` "
           f"events; the time paused at inductor-step's stops ({fmt_time(t['paused_ms'])}) and in its capture hooks "
           f"({fmt_time(t['ours_ms'])}) is taken out.", "",
           "| graph | total | " + " | ".join(s for s in ORDER) + " |", "|---|---:|" + "---:|" * len(ORDER)]
    for key, g in times.items():
        skipped = g.skipped()
        cells = ["cache hit" if s in skipped else (fmt_time(g.stages[s]) if g.stages.get(s) else "")
                 for s in ORDER]
        out.append(f"| {key} | {fmt_time(g.total_ms)} | " + " | ".join(cells) + " |")
    frames = frame_times(times)
    if frames:
        out += ["", "**Compiles of several graphs** (each graph's own events: DDP parts, subgraphs, a backward; "
                "they add up to the compile's)", ""]
        out += [f"- {f.text()}" for f in frames.values()]
    r = rankings(session)
    for name, title in (("kernels", "Slowest kernels to compile"), ("lines", "Most expensive user lines to compile")):
        rows = [x for x in r[name] if x.ms is not None][:top]
        if rows:
            out += ["", f"**{title}**", ""]
            out += [f"- {x.label} ({x.graph}): {fmt_time(x.ms)} · {x.note}" for x in rows]
    caches = {f"{k}: {v.get('status')}" + (f" ({v['reason']})" if v.get("reason") else "")
              for g in times.values() for k, v in g.cache.items()}
    if caches:
        out += ["", "Caches: " + "; ".join(sorted(caches))]
    return "\n".join(out) + "\n"


def diff_rows(a: Any, b: Any) -> list[tuple[str, str, float | str | None, float | str | None]]:
    """Two sessions' compile times side by side: ``(graph, stage or "total", a, b)`` for every graph either
    has, the total first, then each stage either spent time in; a side is ms, "cache hit" (a cache skipped
    the stage) or None (no such graph or no time there)."""
    ta, tb = graph_times(a), graph_times(b)
    rows: list[tuple[str, str, float | str | None, float | str | None]] = []

    def side(g: GraphTime | None, s: str) -> float | str | None:
        if g is None:
            return None
        return "cache hit" if s in g.skipped() else g.stages.get(s)

    for key in list(ta) + [k for k in tb if k not in ta]:
        ga, gb = ta.get(key), tb.get(key)
        rows.append((key, "total", ga.total_ms if ga else None, gb.total_ms if gb else None))
        for s in ORDER:
            va, vb = side(ga, s), side(gb, s)
            if isinstance(va, float) or isinstance(vb, float):
                rows.append((key, s, va, vb))
    return rows


def diff_text(a: Any, b: Any) -> str:
    """:func:`diff_rows` as text lines (the headless diff's last section): ``[0/0] forward  lowering  12.0 ms ->
    30.5 ms  (+154%)``; "" when neither session has compile times."""
    rows = diff_rows(a, b)
    if not rows:
        return ""
    out = ["compile time per stage (A -> B; torch's dynamo_timed events, pauses at our stops and our hooks "
           "taken out):"]
    for key, stage, va, vb in rows:
        ch = f"  ({(vb - va) / va * 100:+.0f}%)" if isinstance(va, float) and va and isinstance(vb, float) else ""
        fa = va if isinstance(va, str) else fmt_time(va)
        fb = vb if isinstance(vb, str) else fmt_time(vb)
        out.append(f"  {key:<22} {stage:<11} {fa:>9} -> {fb:>9}{ch}")
    return "\n".join(out)
