"""Shown instead of the panes while the terminal is smaller than :data:`MIN_SIZE`."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

#: the smallest terminal (columns, rows) the panes are laid out for
MIN_SIZE = (60, 16)


class TooSmallScreen(Screen[None]):
    """Says how large the terminal is and needs to be; the compile keeps its place; q still quits."""

    BINDINGS = [Binding("q", "app.quit_app", "Quit"), Binding("ctrl+c", "app.quit_app(True)", "Quit")]
    DEFAULT_CSS = """
    TooSmallScreen { align: center middle; background: $background; }
    TooSmallScreen > Static { width: 100%; height: auto; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="toosmall")

    def show(self, w: int, h: int) -> None:
        self.query_one("#toosmall", Static).update(Text(
            f"terminal too small: {w}x{h}\nneeds {MIN_SIZE[0]}x{MIN_SIZE[1]}\n"
            "the compile keeps its place\nenlarge the window, or q to quit", justify="center"))
