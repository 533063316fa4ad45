"""What to change: the settings that trade memory for time, and each one's variant priced against its original (planned peak, measured peak where the timing measured one, saved bytes, time) side by side."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inductor_step.session.format import VARIANT_SEP, split_variant
from inductor_step.session.memory import fmt_bytes
from inductor_step.session.trust import unreliable


@dataclass(frozen=True)
class MemorySetting:
    """A setting that trades memory for time: ``name`` in ``config`` (``torch._inductor.config`` or
    ``torch._functorch.config``), the ``value`` a what-if tries (the other one than torch's default), what it
    ``trades``, and for which graphs it ``applies`` (``"all"`` or ``"training"``: a forward with a backward)."""

    name: str
    value: Any
    config: str
    trades: str
    applies: str = "all"


SETTINGS = (
    MemorySetting("inplace_buffers", False, "torch._inductor.config",
                  "no kernel writes its output into a buffer it reads for the last time ('bufB = bufA; del bufA  # "
                  "reuse' before the call): the output gets storage of its own while the input is live, so the peak "
                  "can rise; shows what writing in place saves"),
    MemorySetting("allow_buffer_reuse", False, "torch._inductor.config",
                  "no buffer takes over a freed one's storage (no '# reuse' between kernels): the freed one is "
                  "deleted at the same statement instead, so the planned peak rarely moves; the allocator's work does"),
    MemorySetting("reorder_for_peak_memory", False, "torch._inductor.config",
                  "the scheduler keeps its order instead of reordering nodes to lower the peak "
                  "(torch/_inductor/memory.py): shows what the reordering saves"),
    MemorySetting("memory_planning", True, "torch._inductor.config",
                  "one pool planned for the graph's buffers (torch/_inductor/codegen/memory_planning.py, CUDA "
                  "Python wrapper): fewer allocator calls, buffers live as the pool's blocks"),
    MemorySetting("activation_memory_budget", 0.5, "torch._functorch.config",
                  "AOTAutograd's partitioner saves at most this share of the activations and recomputes the rest in "
                  "the backward: saved bytes fall, the backward's time rises", "training"),
)

SOURCE = ("planned from each variant's wrapper; measured by the timing worker around one call (GPU: "
          "max_memory_allocated(); CPU: the profiler's memory events); times from the timing (--run or the pane's "
          "own what-if, which times both)")


@dataclass
class Priced:
    """One variant against its original: ``key`` the variant's graph (``"[0/0] forward · allow_buffer_reuse=False"``),
    ``base`` the original's; each figure a pair (original, variant), None where not known: ``peak`` planned
    (bytes, the graph's own buffers), ``high_water`` planned above the call's start, ``measured`` the timing
    worker's peak (CUDA only), ``saved`` the bytes a forward saves for its backward, ``ms`` the compiled time."""

    key: str
    base: str
    settings: str
    peak: tuple[int | None, int | None]
    high_water: tuple[int | None, int | None]
    measured: tuple[int | None, int | None]
    saved: tuple[int | None, int | None]
    ms: tuple[float | None, float | None]
    #: why the times cannot be trusted (session.trust.unreliable of either run), "" when they can
    time_note: str = ""

    def line(self) -> str:
        """``what if [0/0] forward · allow_buffer_reuse=False: planned peak 34.8 kB -> 51.2 kB (+47%); time 0.050 ->
        0.051 ms (+2%)`` (each figure only where both sides have it)."""
        parts = []
        for label, (a, b) in (("planned peak", self.peak), ("above the call's start", self.high_water),
                              ("measured peak", self.measured), ("saved for backward", self.saved)):
            if a is None or b is None or (label == "above the call's start" and self.high_water == self.peak):
                continue
            parts.append(f"{label} {fmt_bytes(a)} -> {fmt_bytes(b)}{change(a, b)}")
        a, b = self.ms
        if a is not None and b is not None:
            parts.append(f"time {a:.3f} -> {b:.3f} ms{change(a, b)}"
                         + (" NOT RELIABLE" if self.time_note else ""))
        elif b is None:
            parts.append("time: not timed yet")
        return f"what if {self.key}: " + "; ".join(parts)


def change(a: float, b: float) -> str:
    """`` (+47%)``, `` (same)`` where equal, `` (<1%)`` where the change rounds to 0%; "" where ``a`` is 0."""
    if a == b:
        return " (same)"
    if not a:
        return ""
    pct = (b - a) / a * 100
    return f" ({pct:+.0f}%)" if abs(pct) >= 0.5 else " (<1%)"


def _figures(session: Any, key: str) -> tuple[int | None, int | None, int | None, int | None, float | None]:
    from inductor_step.session.memory_text import graph_memory  # noqa: PLC0415 - it imports session.memory

    gm = graph_memory(session, key) if session.stop_for(key, "codegen") else None
    p = gm.plan if gm is not None else None
    run = (getattr(session, "runs", {}) or {}).get(key) or {}
    ms = run.get("compiled_ms") if isinstance(run.get("compiled_ms"), (int, float)) else None
    measured = (run.get("memory") or {}).get("peak_bytes")
    saved = gm.saved.storage_bytes if gm is not None and gm.saved is not None and gm.saved.tensors else None
    return (p.peak if p else None, p.high_water if p else None, measured if isinstance(measured, int) else None,
            saved, ms)


def priced(session: Any, key: str | None = None) -> list[Priced]:
    """Every what-if variant of graph ``key`` (all graphs' when None) that changed a :data:`SETTINGS` setting,
    priced against its original; a training variant's backward (``[0/0] backward · activation_memory_budget=0.5``)
    is priced as its own row."""
    names = {s.name for s in SETTINGS}
    out = []
    for g in getattr(session, "graphs", []):
        base, variant = split_variant(g)
        if variant is None or (key is not None and split_variant(key)[0] not in (base, _forward(base))):
            continue
        if not any(part.split("=", 1)[0] in names for part in variant.split(",")):
            continue
        a, b = _figures(session, base), _figures(session, g)
        runs = getattr(session, "runs", {}) or {}
        note = "; ".join(w for w in (unreliable(runs.get(base)), unreliable(runs.get(g))) if w)
        out.append(Priced(g, base, variant, (a[0], b[0]), (a[1], b[1]), (a[2], b[2]), (a[3], b[3]), (a[4], b[4]),
                          note))
    return out


def _forward(key: str) -> str:
    cid, _, rest = key.partition(" ")
    return f"{cid} {rest.replace('backward', 'forward', 1)}"


def lines(session: Any) -> list[str]:
    """``what if ...`` per priced variant (:meth:`Priced.line`), for --headless."""
    return [p.line() for p in priced(session)]


def report_lines(session: Any) -> list[str]:
    """REPORT.md's "What to change" paragraph: each priced variant, and how the figures were had; [] when none."""
    rows = priced(session)
    if not rows:
        return []
    return ["", "What to change (settings that trade memory for time, each run as a what-if variant):", "",
            *[f"- {p.line()}" for p in rows], "", SOURCE + "."]


def candidates(session: Any, key: str) -> list[tuple[MemorySetting, str]]:
    """The settings pane M offers for graph ``key``, each with why it cannot run here ("" when it can): a
    training setting on a graph without a backward.  An Inductor setting recompiles the graph's post-grad graph; a
    torch._functorch.config one partitions the joint graph again and compiles the new forward and backward
    (tracer.whatif_partition)."""
    base = split_variant(key)[0]
    training = " forward" in base and base.replace(" forward", " backward", 1) in getattr(session, "graphs", [])
    out = []
    for s in SETTINGS:
        why = ""
        if s.applies == "training" and not (training or " backward" in base):
            why = "only a training graph (a forward with its backward) saves activations"
        out.append((s, why))
    return out


def setting_key(base: str, s: MemorySetting) -> str:
    """The variant's graph key a what-if of ``s`` on ``base`` gives."""
    return f"{split_variant(base)[0]}{VARIANT_SEP}{s.name}={s.value}"
