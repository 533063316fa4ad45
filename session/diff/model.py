"""The diff's data: DiffSide (one graph's stops, run, guards), the Levels walked top-down, Changes, GraphDiff."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from inductor_step.session.format import GraphKey


LEVELS: tuple[tuple[str, str, str], ...] = (
    ("why", "why it recompiled", "dynamo"),
    ("dynamo", "Dynamo graph", "dynamo"),
    ("post_grad", "AOT/post-grad graphs", "aot"),
    ("buffers", "IR buffers", "lowering"),
    ("scheduling", "scheduler nodes", "scheduling"),
    ("kernels", "kernels", "codegen"),
    ("timing", "timings", "run"),
    ("ctime", "compile time", "ctime"),
)

#: a graph time that moved by more than this fraction counts as a change
TIME_CHANGE = 0.10
#: kernels left unmatched by source and name are compared each with each (similarity) only up to
#: this many pairs; beyond, they are reported added and removed
SIMILAR_PAIRS = 2500


@dataclass
class DiffSide:
    """One compiled graph as the diff reads it: ``key`` (``"[0/1] forward"``), ``stops`` (stage ->
    stop message), ``run`` (its latest ``run`` message, None when not timed), ``guards`` (its
    compile's ``dynamo_cpp_guards_str``), ``all_guards`` (compile id -> guards text, the session's,
    for the guard a recompile reason names), ``header`` (the session's header), ``label`` (how the
    summary names it, e.g. the session file's name)."""

    key: str
    stops: dict[str, dict[str, Any]]
    run: dict[str, Any] | None = None
    numerics: dict[str, Any] | None = None  # the graph's buffers against eager (session.numerics)
    compile_time: Any = None  # its session.compile_time.GraphTime, None without compile times
    memory: Any = None  # a callable giving its session.memory_text.GraphMemory (planned when first asked)
    compile_times_measured: bool = False  # its session has compile times (of any graph)
    guards: str | None = None
    all_guards: dict[str, str] = field(default_factory=dict)
    header: dict[str, Any] = field(default_factory=dict)
    label: str = ""

    @classmethod
    def from_session(cls, session: Any, key: str, label: str = "") -> "DiffSide":
        """Graph ``key`` of a :class:`inductor_step.session.store.Store` (stops parsed on demand)."""
        stops = {}
        for stage in ("dynamo", "aot", "lowering", "scheduling", "loopbody", "codegen"):
            s = session.stop_for(key, stage)
            if s is not None:
                stops[stage] = s
        cid = GraphKey.parse(key).compile_id
        from inductor_step.session.diff.ctime import graph_compile_time  # noqa: PLC0415

        return cls(key=key, stops=stops, run=session.runs.get(key), numerics=getattr(session, "numerics", {}).get(key),
                   compile_time=graph_compile_time(session, key),
                   memory=lambda: _graph_memory(session, key),
                   compile_times_measured=bool(getattr(session, "compile_times", None)),
                   guards=session.guards.get(cid),
                   all_guards=dict(session.guards), header=dict(session.header), label=label)

    @property
    def compile_id(self) -> str:
        return GraphKey.parse(self.key).compile_id

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
    #: said at the top, before any level: a variant compiled static from a dynamic graph, timings
    #: judged not reliable or a machine that moved between the two timings
    notes: list[str] = field(default_factory=list)
    #: the planned peak and saved-for-backward bytes when they moved (session.memory_text.diff_note), else ""
    memory: str = ""
    #: the same line, said also when nothing moved (``memory: planned peak 1.0 kB in both``), for the diff screen
    memory_always: str = ""

    def level(self, key: str) -> Level:
        return next(lv for lv in self.levels if lv.key == key)

    def __rich_console__(self, console: Any, options: Any) -> Any:
        """The diff as a Rich table, one row per level (session.rich_views; Rich only when rendered)."""
        from inductor_step.session.rich_views import render  # noqa: PLC0415

        yield render(self)

    @property
    def changed_levels(self) -> list[Level]:
        return [lv for lv in self.levels if lv.changed or lv.missing]


def _graph_memory(session: Any, key: str) -> Any:
    """Graph ``key``'s session.memory_text.GraphMemory (None when the session cannot plan it)."""
    from inductor_step.session.memory_text import graph_memory  # noqa: PLC0415

    try:
        return graph_memory(session, key)
    except (AttributeError, TypeError, KeyError, ValueError):
        return None
