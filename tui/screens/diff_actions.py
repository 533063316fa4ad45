"""The app's diff actions: ``d`` and ctrl+p "Diff with …" within one session, and
``inductor-step diff A B`` across two; each pushes :class:`inductor_step.tui.screens.diff.DiffScreen`."""

from __future__ import annotations

import os
from typing import Any

import re

from textual.widgets import OptionList

from inductor_step.session.store import Store

_ID = re.compile(r"\[(\d+)/(\d+)\] (.+)$")


def diff_default(app: Any) -> None:
    """d: the graph highlighted in the graph list (else the one shown) against its default partner
    (a recompile [0/1] against [0/0] of the same kind)."""
    from inductor_step.session.diff import default_partner  # noqa: PLC0415

    key = app.view.graph
    ol = app.query_one("#graphs", OptionList)
    if app.focused is ol and ol.highlighted is not None:
        key = ol.options[ol.highlighted].id or key
    other = default_partner(app.session.graphs, key) if key else None
    if key is None or other is None:
        app.notify("diff needs two compiled graphs (ctrl+p: Diff with … picks the other)")
        return
    if not is_recompile_pair(key, other):
        app.say(f"{key} has no recompile (nor what-if variant) to diff with: pick the other graph (ctrl+p: Diff with …)")
        open_diff_palette(app)
        return
    diff_with(app, other, key)


def is_recompile_pair(key: str, other: str) -> bool:
    """Are ``key`` and ``other`` a recompile pair (``[f/n]`` and ``[f/m]`` of one kind) or a what-if
    variant and its original: the pairs ``d`` diffs without asking."""
    from inductor_step.session.format import GraphKey  # noqa: PLC0415

    if GraphKey.parse(key).original == GraphKey.parse(other).original:
        return True
    ma, mb = _ID.match(key), _ID.match(other)
    return bool(ma and mb and ma.group(1) == mb.group(1) and ma.group(3) == mb.group(3))


def open_diff_palette(app: Any) -> None:
    """ctrl+p with "Diff with" typed: the graphs the shown one can be diffed with."""
    from textual.command import CommandInput, CommandPalette  # noqa: PLC0415

    if CommandPalette.is_open(app):
        return
    palette = CommandPalette(id="--command-palette")
    app.push_screen(palette)

    def typed() -> None:
        try:
            palette.query_one(CommandInput).value = "Diff with"
        except Exception:  # noqa: BLE001 - closed already
            pass
    app.call_after_refresh(typed)


def diff_with(app: Any, other: str, key: str | None = None) -> None:
    """The diff screen of ``key`` (default: the graph shown) and ``other``, the earlier one as A."""
    from inductor_step.session.diff import DiffSide, diff_graphs  # noqa: PLC0415
    from inductor_step.tui.screens.diff import DiffPair, DiffScreen  # noqa: PLC0415

    key = key or app.view.graph
    if key is None or other == key:
        return
    graphs = app.session.graphs
    a, b = sorted((other, key), key=lambda g: graphs.index(g) if g in graphs else 0)
    d = diff_graphs(DiffSide.from_session(app.session, a), DiffSide.from_session(app.session, b),
                    rounds=app.session.pair_timings.get((a, b)))  # timed round by round (r there)
    from inductor_step.tui.graphlist import GraphSide  # noqa: PLC0415

    app.query_one(GraphSide).close()
    app.push_screen(DiffScreen([DiffPair(a, b, "", d)]))


def diff_sessions(app: Any) -> None:
    """`inductor-step diff A B`: the diff screen over every pair of graphs of A and this session (B)."""
    from inductor_step.session.diff import diff_sessions  # noqa: PLC0415
    from inductor_step.tui.screens.diff import DiffPair, DiffScreen  # noqa: PLC0415

    assert app.diff_against is not None
    path_a, msgs = app.diff_against
    other = Store()
    for m in msgs:
        other.add(m)
    la, lb = os.path.basename(path_a), os.path.basename(app.session_path or "B")
    pairs = [DiffPair(*p) for p in diff_sessions(other, app.session, "", "")]
    app.push_screen(DiffScreen(pairs, same_session=False, label_a=la, label_b=lb))


def diff_ranks(app: Any, graph: Any) -> None:
    """Pane 0, Enter on a graph row (a :class:`inductor_step.session.ranks.GraphComparison`): the diff
    screen of two ranks' versions of it: the pair the comparison names (a rank against the
    reference it differs from; for a graph only one rank compiled, the graph that ran in its place
    on the other), else the shown rank against the first other rank that compiled it."""
    from inductor_step.session.ranks import diff_pair  # noqa: PLC0415
    from inductor_step.tui.screens.diff import DiffPair, DiffScreen  # noqa: PLC0415

    pair = graph.pair
    if not pair:
        have = [r for r in graph.ranks if r in app.ranks]
        shown = app.current.rank if app.current.rank in have else (have[0] if have else None)
        others = [r for r in have if r != shown]
        pair = (shown, others[0]) if shown is not None and others else None
    if not pair:
        app.notify(f"{graph.key}: only one rank compiled it and no other rank ran a graph in its place",
                   markup=False)
        return
    ra, rb = pair
    sessions = {r: st.session for r, st in app.ranks.items() if r is not None}
    p = diff_pair(sessions, graph.key, ra, rb)
    if p[3] is None:
        app.notify(f"{graph.key}: {p[2] or 'nothing to diff'}", markup=False)
        return
    app.push_screen(DiffScreen([DiffPair(*p)], same_session=False, label_a=f"rank {ra}", label_b=f"rank {rb}"))
