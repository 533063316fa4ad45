"""Pane 0 (a torchrun job only): every rank, where its compile stands, and how the ranks'
graphs compare.

The top rows are the ranks: state (running, paused at a stop, done, died), the last stop, the
script's status or its error.  Below them, one row per graph: which ranks compiled it and whether
their graphs, kernels and kernel times agree (:mod:`inductor_step.session.ranks`).  Enter on a rank
shows that rank's recording; on a graph whose ranks differ, the diff of two ranks' versions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from textual import on

from inductor_step.session.ranks.model import GraphComparison, RankComparison
from inductor_step.session.ranks.rows import RankRow, job_ranks, rank_row
from inductor_step.tui.panes.base import Detail, StagePane, T
from inductor_step.tui.table import Table


@dataclass(frozen=True, eq=False)
class RanksView:
    """The pane's data: ``ranks`` one :class:`~inductor_step.session.ranks.rows.RankRow` per rank that reported, in
    rank order; ``comparison`` the ranks' graphs compared (:func:`inductor_step.session.ranks.compare_ranks`), None
    before any rank has a session.  Compared by identity (the pane's stamp)."""

    ranks: list[RankRow]
    comparison: RankComparison | None

    def graphs(self) -> list[GraphComparison]:
        """The comparison's graph rows (below the ranks), [] without a comparison."""
        return list(getattr(self.comparison, "graphs", None) or [])


class RanksPane(StagePane):
    stage = "ranks"
    title = "0 Ranks"
    columns = ("rank / graph", "state · ranks agree?", "at · compiled on", "stops")
    fit = ((1, 2), 3)
    fit_min = 14

    def __init__(self) -> None:
        super().__init__()
        self._data: RanksView | None = None
        self._data_stamp: Any = None
        self._cache: Any = None  # the rank pairs' graph diffs, kept while their stops are the same

    # ------------------------------------------------------------------ data
    def _stamp_now(self) -> Any:
        app = self.app
        return (app.current.rank, app.jobs.launcher_rc,
                tuple((r, len(st.session.stops), len(st.session.runs), st.session.done is not None,
                       st.session.agent_exit, st.view.paused is not None, len(st.session.errors))
                      for r, st in sorted(app.ranks.items(), key=lambda x: (x[0] is None, x[0] or 0))))

    def data(self) -> RanksView | None:
        stamp = self._stamp_now()
        if self._data is None or stamp != self._data_stamp:
            self._data_stamp = stamp
            self._data = self._build()
        return self._data

    def _build(self) -> RanksView:
        app = self.app
        job_file = app.job.job if app.job is not None else app.jobs.job_file
        ranks = [rank_state(st, r == app.jobs.stepped_rank, app.live, job_file)
                 for r, st in sorted((r, st) for r, st in app.ranks.items() if r is not None)]
        from inductor_step.session.ranks import compare_ranks  # noqa: PLC0415
        from inductor_step.session.store import IdentityCache  # noqa: PLC0415

        entries = job_ranks(job_file)
        sessions = {r: st.session for r, st in app.ranks.items() if r is not None}
        if self._cache is None:
            self._cache = IdentityCache(64)
        comparison = compare_ranks(sessions, states={r: e.state for r, e in entries.items() if e.state},
                                   messages={r: e.message for r, e in entries.items() if e.message},
                                   cache=self._cache) if sessions else None
        return RanksView(ranks, comparison)

    def stamp(self, data: RanksView | None) -> Any:
        return id(data)

    # ------------------------------------------------------------------ rows
    def rows(self, data: RanksView) -> tuple[Sequence[str], Callable[[int], tuple]]:
        ranks = data.ranks
        graphs = data.graphs()
        keys = [f"rank {r.rank}" for r in ranks] + [f"graph {g.key}" for g in graphs]
        shown = self.app.current.rank

        def row(i: int) -> tuple:
            if i < len(ranks):
                r = ranks[i]
                style = "bold red" if r.state == "died" else "yellow" if r.state == "paused" else ""
                name = f"rank {r.rank}" + (" ◀" if r.rank == shown else "")
                state = r.state + (f": {r.note}" if r.note else "")
                return (T(name, "bold"), T(state, style), T(r.at), T(r.stops))
            g = graphs[i - len(ranks)]
            on = ",".join(map(str, g.ranks))
            summary = g.summary
            for prefix in (f"ranks {on}: ", f"rank {on}: "):  # the third column says which ranks
                summary = summary.removeprefix(prefix)
            return (T(g.key, "bold"), T(summary, "green" if g.agree else "bold yellow"), T(f"on {on}"), T(""))

        return keys, row

    def detail(self, data: RanksView, row: int) -> Detail | None:
        ranks = data.ranks
        if row < len(ranks):
            return Detail(ranks[row].detail, "text")
        graphs = data.graphs()
        if row - len(ranks) < len(graphs):
            g = graphs[row - len(ranks)]
            return Detail(getattr(g, "detail", None) or g.summary, "text")
        return None

    def empty(self, data: RanksView | None) -> Detail | None:
        return Detail("no rank has reported yet: torch's launcher is starting the job", "text")

    def show(self, force: bool = False) -> None:
        if force:
            self._data = None
        super().show(force)

    @on(Table.RowSelected)
    def _enter(self, event: Table.RowSelected) -> None:
        """Enter: a rank row shows that rank; a graph row whose ranks differ opens their diff."""
        event.stop()
        data = self.data()
        if data is None:
            return
        ranks = data.ranks
        row = event.cursor_row
        if row < len(ranks):
            self.app.jobs.show_rank(ranks[row].rank)
            return
        graphs = data.graphs()
        if row - len(ranks) < len(graphs):
            self.app.jobs.diff_ranks(graphs[row - len(ranks)])


def rank_state(st: Any, stepped: bool, live: bool, job_file: dict[str, Any] | None) -> RankRow:
    """Rank ``st``'s row (``st``: the app's tui.state.RankView: its session, view and number), as
    :func:`inductor_step.session.ranks.rows.rank_row` reads it."""
    return rank_row(st.session, st.rank, paused=st.view.paused is not None, stepped=stepped, live=live, job=job_file)
