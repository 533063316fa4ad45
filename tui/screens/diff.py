"""The diff view: two compiled graphs, level by level, top-down, unchanged levels hidden.

A list of the levels that changed (why it recompiled, Dynamo graph, post-grad graph, IR buffers,
scheduler nodes, kernels, timings, compile time per stage; :mod:`inductor_step.session.diff` computes them) beside a table of the
selected level's changes over a code view of the selected change (a kernel's unified diff).  Each
level is one key away, the same key as its pane (0 is "why", T compile time); n / b go to the next / previous
changed level; Enter on a change opens it in its normal pane; Esc goes back.  Across two sessions
(``inductor-step diff A B``) ``p`` goes to the next pair of graphs, and Enter opens B's side.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from inductor_step.tui.codeview import CodeView
from inductor_step.session.diff import LEVELS, Change, GraphDiff, Level, level_lines
from inductor_step.tui.table import Cell, Table

#: the key of each level: the digit of its pane (0: why)
LEVEL_KEYS = {"why": "0", "dynamo": "1", "post_grad": "2", "buffers": "3", "scheduling": "4", "kernels": "6",
              "timing": "7", "ctime": "T"}


COLUMNS = ("", "item", "what changed")


def compact(lv: Level) -> str:
    """A level's summary in the list's width: ``~5 +9 -25`` (changed, added, removed)."""
    if lv.missing or lv.informational or not lv.changes:
        return lv.summary() if not lv.missing else "not compared"
    n = lv.counts
    return " ".join(f"{m}{n[k]}" for m, k in (("~", "changed"), ("+", "added"), ("-", "removed")) if n.get(k))


@dataclass
class DiffPair:
    """One pair of graphs on the diff screen: their keys in A's and B's session (None when only one
    has it), how they were paired, and the diff (None for an unpaired graph)."""

    key_a: str | None
    key_b: str | None
    how: str
    diff: GraphDiff | None


class DiffScreen(Screen[None]):
    """The diff view over ``pairs`` (one pair for two graphs of one session); ``same_session`` True
    when A and B are graphs of the app's own session (Enter then opens A's side too)."""

    BINDINGS = [
        Binding("escape", "back", "Back", id="diff-back", tooltip="back to the panes"),
        Binding("q", "app.quit_app", "Quit", id="diff-quit",
                tooltip="quit, as q does everywhere: ends the script's process; the session file is kept"),
        *[Binding(k, f"level('{lv}')", title, show=False, id=f"diff-level-{lv}",
                  tooltip=f"diff level: {title}") for lv, title, _s in LEVELS for k in [LEVEL_KEYS[lv]]],
        Binding("5,8,l", "no_level", show=False),
        Binding("n", "step(1)", "Next level", id="diff-next", tooltip="next changed level"),
        Binding("space", "step(1)", show=False),
        # not in the footer (the status line says n/b): at 80 columns the footer was cut
        Binding("b", "step(-1)", "Prev level", show=False, id="diff-prev", tooltip="previous changed level"),
        Binding("p", "pair(1)", "Next pair", id="diff-pair", tooltip="two sessions: the next pair of graphs"),
        Binding("r", "time_rounds", "Time A+B", id="diff-rounds",
                tooltip="time A and B round by round in one process (a live session): one machine for both"),
        Binding("slash,g,f", "no_level", show=False),
        Binding("tab", "app.focus_next", show=False), Binding("shift+tab", "app.focus_previous", show=False),
    ]
    DEFAULT_CSS = """
    DiffScreen #diff-title { height: 1; background: $primary-background; }
    DiffScreen #diff-memory { height: auto; max-height: 4; }  /* planned, measured, eager; what changed */
    DiffScreen #diff-status { height: auto; max-height: 3; background: $boost; }  /* wraps: 80 columns (40.11) */
    DiffScreen #diff-levels { width: 30; border-right: vkey $primary; }
    DiffScreen #diff-table { height: 2fr; min-height: 4; }
    DiffScreen #diff-code { height: 3fr; border-top: hkey $primary; }
    DiffScreen #diff-table:focus, DiffScreen #diff-code:focus, DiffScreen #diff-levels:focus { border-left: outer $accent; }
    DiffScreen.narrow #diff-levels { width: 24; }
    """

    def __init__(self, pairs: list[DiffPair], same_session: bool = True, label_a: str = "", label_b: str = ""):
        super().__init__()  # no id: a new diff may be pushed while the last one is still being removed
        self.pairs = pairs
        self.same_session = same_session
        self.label_a, self.label_b = label_a, label_b
        self.index = next((i for i, p in enumerate(pairs) if p.diff is not None), 0)
        self.level_key: str | None = None
        self._rows: dict[tuple[int, str], tuple[tuple[str, ...], Any, list[int]]] = {}
        self._shown: tuple[int, str, int] | None = None  # (pair, level, row) whose change is in the code view
        self._warm_timer: Any = None

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield Static(id="diff-title")
        yield Static(id="diff-memory")  # the planned peak and saved bytes of A and B, and what changed
        with Horizontal():
            yield OptionList(id="diff-levels")
            with Vertical():
                yield Table(id="diff-table", cursor_type="row", zebra_stripes=True)
                yield CodeView(id="diff-code")
        yield Static(id="diff-status")
        yield Footer(compact=True)

    @property
    def table(self) -> Table:
        return self.query_one("#diff-table", Table)

    @property
    def code(self) -> CodeView:
        return self.query_one("#diff-code", CodeView)

    @property
    def pair(self) -> DiffPair:
        return self.pairs[self.index]

    @property
    def diff(self) -> GraphDiff | None:
        return self.pair.diff

    def shown_levels(self) -> list[Level]:
        """The levels the list shows: those that changed or could not be compared."""
        return self.diff.changed_levels if self.diff else []

    def on_mount(self) -> None:
        self.table.add_columns(*COLUMNS)
        self.table.fit((1, 2), 2, min_width=16)
        self.show_pair()
        self.table.focus()

    def on_resize(self, event: Any) -> None:
        self.set_class(event.size.width < 100, "narrow")

    # ------------------------------------------------------------------ showing
    def show_pair(self) -> None:
        p, d = self.pair, self.diff
        n = f"pair {self.index + 1}/{len(self.pairs)}: " if len(self.pairs) > 1 else ""
        a = f"{self.label_a} {p.key_a or '-'}".strip()
        b = f"{self.label_b} {p.key_b or '-'}".strip()
        title = Text.assemble(("diff ", "bold"), n, ("A ", "bold red"), a, "  ->  ", ("B ", "bold green"), b)
        if len(self.pairs) > 1:
            title.append(f"  ({p.how}; p: next pair)", "dim")
        if d is not None and d.notes:  # said at the top, and in every level's text below
            marks = [m for m, hit in (("B compiled static from dynamic A", any("STATIC" in n for n in d.notes)),
                                      ("times NOT RELIABLE", any("NOT RELIABLE" in n for n in d.notes)),
                                      ("the machine moved", any("machine moved" in n for n in d.notes)),
                                      ("timed at different moments", any("different moments" in n and "per-graph" not in n
                                                                         for n in d.notes)),
                                      ("timed round by round", any(n.startswith("timed round by round")
                                                                   for n in d.notes))) if hit]
            title.append("  ! " + " · ".join(marks), "bold yellow")
        self.query_one("#diff-title", Static).update(title)
        mem = d.memory_always if d is not None else ""
        self.query_one("#diff-memory", Static).update(Text(mem, "yellow" if d is not None and d.memory else "dim"))
        self.query_one("#diff-memory", Static).display = bool(mem)
        ol = self.query_one("#diff-levels", OptionList)
        ol.clear_options()
        if d is None:
            self.level_key = None
            self.table.clear()
            self.code.set_code(f"# {p.how}: nothing to compare it with", "text")
            self._status(f"{p.key_a or p.key_b}: {p.how}")
            return
        levels = self.shown_levels()
        for lv in levels:
            label = Text.assemble((f"{LEVEL_KEYS[lv.key]} ", "bold cyan"), (lv.title, "bold" if lv.changed else "dim"),
                                  "\n  ", (compact(lv), "yellow" if lv.changed else "dim"))
            ol.add_option(Option(label, id=lv.key))
        same = [lv.title for lv in d.levels if lv not in levels]
        if same:
            ol.add_option(Option(Text("no change:\n  " + ",\n  ".join(same), "dim"), id="_same", disabled=True))
        if levels:
            self.show_level(levels[0].key)
            if self._warm_timer is None:
                self._warm_timer = self.set_timer(0.3, self._warm)
        else:
            self.level_key = None
            self.table.clear()
            self.code.set_code("# no level changed", "text")

    def replace_pair(self, pair: DiffPair, note: str = "") -> None:
        """The shown pair computed again (a what-if variant's timing came): the same level stays on
        screen when it still changed; ``note`` goes to the status line."""
        keep = self.level_key
        self.pairs[self.index] = pair
        self._rows.clear()
        self._shown = None
        self.show_pair()
        if keep and keep in [lv.key for lv in self.shown_levels()]:
            self.show_level(keep)
        if note:  # after the level list's highlight events, which set the status line of their level
            self.call_after_refresh(self._status, note)

    def show_level(self, key: str) -> None:
        """Level ``key``'s changes in the table, the level's text (notes, every change) in the code view."""
        d = self.diff
        if d is None:
            return
        lv = d.level(key)
        self.level_key = key
        ol = self.query_one("#diff-levels", OptionList)
        ids = [o.id for o in ol.options]
        if key in ids and ol.highlighted != ids.index(key):
            ol.highlighted = ids.index(key)
        changes = lv.changes
        keys, row, widths = self.level_rows(key)
        self._shown = None
        self.table.set_rows(keys, row, widths=widths)
        if changes:
            self.show_change(0)
        else:
            self.code.set_code(self.level_text(lv), "text")
        state = lv.summary() if not lv.missing else lv.missing
        self._status(f"{LEVEL_KEYS[key]} {lv.title}: {state}   Enter: open in pane {lv.stage}  n/b: next/prev level"
                     "  Esc: back")

    def level_rows(self, key: str) -> tuple[tuple[str, ...], Any, list[int]]:
        """Level ``key``'s table rows (keys, the row formatter, column widths), kept per pair and
        level: a large graph's level has tens of thousands of changes, measured once."""
        hit = self._rows.get((self.index, key))
        if hit is not None:
            return hit
        assert self.diff is not None
        changes = self.diff.level(key).changes
        style = {"added": "green", "removed": "red", "changed": "yellow"}

        def row(i: int) -> tuple:
            c = changes[i]
            return (Cell(c.mark, style.get(c.kind, "")), Cell(c.name, "bold"), Cell(c.what))
        keys = tuple(str(i) for i in range(len(changes)))
        out = (keys, row, Table.measure(COLUMNS, len(keys), row))
        self._rows[(self.index, key)] = out
        return out

    def _warm(self) -> None:
        """Measure the next level's rows while the person reads (one level per tick)."""
        self._warm_timer = None
        for lv in self.shown_levels():
            if (self.index, lv.key) not in self._rows:
                self.level_rows(lv.key)
                self._warm_timer = self.set_timer(0.05, self._warm)
                return

    def level_text(self, lv: Level) -> str:
        head = [f"# ! {n}" for n in (self.diff.notes if self.diff else [])] + [f"# {lv.title}: {lv.summary()}"]
        return "\n".join(head + level_lines(lv, diffs=False))

    def show_change(self, row: int) -> None:
        d, key = self.diff, self.level_key
        if d is None or key is None:
            return
        lv = d.level(key)
        if not 0 <= row < len(lv.changes):
            return
        if self._shown == (self.index, key, row):
            return
        self._shown = (self.index, key, row)
        c = lv.changes[row]
        lines = [f"# ! {n}" for n in d.notes] + [f"# {lv.title}: {lv.summary()}"] + [f"# {n}" for n in lv.notes]
        lines += ["", f"{c.mark} {c.name}", f"  {c.what}"]
        if c.text:
            lines += [""] + c.text.split("\n")
        lexer = "diff" if key == "kernels" and c.kind == "changed" else "text"
        self.code.set_code("\n".join(lines), lexer)

    def _status(self, text: str) -> None:
        self.query_one("#diff-status", Static).update(Text(text))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``p`` leaves the footer with one pair of graphs, where it does nothing (at 80 columns the
        footer read ``r Time A+B ? H▏^p paletteR``)."""
        if action == "pair" and len(self.pairs) <= 1:
            return False
        return True

    # ------------------------------------------------------------------ keys
    def action_level(self, key: str) -> None:
        d = self.diff
        if d is None:
            return
        if key not in [lv.key for lv in d.levels]:  # compile time: neither session measured it
            self._status(f"{LEVEL_KEYS[key]}: neither session has compile times (recorded before inductor-step "
                         "measured them)")
            return
        if key not in [lv.key for lv in self.shown_levels()] and key != "ctime":  # (T: each stage, even within 10%)
            lv = d.level(key)
            self._status(f"{LEVEL_KEYS[key]} {lv.title}: no change")
            return
        self.show_level(key)

    def action_no_level(self) -> None:
        self._status("0 why · 1 Dynamo · 2 post-grad · 3 IR buffers · 4 scheduler · 6 kernels · 7 timings · "
                     "T compile time · Esc: back")

    def action_step(self, delta: int) -> None:
        keys = [lv.key for lv in self.shown_levels()]
        if not keys:
            return
        i = keys.index(self.level_key) if self.level_key in keys else -delta
        j = i + delta
        if 0 <= j < len(keys):
            self.show_level(keys[j])
        else:
            self.app.bell()

    def action_pair(self, delta: int) -> None:
        if len(self.pairs) <= 1:
            self._status("one pair of graphs: p goes to the next pair when two sessions have several")
            return
        self.index = (self.index + delta) % len(self.pairs)
        self.show_pair()

    def action_time_rounds(self) -> None:
        """r: A and B timed round by round in one process (tui.screens.diff_rounds)."""
        from inductor_step.tui.screens.diff_rounds import request  # noqa: PLC0415

        request(self)

    def action_back(self) -> None:
        self.app.pop_screen()

    @on(OptionList.OptionHighlighted, "#diff-levels")
    def _level_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id and event.option.id != "_same" and event.option.id != self.level_key:
            self.show_level(event.option.id)

    @on(Table.RowHighlighted, "#diff-table")
    def _row_moved(self, event: Table.RowHighlighted) -> None:
        event.stop()
        if event.cursor_row == self.table.cursor_row:
            self.show_change(event.cursor_row)

    @on(Table.RowSelected, "#diff-table")
    def _row_chosen(self, event: Table.RowSelected) -> None:
        event.stop()
        d, key = self.diff, self.level_key
        if d is None or key is None:
            return
        lv = d.level(key)
        if not 0 <= event.cursor_row < len(lv.changes):
            return
        self.open(lv, lv.changes[event.cursor_row])

    def open(self, lv: Level, c: Change) -> None:
        """Open change ``c`` in its normal pane: B's side (A's for an item only A has, in one session)."""
        p = self.pair
        side_b = c.b is not None and lv.key != "why"
        graph = p.key_b if side_b or lv.key == "why" else p.key_a
        name = (c.b if side_b else c.a) or ""
        if lv.key == "why":
            name = ""
        if lv.key == "ctime":  # pane T, at the graph's row (its stages are in its detail)
            name, side_b = graph or "", True
        if not side_b and not self.same_session and lv.key != "why":
            self._status(f"{name} is only in A ({self.label_a}): open that session with --open to see it")
            return
        if graph is None:
            return
        buffers = c.buffers if side_b else []
        app: Any = self.app
        app.pop_screen()
        app.call_after_refresh(app.open_in_pane, graph, lv.stage, name.split(", ")[0], buffers)
