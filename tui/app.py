"""The Textual app: routes the agent's messages and the global keys to the panes (one per stage).

Live mode drives an agent (:class:`inductor_step.live.client.AgentProcess`) or a torchrun job's ranks (:mod:`.job`)
and records the session; ``--open`` shows recorded messages; both through one :class:`inductor_step.session.store.Store`.
The view's state (graph, stage, the one selection) is :class:`.state.ViewState`; each pane shows itself from it."""

from __future__ import annotations

import contextlib
import gc
import os
from typing import Any

from textual import on
from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widgets import Static

from inductor_step.session.format import CMD_CANCEL_RUN, CMD_RUN, graph_key
from inductor_step.session.format.records import Record
from inductor_step.tui import bars, routes, stepping
from inductor_step.tui.codeview import CodeView, highlight_code
from inductor_step.tui.compat import BlankHorizontal, BlankTabPane, MainScreen, Panes, SteadyFooter, lazy_module
from inductor_step.tui.keys import BINDINGS, help_rows
from inductor_step.tui.mounting import PaneMounter
from inductor_step.tui.panes import pane_class
from inductor_step.tui.panes.base import StagePane
from inductor_step.tui.graphlist import GraphSide
from inductor_step.tui.prepare import Preparer
from inductor_step.tui.screens.too_small import follow_size
from inductor_step.tui.search import SearchBox, SearchLine
# what the first frame does not use is imported when first used
screenshots = lazy_module("inductor_step.tui.screenshots")
diff_actions = lazy_module("inductor_step.tui.screens.diff_actions")
whatif = lazy_module("inductor_step.tui.screens.whatif")
from inductor_step.session.store import Store, freeze_gc
from inductor_step.tui.job import JobView, LiveJob, RecordedJob  # noqa: F401 - LiveJob, RecordedJob: the jobs cli/ hands the app
from inductor_step.tui.state import OpenKernel, RankView, ViewState

def _commands() -> type:
    """ctrl+p's provider of our commands (imported when the palette first opens)."""
    from inductor_step.tui.commands import Commands  # noqa: PLC0415

    return Commands


#: where ``s`` and ``R`` write by default: the ignored sessions folder, not a clone's tracked tree
DEFAULT_OUT = "inductor-step-sessions"


def _of_jobs(name: str) -> Any:
    """An attribute of the app read from its rank view (:class:`.job.JobView`, ``app.jobs``)."""
    return property(lambda app: getattr(app.jobs, name))


