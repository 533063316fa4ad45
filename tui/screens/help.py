"""``?`` / F1: every key, made from the app's bindings (:mod:`inductor_step.tui.keys`), scrollable."""

from __future__ import annotations

from rich.table import Table as RichTable
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


def help_table(rows: list[tuple[str, str]], note: str) -> RichTable:
    """Keys in one column, what they do in the other (wrapped inside its column, never back to
    column 0)."""
    grid = RichTable.grid(padding=(0, 2))
    grid.add_column(style="bold cyan", no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_row(Text("inductor-step keys", style="bold"), "")
    grid.add_row("", "")
    for keys, what in rows:
        grid.add_row(Text(keys), Text(what))
    grid.add_row("", "")
    grid.add_row("", Text(note, style="dim"))
    return grid


class HelpScreen(ModalScreen[None]):
    """The help box: scrolls with ↑ ↓ PgUp PgDn Home End; Esc, q, ? or F1 close it."""

    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "Close"),
                Binding("down,j", "scroll(1)", show=False), Binding("up,k", "scroll(-1)", show=False),
                Binding("pagedown,space", "page(1)", show=False), Binding("pageup", "page(-1)", show=False),
                Binding("end", "end", show=False), Binding("home", "home", show=False)]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90%; max-width: 100; height: auto; max-height: 90%;
                                  border: round $accent; padding: 0 1; background: $panel; }
    HelpScreen Static { width: 1fr; height: auto; }
    """

    def __init__(self, rows: list[tuple[str, str]], note: str):
        super().__init__()
        self.rows, self.note = rows, note

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static(help_table(self.rows, self.note))

    @property
    def box(self) -> VerticalScroll:
        return self.query_one("#help-box", VerticalScroll)

    def action_scroll(self, n: int) -> None:
        self.box.scroll_relative(y=n, animate=False)

    def action_page(self, n: int) -> None:
        self.box.scroll_relative(y=n * max(1, self.box.scrollable_content_region.height - 1), animate=False)

    def action_end(self) -> None:
        self.box.scroll_end(animate=False)

    def action_home(self) -> None:
        self.box.scroll_home(animate=False)
