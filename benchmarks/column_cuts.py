"""What the tables' column-level cut costs (tui.cells.Names, session.cuts.distinct_cuts): the time to work out one
column's distinct cuts at a width, the first time a cell of it is cut there (it is kept per graph, column and
width after that), for every FX node, IR buffer, scheduler node and kernel column of the given sessions, and for
a node column as long as the large session's backward (28,200 post-grad nodes, names made from the largest
fixture's: ``view_1``, ``permute_17``, ``_scaled_dot_product_efficient_attention_backward_3``, ...).  Best of
``--repeats`` per column; prints the slowest column per session and how many names were cut and changed.  Every
name is cut as an :class:`~inductor_step.tui.cells.Exact` name (pane 1's inputs that spell a module path are
cut along it there, which costs more per name; few are).

    python benchmarks/column_cuts.py [SESSION ...] [--widths 10 12 16 24] [--rows 28200] [--repeats 5]

Without sessions: the three largest fixtures in tests/fixtures.
"""

import argparse
import os
import re
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")


def columns(path: str) -> dict[str, list[str]]:
    """``graph stage`` -> the names of that stop's table column (FX nodes, buffers, scheduler nodes, kernels;
    Dynamo's without their module-path markers, as pane 1 shows them)."""
    from inductor_step.session.format import read_session
    from inductor_step.session.fx_names import short_name
    from inductor_step.session.store import Store

    store = Store.of(list(read_session(path)))
    out: dict[str, list[str]] = {}
    for g in store.graphs:
        for stage, get in (("dynamo", lambda s: s.graph.nodes if s.graph is not None else None),
                           ("aot", lambda s: s.post_grad.nodes if s.post_grad is not None else None),
                           ("lowering", lambda s: None if s.unavailable else s.buffers),
                           ("scheduling", lambda s: s.after if isinstance(s.after, list) else None),
                           ("codegen", lambda s: s.kernels)):
            stop = store.stop_for(g, stage)
            items = get(stop) if stop is not None else None
            if items:
                out[f"{g} {stage}"] = [short_name(str(x.name)) if stage == "dynamo" else str(x.name) for x in items]
    return out


def many(names: list[str], n: int) -> list[str]:
    """``n`` FX-style names from ``names``' stems, numbered on as FX numbers them (``view_97``, ``view_98``)."""
    stems = [re.sub(r"_\d+$", "", x) for x in names]
    count: dict[str, int] = {}
    out: list[str] = []
    while len(out) < n:
        for s in stems:
            count[s] = count.get(s, 0) + 1
            out.append(f"{s}_{count[s]}")
    return out[:n]


def timed(names: list[str], w: int, repeats: int) -> tuple[float, int, int]:
    """Best ms of working out ``names``' column at ``w`` cells afresh, names wider than ``w``, names given a new
    cut."""
    from inductor_step.tui.cells import Exact, NameColumn, Names

    best, changed = float("inf"), 0
    for _ in range(repeats):
        col = Names({0: NameColumn(lambda: names, lambda i: Exact(names[i]))})
        start = time.perf_counter()
        changed = len(col._column_cuts(0, w))
        best = min(best, time.perf_counter() - start)
    return best * 1e3, sum(len(x) > w for x in names), changed


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("sessions", nargs="*")
    p.add_argument("--widths", type=int, nargs="+", default=[10, 12, 16, 24])
    p.add_argument("--rows", type=int, default=28200)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    paths = args.sessions or [os.path.join(FIXTURES, f) for f in sorted(
        (f for f in os.listdir(FIXTURES) if f.endswith(".jsonl")),
        key=lambda f: -os.path.getsize(os.path.join(FIXTURES, f)))[:3]]
    largest: list[str] = []
    for path in paths:
        cols = columns(path)
        worst = max(((timed(names, w, args.repeats), key, w) for key, names in cols.items() for w in args.widths),
                    key=lambda t: t[0][0])
        (ms, cut, changed), key, w = worst
        print(f"{os.path.basename(path)}: {len(cols)} columns, slowest {key} ({len(cols[key])} rows) at {w} cells: "
              f"{ms:.2f} ms, {cut} cut, {changed} given a cut of their own")
        largest = max(largest, max(cols.values(), key=len), key=len)
    names = many(largest, args.rows)
    for w in args.widths:
        ms, cut, changed = timed(names, w, args.repeats)
        print(f"{args.rows} made-up post-grad names at {w} cells: {ms:.2f} ms, {cut} cut, {changed} given a cut of "
              f"their own")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(ROOT))
    main()