class StepApp(App[None]):
    """inductor-step's terminal UI: give ``script`` (live: starts the agent) or ``messages`` (recorded)."""

    TITLE = "inductor-step"
    CSS_PATH = "app.tcss"
    BINDINGS = BINDINGS
    COMMANDS = {lambda: _commands()}  # ours first, then Textual's system commands (tui/commands.py)
    # app.tcss: tabs closer below 100 columns; pane 8's table wide enough for its kernel column from 180
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide"), (180, "-xwide")]

    def __init__(self, script: str | None = None, script_args: list[str] | None = None,
                 messages: list[dict[str, Any]] | None = None, session_path: str | None = None,
                 screenshots: str | None = None, python: str | None = None, record_screens: bool = False,
                 diff_against: tuple[str, list[dict[str, Any]]] | None = None,
                 job: dict[str, Any] | None = None):
        super().__init__()
        self.gc_paused = not gc.isenabled()
        self.code_highlight = False  # code views draw plain text in the first frame (tui.codeview), colours after
        self.diff_against = diff_against  # `inductor-step diff A B`: (A's path, A's messages); this app is B
        self.script, self.script_args = script, script_args or []
        self.jobs = JobView(self, job)  # one RankView per rank of a torchrun job (tui/job.py)
        self.session_path = session_path
        self.screenshots = screenshots or os.path.join(DEFAULT_OUT, "screenshots")
        self.python, self.record_screens = python, record_screens
        self.live = script is not None
        self.interrupted = False  # quit with ctrl+c: the command exits with status 130
        self.saved_screenshots: list[str] = []
        self._status_extra = ""
        self._status_for: str | None = None  # the pane _status_extra speaks of, when only of one
        self.preparer = Preparer(self)
        self._bars: dict[str, Any] = {}
        self._bar_decode = False  # the stage bar's run mark decodes runs once the first frame is on screen
        self._all_notes = False  # the graph list's notes it cuts off are read once the first frame is on screen
        self.mounter = PaneMounter(self)
        self.search = SearchLine(self)  # `/`, mounted after the first frame
        for m in messages or []:
            self.session.add(m)
        self.jobs.add_recorded_ranks(job)
        if not self.live and self.session.stops:
            first = self.session.stops[0]
            self.view.graph, self.view.stage = graph_key(first), first["stage"]

    # ------------------------------------------------------------------ the shown rank (tui.job.JobView)
    # the shown rank's recording, view and agent, as the panes read them (``app.session``); ``current`` its RankView,
    # ``job`` a live torchrun job's process (live.client.JobProcess) or None
    session: Store = _of_jobs("session")
    view: ViewState = _of_jobs("view")
    agent: Any = _of_jobs("agent")
    writer: Any = _of_jobs("writer")
    script_rc: int | None = _of_jobs("script_rc")
    is_job: bool = _of_jobs("is_job")
    current: RankView = _of_jobs("current")
    ranks: dict[int | None, RankView] = _of_jobs("ranks")
    job: Any = _of_jobs("job")

    def end_agents(self) -> None:
        """End the agent or the whole job (:meth:`JobView.end_agents`); safe to call twice."""
        self.jobs.end_agents()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The footer's ``r Run`` only where r can time something: a live script of one process (an ``--open``
        session showed it, and r there only said it could not); r elsewhere goes to ``run('why')``, which says why."""
        return action != "run" or bool(parameters) or (self.live and not self.is_job)

    def action_next_rank(self, step: int = 1) -> None:
        """>/<: the next (previous) rank's recording (:meth:`JobView.next_rank`)."""
        self.jobs.next_rank(step)

    # ------------------------------------------------------------------ layout
    def get_default_screen(self) -> Screen:  # noqa: D102
        return MainScreen(id="_default")

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        yield Static(id="stagebar")
        with BlankHorizontal():
            yield GraphSide()
            specs = self.mounter.specs()
            first = next((s for s in specs if s.stage == self.view.stage), specs[0])
            # every tab, and the pane of the first frame; the others are mounted right after it
            with Panes([(spec.title, f"pane-{spec.stage}") for spec in specs], id="panes", initial=f"pane-{first.stage}"):
                with BlankTabPane(first.title, id=f"pane-{first.stage}"):
                    yield pane_class(first)()
        yield Static(id="status")  # the search line (hidden until /) goes above it right after the first frame
        yield SteadyFooter(compact=True)

    def pane(self, stage: str) -> Any:
        """Pane ``stage``'s widget, mounted now if it was not yet (tui.mounting.PaneMounter)."""
        return self.mounter.pane(stage)

    def on_mount(self) -> None:
        # no animations: over SSH every animated frame is output to send
        self.animation_level = "none"
        if self.live and self.is_job:
            self.jobs.start_job()
        elif self.live:
            from inductor_step.live.client import AgentProcess, SessionWriter  # noqa: PLC0415

            self.current.writer = SessionWriter(self.session_path, {"script": self.script, "argv": self.script_args}) \
                if self.session_path else None
            self.current.agent = AgentProcess(self.script, self.script_args, self._from_agent_thread,
                                              writer=self.writer, step=True, python=self.python)
        tabs = self.query_one("#panes", Panes)
        for spec in self.mounter.specs():  # reached by their keys only (tui.panes.PaneSpec.hide_tab)
            if getattr(spec, "hide_tab", False) or getattr(spec, "HIDE_TAB", False):
                tabs.hide_tab(f"pane-{spec.stage}")
        if not self.session.numerics:
            tabs.hide_tab("pane-numerics")
        tabs.place_underline(f"pane-{self.view.stage}")  # in the first frame, not the one after it
        self.refresh_all(first=True)
        self.focus_target().focus()
        self.call_after_refresh(highlight_code, self)
        self.call_after_refresh(self._bar_runs_decoded)
        self.call_after_refresh(self._all_graph_notes)
        self.call_after_refresh(self.search.box)
        self.call_after_refresh(self.call_after_refresh, self.mounter.mount_all)  # after the 2nd refresh
        if self.gc_paused:  # --open turned the collector off until the first frame
            self.call_after_refresh(gc.enable)
        if not self.live:
            # a large recorded session's stops were read lazily: parse the rest after the first frame
            self.set_timer(0.5, lambda: self.run_worker(self._preload, thread=True, group="preload"))
            if self.record_screens:
                self.run_worker(screenshots.every_stop(self), exclusive=True)
            if self.diff_against is not None:
                diff_actions.diff_sessions(self)

    def _preload(self) -> None:
        from textual.worker import get_current_worker  # noqa: PLC0415

        worker = get_current_worker()
        self.session.preload(lambda: worker.is_cancelled or not self.is_running)
        freeze_gc()

    # ------------------------------------------------------------------ agent messages
    def _from_agent_thread(self, msg: dict[str, Any]) -> None:
        """Reader threads hand messages to the UI thread; after quit they are only recorded."""
        if not self.is_running:
            return
        with contextlib.suppress(RuntimeError):  # the app closed between the check and the call
            self.call_from_thread(self.on_agent_message, msg)

    def on_agent_message(self, msg: dict[str, Any]) -> Record:
        """One message from the shown rank's agent: the session decodes and indexes it (its record comes back),
        then the UI reacts by its type (:func:`.routes.react`).  Returns the record."""
        rec = self.jobs.add_message(self.current, msg)
        routes.react(self, rec)
        return rec

    # ------------------------------------------------------------------ the view
    def go(self, graph: str | None, stage: str) -> None:
        if graph != self.view.graph:
            self.view.selected = None  # a selection names a buffer of one graph
            self._status_extra = ""
        self.view.graph, self.view.stage = graph, stage

    def refresh_all(self, force: bool = False, first: bool = False, same_graph: bool = False) -> None:
        """The bars, the graph list and the shown pane brought up to the view.  ``first``: the app's first
        frame, whose stage pane shows its table at once and its selection and detail in the next frame
        (the detail's text and marks were ~17 ms of a 2 MB session's first frame).  ``same_graph``: only the
        stage changed (a pane's key), so the title and the graph list, which do not show it, stay as drawn."""
        if not same_graph:
            self.refresh_title()
            self.refresh_graphs()
        self.refresh_stagebar()
        if not self.pane(self.view.stage).is_mounted:  # a key before the panes were mounted: once they are
            self.call_later(self.mounter.refresh_when_mounted, force)
            return
        tabs = self.query_one("#panes", Panes)
        want = f"pane-{self.view.stage}"
        if tabs.active != want:
            with tabs.prevent(Panes.TabActivated):  # ours, not the user's click: no echo
                tabs.active = want
            tabs.place_underline(want)
        # the keys stay inside the visible pane: a focused widget in a hidden pane would pull
        # TabbedContent back to its own tab (a click on a tab leaves the old pane's table focused)
        f = self.focused
        pane = self.pane(self.view.stage)
        if f is None or ((f.id or "").startswith(("table-", "code-")) and pane not in f.ancestors):
            w = self.focus_target()
            # focused now, not queued: its focused look is in the pane's first frame
            w.screen.set_focus(w, scroll_visible=False)
        if first and isinstance(pane, StagePane):
            pane.show(force=force, detail=False)
            self.call_after_refresh(self._first_detail, pane)
        else:
            pane.show(force=force)
        self.refresh_status()
        self.preparer.schedule()

    def _first_detail(self, pane: Any) -> None:
        """The first frame's selection and detail, in the frame after it (:meth:`refresh_all`)."""
        if pane.is_mounted and self.pane(self.view.stage) is pane:
            pane.show()
            self.refresh_status()

    def focus_target(self) -> Any:
        p = self.pane(self.view.stage)
        if not p.is_mounted:
            return p
        return p.table if isinstance(p, StagePane) else p.query_one(CodeView)

    def _bar(self, selector: str, text: Any) -> None:
        """A one-line bar: repainted only when its text changed (fixed height: no layout pass)."""
        if self._bars.get(selector) == text:
            return
        self._bars[selector] = text
        self.query_one(selector, Static).update(text, layout=False)

    def refresh_title(self, width: int | None = None) -> None:
        """The title bar at ``width`` cells (the app's width where None; a resize passes the new one)."""
        self._bar("#title", bars.title_text(self.session, self.script, self.script_args, self.session_path,
                                            self.jobs.rank_title(), width or self.size.width))

    def refresh_stagebar(self) -> None:
        # the first frame's bar leaves out a run mark that only uncompressing runs would tell (an older what-if
        # session's, tui.bars.stage_text): it follows right after that frame (_bar_runs_decoded)
        self._bar("#stagebar", bars.stage_text(self.session, self.view, self.size.width or 120,
                                               decode=self._bar_decode))

    def _bar_runs_decoded(self) -> None:
        self._bar_decode = True
        self.refresh_stagebar()

    def _all_graph_notes(self) -> None:
        """Right after the first frame: the graph list's notes it left out as cut off (refresh_graphs)."""
        self._all_notes = True
        self.refresh_graphs()

    def refresh_status(self) -> None:
        self._bar("#status", bars.status_text(self.session, self.view, self.live, self._status_extra,
                                              self.current_index(), self.size.width or 120))

    def refresh_graphs(self) -> None:
        graphs = self.session.graphs
        side = self.query_one(GraphSide)
        # the first frame reads the notes it can show (each reads the graph's dynamo stop, parsed on first use):
        # the shown graph's, and those of keys short enough to leave the narrow list room for one; the rest follow
        # right after that frame (_all_graph_notes), drawn the same
        if not self._all_notes:
            graphs = [g for g in graphs if g == self.view.graph or side.note_may_show(g)]
        notes = self.session.cache.get(("graph_notes", len(graphs)), tuple(self.session.stop_for(g, "dynamo")
                                                                           for g in graphs),
                                       lambda: {g: self.session.graph_note(g) for g in graphs})
        side.update(self.session.graphs, notes, self.view.graph)

    def missing_text(self, stage: str) -> str:
        return bars.missing_text(self.session, self.view, stage, self.live)

    def set_status(self, message: str) -> None:
        """A line for the status bar, after where the compile stands."""
        self._status_extra = message
        self.refresh_status()

    def say(self, message: str, severity: str = "information") -> None:
        """A result a person must see: in the status line and as a toast (the status line is cut at
        80 columns; the toast wraps)."""
        self.set_status(message)
        self.notify(message, severity=severity, timeout=6, markup=False)  # type: ignore[arg-type]

    def select(self, buffer: str, why: str = "") -> None:
        """The one way a person's pick changes the selection: the view state holds IR buffer ``buffer``
        (every pane puts its cursor on its row when shown, tui.panes.base.StagePane.follow_selection), the
        status line says it (``why``, else "selected buf3") and the next stop's panes are warmed for it."""
        self.view.selected = buffer
        self._status_extra = why or f"selected {buffer}"
        self.refresh_status()
        self.preparer.schedule()

    @on(OpenKernel)
    def _open_kernel(self, event: OpenKernel) -> None:
        self.open_in_pane(self.view.graph, "codegen", event.kernel, [event.buffer] if event.buffer else [])

    # ------------------------------------------------------------------ stepping
    def current_index(self) -> int | None:
        """The stop shown, or for a pane that is no stop the graph's last stop (tui.stepping)."""
        return stepping.current_index(self)

    def action_next_stop(self) -> None:
        stepping.next_stop(self)

    def action_prev_stop(self) -> None:
        stepping.prev_stop(self)

    def action_stage(self, stage: str) -> None:
        missing = self.jobs.pane_missing(stage)
        if missing:
            self.notify(missing)
            return
        self.view.stage = stage
        if self._status_for and self._status_for != stage:  # a message about another pane: not this one's
            self._status_extra, self._status_for = "", None
        if stage != "log" and self.session.stops:
            self.view.follow = False
        self.refresh_all(same_graph=True)

    def show_graph(self, key: str) -> None:
        if key != self.view.graph:
            self.go(key, self.view.stage)
            self.view.follow = False
            self.refresh_all()

    def action_pick_graph(self) -> None:
        """g: open the graph list (wider, as the terminal allows); g again closes it."""
        side = self.query_one(GraphSide)
        if side.is_open and side.options.has_focus:
            side.hide()
        elif len(self.session.graphs) > 1:
            side.open()
        else:
            self.notify("only one compiled graph so far")

    #: the size :meth:`on_resize` last laid the bars out for (Textual sends the first size twice as the app starts)
    _sized: Any = None

    def on_resize(self, event: Any) -> None:
        if event.size == self._sized:
            return
        self._sized = event.size
        # below 100 columns the graph list would take a third of the screen: g shows it
        side = self.query_one(GraphSide)
        side.set_class(event.size.width < 100, "narrow")
        if event.size.width >= 100 and not side.is_open:
            side.remove_class("closed")
        for row in self.query("#linked-row"):  # pane 8's, once mounted (it sets its class when mounted too)
            row.set_class(event.size.width < 130, "narrow")
        self.refresh_title(event.size.width)
        self.refresh_stagebar()
        follow_size(self, event.size.width, event.size.height)

    # ------------------------------------------------------------------ diff
    def action_diff(self) -> None:
        """d: the graph highlighted in the graph list (else the one shown) against its default partner
        (a recompile [0/1] against [0/0] of the same kind)."""
        diff_actions.diff_default(self)

    def diff_with(self, other: str, key: str | None = None) -> None:
        """The diff screen of ``key`` (default: the graph shown) and ``other``, the earlier one as A."""
        diff_actions.diff_with(self, other, key)

    def open_in_pane(self, graph: str | None, stage: str, name: str, buffers: list[str]) -> None:
        """Show ``graph``'s pane ``stage`` with the row of ``name`` (an FX node, a buffer, a scheduler
        node, a kernel) under the cursor; ``buffers`` (its IR buffers) become the selection."""
        self.go(graph, stage)
        self.view.follow = False
        self.view.selected = buffers[0] if buffers else None
        self.refresh_all()
        pane = self.pane(stage)
        if isinstance(pane, StagePane) and name:
            pane.point_at(name)
        self.focus_target().focus()

    def action_what_if(self) -> None:
        """w: recompile the shown graph with Inductor settings changed (tui/screens/whatif.py)."""
        whatif.open_form(self)

    # ------------------------------------------------------------------ scheduling: f
    def action_fusion_pair(self) -> None:
        """Pane 4: f on one node, then f on another: were they fused, and why."""
        if self.view.stage != "scheduling":
            self.notify("f (were two nodes fused?) works in pane 4, scheduling")
            return
        self.pane("scheduling").fusion_pair()

    async def action_search(self) -> None:
        await self.search.open()

    @on(SearchBox.Done)
    def _searched(self, event: SearchBox.Done) -> None:
        self.set_status(event.result)

    # ------------------------------------------------------------------ run, screenshots, report, help, quit
    def action_run(self, _why: str = "") -> None:
        if self.agent is None or not self.agent.alive:
            self.notify("no live script to time (a recorded session, or the script's process has ended; a torchrun "
                        "job's ranks end with their script: --run times them as it ends)", severity="warning")
            return
        self.agent.send(CMD_RUN)
        self.session.note_run_status("timing requested…")
        self.view.stage = "run"
        self.refresh_all(force=True)

    def action_numerics(self) -> None:
        """e: the numerics pane; in a live session, compare the shown graph's buffers with eager first."""
        from inductor_step.tui.panes import numerics  # noqa: PLC0415

        numerics.request(self)

    def action_blame(self) -> None:
        """B: the blame pane; in a live session on a graph that diverged, bisect it first (tui.panes.blame)."""
        from inductor_step.tui.panes.blame import request  # noqa: PLC0415

        request(self)

    def action_cancel_run(self) -> None:
        from inductor_step.tui.panes.blame import cancel  # noqa: PLC0415

        if cancel(self):  # c while a blame runs: that first
            self.refresh_status()
            return
        if self.agent is not None and self.agent.alive:
            self.agent.send(CMD_CANCEL_RUN)
            self.session.note_run_status("cancelling…")
            self.refresh_status()

    def action_screenshot(self, png: bool = True) -> None:
        """s: the screen as SVG (and PNG) for a bug report, without the toasts of earlier screenshots in it: they
        are cleared first and the picture taken after the next refresh (tui.screenshots.save)."""
        self.clear_notifications()
        self.call_after_refresh(lambda: self.say(screenshots.save(self, png)))
        self.screen.refresh()  # a refresh must come for the picture to be taken (an idle terminal schedules none)

    def selection(self) -> str | None:
        """What the user stands on: the selected buffer, else the pane's cursor row."""
        if self.view.selected:
            return self.view.selected
        p = self.pane(self.view.stage)
        t = p.table if isinstance(p, StagePane) else None
        return str(t.get_row_at(t.cursor_row)[0]) if t is not None and t.row_count else None

    def action_report(self) -> None:
        """R: the bug-report bundle of this session (tui.screenshots.report)."""
        screenshots.report(self)

    def action_help(self) -> None:
        note = ("The compile pauses after each stage; b and the panes only view earlier stops. "
                f"Screenshots go to {self.screenshots}/. q exits with the script's status, ctrl+c with 130.")
        from inductor_step.tui.screens.help import HelpScreen  # noqa: PLC0415

        self.push_screen(HelpScreen(help_rows(BINDINGS), note))

    def action_quit_app(self, interrupted: bool = False) -> None:
        """q or ctrl+c (``interrupted``): end the agent and its children (a job: every rank and the
        launcher), close the session files, exit."""
        self.interrupted = interrupted
        self.jobs.end_agents()
        self.exit()


__all__ = ["StepApp"]
