"""The Textual app: routes the agent's messages and the global keys to the panes (one per stage).

Live mode drives an agent (:class:`inductor_step.tui.client.AgentProcess`) and records the session;
``--open`` shows recorded messages.  Both go through the same :class:`inductor_step.tui.session.Session`.
The view's state (graph, stage, the one selection) is :class:`inductor_step.tui.state.ViewState`; each
pane (:mod:`inductor_step.tui.panes`) shows itself from it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from typing import Any, Iterator

from textual import on
from textual.app import App, ComposeResult
from textual.command import Hit, Hits, Provider
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from inductor_step.tracer.protocol import CMD_CONTINUE, CMD_RUN, LAZY, STAGES, graph_key
from inductor_step.tui import bars
from inductor_step.tui.codeview import CodeView
from inductor_step.tui.compat import BlankHorizontal, BlankTabPane, MainScreen, Panes, SteadyFooter
from inductor_step.tui.keys import BINDINGS, STAGE_KEYS, help_rows
from inductor_step.tui.panes import PANES
from inductor_step.tui.panes.base import StagePane
from inductor_step.tui.panes.scheduling import SchedulingPane
from inductor_step.tui.screens.help import HelpScreen
from inductor_step.tui.screens.too_small import MIN_SIZE, TooSmallScreen
from inductor_step.tui.session import Session
from inductor_step.tui.state import BufferSelected, OpenKernel, ViewState
from inductor_step.tui.table import Table

#: where ``s`` and ``R`` write by default: the ignored sessions folder, not a clone's tracked tree
DEFAULT_OUT = "inductor-step-sessions"


def freeze_gc() -> None:
    """Move every object alive now out of the garbage collector's sight (``gc.freeze``), and make full
    collections rarer: a large session is millions of parsed JSON objects that live as long as the
    app, and a full collection over them stalled a key by ~0.5 s (BENCHMARKS.md (b))."""
    import gc  # noqa: PLC0415

    gc.freeze()
    t0, t1, t2 = gc.get_threshold()
    gc.set_threshold(t0, t1, max(t2, 1000))


_freeze_gc = freeze_gc  # the name cli.py and older callers use


def svg_to_png(svg_path: str) -> str | None:
    """Convert a screenshot SVG to PNG with ``rsvg-convert`` (librsvg) if it is installed; None
    otherwise (:data:`NO_PNG` says why and how to get it).

    Textual writes spaces as NBSP, which librsvg draws narrower than a cell, so code indentation
    would shift; the copy given to the converter uses plain spaces with ``xml:space="preserve"``.
    """
    exe = shutil.which("rsvg-convert")
    if exe is None:
        return None
    with open(svg_path, encoding="utf-8") as f:
        svg = f.read().replace("&#160;", " ").replace("<svg ", '<svg xml:space="preserve" ', 1)
    png = os.path.splitext(svg_path)[0] + ".png"
    with tempfile.NamedTemporaryFile("w", suffix=".svg", delete=False, encoding="utf-8") as tmp:
        tmp.write(svg)
    try:
        subprocess.run([exe, tmp.name, "-o", png], check=True, capture_output=True, timeout=60)
    except (subprocess.SubprocessError, OSError):
        return None
    finally:
        os.unlink(tmp.name)
    return png


#: why ``s`` saved no PNG
NO_PNG = "PNG skipped: rsvg-convert is not installed (apt install librsvg2-bin, or open the SVG in a browser)"


class Commands(Provider):
    """ctrl+p: go to a stage or a graph, run, report, screenshot."""

    def _commands(self) -> list[tuple[str, Any, str]]:
        app: StepApp = self.app  # type: ignore[assignment]
        out = [(f"Go to stage: {p.title}", lambda s=p.stage: app.action_stage(s), f"pane {p.stage}")
               for p in PANES]
        out += [(f"Go to graph: {g}", lambda g=g: app.show_graph(g), bars.graph_label(g, "").plain)
                for g in app.session.graphs]
        out += [(f"Diff with: {g}", lambda g=g: app.diff_with(g), "d: this graph against its default partner")
                for g in app.session.graphs if g != app.view.graph]
        out += [("Run and time every graph", app.action_run, "r"),
                ("Write the bug-report bundle", app.action_report, "R"),
                ("Save a screenshot", app.action_screenshot, "s")]
        return out

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, call, help_ in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), call, help=help_)


class StepApp(App[None]):
    """inductor-step's terminal UI.

    Give ``script`` (live: starts the agent) or ``messages`` (a recorded session).
    """

    TITLE = "inductor-step"
    CSS_PATH = "app.tcss"
    BINDINGS = BINDINGS
    COMMANDS = App.COMMANDS | {Commands}

    def __init__(self, script: str | None = None, script_args: list[str] | None = None,
                 messages: list[dict[str, Any]] | None = None, session_path: str | None = None,
                 screenshots: str | None = None, python: str | None = None, record_screens: bool = False,
                 diff_against: tuple[str, list[dict[str, Any]]] | None = None):
        super().__init__()
        self.diff_against = diff_against  # `inductor-step diff A B`: (A's path, A's messages); this app is B
        self.script, self.script_args = script, script_args or []
        self.session = Session()
        self.session_path = session_path
        self.screenshots = screenshots or os.path.join(DEFAULT_OUT, "screenshots")
        self.python = python
        self.record_screens = record_screens
        self.live = script is not None
        self.agent: Any = None
        self.writer: Any = None
        self.script_rc: int | None = None
        self.interrupted = False  # quit with ctrl+c: the command exits with status 130
        self.view = ViewState()
        self.saved_screenshots: list[str] = []
        self._status_extra = ""
        self._pair_first: str | None = None
        self._pending_next = 0  # n pressed while the compile ran on to its next stop
        self._prepare_timer: Any = None
        self._preparing: Iterator[None] | None = None
        self._bars: dict[str, Any] = {}
        for m in messages or []:
            self.session.add(m)

    # ------------------------------------------------------------------ layout
    def get_default_screen(self) -> Screen:
        return MainScreen(id="_default")

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        yield Static(id="stagebar")
        with BlankHorizontal():
            yield OptionList(id="graphs", classes="hidden")
            with Panes(id="panes", initial="pane-dynamo"):
                for cls in PANES:
                    with BlankTabPane(cls.title, id=f"pane-{cls.stage}"):
                        yield cls()
        yield Input(placeholder="search (Enter: next match, Esc: close)", id="search", disabled=True)
        yield Static(id="status")
        yield SteadyFooter(compact=True)

    def pane(self, stage: str) -> Any:
        return self.query_one(f"#stage-{stage}")

    def on_mount(self) -> None:
        # no animations: over SSH every animated frame is output to send
        self.animation_level = "none"
        if self.live:
            from inductor_step.tui.client import AgentProcess, SessionWriter  # noqa: PLC0415

            self.writer = SessionWriter(self.session_path, {"script": self.script, "argv": self.script_args}) \
                if self.session_path else None
            self.agent = AgentProcess(self.script, self.script_args, self._from_agent_thread,
                                      writer=self.writer, step=True, python=self.python)
        elif self.session.stops:
            first = self.session.stops[0]
            self.view.graph, self.view.stage = graph_key(first), first["stage"]
        self.refresh_all()
        self.focus_target().focus()
        if not self.live:
            # a large recorded session's stops were read lazily: parse the rest after the first frame
            self.set_timer(0.5, lambda: self.run_worker(self._preload, thread=True, group="preload"))
            if self.record_screens:
                self.run_worker(self.record_all_screens(), exclusive=True)
            if self.diff_against is not None:
                self.push_diff_sessions()

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
        try:
            self.call_from_thread(self.on_agent_message, msg)
        except RuntimeError:  # the app closed between the check and the call
            pass

    def on_agent_message(self, msg: dict[str, Any]) -> None:
        self.session.add(msg)
        t = msg.get("type")
        v = self.view
        if t == "stop":
            freeze_gc()
            if msg.get("paused"):
                v.paused = msg
                if self._pending_next > 0:  # n was pressed again before this stop arrived
                    self._pending_next -= 1
                    self._continue()
            if v.follow or v.graph is None:
                self._go(graph_key(msg), msg["stage"])
            self.refresh_all()
            if self.record_screens:
                self.call_after_refresh(self._screen_for_stop, msg)
        elif t == "output":
            if v.stage == "log":
                self.pane("log").show()
            self.refresh_status()
        elif t in ("run", "run_status"):
            self.refresh_all(force=v.stage == "run")
            if t == "run" and msg.get("error"):
                self.notify(f"timing {graph_key(msg)} failed: {msg['error']}", severity="error", timeout=8)
        elif t == "error":
            v.paused = None
            self._pending_next = 0
            if msg.get("compile_id") and msg.get("stage") in STAGES:
                self._go(graph_key(msg), msg["stage"])
            self.refresh_all(force=True)
        elif t in ("done", "agent_exit"):
            v.paused = None
            self._pending_next = 0
            if t == "done":
                self.script_rc = msg.get("returncode")
            elif self.script_rc is None:
                rc = msg.get("returncode")
                self.script_rc = rc if rc and rc > 0 else 1
            self.refresh_all(force=v.graph is None)
        elif t == "header":
            self.refresh_title()
        elif t == "fusion_query" and v.stage == "scheduling":
            self.pane("scheduling").show_pair(msg.get("a"), msg.get("b"), msg.get("verdict"), msg.get("reasons"))

    # ------------------------------------------------------------------ the view
    def _go(self, graph: str | None, stage: str) -> None:
        if graph != self.view.graph:
            self.view.selected = None  # a selection names a buffer of one graph
            self._status_extra = ""
        self.view.graph, self.view.stage = graph, stage

    def refresh_all(self, force: bool = False) -> None:
        self.refresh_title()
        self.refresh_graphs()
        self.refresh_stagebar()
        tabs = self.query_one("#panes", Panes)
        want = f"pane-{self.view.stage}"
        if tabs.active != want:
            with tabs.prevent(Panes.TabActivated):  # ours, not the user's click: no echo
                tabs.active = want
            tabs.place_underline(want)
            f = self.focused
            if f is None or (f.id or "").startswith(("table-", "code-")):
                w = self.focus_target()
                # focused now, not queued: its focused look is in the pane's first frame
                w.screen.set_focus(w, scroll_visible=False)
        self.pane(self.view.stage).show(force=force)
        self.refresh_status()
        self._schedule_prepare()

    def focus_target(self) -> Any:
        p = self.pane(self.view.stage)
        return p.table if isinstance(p, StagePane) else p.query_one(CodeView)

    def _bar(self, selector: str, text: Any) -> None:
        """A one-line bar: repainted only when its text changed (fixed height: no layout pass)."""
        if self._bars.get(selector) == text:
            return
        self._bars[selector] = text
        self.query_one(selector, Static).update(text, layout=False)

    def refresh_title(self) -> None:
        self._bar("#title", bars.title_text(self.session, self.script, self.script_args, self.session_path))

    def refresh_stagebar(self) -> None:
        self._bar("#stagebar", bars.stage_text(self.session, self.view, self.size.width or 120))

    def refresh_status(self) -> None:
        self._bar("#status", bars.status_text(self.session, self.view, self.live, self._status_extra,
                                              self.current_index()))

    def refresh_graphs(self) -> None:
        ol = self.query_one("#graphs", OptionList)
        graphs = self.session.graphs
        ol.set_class(len(graphs) <= 1, "hidden")
        if [o.id for o in ol.options] != graphs:
            ol.clear_options()
            for key in graphs:
                ol.add_option(Option(bars.graph_label(key, self.session.graph_note(key)), id=key))
        if self.view.graph in graphs and ol.highlighted != graphs.index(self.view.graph):
            ol.highlighted = graphs.index(self.view.graph)

    def missing_text(self, stage: str) -> str:
        return bars.missing_text(self.session, self.view, stage, self.live)

    def say(self, message: str, severity: str = "information") -> None:
        """A result a person must see: in the status line and as a toast (the status line is cut at
        80 columns; the toast wraps)."""
        self._status_extra = message
        self.refresh_status()
        self.notify(message, severity=severity, timeout=6)  # type: ignore[arg-type]

    @on(BufferSelected)
    def _selected(self, event: BufferSelected) -> None:
        if event.stage != self.view.stage or event.buffer != self.view.selected:
            return  # a late message: another pane or another selection since

        self._status_extra = event.why or f"selected {event.buffer}"
        self.refresh_status()
        self._schedule_prepare()

    @on(OpenKernel)
    def _open_kernel(self, event: OpenKernel) -> None:
        if event.buffer:
            self.view.selected = event.buffer
        self.view.stage = "codegen"
        self.refresh_all()
        pane = self.pane("codegen")
        data = pane.data()
        if data is not None:
            keys = pane.cached_rows(data)[0]
            if event.kernel in keys:
                pane.table.move_cursor(row=keys.index(event.kernel))

    # ------------------------------------------------------------------ the next stop, ahead of n
    PREPARE_DELAY_S = 0.05

    def _schedule_prepare(self) -> None:
        """Warm what the next key will likely cost on a large session (the next stop's rows, widths and
        highlighted lines), once the view has been still for PREPARE_DELAY_S; in small steps, so a key
        pressed meanwhile comes first."""
        if self._prepare_timer is not None:
            self._prepare_timer.stop()
        self._preparing = None
        self._prepare_timer = self.set_timer(self.PREPARE_DELAY_S, self._start_prepare)

    def _start_prepare(self) -> None:
        self._preparing = self._prepare_next()
        self._prepare_step()

    def _prepare_step(self) -> None:
        it, self._prepare_timer = self._preparing, None
        if it is None:
            return
        try:
            next(it)
        except Exception:  # noqa: BLE001 - StopIteration, or a warm-up that failed: the key does the work
            self._preparing = None
            return
        self._prepare_timer = self.set_timer(0.001, self._prepare_step)

    def _prepare_next(self) -> Iterator[None]:
        cur = self.current_index()
        if cur is None or cur + 1 >= len(self.session.stops):
            return
        nxt = self.session.stops[cur + 1]
        graph, stage = graph_key(nxt), nxt["stage"]
        if LAZY in nxt or self.session.error_for(graph) is not None:
            return
        pane = self.pane(stage)
        if graph != self.view.graph:  # another graph: its rows only (the detail reads the view's graph)
            if stage in STAGES and stage != "run":
                yield
                pane.cached_rows(self.session.stop_for(graph, stage))
            return
        data = pane.data()
        if data is None:
            return
        yield
        h = self.focus_target().scrollable_content_region.height or 40
        yield from pane.warm(data, h)

    # ------------------------------------------------------------------ stepping
    def current_index(self) -> int | None:
        """The stop shown, or for a pane that is no stop (linked, run, log) the graph's last stop."""
        v, last = self.view, None
        for i, s in enumerate(self.session.stops):
            if graph_key(s) == v.graph:
                if s["stage"] == v.stage:
                    return i
                last = i
        return last

    def _continue(self) -> None:
        self.view.paused = None
        self.view.follow = True
        self.agent.send(CMD_CONTINUE)

    def action_next_stop(self) -> None:
        stops = self.session.stops
        cur = self.current_index()
        if cur is not None and cur + 1 < len(stops):
            nxt = stops[cur + 1]
            self._go(graph_key(nxt), nxt["stage"])
            self.view.follow = cur + 1 == len(stops) - 1
            self.refresh_all()
            return
        if self.agent is not None and self.agent.alive:
            if self.view.paused is not None:
                self._continue()
            elif self.view.follow and self.session.done is None:
                self._pending_next += 1  # the compile is on its way to the next stop: go on from there too
            else:
                self.bell()
                return
            self._status_extra = "continuing the compile…"
            self.refresh_status()
            self.refresh_stagebar()
            return
        self.bell()

    def action_prev_stop(self) -> None:
        stops = self.session.stops
        cur = self.current_index()
        if cur is None:
            if stops:
                self._go(graph_key(stops[-1]), stops[-1]["stage"])
                self.refresh_all()
            return
        exact = graph_key(stops[cur]) == self.view.graph and stops[cur]["stage"] == self.view.stage
        target = cur - 1 if exact else cur  # from linked/run/log: the graph's last stop first
        if target < 0:
            self.bell()
            return
        self._go(graph_key(stops[target]), stops[target]["stage"])
        self.view.follow = False
        self.refresh_all()

    def action_stage(self, stage: str) -> None:
        self.view.stage = stage
        if stage != "log" and self.session.stops:
            self.view.follow = False
        self.refresh_all()

    def show_graph(self, key: str) -> None:
        if key != self.view.graph:
            self._go(key, self.view.stage)
            self.view.follow = False
            self.refresh_all()

    def action_pick_graph(self) -> None:
        ol = self.query_one("#graphs", OptionList)
        if len(self.session.graphs) > 1:
            ol.add_class("shown")
            ol.focus()
        else:
            self.notify("only one compiled graph so far")

    @on(OptionList.OptionHighlighted, "#graphs")
    def _graph_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_index != event.option_list.highlighted:
            return  # stale: the highlight has moved on
        if event.option.id and event.option.id != self.view.graph:
            try:
                self.show_graph(event.option.id)
            except NoMatches:  # a late highlight while the app is closing
                return

    @on(OptionList.OptionSelected, "#graphs")
    def _graph_chosen(self, event: OptionList.OptionSelected) -> None:
        """Enter in the graph list: that graph, and the keys go back to its pane."""
        ol = self.query_one("#graphs", OptionList)
        if event.option.id:
            self.show_graph(event.option.id)
        ol.remove_class("shown")
        self.focus_target().focus()

    @on(Panes.TabActivated, "#panes")
    def _tab_clicked(self, event: Panes.TabActivated) -> None:
        try:
            panes = self.query_one("#panes", Panes)
        except NoMatches:
            return
        if event.pane.id != panes.clicked:
            return  # the echo of our own switch: only a click changes the stage
        panes.clicked = None
        stage = (event.pane.id or "").removeprefix("pane-")
        if stage and stage != self.view.stage:
            self.action_stage(stage)

    def on_resize(self, event: Any) -> None:
        # below 100 columns the graph list would take a third of the screen: g shows it
        self.query_one("#graphs", OptionList).set_class(event.size.width < 100, "narrow")
        self.query_one("#linked-row").set_class(event.size.width < 130, "narrow")
        self.refresh_stagebar()
        small = event.size.width < MIN_SIZE[0] or event.size.height < MIN_SIZE[1]
        top = self.screen_stack[-1] if self.screen_stack else None
        if small:
            if not isinstance(top, TooSmallScreen):
                screen = TooSmallScreen()
                self.push_screen(screen)
                self.call_after_refresh(screen.show, event.size.width, event.size.height)
            else:
                top.show(event.size.width, event.size.height)
        elif isinstance(top, TooSmallScreen):
            self.pop_screen()

    # ------------------------------------------------------------------ diff (issue 21)
    def action_diff(self) -> None:
        """d: the graph highlighted in the graph list (else the one shown) against its default partner
        (a recompile [0/1] against [0/0] of the same kind)."""
        from inductor_step.tui.diff import default_partner  # noqa: PLC0415

        key = self.view.graph
        ol = self.query_one("#graphs", OptionList)
        if self.focused is ol and ol.highlighted is not None:
            key = ol.options[ol.highlighted].id or key
        other = default_partner(self.session.graphs, key) if key else None
        if key is None or other is None:
            self.notify("diff needs two compiled graphs (ctrl+p: Diff with … picks the other)")
            return
        self.diff_with(other, key)

    def diff_with(self, other: str, key: str | None = None) -> None:
        """The diff screen of ``key`` (default: the graph shown) and ``other``, the earlier one as A."""
        from inductor_step.tui.diff import Graph, diff_graphs  # noqa: PLC0415
        from inductor_step.tui.screens.diff import DiffPair, DiffScreen  # noqa: PLC0415

        key = key or self.view.graph
        if key is None or other == key:
            return
        graphs = self.session.graphs
        a, b = sorted((other, key), key=lambda g: graphs.index(g) if g in graphs else 0)
        d = diff_graphs(Graph.from_session(self.session, a), Graph.from_session(self.session, b))
        self.query_one("#graphs", OptionList).remove_class("shown")
        self.push_screen(DiffScreen([DiffPair(a, b, "", d)]))

    def push_diff_sessions(self) -> None:
        """`inductor-step diff A B`: the diff screen over every pair of graphs of A and this session (B)."""
        from inductor_step.tui.diff import diff_sessions  # noqa: PLC0415
        from inductor_step.tui.screens.diff import DiffPair, DiffScreen  # noqa: PLC0415

        assert self.diff_against is not None
        path_a, msgs = self.diff_against
        other = Session()
        for m in msgs:
            other.add(m)
        la, lb = os.path.basename(path_a), os.path.basename(self.session_path or "B")
        pairs = [DiffPair(*p) for p in diff_sessions(other, self.session, "", "")]
        self.push_screen(DiffScreen(pairs, same_session=False, label_a=la, label_b=lb))

    def open_in_pane(self, graph: str, stage: str, name: str, buffers: list[str]) -> None:
        """Show ``graph``'s pane ``stage`` with the row of ``name`` (an FX node, a buffer, a scheduler
        node, a kernel) under the cursor; ``buffers`` (its IR buffers) become the selection."""
        self._go(graph, stage)
        self.view.follow = False
        self.view.selected = buffers[0] if buffers else None
        self.refresh_all()
        pane = self.pane(stage)
        data = pane.data() if isinstance(pane, StagePane) else None
        if data is not None and name:
            keys, row, _w = pane.cached_rows(data)
            by_name = getattr(pane, "_rows_by_name", None)  # FX panes key their rows by index
            i = keys.index(name) if name in keys else by_name(data).get(name) if by_name else \
                next((i for i in range(len(keys)) if str(row(i)[0]) == name), None)
            if i is not None and pane.table.cursor_row != i:
                pane.table.move_cursor(row=i)
        self.focus_target().focus()

    # ------------------------------------------------------------------ scheduling: f
    def action_fusion_pair(self) -> None:
        """Pane 4: f on one node, then f on another: were they fused, and why."""
        if self.view.stage != "scheduling":
            self.notify("f (were two nodes fused?) works in pane 4, scheduling")
            return
        pane: SchedulingPane = self.pane("scheduling")
        table = pane.table
        if not table.row_count:
            return
        name = table.row_keys[table.cursor_row]
        if self._pair_first is None or self._pair_first == name:
            self._pair_first = name
            self._status_extra = f"fusion pair: {name} and … (move to another node, press f)"
            self.refresh_status()
            return
        a, b = self._pair_first, name
        self._pair_first = None
        v = self.view
        live = (self.agent is not None and v.paused is not None and graph_key(v.paused) == v.graph
                and v.paused["stage"] in ("scheduling", "loopbody", "codegen"))
        asking = ("asking scheduler.can_fuse …" if live else
                  "can_fuse for any pair is asked live while the compile is paused at this graph's scheduling, "
                  "loopbody or codegen stop")
        pane.show_pair(a, b, asking=asking)
        self._status_extra = f"fusion pair {a} and {b}: answer below"
        self.refresh_status()
        if live:
            self.agent.send("can_fuse", a=a, b=b)

    # ------------------------------------------------------------------ search
    def action_search(self) -> None:
        f = self.focused
        self._search_target = f if isinstance(f, (CodeView, Table)) else self.focus_target()
        box = self.query_one("#search", Input)
        box.disabled = False
        box.add_class("shown")
        where = "table" if isinstance(self._search_target, Table) else "code"
        box.placeholder = f"search the {where} (tab before / to search the other part); Enter: next; Esc: close"
        box.focus()

    @on(Input.Submitted, "#search")
    def _search(self, event: Input.Submitted) -> None:
        target = getattr(self, "_search_target", None)
        needle = event.value.strip()
        if not needle or target is None:
            return
        found, where = None, "code"
        if isinstance(target, CodeView):
            found = target.find(needle)
        elif isinstance(target, Table):
            where = "table"
            low, n = needle.lower(), target.row_count
            for k in range(1, n + 1):
                r = (target.cursor_row + k) % n
                if any(low in str(c).lower() for c in target.get_row_at(r)):
                    target.move_cursor(row=r)
                    found = r + 1
                    break
            if found is None:  # not in the table: the code below it, which the person sees too
                code = self.pane(self.view.stage).code
                found, where = code.find(needle), "code"
        label = "row" if where == "table" else "line"
        self._status_extra = f"'{needle}' in the {where}: " + (f"{label} {found}" if found else "no match")
        self.refresh_status()

    def on_key(self, event: Any) -> None:
        box = self.query_one("#search", Input)
        if event.key == "escape" and box.has_class("shown"):
            box.remove_class("shown")
            box.disabled = True
            (getattr(self, "_search_target", None) or self.focus_target()).focus()
            event.stop()

    # ------------------------------------------------------------------ run, screenshots, report, help, quit
    def action_run(self) -> None:
        if self.agent is None or not self.agent.alive:
            self.notify("no live script to time (a recorded session, or the script's process has ended)",
                        severity="warning")
            return
        self.agent.send(CMD_RUN)
        self.session.run_status = "timing requested…"
        self.view.stage = "run"
        self.refresh_all(force=True)

    def action_cancel_run(self) -> None:
        if self.agent is not None and self.agent.alive:
            self.agent.send("cancel_run")
            self.session.run_status = "cancelling…"
            self.refresh_status()

    def screenshot_name(self) -> str:
        base = os.path.splitext(os.path.basename(self.session_path or self.script or "session"))[0]
        g = (self.view.graph or "nograph").replace("[", "").replace("]", "").replace("/", "-").replace(" ", "_")
        return f"{base}_{g}_{self.view.stage}_{time.strftime('%H%M%S')}.svg"

    def action_screenshot(self, png: bool = True) -> None:
        os.makedirs(self.screenshots, exist_ok=True)
        path = self.save_screenshot(self.screenshot_name(), self.screenshots)
        png_path = svg_to_png(path) if png else None
        self.saved_screenshots += [p for p in (path, png_path) if p]
        why = "" if png_path or not png else ("; " + (NO_PNG if shutil.which("rsvg-convert") is None
                                                      else "PNG skipped: rsvg-convert failed"))
        self.say(f"screenshot saved: {path}" + (f" (+ {os.path.basename(png_path)})" if png_path else "") + why)

    def _screen_for_stop(self, stop: dict[str, Any]) -> None:
        """--record-screens: one screenshot of this stop's pane."""
        saved = (self.view.graph, self.view.stage)
        self.view.graph, self.view.stage = graph_key(stop), stop["stage"]
        if saved != (self.view.graph, self.view.stage):
            self.refresh_all()
        self.action_screenshot(png=False)
        if saved != (self.view.graph, self.view.stage):
            self.view.graph, self.view.stage = saved
            self.refresh_all()

    async def record_all_screens(self) -> None:
        """--record-screens on a recorded session: one screenshot per stop, then back to the first."""
        import asyncio  # noqa: PLC0415

        for stop in list(self.session.stops):
            if not self.is_running:
                return
            self._go(graph_key(stop), stop["stage"])
            try:
                self.refresh_all()
                done = asyncio.Event()
                self.screen.refresh()
                self.call_after_refresh(done.set)
                await done.wait()
                self.action_screenshot(png=False)
            except NoMatches:
                return
        if self.session.stops:
            self._go(graph_key(self.session.stops[0]), self.session.stops[0]["stage"])
            self.refresh_all()
        self.say(f"saved {len(self.session.stops)} screenshots into {self.screenshots}/")

    def selection(self) -> str | None:
        """What the user stands on: the selected buffer, else the pane's cursor row."""
        if self.view.selected:
            return self.view.selected
        p = self.pane(self.view.stage)
        t = p.table if isinstance(p, StagePane) else None
        return str(t.get_row_at(t.cursor_row)[0]) if t is not None and t.row_count else None

    def action_report(self) -> None:
        if not self.session_path:
            self.notify("no session file to report from", severity="warning")
            return
        from inductor_step.tui.report import build_report  # noqa: PLC0415

        if self.writer is not None:
            self.writer.f.flush()
        try:
            out = build_report(self.session_path, screenshots=self.saved_screenshots,
                               stood={"graph": self.view.graph, "stage": self.view.stage,
                                      "selection": self.selection()})
        except (OSError, ValueError) as e:
            self.say(f"report failed: {e}", "error")
        else:
            self.say(f"report bundle written: {out}")

    def action_help(self) -> None:
        note = ("The compile pauses after each stage; b and the panes only view earlier stops. "
                f"Screenshots go to {self.screenshots}/. q exits with the script's status, ctrl+c with 130.")
        self.push_screen(HelpScreen(help_rows(BINDINGS), note))

    def action_quit_app(self, interrupted: bool = False) -> None:
        """q or ctrl+c (``interrupted``): end the agent and its children, close the session file, exit."""
        self.interrupted = interrupted
        if self.agent is not None:
            self.agent.terminate()
        if self.writer is not None:
            self.writer.close()
        self.exit()


__all__ = ["StepApp", "STAGE_KEYS", "freeze_gc", "svg_to_png"]
