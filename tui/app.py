"""The Textual app: a stage bar, a graph picker, one pane per stage, the run pane and the log.

Live mode drives an agent (:class:`tui.client.AgentProcess`) and records the session; ``--open``
mode shows recorded messages.  Both go through the same :class:`tui.session.Session`.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any, Callable, Iterator

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.reactive import Reactive
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import ContentSwitcher, Footer, Input, OptionList, Static, TabbedContent, TabPane
from textual.widgets._tabbed_content import ContentTab
from textual.widgets._tabs import Underline
from textual.widgets.option_list import Option

from inductor_step.tracer.protocol import ALL_STAGES, LAZY, STAGES, CMD_CONTINUE, CMD_RUN, graph_key
from inductor_step.tui.codeview import CodeView, Lines, lines_of, prepare, search_line, search_word
from inductor_step.tui.table import Cell, RowKey, Table
from inductor_step.tui.session import Session

STAGE_TITLES = {"dynamo": "1 Dynamo", "aot": "2 AOT", "lowering": "3 IR", "scheduling": "4 Sched",
                "loopbody": "5 LoopBody", "codegen": "6 Codegen", "run": "7 Run", "linked": "8 Linked", "log": "Log"}

COLUMNS: dict[str, tuple[str, ...]] = {
    "dynamo": ("node", "op", "target", "shape", "dtype", "user line"),
    "aot": ("post-grad node", "op", "target", "shape", "dtype", "user line"),
    "lowering": ("buffer", "operation", "kind", "ranges", "reduction", "dtype", "size", "origins"),
    "scheduling": ("scheduler node", "type", "members", "buffers"),
    "loopbody": ("node", "fused node", "buffers", "var_ranges"),
    "codegen": ("kernel", "backend", "buffers", "fused nodes"),
    # the times, share and bandwidth first: at 80 columns they are what fits next to the (cut) names
    "run": ("kernel", "median ms [p20-p80]", "share", "GB/s", "% peak BW", "in graph ms", "in script ms", "TFLOP/s",
            "backend", "fused nodes"),
    "linked": ("buffer", "node", "fused node", "kernel"),
}
GPU_ONLY_RUN_COLUMNS = ("in graph ms", "in script ms")


def _freeze_gc() -> None:
    """Move every object alive now out of the garbage collector's sight (``gc.freeze``).

    A large session is millions of small objects (parsed JSON) that live as long as the app;
    without this, each full collection walks all of them and stalls a key press by ~0.5 s.

    Full collections are also made rarer (one per 1,000 second-generation ones instead of 10):
    even with the session frozen, one still touched the ~500,000 references of what the UI holds
    (Textual's strip caches) and took 40-100 ms, every ~10 keys on the 182 MB session.  Short-lived
    cycles are still collected by the two younger generations."""
    import gc  # noqa: PLC0415

    gc.freeze()
    t0, t1, t2 = gc.get_threshold()
    gc.set_threshold(t0, t1, max(t2, 1000))


def T(s: Any, style: str = "") -> Cell:
    """Plain text cell (never markup: compiler strings contain brackets); lists print as [a, b]."""
    if isinstance(s, (list, tuple)):
        s = "[" + ", ".join(str(x) if not isinstance(x, list) else "[" + ", ".join(map(str, x)) + "]" for x in s) + "]"
    return Cell("" if s is None else str(s), style)


# Containers whose every cell is drawn over by their children: Textual's ``BLANK`` draws them as
# blank lines of their background (they have no border or content) instead of through the CSS
# renderer line by line.  A pane switch repaints them all (the focus change refreshes the screen,
# the switch the pane containers): 200-250 lines, 8-12 ms of the 182 MB session's ``n`` before.
class BlankHorizontal(Horizontal):
    BLANK = True


class BlankVertical(Vertical):
    BLANK = True


class BlankTabPane(TabPane):
    BLANK = True


class MainScreen(Screen):
    """The app's screen.  Besides ``BLANK``: Screen's ``focused`` repaints the whole screen when it
    changes, a second full frame (~23 KB at 160x50) right after every pane switch; what focus
    changes is restyled by the widgets themselves (Textual updates the focused and blurred ones and
    their ancestors), so here it repaints nothing."""

    BLANK = True
    focused: Reactive[Widget | None] = Reactive(None, repaint=False)


class Panes(TabbedContent):
    """TabbedContent whose pane changes only when the app says so or the user clicks a tab.

    TabbedContent also activates the pane of any widget that gets focus (``TabPane.Focused``); our
    focus calls are queued, so with keys pressed quickly a late one pulled the view back to the
    previous stage.  ``clicked`` is the pane id of the last click on a tab, for the app's handler.
    """

    clicked: str | None = None
    BLANK = True

    def on_mount(self) -> None:
        # TabbedContent makes its ContentSwitcher itself (and finds it by its exact class): blank by instance
        for switcher in self.query_children(ContentSwitcher):
            switcher.BLANK = True

    def _on_tab_pane_focused(self, event: Any) -> None:
        event.stop()

    def _on_tabs_tab_activated(self, event: Any) -> None:
        tab_id = getattr(getattr(event, "tab", None), "id", None) or ""
        self.clicked = ContentTab.sans_prefix(tab_id) if tab_id else None
        super()._on_tabs_tab_activated(event)


class SteadyFooter(Footer):
    """Textual's Footer, rebuilt only when the keys it shows change.

    Footer recomposes (new FooterKey widgets, CSS applied to each) on every ``bindings_updated``
    signal, which fires on each focus change: each pane switch and stop step.  Measured with py-spy
    on the 182 MB session, that was about a quarter of a key's time; our shown keys are the app's own
    and rarely change.
    """

    _shown: tuple | None = None

    def bindings_changed(self, screen: Any) -> None:
        try:
            shown = tuple((b.key, b.description, b.action, enabled)
                          for (_, b, enabled, _tip) in screen.active_bindings.values() if b.show)
        except Exception:  # noqa: BLE001 - a Textual without this shape: behave as Footer does
            shown = None
        if shown is not None and shown == self._shown and self._bindings_ready:
            return
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            self._shown = shown  # Footer recomposes now; else it waits, and so do we
        super().bindings_changed(screen)


_POST_GRAD_HEAD = re.compile(r"# ===== post-grad")
_OTHER_LINE_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e"


def _commented(text: str) -> str:
    """``"\\n".join("# " + x for x in text.splitlines())``, without a string per line when ``text``
    has only ``\\n`` line breaks (the guards of a large graph are 11 MB: 31 ms that way)."""
    if not text.isascii() or any(c in text for c in _OTHER_LINE_BREAKS):
        return "\n".join("# " + x for x in text.splitlines())
    if not text:
        return ""
    if text.endswith("\n"):
        text = text[:-1]
    return "# " + text.replace("\n", "\n# ")


def _fx_nodes(stage: str, stop: dict[str, Any]) -> list[dict[str, Any]]:
    """The FX nodes of a dynamo or aot stop (its table's rows)."""
    return ((stop.get("graph") if stage == "dynamo" else stop.get("post_grad")) or {}).get("nodes") or []


def _node_line(lines: Lines, stage: str, name: str) -> int | None:
    """The line (0-based) of FX node ``name`` in a dynamo or aot pane's text: the line defining it,
    else the first naming it (in the aot text, from the post-grad graph on)."""
    start = (search_line(lines, _POST_GRAD_HEAD, line_start=True) or 0) if stage == "aot" else 0
    # [^\S\n]: \s on its line
    pat = re.compile(rf"[^\S\n]*{re.escape(name)}([^\S\n]*[:=]|\b.*=)")
    hit = search_line(lines, pat, start, line_start=True)
    return search_word(lines, name, start) if hit is None else hit


def _num(x: Any, fmt: str) -> str:
    return format(x, fmt) if isinstance(x, (int, float)) else "-"


def _run_cells(k: dict[str, Any], fused: dict[str, Any]) -> dict[str, Cell]:
    """The run table's cells of timed kernel ``k``, by column label (``fused``: kernel name ->
    its fused nodes, from the codegen stop)."""
    pct = k.get("pct_peak_bw")
    return {
        "kernel": T(k["name"] + (f" (call {k['call']})" if k.get("call", 1) > 1 else ""), "bold"),
        "backend": T(k.get("backend"), "magenta"),
        "median ms [p20-p80]": T(f"{k['median_ms']:.4f}"
                                 + (f" [{k['p20_ms']:.4f}-{k['p80_ms']:.4f}]" if k.get("p20_ms") is not None else "")),
        "in graph ms": T(_num(k.get("in_graph_ms") if k.get("in_graph_ms") is not None else k.get("warm_ms"), ".4f")
                         + ("" if k.get("in_graph_ms") is not None or k.get("warm_ms") is None else " warm")),
        "in script ms": T(_num(k.get("in_script_ms"), ".4f")),
        "share": T(f"{100 * k.get('share', 0):.1f}%"),
        "GB/s": T(_num(k.get("gbps"), ".1f")),
        "% peak BW": T(_num(pct, ".1f") + ("%" if pct is not None else "") + ("*" if (pct or 0) > 100 else "")),
        "TFLOP/s": T(_num(k.get("tflops"), ".2f")
                     + (f" ({k['pct_peak_tflops']:.0f}%)" if k.get("pct_peak_tflops") is not None else "")),
        "fused nodes": T(_j(fused.get(k["name"]))),
    }


def _add_rows(table: Table, rows: list[tuple], keys: list[str] | None = None) -> None:
    """Add rows, each keyed (row keys are what selection handlers receive)."""
    table.add_rows_keyed(rows, keys if keys else [str(i) for i in range(len(rows))])


def _L(xs: Any) -> str:
    """A list of sizes as Inductor prints them: [32, 64]."""
    return "[" + ", ".join(map(str, xs)) + "]" if isinstance(xs, (list, tuple)) else str(xs)


def _j(xs: Any, n: int = 6) -> str:
    if not xs:
        return ""
    xs = list(xs)
    return ", ".join(str(x) for x in xs[:n]) + (f" +{len(xs) - n}" if len(xs) > n else "")


def short_user_line(user_line: str | None, script_dir: str | None) -> str | None:
    """``file:line`` as the FX tables show it: relative to the script's directory when the file is
    under it (``train_step.py:20``, ``models/block.py:88``), from the package down when it is an
    installed one (``transformers/models/gpt2/modeling_gpt2.py:412``), else as recorded.  The code
    pane's ``# File:`` comments keep the full path."""
    if not user_line:
        return user_line
    if script_dir:
        base = script_dir.rstrip("/") + "/"
        if user_line.startswith(base):
            return user_line[len(base):]
    for marker in ("site-packages/", "dist-packages/"):
        cut = user_line.rfind(marker)
        if cut >= 0:
            return user_line[cut + len(marker):]
    return user_line


def svg_to_png(svg_path: str) -> str | None:
    """Convert a screenshot SVG to PNG with ``rsvg-convert`` if it is installed; None otherwise.

    Textual writes spaces as NBSP, which librsvg draws narrower than a cell, so code indentation
    would shift; the copy given to the converter uses plain spaces with ``xml:space="preserve"``.
    """
    import shutil  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

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


MIN_SIZE = (60, 16)


class TooSmallScreen(Screen[None]):
    """Shown instead of the panes while the terminal is below MIN_SIZE; q still quits."""

    BINDINGS = [Binding("q", "app.quit_app", "Quit"), Binding("ctrl+c", "app.quit_app(True)", "Quit")]
    DEFAULT_CSS = """
    TooSmallScreen { align: center middle; background: $background; }
    TooSmallScreen > Static { width: auto; height: auto; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="toosmall")

    def show(self, w: int, h: int) -> None:
        self.query_one("#toosmall", Static).update(Text(
            f"terminal too small: {w}x{h}\ninductor-step needs at least {MIN_SIZE[0]}x{MIN_SIZE[1]}\n"
            "(the compile keeps its place; enlarge the window, or q to quit)", justify="center"))


class HelpScreen(ModalScreen[None]):
    """Every key, as the footer shows them, plus what n/b mean while a compile is paused."""

    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "Close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Static { width: 76; max-height: 90%; border: round $accent; padding: 0 1; background: $panel; }
    """

    def __init__(self, text: Text):
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        yield Static(self.text)


class StepApp(App[None]):
    """inductor-step's terminal UI.

    Give ``script`` (live: starts the agent) or ``messages`` (a recorded session).  The view is a
    (graph, stage) pair; ``follow`` keeps it on the newest stop as the compile advances.
    """

    TITLE = "inductor-step"
    #: seconds of quiet after a cursor move before the detail panes follow it
    DETAIL_DELAY_S = 0.04
    CSS = """
    #title { height: 1; background: $primary-background; color: $text; }
    #stagebar { height: 1; }
    #status { height: 1; background: $boost; }
    #graphs { width: 26; border-right: vkey $primary; }
    #graphs.hidden { display: none; }
    #graphs.narrow { display: none; }
    #graphs.narrow.shown { display: block; width: 22; }
    TabbedContent { height: 1fr; }
    #panes { width: 1fr; }
    TabPane { padding: 0; }
    .stage-table { height: 2fr; min-height: 4; }
    .stage-code { height: 3fr; border-top: hkey $primary; }
    #linked-row { height: 1fr; }
    #table-linked { width: 34; height: 1fr; }
    #code-linkinfo { width: 2fr; height: 1fr; border-left: vkey $primary; }
    #code-linkkernel { width: 3fr; height: 1fr; border-left: vkey $primary; }
    #linked-row.narrow { layout: vertical; }
    #linked-row.narrow #table-linked { width: 1fr; height: 7; }
    #linked-row.narrow #code-linkinfo { width: 1fr; height: 1fr; border-left: none; border-top: hkey $primary; }
    #linked-row.narrow #code-linkkernel { width: 1fr; height: 1fr; border-left: none; border-top: hkey $primary; }
    #search { dock: bottom; display: none; }
    #search.shown { display: block; }
    """

    BINDINGS = [
        Binding("n,space", "next_stop", "Next stop"),
        Binding("b", "prev_stop", "Back"),
        Binding("1", "stage('dynamo')", "Stages", key_display="1-7"),
        Binding("2", "stage('aot')", "AOT", show=False),
        Binding("3", "stage('lowering')", "Lowering", show=False),
        Binding("4", "stage('scheduling')", "Sched", show=False),
        Binding("5", "stage('loopbody')", "LoopBody", show=False),
        Binding("6", "stage('codegen')", "Codegen", show=False),
        Binding("7", "stage('run')", "Run pane", show=False),
        Binding("8", "stage('linked')", "Linked"),
        Binding("l", "stage('log')", "Log"),
        Binding("f", "fusion_pair", "Fuse?", show=False),
        Binding("tab", "focus_next", "Next pane"),
        Binding("shift+tab", "focus_previous", "Prev pane", show=False),
        Binding("g", "pick_graph", "Graphs"),
        Binding("slash", "search", "Search"),
        Binding("r", "run", "Run+time"),
        Binding("c", "cancel_run", "Cancel run", show=False),
        Binding("s", "screenshot", "Screenshot"),
        Binding("R", "report", "Report"),
        Binding("question_mark,f1", "help", "Help"),
        Binding("q", "quit_app", "Quit"),
        Binding("ctrl+c", "quit_app(True)", "Quit", show=False, priority=True),
    ]

    def __init__(self, script: str | None = None, script_args: list[str] | None = None,
                 messages: list[dict[str, Any]] | None = None, session_path: str | None = None,
                 screenshots: str = "screenshots", python: str | None = None, record_screens: bool = False):
        super().__init__()
        self.script = script
        self.script_args = script_args or []
        self.session = Session()
        self.session_path = session_path
        self.screenshots = screenshots
        self.python = python
        self.record_screens = record_screens
        self.live = script is not None
        self.agent = None
        self.writer = None
        self.script_rc: int | None = None
        self.interrupted = False  # quit with ctrl+c: the command exits with status 130, as after SIGINT
        self.view_graph: str | None = None
        self.view_stage = "dynamo"
        self.follow = True
        self.paused: dict[str, Any] | None = None  # the stop the agent waits at, if any
        self._rendered: dict[str, Any] = {}
        self._texts: dict[tuple, tuple[tuple, str]] = {}  # see _memo_text
        self._rows_memo: dict[tuple, tuple] = {}  # see _table_rows
        self._node_memo: dict[tuple, tuple] = {}  # see _node_index
        self._run_shown: tuple | None = None  # the run table's kernels, fused nodes, summary, gpu (_fill_run)
        self._prepare_timer: Any = None
        self._preparing: Iterator[None] | None = None
        self._bars: dict[str, Text] = {}  # see _bar
        self.saved_screenshots: list[str] = []
        self._detail_timer: Any = None
        #: per table id: (its row keys, the row) whose details the panes show (see _details_now)
        self._detail_shown: dict[str, tuple[tuple, int]] = {}
        #: the one selection every pane follows: an IR buffer name of the viewed graph
        self.selected_buffer: str | None = None
        self._pair_first: str | None = None
        self._status_extra = ""
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
                for stage in ALL_STAGES:
                    with BlankTabPane(STAGE_TITLES[stage], id=f"pane-{stage}"):
                        with BlankVertical():
                            table = Table(id=f"table-{stage}", classes="stage-table", cursor_type="row",
                                              zebra_stripes=True)
                            yield table
                            yield CodeView(id=f"code-{stage}", classes="stage-code")
                with BlankTabPane(STAGE_TITLES["linked"], id="pane-linked"):
                    with BlankHorizontal(id="linked-row"):
                        yield Table(id="table-linked", cursor_type="row", zebra_stripes=True)
                        yield CodeView(id="code-linkinfo")
                        yield CodeView(id="code-linkkernel")
                with BlankTabPane(STAGE_TITLES["log"], id="pane-log"):
                    yield CodeView(id="code-log")
        yield Input(placeholder="search this pane (Enter: next match, Esc: close)", id="search", disabled=True)
        yield Static(id="status")
        yield SteadyFooter()

    def on_mount(self) -> None:
        # no animations (tab underline, smooth scrolling): over SSH every animated frame is output to send
        self.animation_level = "none"
        for stage, cols in COLUMNS.items():
            self.query_one(f"#table-{stage}", Table).add_columns(*cols)
        for stage in ("dynamo", "aot"):
            # FX node names and targets give up cells (evenly) before shape, dtype and the user's
            # line leave the screen; the full name and target are in the code pane below
            self.query_one(f"#table-{stage}", Table).fit((0, 2), len(COLUMNS[stage]) - 1, min_width=16)
        if self.live:
            from inductor_step.tui.client import AgentProcess, SessionWriter  # noqa: PLC0415

            self.writer = SessionWriter(self.session_path, {"script": self.script, "argv": self.script_args}) \
                if self.session_path else None
            self.agent = AgentProcess(self.script, self.script_args,
                                      self._from_agent_thread,
                                      writer=self.writer, step=True, python=self.python)
        else:
            if self.session.stops:
                first = self.session.stops[0]
                self.view_graph = graph_key(first)
                self.view_stage = first["stage"]
        self.refresh_all()
        self.query_one(f"#table-{self.view_stage}" if self.view_stage != "log" else "#code-log").focus()
        if not self.live:
            # a large recorded session's stops were read lazily: parse the rest after the first frame
            # (after a pause: the thread holds the GIL while it parses, and the first frame comes first)
            self.set_timer(0.5, lambda: self.run_worker(self._preload, thread=True, group="preload"))
        if self.record_screens and not self.live:
            self.run_worker(self.record_all_screens(), exclusive=True)

    def _preload(self) -> None:
        from textual.worker import get_current_worker  # noqa: PLC0415

        worker = get_current_worker()
        self.session.preload(lambda: worker.is_cancelled or not self.is_running)
        _freeze_gc()

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
        if t == "stop":
            _freeze_gc()
            if msg.get("paused"):
                self.paused = msg
            if self.follow or self.view_graph is None:
                self.view_graph = graph_key(msg)
                self.view_stage = msg["stage"]
            self.refresh_all()
            if self.record_screens:
                self.call_after_refresh(self._screen_for_stop, msg)
        elif t == "output":
            if self.view_stage == "log":
                self.refresh_pane(force=True)
            self.refresh_status()
        elif t in ("run", "run_status"):
            self.refresh_all(force=self.view_stage == "run")
        elif t == "error":
            self.paused = None
            if msg.get("compile_id") and msg.get("stage") in STAGES:
                self.view_graph = graph_key(msg)
                self.view_stage = msg["stage"]
            self.refresh_all(force=True)
        elif t == "done":
            self.paused = None
            self.script_rc = msg.get("returncode")
            self.refresh_all()
        elif t == "agent_exit":
            self.paused = None
            if self.script_rc is None:
                rc = msg.get("returncode")
                self.script_rc = rc if rc and rc > 0 else 1
            self.refresh_all()
        elif t == "header":
            self.refresh_title()
        elif t == "fusion_query":
            if self.view_stage == "scheduling":
                self.show_fusion_pair(msg.get("a"), msg.get("b"), msg.get("verdict"), msg.get("reasons"))

    # ------------------------------------------------------------------ rendering
    def refresh_all(self, force: bool = False) -> None:
        self.refresh_title()
        self.refresh_graphs()
        self.refresh_stagebar()
        tabs = self.query_one("#panes", TabbedContent)
        want = f"pane-{self.view_stage}"
        if tabs.active != want:
            with tabs.prevent(TabbedContent.TabActivated):  # ours, not the user's click: no echo
                tabs.active = want
            self._place_underline(want)
            # keep focus inside the visible pane (a focused widget in a hidden pane would pull
            # TabbedContent back to its own tab)
            f = self.focused
            if f is None or (f.id or "").startswith(("table-", "code-")):
                w = self.query_one(f"#table-{self.view_stage}" if self.view_stage != "log" else "#code-log")
                # focused now, not queued as focus() does: its focused look is in the pane's first
                # frame (it came in a second one, ~10 ms later)
                w.screen.set_focus(w, scroll_visible=False)
        self.refresh_pane(force=force)
        self.refresh_status()
        self._schedule_prepare()

    def _place_underline(self, pane_id: str) -> None:
        """Put the tab bar's underline under ``pane_id``'s tab now.  Textual's ``Tabs`` moves it
        after the next refresh, which painted it in a second frame, 40-60 ms after the pane; the
        tabs never move, so where it goes is known already (Textual's own computation)."""
        try:
            tab = self.query_one(f"#--content-tab-{pane_id}", ContentTab)
            underline = self.query_one("#panes Underline", Underline)
        except NoMatches:
            return
        region = tab.virtual_region.shrink(tab.styles.gutter)
        if region.width:
            underline.show_highlight = True
            underline.highlight_start, underline.highlight_end = region.column_span

    # ------------------------------------------------------------------ the next stop, ahead of n
    #: seconds after the view last changed before the next stop is prepared
    PREPARE_DELAY_S = 0.05

    def _schedule_prepare(self) -> None:
        """Prepare the next stop (see :meth:`_prepare_next`) once the view has not changed for
        PREPARE_DELAY_S; a view change meanwhile starts over."""
        if self._prepare_timer is not None:
            self._prepare_timer.stop()
        self._preparing = None
        self._prepare_timer = self.set_timer(self.PREPARE_DELAY_S, self._start_prepare)

    def _start_prepare(self) -> None:
        self._preparing = self._prepare_next()
        self._prepare_step()

    def _prepare_step(self) -> None:
        """One step of the preparation (a few ms), then the next after a pause, so that a key
        pressed meanwhile is handled first."""
        it = self._preparing
        self._prepare_timer = None
        if it is None:
            return
        try:
            next(it)
        except StopIteration:
            self._preparing = None
            return
        except Exception:  # noqa: BLE001 - only a warm-up: n does the same work itself if this fails
            self._preparing = None
            return
        self._prepare_timer = self.set_timer(0.001, self._prepare_step)

    def _prepare_next(self) -> Iterator[None]:
        """Steps that do ahead, while the user reads, what the next key will likely cost on a
        large session: n (the next stop's table rows and column widths, its code text composed,
        its lines counted, the lines it will show highlighted) and 8 (the linked view of the
        selected buffer: the info and kernel lines it will show).  Changes no widget: the keys
        fill the panes as before, from these caches."""
        yield from self._prepare_next_stop()
        yield from self._prepare_linked()

    def _prepare_linked(self) -> Iterator[None]:
        if self.view_stage == "linked" or not self.view_graph:
            return
        links = self._links()
        sel = self.selected_buffer if self.selected_buffer in links.get("buffers", {}) else \
            next(iter(links.get("buffers") or {}), None)
        if sel is None:
            return
        self._linked_rows(links)
        yield
        h = max(self.size.height, 10)  # taller than any of the linked view's panes
        info_text, kernel = self._linked_texts(self.view_graph, links, sel, links["buffers"][sel])
        yield from prepare(info_text, "python", 0, h)
        if kernel is not None:
            src, lexer, ranges = kernel
            yield from prepare(src, lexer, max(0, ranges[0][0] - 1 - h // 3) if ranges else 0, h)

    def _prepare_next_stop(self) -> Iterator[None]:
        cur = self._current_index()
        if cur is None or cur + 1 >= len(self.session.stops):
            return
        nxt = self.session.stops[cur + 1]
        graph, stage = graph_key(nxt), nxt["stage"]
        raw = self.session.by_graph.get(graph, {}).get(stage)
        if stage not in STAGES or raw is None:
            return
        if LAZY in raw:  # the background preload has not parsed it yet: try again later
            self._prepare_timer = self.set_timer(0.5, self._start_prepare)
            return
        stop = self.session.stop_for(graph, stage)
        if stop is None or self.session.error_for(graph) is not None:
            return
        yield
        if stage == "dynamo":
            self._guards_text(stop)  # the largest piece of its text, on its own step
            yield
        shown = self.query_one(f"#code-{self.view_stage}", CodeView) if self.view_stage in STAGES else None
        h = (shown.scrollable_content_region.height if shown is not None else 0) or 40
        row = 0
        if not isinstance(stop.get({"scheduling": "after", "loopbody": "bodies"}.get(stage, "")), dict):
            keys = self._table_rows(stage, stop)[0]
            yield
            if self.selected_buffer and keys:  # where sync_pane will put the cursor
                try:
                    idx = self._synced_row(stage, stop, self.session.links(graph), keys.index)
                except (KeyError, ValueError, TypeError):
                    idx = None
                row = idx if idx is not None and idx < len(keys) else 0
                yield
        first = self._first_code(stage, stop, h, row)
        if first is not None:
            yield
            yield from prepare(first[0], "python", first[1], h + 2)

    def _first_code(self, stage: str, stop: dict[str, Any], h: int, row: int = 0) -> tuple[str, int] | None:
        """The text the code pane of ``stage`` shows right after being filled with ``stop`` with the
        table's cursor on ``row``, and its first line on screen (``h`` lines tall); None for the
        rarer cases (nothing shown)."""
        if stage in ("dynamo", "aot"):
            text = self._dynamo_text(stop) if stage == "dynamo" else self._aot_text(stop)
            nodes = _fx_nodes(stage, stop)
            line = _node_line(lines_of(text), stage, nodes[row]["name"]) if row < len(nodes) else None
            return text, max(0, line - h // 3) if line is not None else 0  # goto() puts it a third down
        if stage == "lowering":
            bufs = stop.get("buffers") or []
            return (self._buffer_text(bufs[row]), 0) if row < len(bufs) and not stop.get("unavailable") else None
        if stage == "scheduling":
            after = stop.get("after") or []
            return (self._snode_text(stop, after[row]), 0) if isinstance(after, list) and row < len(after) else None
        if stage == "loopbody":
            bodies = stop.get("bodies") or []
            return (self._body_text(bodies[row]), 0) if isinstance(bodies, list) and row < len(bodies) else None
        if stage == "codegen":
            from inductor_step.tracer.codeparse import kernel_source_lines  # noqa: PLC0415 - stdlib-only module

            wrapper = stop.get("wrapper") or ""
            ks = stop.get("kernels") or []
            span = kernel_source_lines(wrapper, ks[row]["name"]) if row < len(ks) else None
            return wrapper, max(0, span[0] - 1 - h // 3) if span else 0  # goto() centres the kernel
        return None

    def _bar(self, selector: str, text: Text) -> None:
        """Show ``text`` in a one-line bar (title, stage bar, status): nothing when it is already
        shown, and a repaint only (their height is fixed at 1 by the CSS, so no layout pass)."""
        if self._bars.get(selector) == text:
            return
        self._bars[selector] = text
        self.query_one(selector, Static).update(text, layout=False)

    def refresh_title(self) -> None:
        h = self.session.header
        script = h.get("script") or self.script or "?"
        argv = " ".join(h.get("argv") or self.script_args)
        dev = h.get("device_name") or h.get("device") or "?"
        t = Text.assemble(("inductor-step ", "bold"), (f" {os.path.basename(script)} {argv} ".rstrip() + " ", ""),
                          (f" torch {h.get('torch', '?')} ", "dim"), (f" {dev} ", "dim"))
        if self.session_path:
            t.append(f" session {self.session_path}", style="dim")
        self._bar("#title", t)

    def refresh_graphs(self) -> None:
        ol = self.query_one("#graphs", OptionList)
        graphs = self.session.graphs
        ol.set_class(len(graphs) <= 1, "hidden")
        if [o.id for o in ol.options] != graphs:
            ol.clear_options()
            for key in graphs:
                label = Text(key)
                note = self.session.graph_note(key)
                if note:
                    label.append(f"\n  {note[:60]}", style="dim")
                ol.add_option(Option(label, id=key))
        if self.view_graph in graphs:
            idx = graphs.index(self.view_graph)
            if ol.highlighted != idx:
                ol.highlighted = idx

    def refresh_stagebar(self) -> None:
        key = self.view_graph
        done = set(self.session.stages_done(key)) if key else set()
        err = self.session.error_for(key) if key else None
        t = Text()
        t.append(f" {key or 'waiting for the first compile'} ", style="bold")
        for s in ALL_STAGES:
            mark = "✓" if s in done else " "
            style = "green" if s in done else "dim"
            if err and err.get("stage") == s:
                mark, style = "✗", "bold red"
            if self.paused and graph_key(self.paused) == key and self.paused["stage"] == s:
                mark, style = "●", "bold yellow"
            if s == self.view_stage:
                style += " reverse"
            t.append(f" {mark}{s} ", style=style)
        self._bar("#stagebar", t)

    def refresh_status(self) -> None:
        s = self.session
        t = Text()
        if self.paused and graph_key(self.paused) == self.view_graph and self.paused["stage"] == self.view_stage:
            t.append(f" paused after {self.paused['stage']} of {graph_key(self.paused)}", style="bold yellow")
            t.append(" · n: continue the compile")
        elif self.paused:
            t.append(f" paused at {graph_key(self.paused)} {self.paused['stage']}", style="yellow")
            cur = self._current_index()
            at_end = cur is None or cur == len(s.stops) - 1
            t.append(" · n: continue the compile" if at_end else " · n: next recorded stop")
        elif s.done is not None:
            if not self.live:
                t.append(" recorded session ·", style="dim")
            t.append(f" script finished (exit {s.done.get('returncode')})", style="green" if not s.done.get("returncode") else "red")
            if s.done.get("message"):
                t.append(f" · {s.done['message']}", style="yellow")
            elif self.live:
                t.append(" · r: run and time")
        elif s.agent_exit is not None and self.live:
            t.append(f" the script's process ended (status {s.agent_exit}) before finishing", style="bold red")
        elif self.live:
            t.append(" running the script…", style="dim")
        else:
            t.append(f" recorded session · {len(s.stops)} stops (ended before the script finished)", style="dim")
        err = s.errors[-1] if s.errors else None
        if err:
            where = f"{err.get('compile_id')} {err.get('graph_kind')} " if err.get("compile_id") else ""
            t.append(f" · error in {where}{err.get('stage')}: {err.get('message')}", style="bold red")
        if s.run_status and self.view_stage == "run":
            t.append(f" · {s.run_status}", style="cyan")
        if self._status_extra:
            t.append(f" · {self._status_extra}", style="cyan")
        self._bar("#status", t)

    def refresh_pane(self, force: bool = False) -> None:
        stage = self.view_stage
        if stage == "log":
            code = self.query_one("#code-log", CodeView)
            text = "\n".join((f"[stderr] {x}" if st == "stderr" else x) for st, x in self.session.log)
            key = ("log", len(self.session.log))
            if force or self._rendered.get("log") != key:
                at_end = code.cursor >= len(code.lines) - 2
                code.set_code(text or "(the script has printed nothing yet)", "text",
                              cursor_line=len(text.split("\n")) if at_end else code.cursor + 1)
                self._rendered["log"] = key
            return
        key = self.view_graph
        if stage == "linked":
            self.refresh_linked(force=force)
            return
        if stage == "run":
            data = self.session.runs.get(key) if key else None
            stamp = (key, id(data), self.session.run_status)
        else:
            data = self.session.stop_for(key, stage) if key else None
            err = self.session.error_for(key) if key else None
            stamp = (key, id(data), id(err))
        if not force and self._rendered.get(stage) == stamp:
            return
        self._rendered[stage] = stamp
        table = self.query_one(f"#table-{stage}", Table)
        code = self.query_one(f"#code-{stage}", CodeView)
        table.clear()
        if stage == "run":
            self._run_shown = None
            self._fill_run(table, code, key, data)
            self._details_now(table)
            return
        if data is None:
            err = self.session.error_for(key) if key else None
            if err and err.get("stage") == stage:
                code.set_code(f"# {stage} failed: {err.get('message')}\n#\n# everything captured before it is in "
                              f"the earlier stages (b, 1-6)\n\n{err.get('traceback', '')}", "pytb")
                return
            reached = self.session.stages_done(key) if key else []
            msg = (f"# {key}: the compile has not reached {stage} yet"
                   + (f" (last stop: {reached[-1]}); press n to continue" if reached else "")) if key else \
                "# waiting for the script's first torch.compile…"
            code.set_code(msg, "python")
            return
        getattr(self, f"_fill_{stage}")(table, code, data)
        self.sync_pane(stage)
        self._details_now(table)

    def _details_now(self, table: Table) -> None:
        """Show the details of ``table``'s cursor row now, in the same frame as the filled pane.

        Filling a table announces its cursor row (``RowHighlighted``), and the details followed
        DETAIL_DELAY_S later: on n the code pane jumped to the row's node line, and the status
        line changed, in a second frame 40-90 ms after the first.  The announcement that arrives
        later is then skipped (:meth:`_row`), as the details it asks for are shown."""
        if not table.row_count:
            return
        row = table.cursor_row
        self._row_highlighted(Table.RowHighlighted(table, row, RowKey(table.row_keys[row])))

    # ------------------------------------------------------------------ pane fillers
    def _rows_for(self, stage: str, stop: dict[str, Any]) -> tuple[list[str], Callable[[int], tuple]]:
        """The row keys and the row formatter of ``stage``'s table for ``stop`` (rows are formatted
        only when drawn)."""
        if stage in ("dynamo", "aot"):
            nodes = ((stop.get("graph") if stage == "dynamo" else stop.get("post_grad")) or {}).get("nodes") or []
            script = (self.session.header or {}).get("script")
            script_dir = os.path.dirname(script) if script else None

            def fx_row(i: int) -> tuple:
                n = nodes[i]
                return (T(n.get("name"), "bold"), T(n.get("op")), T(n.get("target")), T(n.get("shape")),
                        T(n.get("dtype")), T(short_user_line(n.get("user_line"), script_dir), "cyan"))
            return [str(i) for i in range(len(nodes))], fx_row
        if stage == "lowering":
            bufs = stop.get("buffers") or []

            def buf_row(i: int) -> tuple:
                b = bufs[i]
                return (T(b["name"], "bold"), T(b.get("operation")), T(b.get("kind"), "magenta"), T(b.get("ranges")),
                        T(f"{b.get('reduction_type') or ''} {_L(b.get('reduction_ranges')) if b.get('reduction_ranges') else ''}".strip()),
                        T(b.get("dtype")), T(b.get("size")), T(_j(b.get("origins"))))
            return [b["name"] for b in bufs], buf_row
        if stage == "scheduling":
            after = stop.get("after") or []
            return [n["name"] for n in after], \
                lambda i: (T(after[i]["name"], "bold"), T(after[i].get("type"), "magenta"),
                           T(_j(after[i].get("members"))), T(_j(after[i].get("buffers"))))
        if stage == "loopbody":
            bodies = stop.get("bodies") or []

            def body_row(i: int) -> tuple:
                b = bodies[i]
                return (T(b["node"], "bold"), T(b.get("fused_node")), T(_j(b.get("buffers"))),
                        T(", ".join(f"{k}={v}" for k, v in (b.get("var_ranges") or {}).items()) or b.get("none", "")))
            return [f"{b['fused_node']}/{b['node']}" for b in bodies], body_row
        if stage == "codegen":
            ks = stop.get("kernels") or []
            return [k["name"] for k in ks], \
                lambda i: (T(ks[i]["name"], "bold"), T(ks[i].get("backend"), "magenta"),
                           T(_j(ks[i].get("buffers"))), T(_j(ks[i].get("fused_nodes"))))
        raise KeyError(stage)

    def _table_rows(self, stage: str, stop: dict[str, Any]) -> tuple[list[str], Callable[[int], tuple], list[int]]:
        """:meth:`_rows_for` and the column widths, kept per stop (measuring samples 900 rows: a
        few ms; :meth:`_prepare_next` does it ahead for the next stop)."""
        hit = self._rows_memo.get((stage, id(stop)))
        if hit is not None and hit[0] is stop:
            return hit[1], hit[2], hit[3]
        keys, row = self._rows_for(stage, stop)
        keys = tuple(keys)  # what Table keeps (the garbage collector soon stops tracking it)
        widths = Table.measure(COLUMNS[stage], len(keys), row)
        self._rows_memo[(stage, id(stop))] = (stop, keys, row, widths)
        while len(self._rows_memo) > 16:
            del self._rows_memo[next(iter(self._rows_memo))]
        return keys, row, widths

    def _set_rows(self, table: Table, stage: str, stop: dict[str, Any]) -> None:
        keys, row, widths = self._table_rows(stage, stop)
        table.set_rows(keys, row, widths=widths)

    def _memo_text(self, key: tuple, parts: tuple, build: Any) -> str:
        """``build()``'s text, kept while the objects in ``parts`` are the same ones (a stop's code
        is megabytes: composing it again, and the code view counting its lines again, is avoidable
        when the stop is shown again)."""
        hit = self._texts.get(key)
        if hit is not None and len(hit[0]) == len(parts) and all(a is b for a, b in zip(hit[0], parts)):
            return hit[1]
        text = build()
        self._texts[key] = (parts, text)
        while len(self._texts) > 8:
            del self._texts[next(iter(self._texts))]
        return text

    def _fill_dynamo(self, table: Table, code: CodeView, stop: dict[str, Any]) -> None:
        self._set_rows(table, "dynamo", stop)
        code.set_code(self._dynamo_text(stop), "python")

    def _guards_text(self, stop: dict[str, Any]) -> str:
        """The guards of ``stop``'s compile, commented; kept (the forward and backward graphs of one
        compile share them)."""
        guards = self.session.guards.get(stop["compile_id"]) or ""
        return self._memo_text(("guards", stop["compile_id"]), (guards,), lambda: _commented(guards))

    def _dynamo_text(self, stop: dict[str, Any]) -> str:
        g = stop.get("graph") or {}
        guards = self.session.guards.get(stop["compile_id"])

        def build() -> str:
            head = [f"# Dynamo FX graph {stop['compile_id']} ({stop['graph_kind']})"]
            if stop.get("note"):
                head.append(f"# {stop['note']}")
            if stop.get("resume"):
                head.append(f"# this frame resumes after a graph break: {stop['resume']}")
            for r in stop.get("recompile_reasons") or []:
                head.append("# recompile reason: " + str(r).replace("\n", " "))
            for r in stop.get("graph_breaks") or []:
                head.append("# graph break: Dynamo ended this graph here: " + str(r).strip().splitlines()[0][:300])
            if g.get("unavailable"):
                head.append(f"# {g['unavailable']}")
            body = g.get("code") or ""
            tail = f"\n\n# ---- guards (dynamo_cpp_guards_str) ----\n" + self._guards_text(stop) if guards else \
                "\n\n# guards arrive once the backend compile finishes"
            return "\n".join(head) + "\n\n" + body + tail

        return self._memo_text(("dynamo", id(stop)), (stop, g, guards), build)

    def _fill_aot(self, table: Table, code: CodeView, stop: dict[str, Any]) -> None:
        self._set_rows(table, "aot", stop)
        code.set_code(self._aot_text(stop), "python")

    def _aot_text(self, stop: dict[str, Any]) -> str:
        pg = stop.get("post_grad") or {}

        def build() -> str:
            parts = []
            order = ("joint", "inference", "forward", "backward")
            for name in order:
                src = (stop.get("aot_graphs") or {}).get(name)
                if src:
                    parts.append(f"# ===== AOT {name} graph (aot_{name}_graph) =====\n{src}")
            parts.append(f"# ===== post-grad graph ({stop['graph_kind']}, what Inductor lowers) =====\n"
                         f"{pg.get('code', pg.get('unavailable', ''))}")
            return "\n\n".join(parts)

        return self._memo_text(("aot", id(stop)), (stop, pg), build)

    def _fill_lowering(self, table: Table, code: CodeView, stop: dict[str, Any]) -> None:
        bufs = stop.get("buffers") or []
        self._set_rows(table, "lowering", stop)
        if stop.get("unavailable"):
            code.set_code(f"# {stop['unavailable']}", "python")
        elif bufs:
            self._show_buffer(code, bufs[0])
        else:
            code.set_code("# no IR buffers in this graph", "python")

    def _show_buffer(self, code: CodeView, b: dict[str, Any]) -> None:
        code.set_code(self._buffer_text(b), "python")

    def _buffer_text(self, b: dict[str, Any]) -> str:
        head = (f"# {b['name']} ({b.get('operation')}): {b.get('ir_type')} {b.get('kind')}  "
                f"dtype={b.get('dtype')} device={b.get('device')} size={_L(b.get('size'))} stride={_L(b.get('stride'))}\n"
                f"# origins (post-grad FX nodes): {', '.join(b.get('origins') or [])}\n\n")
        return head + (b.get("text") or "")

    def _fill_listed(self, table: Table, code: CodeView, stop: dict[str, Any], stage: str, field: str,
                     show: Callable[[dict[str, Any]], None]) -> None:
        """Fill ``stage``'s pane from the list ``stop[field]`` (a dict there says why it is
        unavailable); ``show`` puts the first item in the code pane."""
        items = stop.get(field) or []
        if isinstance(items, dict):
            code.set_code(f"# {items.get('unavailable')}", "python")
            return
        self._set_rows(table, stage, stop)
        if items:
            show(items[0])

    def _fill_scheduling(self, table: Table, code: CodeView, stop: dict[str, Any]) -> None:
        self._fill_listed(table, code, stop, "scheduling", "after", lambda n: self._show_snode(code, stop, n))

    def _show_snode(self, code: CodeView, stop: dict[str, Any], n: dict[str, Any]) -> None:
        code.set_code(self._snode_text(stop, n), "python")

    def _snode_text(self, stop: dict[str, Any], n: dict[str, Any]) -> str:
        idx = self.session.fusion_index(stop)
        lines = sorted({i for m in set(n.get("members") or []) | {n["name"]} for i in idx.get(m, ())})
        fusion_log = stop.get("fusion_log") or []
        log = [fusion_log[i] for i in lines]
        before = len(stop.get("before") or [])
        text = (f"# {n['name']}: {n.get('type')}, members {', '.join(n.get('members') or [])}\n"
                f"# {before} scheduler nodes before fusion -> {len(stop.get('after') or [])} after\n"
                f"# ---- Inductor's fusion decisions involving {n['name']} ----\n"
                + ("\n".join("# " + x for x in log) if log else "# (none logged)") + "\n\n" + (n.get("text") or ""))
        return text

    def _fill_loopbody(self, table: Table, code: CodeView, stop: dict[str, Any]) -> None:
        self._fill_listed(table, code, stop, "loopbody", "bodies", lambda b: self._show_body(code, b))

    def _show_body(self, code: CodeView, b: dict[str, Any]) -> None:
        code.set_code(self._body_text(b), "python")

    def _body_text(self, b: dict[str, Any]) -> str:
        if "body" not in b:
            return f"# {b['node']}: {b.get('none', 'no LoopBody')}"
        return (f"# LoopBody of {b['node']} (in {b.get('fused_node')}), writes {', '.join(b.get('buffers') or [])}\n"
                + b["body"])

    def _fill_codegen(self, table: Table, code: CodeView, stop: dict[str, Any]) -> None:
        ks = stop.get("kernels") or []
        self._set_rows(table, "codegen", stop)
        code.set_code(stop.get("wrapper") or "", "python")
        if ks:
            self._show_kernel(code, stop, ks[0]["name"])

    def _show_kernel(self, code: CodeView, stop: dict[str, Any], name: str) -> None:
        from inductor_step.tracer.codeparse import kernel_source_lines  # noqa: PLC0415 - stdlib-only module

        wrapper = stop.get("wrapper") or ""
        if code.text != wrapper:
            code.set_code(wrapper, "python")
        span = kernel_source_lines(wrapper, name)
        if span is None:  # extern kernel: its call line
            k = next((k for k in stop.get("kernels") or [] if k["name"] == name), None)
            line = next((i + 1 for i, ln in enumerate(code.lines) if k and ln.strip() == k.get("source")), None)
            span = (line, line) if line else None
        if span:
            code.mark([span])
            code.goto(span[0])

    def _fill_run(self, table: Table, code: CodeView, key: str | None, run: dict[str, Any] | None) -> None:
        if run is None:
            # headers of this session's device, no rows (not the CUDA-only columns on a CPU session)
            gpu = str((self.session.header or {}).get("device", "cuda")).startswith("cuda")
            table.add_columns(*[c for c in COLUMNS["run"] if gpu or c not in GPU_ONLY_RUN_COLUMNS])
            status = self.session.run_status
            msg = ("# press r to run and time every compiled graph: the whole compiled graph against eager, "
                   "and each kernel on its own" + (f"\n# {status}" if status else ""))
            if not self.live:
                msg = "# this recorded session has no timing for this graph"
            code.set_code(msg, "python")
            return
        if run.get("error"):
            code.set_code(f"# timing failed: {run['error']}\n\n{run.get('traceback', '')}", "pytb")
            return
        codegen = self.session.stop_for(key, "codegen") or {}
        fused = {k["name"]: k.get("fused_nodes") for k in codegen.get("kernels") or []}
        ks = sorted(run.get("kernels") or [], key=lambda k: -k["median_ms"])
        gpu = str(run.get("device", "")).startswith("cuda")
        # the in-graph and in-script columns exist on CUDA only: on CPU they would be two columns of "-"
        labels = [c for c in COLUMNS["run"] if gpu or c not in GPU_ONLY_RUN_COLUMNS]
        table.add_columns(*labels)
        _add_rows(table, [tuple(_run_cells(k, fused)[c] for c in labels) for k in ks],
                  [f"{i}:{k['name']}" for i, k in enumerate(ks)])
        # the kernel names give up cells before the times, share and bandwidth do (the full name is
        # in the detail pane)
        table.fit(0, labels.index("% peak BW"))
        eager = run.get("eager_ms")
        lines = [f"# {key} on {run.get('device')}: timed with {run.get('method')}",
                 f"compiled graph   {run['compiled_ms']:.4f} ms",
                 f"eager (post-grad ATen graph, op by op)   {eager:.4f} ms" if eager is not None else "eager   not available",
                 f"speedup   {eager / run['compiled_ms']:.2f}x" if eager and run["compiled_ms"] else "",
                 f"sum of kernel times   {run['kernel_sum_ms']:.4f} ms  "
                 f"({100 * run['kernel_sum_ms'] / run['compiled_ms']:.0f}% of the graph: "
                 + ("the rest is launch and Python overhead)" if run["kernel_sum_ms"] <= run["compiled_ms"] else
                    "kernels timed one at a time, each from a cold cache, add up to more than the graph)")
                 if run["compiled_ms"] else ""]
        rounds = run.get("graph_rounds") or {}
        if rounds.get("compiled_rounds_ms"):
            c = rounds["compiled_rounds_ms"]
            lines.append(f"graph time from {len(c)} do_bench rounds: the median of the last 5, which agree within 10%"
                         if rounds.get("rounds_stable") else
                         f"! the compiled graph's {len(c)} timing rounds never agreed ({min(c):.4f} to {max(c):.4f} ms): "
                         "the machine had a slow spell, so this time is not reliable; press r to time again")
        if run.get("in_graph_sum_ms") is not None and run["compiled_ms"]:
            lines.append(f"sum of in-graph kernel times   {run['in_graph_sum_ms']:.4f} ms  "
                         f"({100 * run['in_graph_sum_ms'] / run['compiled_ms']:.0f}% of the graph; the rest is launch "
                         "and Python overhead)")
        if str(run.get("device", "")).startswith("cuda"):
            lines.append("median: each kernel alone, L2 flushed (GB/s and % of peak use it); in graph: the kernel inside "
                         "a CUDA-graph replay of the whole graph between timing events, as a profiler sees it"
                         + (f"  [in graph: {run['in_graph']}]" if run.get("in_graph") not in (None, "ok") else ""))
            lines.append("in script: the kernel in the script's own calls of this graph (calls 2-11, CUPTI via "
                         f"torch.profiler), L2 and clocks as the model left them  [{run.get('in_script', 'not recorded')}]")
            if run.get("cupti"):
                lines.append(f"CUPTI: {run['cupti']}")
        if run.get("inputs"):
            lines.append(f"inputs: {run['inputs']}")
        peak = run.get("peak") or {}
        lines.append(f"peak memory bandwidth   {peak['bw_gbps']:.0f} GB/s  ({peak.get('bw_source')})" if peak.get("bw_gbps")
                     else f"peak memory bandwidth   {peak.get('bw_source', 'not recorded')}")
        if peak.get("tflops"):
            lines.append("peak matmul   " + ", ".join(f"{d} {v:.0f} TFLOP/s" for d, v in peak["tflops"].items())
                         + f"  ({peak.get('tflops_source')})")
        srcs = sorted({k.get("gb_source") for k in run.get("kernels") or [] if k.get("gb_source")})
        if srcs:
            lines.append("bytes moved from: " + "; ".join(srcs))
        if any((k.get("pct_peak_bw") or 0) > 100 for k in run.get("kernels") or []):
            lines.append("* over 100%: the byte count is an upper bound (the kernel reads only part of a tensor it is passed)")
        if run.get("cancelled"):
            lines.append("cancelled: only the kernels above were timed")
        lines.append("Enter on a kernel: its code in the codegen pane")
        self._run_shown = (ks, fused, "\n".join(x for x in lines if x), gpu)
        code.set_code(self._run_shown[2], "text")

    def _show_run_kernel(self, code: CodeView, i: int) -> None:
        """The run pane's detail for timed kernel ``i`` of the table: its full name (the table cuts
        long names at 80 columns) and every number of its row, then the graph's summary."""
        ks, fused, summary, gpu = self._run_shown
        if not 0 <= i < len(ks):
            return
        k = ks[i]
        c = {label: str(cell) for label, cell in _run_cells(k, fused).items()}
        lines = [f"# {c['kernel']}  ({c['backend']})",
                 f"median {c['median ms [p20-p80]']} ms · {c['share']} of the kernel time"]
        bw = [f"{c['GB/s']} GB/s"] if c["GB/s"] != "-" else []
        bw += [f"{c['% peak BW']} of peak bandwidth"] if c["% peak BW"] != "-" else []
        bw += [f"{c['TFLOP/s']} TFLOP/s"] if c["TFLOP/s"] != "-" else []
        if bw:
            lines.append(" · ".join(bw))
        inside = [f"in {where} {c[f'in {where} ms']} ms" for where in ("graph", "script")
                  if gpu and c[f"in {where} ms"] != "-"]
        if inside:
            lines.append(" · ".join(inside))
        if k.get("config"):
            lines.append(f"launch config: {k['config']}")
        if c["fused nodes"]:
            lines.append(f"fused nodes: {c['fused nodes']}")
        code.set_code("\n".join(lines) + "\n\n" + summary, "text")

    # ------------------------------------------------------------------ selection inside panes
    @on(Table.RowHighlighted)
    def _row(self, event: Table.RowHighlighted) -> None:
        """The table's cursor repaints at once; details and linked panes follow once the key
        repeat pauses (DETAIL_DELAY_S), so holding a key over a slow link never queues work."""
        if event.cursor_row != event.data_table.cursor_row:
            return
        if self._detail_timer is not None:
            self._detail_timer.stop()
            self._detail_timer = None
        shown = self._detail_shown.get(event.data_table.id or "")
        if shown is not None and shown[0] is event.data_table.row_keys and shown[1] == event.cursor_row:
            return  # its details are on screen already (_details_now)
        if self.DETAIL_DELAY_S <= 0:
            self._apply_row(event)
        else:
            self._detail_timer = self.set_timer(self.DETAIL_DELAY_S, lambda: self._apply_row(event))

    def _apply_row(self, event: Table.RowHighlighted) -> None:
        self._detail_timer = None
        try:
            self._row_highlighted(event)
        except NoMatches:  # a late event while the app is closing
            return
        self._schedule_prepare()  # the selection may have moved: the linked view to prepare too

    def _row_highlighted(self, event: Table.RowHighlighted) -> None:
        if event.cursor_row != event.data_table.cursor_row:
            return  # stale: the cursor has moved on (key repeat); acting on it would pull it back
        stage = (event.data_table.id or "").removeprefix("table-")
        key = event.row_key.value if event.row_key is not None else None
        if key is None:
            return
        self._detail_shown[event.data_table.id or ""] = (event.data_table.row_keys, event.cursor_row)
        if stage == "linked":
            if key != self.selected_buffer:
                self.selected_buffer = key
                self._status_extra = f"selected {key}"
                self.refresh_status()
                self.refresh_linked()
            return
        code = self.query_one(f"#code-{stage}", CodeView)
        if stage == "run":
            if self._run_shown is not None:
                self._show_run_kernel(code, int(key.split(":", 1)[0]))
            return
        stop = self.session.stop_for(self.view_graph, stage) if self.view_graph else None
        owned = self._buffers_of_row(stage, key, event.cursor_row)
        if owned and self.selected_buffer not in owned:
            self.selected_buffer = owned[0]
            self._status_extra = f"selected {owned[0]}"
            self.refresh_status()
        if stage in ("dynamo", "aot"):
            row = event.cursor_row
            nodes = _fx_nodes(stage, stop or {})
            if 0 <= row < len(nodes):
                hit = _node_line(code._all_lines(), stage, nodes[row]["name"])
                if hit is not None:
                    code.mark([(hit + 1, hit + 1)])
                    code.goto(hit + 1)
        elif stage == "lowering" and stop:
            b = next((b for b in stop.get("buffers") or [] if b["name"] == key), None)
            if b:
                self._show_buffer(code, b)
        elif stage == "scheduling" and stop:
            n = next((n for n in stop.get("after") or [] if n["name"] == key), None)
            if n:
                self._show_snode(code, stop, n)
        elif stage == "loopbody" and stop:
            b = next((b for b in stop.get("bodies") or [] if f"{b['fused_node']}/{b['node']}" == key), None)
            if b:
                self._show_body(code, b)
        elif stage == "codegen" and stop:
            self._show_kernel(code, stop, key)
            b = self._links().get("buffers", {}).get(self.selected_buffer or "")
            if b and key in (b.get("kernels") or []):
                self._mark_buffer_in_wrapper(key, b)

    @on(TabbedContent.TabActivated, "#panes")
    def _tab_clicked(self, event: TabbedContent.TabActivated) -> None:
        try:
            panes = self.query_one("#panes", Panes)
        except NoMatches:  # a late TabActivated while the app is closing (its panes already removed)
            return
        if event.pane.id != panes.clicked:
            return  # the echo of our own switch (refresh_all), possibly stale: only a click changes the stage
        panes.clicked = None
        stage = (event.pane.id or "").removeprefix("pane-")
        if stage and stage != self.view_stage:
            self.action_stage(stage)

    @on(OptionList.OptionHighlighted, "#graphs")
    def _graph_picked(self, event: OptionList.OptionHighlighted) -> None:
        key = event.option.id
        if event.option_index != event.option_list.highlighted:
            return  # stale: the highlight has moved on since this message was posted
        if key and key != self.view_graph:
            self.view_graph = key
            self.selected_buffer = None
            self.follow = False
            try:
                self.refresh_all()
            except NoMatches:  # a late highlight while the app is closing
                return


    # ------------------------------------------------------------------ the one selection
    def select_buffer(self, name: str | None) -> None:
        """Make ``name`` (an IR buffer of the viewed graph) the selection all panes follow."""
        if not name or name == self.selected_buffer:
            return
        self.selected_buffer = name
        self.sync_pane(self.view_stage)
        self._status_extra = f"selected {name}"
        self.refresh_status()

    def _links(self) -> dict[str, Any]:
        return self.session.links(self.view_graph)

    def sync_pane(self, stage: str) -> None:
        """Move the visible pane's cursor to what the selection belongs to (never the reverse:
        a row that already contains the selected buffer leaves the selection alone)."""
        if stage == "linked":
            self.refresh_linked()
            return
        if stage not in COLUMNS or stage == "run" or not self.selected_buffer:
            return
        table = self.query_one(f"#table-{stage}", Table)
        if stage not in ("dynamo", "aot") and table.has_focus:
            return
        stop = self.session.stop_for(self.view_graph, stage) or {} if stage in ("dynamo", "aot") else {}
        try:
            idx = self._synced_row(stage, stop, self._links(), table.get_row_index)
        except Exception:  # noqa: BLE001 - row not in this table
            return
        if idx is None or idx >= table.row_count:
            return
        if table.cursor_row != idx:
            table.move_cursor(row=idx)
        b = self._links().get("buffers", {}).get(self.selected_buffer)
        if stage == "codegen" and b:
            self._mark_buffer_in_wrapper(b["kernels"][0], b)

    def _synced_row(self, stage: str, stop: dict[str, Any], links: dict[str, Any],
                    row_index: Callable[[str], int]) -> int | None:
        """The row of ``stage``'s table that :meth:`sync_pane` puts the cursor on for the selected
        buffer (``row_index``: a row key's index; ``stop``: needed for dynamo and aot), None for
        none; raises what ``row_index`` raises for a key that is not in the table."""
        sel = self.selected_buffer
        b = links.get("buffers", {}).get(sel) if sel else None
        if stage == "lowering":
            return row_index(sel) if sel else None
        if not b:
            return None
        if stage == "scheduling":
            return row_index(b.get("fused_node"))
        if stage == "loopbody":
            return row_index(f"{b.get('fused_node')}/{b.get('scheduler_node')}")
        if stage == "codegen":
            return row_index(b["kernels"][0]) if b.get("kernels") else None
        if stage in ("dynamo", "aot"):
            names = b.get("dynamo_nodes") if stage == "dynamo" else b.get("fx_nodes")
            index = self._node_index(stage, stop)
            return min((index[n] for n in names or () if n in index), default=None)
        return None

    def _node_index(self, stage: str, stop: dict[str, Any]) -> dict[str, int]:
        """FX node name -> its first row in a dynamo or aot stop's table, kept per stop (the
        backward graph has 28,000 post-grad nodes: a Python loop over them on each n was ms)."""
        hit = self._node_memo.get((stage, id(stop)))
        if hit is not None and hit[0] is stop:
            return hit[1]
        index: dict[str, int] = {}
        for i, n in enumerate(_fx_nodes(stage, stop)):
            index.setdefault(n["name"], i)
        self._node_memo[(stage, id(stop))] = (stop, index)
        while len(self._node_memo) > 8:
            del self._node_memo[next(iter(self._node_memo))]
        return index

    def _mark_buffer_in_wrapper(self, kernel: str, b: dict[str, Any]) -> None:
        from inductor_step.tracer.codeparse import kernel_source_lines  # noqa: PLC0415

        stop = self.session.stop_for(self.view_graph, "codegen") or {}
        wrapper = stop.get("wrapper") or ""
        span = kernel_source_lines(wrapper, kernel)
        ranges = b.get("kernel_lines", {}).get(kernel) or []
        if not span or not ranges:
            return
        k = next((k for k in stop.get("kernels") or [] if k["name"] == kernel), None)
        first_src = (k or {}).get("source", "").split("\n", 1)[0]
        code = self.query_one("#code-codegen", CodeView)
        start = next((i for i in range(span[0] - 1, span[1]) if code.lines[i] == first_src), span[0])
        code.mark([(start + a, start + e) for a, e in ranges])
        code.goto(start + ranges[0][0])

    def _buffers_of_row(self, stage: str, key: str, row: int) -> list[str]:
        links = self._links()
        if not links:
            return []
        if stage in ("lowering", "linked"):
            return [key]
        if stage == "scheduling":
            return list(links.get("fused_nodes", {}).get(key, {}).get("buffers") or [])
        if stage == "loopbody":
            op = key.split("/")[-1]
            return list(links.get("scheduler_nodes", {}).get(op, {}).get("buffers") or [])
        if stage == "codegen":
            return list(links.get("kernels", {}).get(key, {}).get("buffers") or [])
        if stage in ("dynamo", "aot"):
            stop = self.session.stop_for(self.view_graph, stage) or {}
            nodes = ((stop.get("graph") if stage == "dynamo" else stop.get("post_grad")) or {}).get("nodes") or []
            if 0 <= row < len(nodes):
                name = nodes[row]["name"]
                m = links.get("dynamo_nodes" if stage == "dynamo" else "fx_nodes", {}).get(name) or {}
                return list(m.get("buffers") or [])
        return []

    def refresh_linked(self, force: bool = False) -> None:
        """The Linked tab: buffers on the left; the selected one's FX nodes, scheduler node, fused
        node, user source line and LoopBody in the middle; its kernel with its lines marked."""
        key = self.view_graph
        links = self._links()
        table = self.query_one("#table-linked", Table)
        info = self.query_one("#code-linkinfo", CodeView)
        kcode = self.query_one("#code-linkkernel", CodeView)
        stamp = (key, id(links))
        if force or self._rendered.get("linked") != stamp:
            self._rendered["linked"] = stamp
            table.clear()
            if not links:
                reached = self.session.stages_done(key) if key else []
                info.set_code("# links are built when the graph reaches codegen"
                              + (f"; {key} is at {reached[-1]}: press n to continue" if reached else ""), "text")
                kcode.set_code("", "text")
                return
            bufs = links["buffers"]
            names, row, widths = self._linked_rows(links)
            table.set_rows(names, row, widths=widths)
            if self.selected_buffer not in bufs and bufs:
                self.selected_buffer = next(iter(bufs))
        if not links:
            return
        sel = self.selected_buffer
        b = links["buffers"].get(sel)
        if b is None:
            return
        if not table.has_focus:  # the user's own cursor is never moved under them
            try:
                idx = table.get_row_index(sel)
                if table.cursor_row != idx:
                    table.move_cursor(row=idx)
            except Exception:  # noqa: BLE001
                pass
        info_text, kernel = self._linked_texts(key, links, sel, b)
        info.set_code(info_text, "python")
        if kernel is not None:
            src, lexer, ranges = kernel
            kcode.set_code(src, lexer)
            if ranges:
                kcode.mark([tuple(r) for r in ranges])
                kcode.goto(ranges[0][0])
            return
        kcode.set_code(f"# no kernel computes {sel}", "text")

    def _linked_rows(self, links: dict[str, Any]) -> tuple[tuple[str, ...], Callable[[int], tuple], list[int]]:
        """The linked table's keys, row formatter and column widths for ``links``, kept."""
        hit = self._rows_memo.get(("linked", id(links)))
        if hit is not None and hit[0] is links:
            return hit[1], hit[2], hit[3]
        bufs = links["buffers"]
        names = tuple(bufs)

        def row(i: int) -> tuple:
            return (T(names[i], "bold"), T(bufs[names[i]].get("scheduler_node")),
                    T(bufs[names[i]].get("fused_node")), T(_j(bufs[names[i]].get("kernels"), 2)))
        widths = Table.measure(COLUMNS["linked"], len(names), row)
        self._rows_memo[("linked", id(links))] = (links, names, row, widths)
        return names, row, widths

    def _linked_texts(self, key: str | None, links: dict[str, Any], sel: str,
                      b: dict[str, Any]) -> tuple[str, tuple[str, str, list] | None]:
        """What the linked view shows for buffer ``sel`` (its links entry ``b``): the info text, and
        its first kernel as (source, lexer, marked line ranges), None when no kernel computes it."""
        lines = [f"# {sel}: scheduler node {b.get('scheduler_node')} in {b.get('fused_node')}"]
        lines.append(f"post-grad FX nodes: {', '.join(b.get('fx_nodes') or []) or '-'}")
        lines.append(f"Dynamo FX nodes:    {', '.join(b.get('dynamo_nodes') or []) or '-'}")
        for k in b.get("kernels") or []:
            ranges = b.get("kernel_lines", {}).get(k) or []
            where = ", ".join(f"{a}" if a == e else f"{a}-{e}" for a, e in ranges) or "no lines of its own"
            lines.append(f"kernel {k}: lines {where}")
        for n in b.get("notes") or []:
            lines.append(f"note: {n}")
        for ul in b.get("user_lines") or []:
            lines.append(f"\n# your code: {ul}")
            ctx = (links.get("user_source") or {}).get(ul)
            if ctx:
                lines.append(ctx)
        lb = next((x for x in (self.session.stop_for(key, "loopbody") or {}).get("bodies") or []
                   if isinstance(x, dict) and x.get("node") == b.get("scheduler_node")), None)
        if lb and lb.get("body"):
            lines.append(f"\n# LoopBody of {lb['node']}")
            lines.append(lb["body"])
        kernels = b.get("kernels") or []
        stop = self.session.stop_for(key, "codegen") or {}
        if kernels:
            k = next((k for k in stop.get("kernels") or [] if k["name"] == kernels[0]), None)
            if k is not None:
                return "\n".join(lines), (k.get("source") or "", "cpp" if k.get("backend") == "cpp" else "python",
                                          b.get("kernel_lines", {}).get(kernels[0]) or [])
        return "\n".join(lines), None

    @on(CodeView.CursorMoved)
    def _code_cursor(self, event: CodeView.CursorMoved) -> None:
        """Reverse link: a kernel line under the cursor selects the buffer it loads or stores."""
        view = event.view
        if not view.has_focus:
            return  # programmatic moves (from a selection) never select back
        links = self._links()
        if view.id == "code-linkkernel":
            b = links.get("buffers", {}).get(self.selected_buffer or "", {})
            kernel = (b.get("kernels") or [None])[0]
            line = event.line
        elif view.id == "code-codegen":
            from inductor_step.tracer.codeparse import kernel_source_lines  # noqa: PLC0415

            stop = self.session.stop_for(self.view_graph, "codegen") or {}
            kernel, line = None, None
            for k in stop.get("kernels") or []:
                span = kernel_source_lines(stop.get("wrapper") or "", k["name"])
                if span and span[0] <= event.line <= span[1]:
                    first = (k.get("source") or "").split("\n", 1)[0]
                    start = next((i for i in range(span[0] - 1, span[1]) if view.lines[i] == first), span[0])
                    kernel, line = k["name"], event.line - start
                    break
        else:
            return
        if not kernel or line is None:
            return
        for name, d in links.get("buffers", {}).items():
            if kernel in d.get("kernels", []) and any(a <= line <= e for a, e in d.get("kernel_lines", {}).get(kernel) or []):
                if name != self.selected_buffer:
                    self.selected_buffer = name
                    self._status_extra = f"line {event.line} of {kernel} touches {name}"
                    self.refresh_status()
                return

    def action_fusion_pair(self) -> None:
        """In the scheduling pane: f on one node, then f on another: were they fused, and why."""
        if self.view_stage != "scheduling":
            self.notify("f (fusion of two nodes) works in the scheduling pane (4)")
            return
        table = self.query_one("#table-scheduling", Table)
        if not table.row_count:
            return
        name = str(table.get_row_at(table.cursor_row)[0])
        if self._pair_first is None or self._pair_first == name:
            self._pair_first = name
            self._status_extra = f"fusion pair: {name} and … (move to another node, press f)"
            self.refresh_status()
            return
        a, b = self._pair_first, name
        self._pair_first = None
        self.show_fusion_pair(a, b)
        live = (self.agent is not None and self.paused is not None and graph_key(self.paused) == self.view_graph
                and self.paused["stage"] in ("scheduling", "loopbody", "codegen"))
        if live:
            self.agent.send("can_fuse", a=a, b=b)

    def _members(self, fused: str) -> list[str]:
        stop = self.session.stop_for(self.view_graph, "scheduling") or {}
        n = next((n for n in stop.get("after") or [] if n.get("name") == fused), None)
        return list((n or {}).get("members") or [])

    def show_fusion_pair(self, a: str, b: str, verdict: str | None = None, reasons: list[str] | None = None) -> None:
        stop = self.session.stop_for(self.view_graph, "scheduling") or {}
        ma, mb = set(self._members(a)) | {a}, set(self._members(b)) | {b}

        def mentions(line: str, names: set[str]) -> bool:
            return any(re.search(rf"\b{re.escape(x)}\b", line) for x in names)

        log = [ln for ln in stop.get("fusion_log") or [] if mentions(ln, ma) and mentions(ln, mb)]
        fused_together = any(set(n.get("members") or []) >= (ma | mb) - {a, b} and (ma | mb) - {a, b}
                             for n in stop.get("after") or []) or a == b
        text = [f"# {a} and {b}: " + ("fused into one node" if fused_together else "not fused"),
                "# ---- Inductor's fusion log for this pair ----"]
        text += ["# " + x for x in log] or ["# (the fusion log never considered this pair: "
                                            "Inductor only tries pairs that share data)"]
        if verdict is not None:
            text += [f"\n# scheduler.can_fuse({a}, {b}) now: {verdict}"] + ["#   " + r for r in reasons or []]
        elif self.paused is None:
            text.append("\n# can_fuse for any pair is asked live while the compile is paused at this graph's "
                        "scheduling, loopbody or codegen stop")
        else:
            text.append("\n# asking scheduler.can_fuse …")
        self.query_one("#code-scheduling", CodeView).set_code("\n".join(text), "python")

    # ------------------------------------------------------------------ actions
    def action_next_stop(self) -> None:
        stops = self.session.stops
        cur = self._current_index()
        if cur is not None and cur + 1 < len(stops):
            nxt = stops[cur + 1]
            self.view_graph, self.view_stage = graph_key(nxt), nxt["stage"]
            self.follow = cur + 1 == len(stops) - 1
            self.refresh_all()
            return
        if self.paused is not None and self.agent is not None:
            self.paused = None
            self.follow = True
            self.agent.send(CMD_CONTINUE)
            self._status_extra = ""
            self.refresh_status()
            self.refresh_stagebar()
            return
        self.bell()

    def action_prev_stop(self) -> None:
        cur = self._current_index()
        if cur is None:
            if self.session.stops:
                last = self.session.stops[-1]
                self.view_graph, self.view_stage = graph_key(last), last["stage"]
                self.refresh_all()
            return
        if cur > 0:
            prv = self.session.stops[cur - 1]
            self.view_graph, self.view_stage = graph_key(prv), prv["stage"]
            self.follow = False
            self.refresh_all()
        else:
            self.bell()

    def _current_index(self) -> int | None:
        for i, s in enumerate(self.session.stops):
            if graph_key(s) == self.view_graph and s["stage"] == self.view_stage:
                return i
        return None

    def action_stage(self, stage: str) -> None:
        self.view_stage = stage
        if stage != "log" and self.session.stops:
            self.follow = False
        self.refresh_all()

    def action_pick_graph(self) -> None:
        ol = self.query_one("#graphs", OptionList)
        if len(self.session.graphs) > 1:
            ol.add_class("shown")
            ol.focus()
        else:
            self.notify("only one compiled graph so far")

    def on_resize(self, event: Any) -> None:
        # below 100 columns the graph list would take a third of the screen: g shows it
        self.query_one("#graphs", OptionList).set_class(event.size.width < 100, "narrow")
        self.query_one("#linked-row").set_class(event.size.width < 130, "narrow")
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

    @on(OptionList.OptionSelected, "#graphs")
    def _graph_chosen(self, event: OptionList.OptionSelected) -> None:
        ol = self.query_one("#graphs", OptionList)
        if ol.has_class("narrow"):
            ol.remove_class("shown")
            self.query_one(f"#table-{self.view_stage}" if self.view_stage != "log" else "#code-log").focus()

    def action_search(self) -> None:
        self._search_target = self.focused if isinstance(self.focused, (CodeView, Table)) else \
            self.query_one(f"#code-{self.view_stage}", CodeView)
        box = self.query_one("#search", Input)
        box.disabled = False
        box.add_class("shown")
        box.focus()

    @on(Input.Submitted, "#search")
    def _search(self, event: Input.Submitted) -> None:
        target = getattr(self, "_search_target", None)
        needle = event.value.strip()
        if not needle or target is None:
            return
        found = None
        if isinstance(target, CodeView):
            found = target.find(needle)
        elif isinstance(target, Table):
            low = needle.lower()
            n = target.row_count
            for k in range(1, n + 1):
                r = (target.cursor_row + k) % n
                if any(low in str(c).lower() for c in target.get_row_at(r)):
                    target.move_cursor(row=r)
                    found = r + 1
                    break
        self._status_extra = f"'{needle}': " + (f"line {found}" if found else "no match")
        self.refresh_status()

    def on_key(self, event: Any) -> None:
        box = self.query_one("#search", Input)
        if event.key == "escape" and box.has_class("shown"):
            box.remove_class("shown")
            box.disabled = True
            target = getattr(self, "_search_target", None)
            (target or self.query_one(f"#code-{self.view_stage}", CodeView)).focus()
            event.stop()

    def action_run(self) -> None:
        if self.agent is None or not self.agent.alive:
            self.notify("no live script to time (recorded session or the script's process has ended)", severity="warning")
            return
        self.agent.send(CMD_RUN)
        self.session.run_status = "timing requested…"
        self.view_stage = "run"
        self.refresh_all(force=True)

    def _screen_for_stop(self, stop: dict[str, Any]) -> None:
        """--record-screens: one screenshot of this stop's pane (named by compile id and stage)."""
        saved = (self.view_graph, self.view_stage)
        self.view_graph, self.view_stage = graph_key(stop), stop["stage"]
        if saved != (self.view_graph, self.view_stage):
            self.refresh_all()
        self.action_screenshot(png=False)
        if saved != (self.view_graph, self.view_stage):
            self.view_graph, self.view_stage = saved
            self.refresh_all()

    async def record_all_screens(self) -> None:
        """--record-screens on a recorded session: one screenshot per stop, then back to the first."""
        for stop in list(self.session.stops):
            if not self.is_running:
                return
            self.view_graph, self.view_stage = graph_key(stop), stop["stage"]
            try:
                self.refresh_all()
                await self._wait_for_refresh()
                self.action_screenshot(png=False)
            except NoMatches:  # the app is closing
                return
        if self.session.stops:
            first = self.session.stops[0]
            self.view_graph, self.view_stage = graph_key(first), first["stage"]
            self.refresh_all()
        self._status_extra = f"saved {len(self.session.stops)} screenshots into {self.screenshots}/"
        self.refresh_status()

    async def _wait_for_refresh(self) -> None:
        import asyncio  # noqa: PLC0415

        done = asyncio.Event()
        self.screen.refresh()  # a stop whose panes did not change would otherwise never repaint
        self.call_after_refresh(done.set)
        await done.wait()

    def action_cancel_run(self) -> None:
        if self.agent is not None and self.agent.alive:
            self.agent.send("cancel_run")
            self.session.run_status = "cancelling…"
            self.refresh_status()

    @on(Table.RowSelected, "#table-run")
    def _run_kernel_chosen(self, event: Table.RowSelected) -> None:
        """Enter on a timed kernel: its code in the codegen pane, its first buffer selected."""
        name = str(event.row_key.value).split(":", 1)[1] if event.row_key.value else ""
        links = self._links()
        bufs = links.get("kernels", {}).get(name, {}).get("buffers") or []
        if bufs:
            self.selected_buffer = bufs[0]
        self.view_stage = "codegen"
        self.refresh_all(force=True)
        stop = self.session.stop_for(self.view_graph, "codegen")
        if stop:
            table = self.query_one("#table-codegen", Table)
            try:
                table.move_cursor(row=table.get_row_index(name))
            except Exception:  # noqa: BLE001
                pass
            self._show_kernel(self.query_one("#code-codegen", CodeView), stop, name)

    def screenshot_name(self) -> str:
        base = os.path.splitext(os.path.basename(self.session_path or self.script or "session"))[0]
        g = (self.view_graph or "nograph").replace("[", "").replace("]", "").replace("/", "-").replace(" ", "_")
        return f"{base}_{g}_{self.view_stage}_{time.strftime('%H%M%S')}.svg"

    def action_screenshot(self, png: bool = True) -> None:
        os.makedirs(self.screenshots, exist_ok=True)
        path = self.save_screenshot(self.screenshot_name(), self.screenshots)
        png = svg_to_png(path) if png else None
        self.saved_screenshots += [p for p in (path, png) if p]
        shown = path + (f" (+ {os.path.basename(png)})" if png else "")
        self._status_extra = f"screenshot saved: {shown}"
        self.refresh_status()

    def selection(self) -> str | None:
        """The row selected in the current stage's table (a buffer, node or kernel name)."""
        if self.view_stage == "log":
            return None
        table = self.query_one(f"#table-{self.view_stage}", Table)
        if not table.row_count:
            return None
        cell = table.get_row_at(table.cursor_row)[0]
        return str(cell)

    def action_report(self) -> None:
        if not self.session_path:
            self.notify("no session file to report from", severity="warning")
            return
        from inductor_step.tui.report import build_report  # noqa: PLC0415

        if self.writer is not None:
            self.writer.f.flush()
        try:
            out = build_report(self.session_path, screenshots=self.saved_screenshots,
                               stood={"graph": self.view_graph, "stage": self.view_stage, "selection": self.selection()})
        except (OSError, ValueError) as e:
            self._status_extra = f"report failed: {e}"
        else:
            self._status_extra = f"report bundle written: {out}"
        self.refresh_status()

    def action_help(self) -> None:
        t = Text()
        t.append("inductor-step keys\n\n", style="bold")
        rows = [("n / space", "next stop: continues the paused compile at the newest stop"),
                ("b", "back to the previous stop (viewing only)"),
                ("1 … 7", "stages: dynamo, aot, lowering, scheduling, loopbody, codegen, run"),
                ("8", "linked view: a buffer's FX nodes, scheduler node, fused kernel lines, LoopBody, your source line"),
                ("f", "scheduling pane: f on a node, f on another: were they fused, and why (can_fuse live)"),
                ("l", "the script's stdout/stderr"),
                ("tab / shift+tab", "next / previous pane (table, code, graph list)"),
                ("↑ ↓ PgUp PgDn", "move in a table or code pane; a table row shows its details below"),
                ("g", "graph picker (compile id and kind: [0/0] forward, [0/0] backward, [1/0] …)"),
                ("/", "search in the pane; Enter: next match; Esc: close"),
                ("r", "run and time every compiled graph and kernel (after its codegen); c cancels"),
                ("s", f"screenshot (SVG, and PNG with rsvg-convert) into {self.screenshots}/"),
                ("R", "bug-report bundle: REPORT.md, screenshots, session, repro"),
                ("? / F1", "this help"),
                ("q / ctrl+c", "quit: ends the script's process; the session file is kept (ctrl+c: exit status 130)")]
        for k, v in rows:
            t.append(f"  {k:<16}", style="bold cyan")
            t.append(f"{v}\n")
        t.append("\nThe compile pauses after each stage; stepping back only views earlier stops.", style="dim")
        self.push_screen(HelpScreen(t))

    def action_quit_app(self, interrupted: bool = False) -> None:
        """q or ctrl+c (``interrupted``): end the agent and its children, close the session file, exit."""
        self.interrupted = interrupted
        if self.agent is not None:
            self.agent.terminate()
        if self.writer is not None:
            self.writer.close()
        self.exit()
