"""Pane 0 (a torchrun job only): every rank, where its compile stands, and how the ranks'
graphs compare.

The top rows are the ranks: state (running, paused at a stop, done, died), the last stop, the
script's status or its error.  Below them, one row per graph: which ranks compiled it and whether
their graphs, kernels and kernel times agree (:mod:`inductor_step.session.ranks`).  Enter on a rank
shows that rank's recording; on a graph whose ranks differ, the diff of two ranks' versions.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from textual import on

from inductor_step.session.format import graph_key
from inductor_step.tui.panes.base import Detail, StagePane, T
from inductor_step.tui.table import Table


class RanksPane(StagePane):
    stage = "ranks"
    title = "0 Ranks"
    columns = ("rank / graph", "state · ranks agree?", "at · compiled on", "stops")
    fit = ((1, 2), 3)
    fit_min = 14

    def __init__(self) -> None:
        super().__init__()
        self._data: dict[str, Any] | None = None
        self._data_stamp: Any = None
        self._cache: Any = None  # the rank pairs' graph diffs, kept while their stops are the same

    # ------------------------------------------------------------------ data
    def _stamp_now(self) -> Any:
        app = self.app
        return (app.current.rank, app.launcher_rc,
                tuple((r, len(st.session.stops), len(st.session.runs), st.session.done is not None,
                       st.session.agent_exit, st.view.paused is not None, len(st.session.errors))
                      for r, st in sorted(app.ranks.items(), key=lambda x: (x[0] is None, x[0] or 0))))

    def data(self) -> dict[str, Any] | None:
        stamp = self._stamp_now()
        if self._data is None or stamp != self._data_stamp:
            self._data_stamp = stamp
            self._data = self._build()
        return self._data

    def _build(self) -> dict[str, Any]:
        app = self.app
        ranks = []
        for r, st in sorted((r, st) for r, st in app.ranks.items() if r is not None):
            job_file = app.job.job if app.job is not None else app.job_file
            ranks.append({"rank": r, **rank_state(st, r == app.stepped_rank, app.live, job_file)})
        from inductor_step.session.ranks import compare_ranks  # noqa: PLC0415
        from inductor_step.session.store import IdentityCache  # noqa: PLC0415

        job_file = (app.job.job if app.job is not None else app.job_file) or {}
        entries = {r["rank"]: r for r in job_file.get("ranks") or []}
        sessions = {r: st.session for r, st in app.ranks.items() if r is not None}
        if self._cache is None:
            self._cache = IdentityCache(64)
        comparison = compare_ranks(sessions, states={r: e.get("state") for r, e in entries.items() if e.get("state")},
                                   messages={r: e.get("message") for r, e in entries.items() if e.get("message")},
                                   cache=self._cache) if sessions else None
        return {"ranks": ranks, "comparison": comparison}

    def stamp(self, data: dict[str, Any] | None) -> Any:
        return id(data)

    # ------------------------------------------------------------------ rows
    def _graph_rows(self, data: dict[str, Any]) -> list[Any]:
        c = data.get("comparison")
        return list(getattr(c, "graphs", None) or [])

    def rows(self, data: dict[str, Any]) -> tuple[Sequence[str], Callable[[int], tuple]]:
        ranks = data["ranks"]
        graphs = self._graph_rows(data)
        keys = [f"rank {r['rank']}" for r in ranks] + [f"graph {g.key}" for g in graphs]
        shown = self.app.current.rank

        def row(i: int) -> tuple:
            if i < len(ranks):
                r = ranks[i]
                style = "bold red" if r["state"] == "died" else "yellow" if r["state"] == "paused" else ""
                name = f"rank {r['rank']}" + (" ◀" if r["rank"] == shown else "")
                state = r["state"] + (f": {r['note']}" if r["note"] else "")
                return (T(name, "bold"), T(state, style), T(r["at"]), T(r["stops"]))
            g = graphs[i - len(ranks)]
            on = ",".join(map(str, g.ranks))
            summary = g.summary
            for prefix in (f"ranks {on}: ", f"rank {on}: "):  # the third column says which ranks
                summary = summary.removeprefix(prefix)
            return (T(g.key, "bold"), T(summary, "green" if g.agree else "bold yellow"), T(f"on {on}"), T(""))

        return keys, row

    def detail(self, data: dict[str, Any], row: int) -> Detail | None:
        ranks = data["ranks"]
        if row < len(ranks):
            return Detail(ranks[row]["detail"], "text")
        graphs = self._graph_rows(data)
        if row - len(ranks) < len(graphs):
            g = graphs[row - len(ranks)]
            return Detail(getattr(g, "detail", None) or g.summary, "text")
        return None

    def empty(self, data: dict[str, Any] | None) -> Detail | None:
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
        ranks = data["ranks"]
        row = event.cursor_row
        if row < len(ranks):
            self.app.show_rank(ranks[row]["rank"])
            return
        graphs = self._graph_rows(data)
        if row - len(ranks) < len(graphs):
            self.app.diff_ranks(graphs[row - len(ranks)])


def rank_state(st: Any, stepped: bool, live: bool, job_file: dict[str, Any] | None) -> dict[str, Any]:
    """One rank's row: ``state`` (waiting, running, paused, done, died), ``at`` (its last stop),
    ``stops``, ``note`` (exit status or error) and ``detail`` (its header's distributed note, its
    process groups, its error's traceback)."""
    s = st.session
    h = s.header
    d = h.distributed or {}
    last = s.stops[-1] if s.stops else None
    at = f"{graph_key(last)} {last['stage']}" if last else "-"
    err = s.errors[-1] if s.errors else None
    entry = next((r for r in (job_file or {}).get("ranks") or [] if r.get("rank") == st.rank), {})
    if st.view.paused is not None:
        state = "paused"
    elif s.done is not None:
        state = "done"
    elif entry.get("state") == "stopped":
        state = "stopped"
    elif s.agent_exit is not None or entry.get("state") == "died":
        state = "died"
    elif not h:
        state = "waiting"
    elif live and getattr(s, "blocked", None):  # its script sits in a collective (tracer.rank_watch)
        state = f"waiting at {s.blocked.collective}"
    elif live:
        state = "running" if (stepped or not last) else "recording"
    else:
        state = entry.get("state") or "ended"
    if state == "died":
        where = f"at {err.compile_id} {err.graph_kind} {err.stage}" if err and err.compile_id \
            else f"after {at}" if last else "before any stop"
        note = f"died {where}: {err.message}" if err else f"died {where}: " + (
            entry.get("message") or "its stream ended before the script did")
    elif state == "stopped":
        note = f"stopped by the user (q) after {at}"
    elif state == "done":
        rc = s.done.returncode if s.done is not None else None
        note = f"exit {rc}" + (f": {err.message}" if err and rc else "")
    elif err:
        note = f"error in {err.stage}: {err.message}"
    elif state.startswith("waiting at "):
        note = (f"{s.blocked.where if s.blocked else None}: for another rank to reach it"
                + (" (the stepped rank waits for n)" if not stepped else ""))
    else:
        note = "stepped: n continues it" if stepped and live else ""
    lines = [f"rank {st.rank}: {state}" + (f" ({note})" if note else ""), ""]
    if d and d.note:
        lines.append(d.note)
    if d:
        lines.append(f"world size {d.world_size}, local rank {d.local_rank}, pid {h.pid}, "
                     f"restart {d.restart_count or 0}")
    lines.append(f"{len(s.stops)} stops, {len(s.graphs)} graphs, {len(s.runs)} timed")
    for g in s.process_groups:
        t = g.timeout_s
        lines.append(f"{g.call}: backend {g.backend}, {g.world_size} ranks, this one "
                     f"{g.rank}; timeout {t:g} s" if t is not None else "; timeout ?")
        if t is not None and g.default_s is not None and t > g.default_s:
            lines[-1] += f" (raised from {g.timeout_asked_s or g.default_s:g} s by inductor-step)"
    if err and err.traceback:
        lines += ["", f"error in {err.stage}: {err.message}", "", err.traceback]
    return {"state": state, "at": at, "stops": str(len(s.stops)), "note": note, "detail": "\n".join(lines)}
