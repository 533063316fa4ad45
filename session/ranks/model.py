"""A rank comparison's data: each rank's state, kernel times, divergences, per-graph and per-job results."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from inductor_step.session.format import STAGES
from inductor_step.session.diff import GraphDiff


def _ranks(rs: list[int], word: str = "") -> str:
    """``"rank 1"``, ``"ranks 1,3"``, ``"ranks 0-7"`` (a run of three or more consecutive ranks as a range)."""
    word = word or ("rank" if len(rs) == 1 else "ranks")
    if len(rs) > 1 and word == "rank":
        word = "ranks"
    parts: list[str] = []
    i = 0
    while i < len(rs):
        j = i
        while j + 1 < len(rs) and rs[j + 1] == rs[j] + 1:
            j += 1
        parts += [f"{rs[i]}-{rs[j]}"] if j - i >= 2 else [str(r) for r in rs[i:j + 1]]
        i = j + 1
    return f"{word} {','.join(parts)}"


TIME_RATIO = 1.25
#: a run whose kernels, timed one by one, sum to more than this many times the whole compiled graph's
#: time (``sum_vs_graph``) has kernel times that do not hold (seen on a loaded 2-core CPU: a 0.003 ms
#: ``mm`` timed at 26 ms while its graph took 0.011 ms)
SUM_VS_GRAPH = 2.0
#: the levels whose agreement is compared (:data:`inductor_step.session.diff.LEVELS` less timing)
GRAPH_LEVELS = ("why", "dynamo", "post_grad", "buffers", "scheduling", "kernels")
_TITLES = {"why": "compile inputs", "dynamo": "Dynamo graph", "post_grad": "post-grad graph",
           "buffers": "IR buffers", "scheduling": "fusion", "kernels": "kernels"}
_NEXT = {s: (STAGES[i + 1] if i + 1 < len(STAGES) else None) for i, s in enumerate(STAGES)}
_CID = re.compile(r"\[(\d+)/(\d+)(?:_\d+)?\]")


@dataclass
class RankState:
    """How one rank's session ended: ``state`` is ``"done"`` (the script ended: ``returncode``),
    ``"died"`` (its process ended before the script did), ``"running"`` (no end yet), ``"failed"``
    (the script ended with an error the agent reported) or ``"missing"`` (no session for this rank);
    ``where`` is ``(graph key, stage)`` the rank was in when it died or failed (the stage after its
    last stop, or the error's), None when not known; ``line`` says it in words."""

    rank: int
    state: str
    returncode: int | None = None
    where: tuple[str, str] | None = None
    line: str = ""


@dataclass
class KernelTime:
    """One kernel across ranks (times in ms, from each rank's ``run`` message): ``kernel`` its name on
    the reference rank, ``names`` rank -> its name there (matched by the kernel diff), ``ms`` rank ->
    median (summed over its calls), ``p20`` / ``p80`` rank -> the same for those percentiles (None where
    not measured); ``slowest`` / ``fastest`` ranks and ``ratio`` (slowest / fastest median);
    ``counts`` True when the difference is a divergence (see :data:`TIME_RATIO`); ``noise`` why a
    difference over the ratio does not count (empty when it counts or is under the ratio);
    ``slower`` every rank that counts as slower than the fastest (the slowest first; empty unless
    ``counts``)."""

    kernel: str
    names: dict[int, str]
    ms: dict[int, float]
    p20: dict[int, float | None]
    p80: dict[int, float | None]
    slowest: int
    fastest: int
    ratio: float
    counts: bool
    noise: str = ""
    slower: list[int] = field(default_factory=list)

    @property
    def line(self) -> str:
        """``"cpp_fused_x_0 2.0x slower on rank 1 (0.5857 ms vs 0.2931 ms on rank 0)"``."""
        name = self.names.get(self.slowest, self.kernel)
        on = _ranks(self.slower) if len(self.slower) > 1 else f"rank {self.slowest}"
        text = (f"{name} {self.ratio:.1f}x slower on {on} ({self.ms[self.slowest]:.4f} ms vs "
                f"{self.ms[self.fastest]:.4f} ms on rank {self.fastest})")
        return text + (f"; not counted: {self.noise}" if self.noise else "")


@dataclass
class Divergence:
    """One place where ranks diverge: ``rank`` (the rank that differs from the reference, or that
    died), ``key`` (the graph, None for the job as a whole), ``level`` (``"died"``, ``"failed"`` (a
    compile error ended its script), ``"missing"``,
    ``"recompile"``, ``"only"`` (compiled on some ranks only, no recompile reason), one of
    :data:`GRAPH_LEVELS`, or ``"timing"``), ``line`` (what a person reads), ``pair``
    ``(reference rank, rank)`` whose diff shows it (:func:`diff_pair`), None when there is none;
    ``ranks`` every rank the line is about (ranks that differ the same way share one line:
    ``"ranks 1,2,3: ..."``; ``rank`` is the first)."""

    rank: int
    key: str | None
    level: str
    line: str
    pair: tuple[int, int] | None = None
    ranks: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.ranks:
            self.ranks = [self.rank]


@dataclass
class GraphComparison:
    """One graph (``key``) across ranks: ``ranks`` that compiled it (have any stop of it), ``absent``
    rank -> why it has none (``"not compiled"``, ``"died before"``, ``"no session"``), ``stages``
    rank -> the stages it reached (``run`` when timed), ``reference`` the rank the others are diffed
    against, ``diffs`` rank -> :class:`GraphDiff` of the reference's graph (A) and that rank's (B),
    ``differs`` rank -> the levels of :data:`GRAPH_LEVELS` that differ from the reference's,
    ``recompile`` rank -> its Dynamo recompile reasons for this graph, ``times`` the kernels timed on
    two or more ranks (slowest difference first), ``graph_ms`` rank -> the compiled graph's time,
    ``untimed`` rank -> why it has no kernel times, ``noisy`` rank -> why its run's times are not to
    be trusted (:func:`run_noise`; only ranks whose run is flagged), ``divergences`` this graph's lines."""

    key: str
    ranks: list[int]
    absent: dict[int, str] = field(default_factory=dict)
    stages: dict[int, list[str]] = field(default_factory=dict)
    reference: int | None = None
    diffs: dict[int, GraphDiff] = field(default_factory=dict)
    differs: dict[int, list[str]] = field(default_factory=dict)
    recompile: dict[int, list[str]] = field(default_factory=dict)
    times: list[KernelTime] = field(default_factory=list)
    graph_ms: dict[int, float] = field(default_factory=dict)
    untimed: dict[int, str] = field(default_factory=dict)
    noisy: dict[int, str] = field(default_factory=dict)
    divergences: list[Divergence] = field(default_factory=list)
    #: rank -> its :class:`RankState` ``state`` ("done", "died", ...), and the threshold used
    rank_states: dict[int, str] = field(default_factory=dict)
    #: rank -> how its compile of this graph stopped short of codegen (``"failed in lowering"``,
    #: ``"died in scheduling"``, ``"compiling: last stop lowering"``, ``"stopped after aot"``)
    incomplete: dict[int, str] = field(default_factory=dict)
    time_ratio: float = TIME_RATIO

    @property
    def pair(self) -> tuple[int, int] | None:
        """The two ranks whose diff shows where this graph diverges (for :func:`diff_pair`): the
        first divergence's pair, else the reference and the first other rank that compiled it;
        None when only one rank compiled it and no other ran a stand-in."""
        for d in self.divergences:
            if d.pair is not None:
                return d.pair
        others = [r for r in self.ranks if r != self.reference]
        return (self.reference, others[0]) if self.reference is not None and others else None

    @property
    def detail(self) -> str:
        """This graph across ranks in full, for a pane's detail view: its summary, its divergence
        lines, :func:`graph_lines` and each differing rank's level-by-level diff."""
        from inductor_step.session.ranks.text import graph_lines  # noqa: PLC0415 - text imports this module
        lines = [d.line for d in self.divergences if d.level != "timing"]  # graph_lines has the times
        head = [f"{self.key}: {self.summary}", ""] + lines
        return "\n".join(head + ([""] if lines else []) + graph_lines(self, details=True))

    @property
    def agree(self) -> bool:
        """Every rank compiled it to codegen, to the same graphs at every level, with no kernel time
        divergence."""
        return not self.absent and not self.incomplete and not any(self.differs.values()) \
            and not any(t.counts for t in self.times)

    def cell(self, rank: int) -> str:
        """What a table of graphs by rank shows for ``rank`` (a word or two): ``"reference"``,
        ``"same"``, the levels that differ (``"fusion, kernels"``), ``"recompiled"`` (only some ranks
        compiled it, this one on a failed guard), ``"only here"``, why it is absent (``"not
        compiled"``, ``"died before"``, ``"not reached yet"``, ``"no session"``), ``"to lowering"``
        (its compile stopped there), plus ``"slower"`` where a kernel time counts as slower here."""
        if rank in self.absent:
            return self.absent[rank]
        if rank not in self.stages:
            return "-"
        parts = []
        if rank in self.incomplete:
            parts.append(self.incomplete[rank])
        if any(w == "not compiled" for w in self.absent.values()):
            parts.append("recompiled" if rank in self.recompile else "only here")
        if rank == self.reference:
            parts.insert(0, "reference")
        elif self.differs.get(rank):
            parts.append(", ".join(_TITLES[x] for x in self.differs[rank]))
        elif not parts:
            parts.append("same")
        if any(t.counts and rank in t.slower for t in self.times):
            parts.append("slower")
        return "; ".join(parts)

    @property
    def summary(self) -> str:
        """One line: ``"ranks 0,1: agree"``, ``"rank 1 only: recompiled"``, ``"ranks 0,1: fusion differs on rank 1"``."""
        on = _ranks(self.ranks)
        if self.recompile and set(self.absent.values()) <= {"not compiled", "no session"} and \
                any(w == "not compiled" for w in self.absent.values()):
            return f"{on}: recompiled there only (not on {_ranks(sorted(self.absent))})"
        if self.agree:
            if any(t.noise for t in self.times):
                return f"{on}: agree; kernel times too noisy to compare"
            if self.times and self.noisy:
                return f"{on}: agree, kernel times too (on runs flagged noisy)"
            return f"{on}: agree" + (", kernel times too" if self.times else "")
        parts = []
        by: dict[str, list[int]] = {}
        for r, how in sorted(self.incomplete.items()):
            by.setdefault(how, []).append(r)
        parts += [f"{how} on {_ranks(rs)}" for how, rs in by.items()]
        if self.absent:
            parts.append("not on " + _ranks(sorted(self.absent)))
        for r, lv in sorted(self.differs.items()):
            if lv:
                parts.append(f"{', '.join(_TITLES[x] for x in lv)} differ{'s' if len(lv) == 1 else ''} on rank {r}")
        slow = [t for t in self.times if t.counts]
        if slow:
            parts.append(f"{len(slow)} kernel{'s' if len(slow) > 1 else ''} slower on "
                         + _ranks(sorted({t.slowest for t in slow}), "rank"))
        return f"{on}: " + "; ".join(parts or ["incomplete"])


@dataclass
class RankComparison:
    """A job's ranks compared: ``ranks`` every rank (those with a session, and any the sessions'
    ``distributed.world_size`` says exist), ``states`` rank -> :class:`RankState`, ``graphs`` one
    :class:`GraphComparison` per graph key (ordered by compile id, then as first seen),
    ``divergences`` every line (the ranks' deaths first, then each graph's), ``time_ratio`` the
    threshold used."""

    ranks: list[int]
    states: dict[int, RankState]
    graphs: list[GraphComparison]
    divergences: list[Divergence]
    time_ratio: float = TIME_RATIO
    #: rank -> why no graph of its reached Inductor (its done message and Dynamo's reasons)
    nothing_compiled: dict[int, list[str]] = field(default_factory=dict)

    def graph(self, key: str) -> GraphComparison | None:
        return next((g for g in self.graphs if g.key == key), None)

    @property
    def compared(self) -> list[GraphComparison]:
        """The graphs Inductor compiled on some rank (a graph of another backend has no codegen)."""
        return [g for g in self.graphs if any("codegen" in st for st in g.stages.values())]

    @property
    def agree(self) -> bool:
        """No divergence, and something compared: an empty comparison never agrees."""
        return not self.divergences and bool(self.compared)
