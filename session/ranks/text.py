"""A rank comparison as plain text (what `inductor-step compare-ranks` prints)."""

from __future__ import annotations


from inductor_step.session.ranks.model import _ranks
from inductor_step.session.ranks.model import GraphComparison, RankComparison


# --------------------------------------------------------------------------- text

def graph_lines(g: GraphComparison, details: bool = False) -> list[str]:
    """What the ranks say about one graph, line by line (under its summary in :func:`text`, and the
    pane's detail): ranks that lack it and why, ranks whose compile stopped short, timing failures,
    runs flagged noisy, the graph time's fastest and slowest rank, the kernels over the threshold (or
    the largest difference under it); ``details`` adds each differing rank's level-by-level diff."""
    from inductor_step.session.diff import render  # noqa: PLC0415

    lines: list[str] = []
    for r, why in sorted(g.absent.items()):
        if why != "not compiled" or not g.recompile:
            lines.append(f"rank {r}: {why}")
    for r, how in sorted(g.incomplete.items()):
        lines.append(f"rank {r}: {how}")
    if g.times or any(w.startswith("timing failed") for w in g.untimed.values()):
        for r, why in sorted(g.untimed.items()):
            lines.append(f"rank {r}: {why}")
    if g.times and g.noisy:
        by: dict[str, list[int]] = {}
        for r, why in sorted(g.noisy.items()):
            by.setdefault(why, []).append(r)
        lines.append("runs flagged noisy: " + "; ".join(f"{_ranks(rs)}: {why}" for why, rs in by.items()))
    if len(g.graph_ms) > 1:
        lo, hi = min(g.graph_ms, key=lambda r: g.graph_ms[r]), max(g.graph_ms, key=lambda r: g.graph_ms[r])
        lines.append(f"compiled graph {g.graph_ms[lo]:.4f} ms on rank {lo} .. {g.graph_ms[hi]:.4f} ms on rank {hi}"
                     + (f" ({g.graph_ms[hi] / g.graph_ms[lo]:.1f}x)" if g.graph_ms[lo] > 0 else ""))
    for t in g.times:
        if t.ratio > g.time_ratio:
            lines.append(t.line)
    if g.times and not any(t.ratio > g.time_ratio for t in g.times):
        worst = max(g.times, key=lambda t: t.ratio)
        lines.append(f"{len(g.times)} kernel{'s' if len(g.times) > 1 else ''} timed on "
                     f"{_ranks(sorted(set(r for t in g.times for r in t.ms)))}: within {g.time_ratio:g}x "
                     f"(largest {worst.ratio:.2f}x, {worst.kernel})")
    if details:
        for r, d in sorted(g.diffs.items()):
            if g.differs.get(r):
                lines += render(d, diffs=False).split("\n")
    return lines


def text(c: RankComparison, details: bool = False) -> str:
    """The plain-text summary (``--headless`` and the report): each rank's end, the divergences, then
    one line per graph (its ranks and what agrees) with its kernel times across ranks; ``details``
    adds each differing rank's level-by-level diff (:func:`inductor_step.session.diff.render`)."""
    lines = [f"ranks compared: {len(c.ranks)} ({', '.join(str(r) for r in c.ranks)}); a kernel time counts as "
             f"different over {c.time_ratio:g}x with the ranks' p20..p80 ranges apart"]
    finished: dict[int | None, list[int]] = {}
    for r in c.ranks:
        if c.states[r].state == "done" and c.states[r].returncode == 0:
            finished.setdefault(0, []).append(r)
    for rc, rs in finished.items():
        lines.append(f"  {_ranks(rs)} finished (exit status {rc})")
    for r in c.ranks:
        if c.states[r].state != "done" or c.states[r].returncode != 0:
            lines.append(f"  {c.states[r].line}")
    if not c.compared:  # nothing reached Inductor; never "agree" on an empty comparison
        lines.append("nothing to compare: no graph reached Inductor on "
                     + (_ranks(sorted(c.nothing_compiled)) if c.nothing_compiled else "any rank"))
        for r, why in sorted(c.nothing_compiled.items()):
            lines.append(f"  rank {r}: {why[0]}")
            lines += [f"      {w}" for w in why[1:6]]
    if c.divergences:
        lines.append(f"where the ranks diverge ({len(c.divergences)}):")
        lines += [f"  {d.line}" for d in c.divergences]
    elif c.compared:
        lines.append("the ranks agree: the same graphs, fusions and kernels" + (
            ", kernel times within the threshold" if any(g.times for g in c.graphs) else ""))
    lines.append("graphs:")
    for g in c.graphs:
        lines.append(f"  {g.key:<22} {g.summary}")
        lines += ["      " + ln for ln in graph_lines(g, details)]
    return "\n".join(lines)
