"""Shown instead of the panes while the terminal is smaller than :data:`MIN_SIZE`."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult
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


def follow_size(app: App[Any], width: int, height: int) -> None:
    """The app resized to ``width`` x ``height``: this screen pushed over the panes below :data:`MIN_SIZE`, updated
    while it stays too small, popped once the terminal is large enough."""
    top = app.screen_stack[-1] if app.screen_stack else None
    if width < MIN_SIZE[0] or height < MIN_SIZE[1]:
        if not isinstance(top, TooSmallScreen):
            screen = TooSmallScreen()
            app.push_screen(screen)
            app.call_after_refresh(screen.show, width, height)
        else:
            top.show(width, height)
    elif isinstance(top, TooSmallScreen):
        app.pop_screen()
