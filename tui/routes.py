"""How the app reacts to each message type, once the session store has decoded and indexed it (its record).

:data:`ROUTES` is the one table: message type -> reaction; a type not in it goes to the pane on
screen (:func:`on_pane_message`).  Each reaction takes the app (:class:`inductor_step.tui.app.StepApp`)
and the message's record (:mod:`inductor_step.session.format.records`).
"""

from __future__ import annotations

from typing import Any, Callable

from inductor_step.session.format import STAGES, GraphKey, graph_key
from inductor_step.session.format.messages import InputsSaved
from inductor_step.session.format.records import Record
from inductor_step.session.store import freeze_gc
from inductor_step.tui.compat import lazy_module

screenshots = lazy_module("inductor_step.tui.screenshots")
whatif = lazy_module("inductor_step.tui.screens.whatif")


def on_stop(app: Any, msg: Record) -> None:
    """A stop: go to it when following (a paused one is where the compile waits), redraw, screenshot it when asked."""
    v = app.view
    freeze_gc()
    if app._status_extra.startswith("continuing"):
        app._status_extra = ""
    if msg.paused:  # it waits for n, whatever was typed while the compile ran
        v.paused = msg
    if v.follow or v.graph is None:
        key = GraphKey.of(msg)
        if key.subgraph and not msg.paused:
            # a higher-order op's subgraph (flex attention's mask, a cond branch) the compile did not stop at:
            # its graph is the parent's part; the view stays on (or goes to) the parent graph
            parent = str(key.parent)
            if v.graph != parent:
                app.go(parent, msg.stage)
        else:
            app.go(graph_key(msg), msg.stage)
    app.refresh_all()
    if app.record_screens:
        app.call_after_refresh(screenshots.for_stop, app, msg)


def on_output(app: Any, msg: Record) -> None:
    """The script's output: the log pane (when shown) and the status line."""
    app.pane(app.view.stage).session_message(msg)
    app.refresh_status()


def on_run(app: Any, msg: Record) -> None:
    """A timing: redraw; say when it failed; a what-if variant's goes to the what-if flow.  Its progress
    (``run_status``, several a second while a graph is timed): the status line, and the panes that show it (7
    and 9 stamp it), not the whole screen: the app's redraws took the timing threads' cores."""
    if msg.type != "run":  # run_status
        pane = app.pane(app.view.stage)
        if pane.is_mounted:
            pane.show()
        pane.session_message(msg)
        app.refresh_status()
        return
    app.refresh_all()
    app.pane(app.view.stage).session_message(msg)
    if msg.error:
        app.notify(f"timing {graph_key(msg)} failed: {msg.error}", severity="error", timeout=8, markup=False)
    elif msg.variant:
        whatif.on_message(app, msg)


def on_what_if(app: Any, msg: Record) -> None:
    """What-if progress (tui.screens.whatif)."""
    whatif.on_message(app, msg)


def on_numerics(app: Any, msg: Record) -> None:
    """A graph compared with eager: pane e (tui.panes.numerics)."""
    from inductor_step.tui.panes import numerics  # noqa: PLC0415

    numerics.on_message(app, msg)


def on_pair_timing(app: Any, msg: Record) -> None:
    """Two graphs timed round by round: r in the diff view (tui.screens.diff_rounds)."""
    from inductor_step.tui.screens.diff_rounds import on_message  # noqa: PLC0415

    on_message(app, msg)


def on_error(app: Any, msg: Record) -> None:
    """An error: go to the stage that failed, redraw."""
    app.view.paused = None
    if msg.compile_id and msg.stage in STAGES:
        app.go(graph_key(msg), msg.stage)
    app.refresh_all(force=True)


def on_end(app: Any, msg: Record) -> None:
    """``done`` (the script returned) or ``agent_exit`` (its process ended)."""
    v = app.view
    v.paused = None
    if app._status_extra.startswith("continuing"):
        app._status_extra = ""
    if msg.type == "done":
        app.current.script_rc = msg.returncode
    elif app.current.script_rc is None:
        rc = msg.returncode
        app.current.script_rc = rc if rc and rc > 0 else 1
    app.refresh_all(force=v.graph is None)


def on_header(app: Any, msg: Record) -> None:
    """The session's header: the title bar."""
    app.refresh_title()


def on_blame(app: Any, msg: Record) -> None:
    """A blame's step or verdict (B): pane B (:mod:`inductor_step.tui.panes.blame`)."""
    from inductor_step.tui.panes.blame import on_message  # noqa: PLC0415

    on_message(app, msg)


def on_pane_message(app: Any, msg: Record) -> None:
    """A type without a route: e.g. fusion_query: for the pane on screen; inputs_saved (X): pane 6, which asked."""
    app.pane("codegen" if msg.SCHEMA is InputsSaved else app.view.stage).session_message(msg)


