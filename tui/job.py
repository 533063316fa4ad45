"""The app's side of a torchrun job: one :class:`RankView` per rank, the job's messages
routed to them, switching the shown rank, the title's rank part, ending the job.

:class:`JobView` is a part the app holds (``StepApp.jobs``); a single-process session is one rank (``None``), so
the app reads ``app.session``, ``app.view``, ``app.agent`` (the shown rank's, through the part) the same way in
both.  The job process itself is :class:`inductor_step.live.client.JobProcess`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.css.query import NoMatches

from inductor_step.session.format import GraphKey, graph_key
from inductor_step.session.format.job import Job
from inductor_step.session.format.records import Record, as_record, decode
from inductor_step.session.format.types import DynamoStop
from inductor_step.session.store import Store
from inductor_step.tui.routes import JOB_ROUTES, LAUNCHER_ROUTES, RANK_ROUTES
from inductor_step.tui.state import RankView, ViewState


@dataclass(frozen=True)
class LiveJob:
    """A torchrun job the app starts and steps: ``launcher`` (torchrun's arguments before the script),
    ``stepped_rank`` (the rank whose compiles pause), ``nproc_per_node`` and ``run`` (every rank times its
    graphs as its script ends, ``--run``)."""

    launcher: list[str]
    stepped_rank: int = 0
    nproc_per_node: int | None = None
    run: bool = False


@dataclass(frozen=True)
class RecordedJob:
    """A recorded job opened with ``--open``: ``file`` (the job file, as :func:`inductor_step.session.format.
    job_paths` names it, read as JSON), ``sessions`` (rank -> that rank's messages) and ``rank`` (shown first)."""

    file: dict[str, Any]
    sessions: dict[int, list[dict[str, Any]]]
    rank: int | None


class JobView:
    """The ranks of a job, as the app shows them (see the module's docstring); ``app`` is the
    :class:`inductor_step.tui.app.StepApp` that holds it."""

    def __init__(self, app: Any, job: LiveJob | RecordedJob | None) -> None:
        """``job``: live, a :class:`LiveJob`; ``--open JOB``, a :class:`RecordedJob`; None: one session (rank
        None).  :attr:`session`, :attr:`view`, :attr:`agent`, :attr:`writer`, :attr:`script_rc` are then the
        shown rank's."""
        self.app = app
        self.job_spec = job
        self.job: Any = None  # live: the JobProcess
        self.job_file: dict[str, Any] | None = job.file if isinstance(job, RecordedJob) else None
        self.stepped_rank: int | None = (job.stepped_rank if isinstance(job, LiveJob) else
                                         as_record(self.job_file or {}, Job).stepped_rank)
        self.launcher_log: list[tuple[str, str]] = []
        self.launcher_rc: int | None = None
        first = job.rank if isinstance(job, RecordedJob) else job.stepped_rank if job else None
        self.ranks: dict[int | None, RankView] = {first: RankView(first, Store())}
        self.current: RankView = self.ranks[first]

    def add_recorded_ranks(self, job: LiveJob | RecordedJob | None) -> None:
        """``--open JOB``: every other rank's recording."""
        for r, msgs in (job.sessions if isinstance(job, RecordedJob) else {}).items():
            if r not in self.ranks:
                st = self.ranks[r] = RankView(r, Store())
                for m in msgs:
                    st.session.add(m)

    def start_job(self) -> None:
        """Live: start the job (torch's launcher, our agent in every rank), recording to the job file."""
        from inductor_step.live.client import JobProcess  # noqa: PLC0415

        spec = self.job_spec
        assert isinstance(spec, LiveJob), "start_job needs a LiveJob"
        # no rank stays up after its script to serve timing (r): its process groups would keep the other
        # ranks' teardown waiting (seen with gloo), and a rank that failed must end so torch's launcher
        # stops the job; --run times every rank's graphs as its script ends instead
        self.job = JobProcess(self.app.script, self.app.script_args, spec.launcher, self.from_job_thread,
                              self.app.session_path, stepped_rank=spec.stepped_rank, serve=False,
                              run_at_end=spec.run, python=self.app.python, nproc_per_node=spec.nproc_per_node)

    def job_report(self) -> str:
        """R in a job: the bundle of every rank's session, the job file and the launcher's log, with
        where the user stands (rank, graph, stage, selection).  Raises OSError, ValueError."""
        from inductor_step.session.report import build_job_report  # noqa: PLC0415

        out, _problems = build_job_report(self.app.session_path, screenshots=self.app.saved_screenshots, stood={
            "rank": self.current.rank, "graph": self.view.graph, "stage": self.view.stage,
            "selection": self.app.selection()})
        return out

    def diff_ranks(self, graph: Any) -> None:
        """Enter on a graph row of pane 0: the diff of two ranks' versions of that graph."""
        from inductor_step.tui.screens import diff_actions  # noqa: PLC0415

        diff_actions.diff_ranks(self.app, graph)

    def job_panes(self) -> list[Any]:
        """The panes only a job has: pane 0, its ranks."""
        if not self.is_job:
            return []
        from inductor_step.tui.panes import RANKS  # noqa: PLC0415

        return [RANKS]

    # ------------------------------------------------------------------ the shown rank's state
    @property
    def session(self) -> Store:
        return self.current.session

    @property
    def view(self) -> ViewState:
        return self.current.view

    @property
    def agent(self) -> Any:
        return self.current.agent

    @property
    def writer(self) -> Any:
        return self.current.writer

    @property
    def script_rc(self) -> int | None:
        if self.job_spec is not None and self.stepped_rank in self.ranks:
            return self.ranks[self.stepped_rank].script_rc
        return self.current.script_rc

    @property
    def is_job(self) -> bool:
        return self.job_spec is not None

    def pane_missing(self, stage: str) -> str:
        """Why pane ``stage`` is not in this app ("" when it is): pane 0 exists in a job only."""
        if stage == "ranks" and not self.is_job:
            return "pane 0 shows the ranks of a torchrun job (inductor-step --nproc-per-node 2 script.py)"
        return ""

    def from_job_thread(self, rank: int | None, msg: dict[str, Any]) -> None:
        if not self.app.is_running:
            return
        try:
            self.app.call_from_thread(self.on_rank_message, rank, msg)
        except RuntimeError:
            pass

    def on_rank_message(self, rank: int | None, msg: dict[str, Any]) -> None:
        """A message of the job: the launcher's (``rank`` None: :data:`.routes.LAUNCHER_ROUTES`) or one rank's.  The
        shown rank's go through :meth:`on_agent_message`; the others are recorded in their own state and followed
        (:data:`.routes.RANK_ROUTES`); then what the job does with either (:data:`.routes.JOB_ROUTES`)."""
        if rank is None:
            rec = decode(msg)
            route = LAUNCHER_ROUTES.get(rec.type)
            if route is not None:
                route(self.app, rec)
            self.refresh_ranks()
            return
        st = self.ranks.get(rank)
        if st is None:
            st = self.ranks[rank] = RankView(rank, Store())
        if st.agent is None and self.job is not None:
            st.agent = self.job.ranks.get(rank)
        if st is self.current:
            rec = self.app.on_agent_message(msg)
        else:
            rec = self.add_message(st, msg)
            rank_route = RANK_ROUTES.get(rec.type)
            if rank_route is not None:
                rank_route(self.app, st, rec)
        job_route = JOB_ROUTES.get(rec.type)
        if job_route is not None:
            job_route(self.app, st, rec)

    def is_closing_job(self) -> bool:
        return self.job is not None and self.job.closing

    def refresh_ranks(self) -> None:
        """The title's rank part and the ranks pane, after a rank's news."""
        if not self.is_job:
            return
        self.app._bars.pop("#title", None)
        self.app.refresh_title()
        try:
            pane = self.app.pane("ranks")
        except NoMatches:
            return
        if self.view.stage == "ranks":
            pane.show(force=True)

    def next_rank(self, step: int = 1) -> None:
        """>/<: the next (previous) rank's recording, at the same graph, stage and selection where
        that rank has them."""
        ranks = sorted(r for r in self.ranks if r is not None)
        if len(ranks) < 2:
            self.app.notify("one rank only: > and < switch between the ranks of a torchrun job "
                        "(inductor-step --nproc-per-node 2 script.py)" if not self.is_job else
                        "no other rank has reported yet")
            return
        self.show_rank(ranks[(ranks.index(self.current.rank) + step) % len(ranks)])

    def show_rank(self, rank: int) -> None:
        """Show rank ``rank``'s recording, carrying over the graph, stage and selection."""
        if rank not in self.ranks or rank == self.current.rank:
            return
        old, new = self.current, self.ranks[rank]
        if new.agent is None and self.job is not None:
            new.agent = self.job.ranks.get(rank)
        if old.view.graph in new.session.graphs:
            new.view.graph, new.view.selected = old.view.graph, old.view.selected
            new.view.follow = old.view.follow and new.view.follow
        new.view.stage = old.view.stage
        self.current = new
        self.app._status_extra = self.rank_note(rank)
        self.app._bars.clear()
        self.app.refresh_all(force=True)

    def add_message(self, st: RankView, msg: dict[str, Any]) -> Record:
        """Index ``msg`` in rank ``st``'s session; a corrected kind guess moves its view along.  Returns
        the message's record (decoded by the session)."""
        rec = st.session.add(msg)
        self.follow_correction(st, rec)
        return rec

    @staticmethod
    def follow_correction(st: RankView, msg: Record) -> None:
        """A dynamo stop that ``corrects`` the kind guessed for its graph: a view on the guessed
        graph moves to the real one (the session has dropped the guess).  ``msg``: any message's record."""
        corrects = msg.corrects if msg.SCHEMA is DynamoStop else None
        guessed = str(GraphKey.of(msg).replace(kind=str(corrects))) if corrects else None
        if guessed and st.view.graph == guessed:
            st.view.graph = graph_key(msg)
        if st.view.paused is not None and corrects and graph_key(st.view.paused) == guessed:
            st.view.paused = decode({**st.view.paused, "graph_kind": msg.graph_kind})

    def not_stepped_here(self) -> bool:
        """n at the newest stop of a rank that records without pausing: say so (True) instead of
        waiting for a stop that comes only when that rank's compile gets there."""
        if not (self.is_job and self.app.live and self.current.rank != self.stepped_rank and self.agent is not None):
            return False
        self.app.bell()
        self.app.set_status(f"rank {self.current.rank} records without pausing: its next stop comes when its "
                        f"compile gets there (n steps rank {self.stepped_rank}; > switches rank)")
        return True

    def rank_note(self, rank: int | None) -> str:
        if rank is None:
            return ""
        role = ("stepped: n continues its compile" if rank == self.stepped_rank else
                "recorded without pausing" if self.app.live else "recorded")
        return f"rank {rank} ({role})"

    def rank_title(self) -> str:
        """The title's rank part in a job: "rank 0/2 stepped", "rank 1/2 recorded"."""
        if not self.is_job:
            return ""
        r = self.current.rank
        dist = self.session.header.distributed
        n = (dist.world_size if dist else None) or \
            as_record(self.job_file or {}, Job).world_size or len([x for x in self.ranks if x is not None])
        role = "stepped" if r == self.stepped_rank and self.app.live else "recorded"
        return f"rank {r}/{n} {role}"

    def end_agents(self) -> None:
        """End the agent and its children, or the whole job (every rank, the launcher), and close
        the session files; safe to call twice."""
        if self.job is not None:
            self.job.terminate()
        for st in self.ranks.values():
            if st.agent is not None and self.job is None:
                st.agent.terminate()
            if st.writer is not None:
                st.writer.close()


__all__ = ["JobView"]