#: message type -> how the app reacts (after the session indexed the message)
ROUTES: dict[str, Callable[[Any, Record], None]] = {
    "stop": on_stop, "output": on_output, "run": on_run, "run_status": on_run, "what_if": on_what_if,
    "numerics": on_numerics, "pair_timing": on_pair_timing, "error": on_error, "done": on_end,
    "agent_exit": on_end, "header": on_header, "blame": on_blame,
}


def react(app: Any, msg: Record) -> None:
    """The app's reaction to one message of the shown rank (its record, indexed by the session): by its type
    (:data:`ROUTES`), else for the pane on screen (:func:`on_pane_message`)."""
    ROUTES.get(msg.type, on_pane_message)(app, msg)



# ----------------------------------------------------------------- a torchrun job's ranks not on screen

def on_rank_stop(app: Any, st: Any, msg: Record) -> None:
    """A stop of a rank not shown (``st``: its tui.state.RankView): its view follows it, as the shown one's would."""
    if msg.paused:
        st.view.paused = msg
    if st.view.follow or st.view.graph is None:
        if graph_key(msg) != st.view.graph:
            st.view.selected = None
        st.view.graph, st.view.stage = graph_key(msg), msg.stage


def on_rank_end(app: Any, st: Any, msg: Record) -> None:
    """``done`` or ``agent_exit`` of a rank not shown: its script's exit status."""
    st.view.paused = None
    if msg.type == "done":
        st.script_rc = msg.returncode
    elif st.script_rc is None:
        st.script_rc = msg.returncode or 1


def on_rank_error(app: Any, st: Any, msg: Record) -> None:
    """An error of a rank not shown: a toast naming the rank."""
    if st.rank != app.current.rank:
        app.notify(f"rank {st.rank}: error in {msg.compile_id or ''} {msg.stage}: {msg.message}",
                   severity="error", timeout=8, markup=False)


#: message type -> how the app follows a rank that is not on screen (tui.job.JobView.on_rank_message)
RANK_ROUTES: dict[str, Callable[[Any, Any, Record], None]] = {
    "stop": on_rank_stop, "done": on_rank_end, "agent_exit": on_rank_end, "error": on_rank_error,
}


# ----------------------------------------------------------------- every rank of a job, and the launcher

def on_job_news(app: Any, st: Any, msg: Record) -> None:
    """A rank's header, stop, done or error: the title's rank part and pane 0 (tui.job.JobView.refresh_ranks)."""
    app.jobs.refresh_ranks()


def on_job_rank_exit(app: Any, st: Any, msg: Record) -> None:
    """A rank's ``agent_exit``: before its script's ``done`` (and not while the user ends the job), a toast saying
    where it died."""
    s = st.session
    if s.done is None and not app.jobs.is_closing_job():
        last = s.stops[-1] if s.stops else None
        where = f"after {graph_key(last)} {last.stage}" if last else "before its first stop"
        app.notify(f"rank {st.rank} died {where} (0: Ranks)", severity="error", timeout=8, markup=False)
    app.jobs.refresh_ranks()


def on_job_header(app: Any, st: Any, msg: Record) -> None:
    """A rank's header: rank 0's names the job's world size; a stepped rank (``--rank``) outside it is dropped."""
    dist = msg.distributed
    n = dist.world_size if dist else None
    jobs = app.jobs
    stepped = jobs.stepped_rank
    if n and stepped is not None and stepped >= n and st.rank == 0:
        phantom = jobs.ranks.get(stepped)
        if phantom is not None and not phantom.session.header:  # the rank the title named: not in this job
            del jobs.ranks[stepped]
            if jobs.current is phantom:
                jobs.current = jobs.ranks[0]
        app.say(f"--rank {stepped}: ranks are 0-{n - 1}; none is stepped", "warning")
    jobs.refresh_ranks()


#: message type -> what a job does with any rank's message (after the shown rank's went through :func:`react`,
#: another's through :data:`RANK_ROUTES`)
JOB_ROUTES: dict[str, Callable[[Any, Any, Record], None]] = {
    "header": on_job_header, "stop": on_job_news, "done": on_job_news, "agent_exit": on_job_rank_exit,
    "error": on_job_news,
}


def on_launcher_output(app: Any, msg: Record) -> None:
    """torch's launcher printed: its log (``0`` shows it)."""
    app.jobs.launcher_log.append((msg.stream, msg.text))


def on_launcher_exit(app: Any, msg: Record) -> None:
    """torch's launcher ended: its exit status, said when it failed."""
    rc = msg["returncode"]
    app.jobs.launcher_rc = rc
    if rc:
        app.say(f"torch's launcher exited with status {rc} (0: Ranks shows each rank)", "warning")


#: message type -> what the app does with a message of torch's launcher (live.client.JobProcess: its output and
#: its ``launcher_exit``), before the ranks are shown again
LAUNCHER_ROUTES: dict[str, Callable[[Any, Record], None]] = {
    "output": on_launcher_output, "launcher_exit": on_launcher_exit,
}

__all__ = ["ROUTES", "RANK_ROUTES", "JOB_ROUTES", "LAUNCHER_ROUTES", "on_pane_message", "react"]
