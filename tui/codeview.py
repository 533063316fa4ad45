"""A virtualized, syntax-highlighted code view for very long generated code.

Only visible lines are rendered (``render_line``); each line is highlighted by Pygments (through
Rich's ``Syntax``) on first view and cached, so a 50k-line wrapper mounts instantly.  Text is
never parsed as markup: compiler strings are full of ``[`` and ``]``.
"""

from __future__ import annotations

from functools import lru_cache

from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Span, Text
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

_THEME = "monokai"


@lru_cache(maxsize=16)
def _syntax(lexer: str) -> Syntax:
    # a Lexer object, not its name: Rich would look the name up again for every line
    from pygments.lexers import get_lexer_by_name  # noqa: PLC0415

    return Syntax("", get_lexer_by_name(lexer), theme=_THEME, background_color="default")


@lru_cache(maxsize=512)
def _fg_only(style: Style | str) -> Style:
    if isinstance(style, str):
        style = Style.parse(style)
    return Style(color=style.color, bold=style.bold, italic=style.italic, underline=style.underline)


class CodeView(ScrollView, can_focus=True):
    """Read-only code with a line cursor, marked lines (links, search hits) and search.

    ``set_code(text, lexer)`` replaces the content; ``lexer`` is a Pygments name (``python``,
    ``cpp``, ``text``).  Lines are 1-based in the API (``goto(12)``, ``mark([(12, 30)])``).
    """

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "goto_line(1)", "Top", show=False),
        Binding("end", "goto_end", "End", show=False),
        Binding("left", "scroll_left", "Left", show=False),
        Binding("right", "scroll_right", "Right", show=False),
    ]

    DEFAULT_CSS = """
    CodeView { background: $surface; }
    CodeView:focus { background-tint: $foreground 4%; }
    """

    class CursorMoved(Message):
        """Posted when the cursor line changes (1-based ``line``)."""

        def __init__(self, view: "CodeView", line: int) -> None:
            super().__init__()
            self.view = view
            self.line = line

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None):
        super().__init__(name=name, id=id, classes=classes)
        self.lines: list[str] = []
        self.lexer = "text"
        self.cursor = 0
        self.marks: set[int] = set()
        self.hits: set[int] = set()
        self._cache: dict[int, Strip] = {}
        self._gutter = 4

    # ------------------------------------------------------------------ content
    def set_code(self, text: str, lexer: str = "python", cursor_line: int = 1) -> None:
        """Show ``text``; keeps nothing from the previous content."""
        self.lines = text.split("\n") if text else [""]
        self.lexer = lexer
        self.marks = set()
        self.hits = set()
        self._cache.clear()
        self._gutter = len(str(len(self.lines))) + 2
        width = max((len(line) for line in self.lines[:20000]), default=0) + self._gutter + 1
        self.virtual_size = Size(width, len(self.lines))
        self.cursor = max(0, min(cursor_line - 1, len(self.lines) - 1))
        self.scroll_to(0, max(0, self.cursor - 2), animate=False, immediate=True)
        self.refresh()

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def mark(self, ranges: list[tuple[int, int]]) -> None:
        """Highlight 1-based inclusive line ranges (replacing earlier marks)."""
        self.marks = {i - 1 for a, b in ranges for i in range(a, b + 1)}
        self._cache.clear()
        self.refresh()

    def goto(self, line: int, center: bool = True) -> None:
        """Move the cursor to 1-based ``line`` and scroll it into view."""
        self.cursor = max(0, min(line - 1, len(self.lines) - 1))
        self._scroll_to_cursor(center)
        # new content's virtual size is applied at the next layout: scroll again after it
        self.call_after_refresh(self._scroll_to_cursor, center)
        self._cache.clear()
        self.refresh()
        self.post_message(self.CursorMoved(self, self.cursor + 1))

    def _scroll_to_cursor(self, center: bool) -> None:
        h = self.scrollable_content_region.height or 10
        if center:
            self.scroll_to(y=max(0, self.cursor - h // 3), animate=False, immediate=True)
        elif self.cursor < self.scroll_offset.y:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= self.scroll_offset.y + h:
            self.scroll_to(y=self.cursor - h + 1, animate=False, immediate=True)

    def find(self, needle: str, forward: bool = True) -> int | None:
        """Move to the next line (after the cursor, wrapping) containing ``needle``, any case.

        Marks every matching line; returns the 1-based line found or None.
        """
        if not needle:
            return None
        low = needle.lower()
        self.hits = {i for i, line in enumerate(self.lines) if low in line.lower()}
        self._cache.clear()
        if not self.hits:
            self.refresh()
            return None
        n = len(self.lines)
        step = 1 if forward else -1
        for k in range(1, n + 1):
            i = (self.cursor + step * k) % n
            if i in self.hits:
                self.goto(i + 1)
                return i + 1
        return None

    # ------------------------------------------------------------------ actions
    def action_cursor(self, delta: int) -> None:
        self.goto(self.cursor + 1 + delta, center=False)

    def action_page(self, direction: int) -> None:
        h = max(1, self.scrollable_content_region.height - 1)
        self.goto(self.cursor + 1 + direction * h, center=False)

    def action_goto_line(self, line: int) -> None:
        self.goto(line, center=False)

    def action_goto_end(self) -> None:
        self.goto(len(self.lines), center=False)

    # ------------------------------------------------------------------ rendering
    def _highlight(self, i: int) -> Text:
        line = self.lines[i].expandtabs(4)
        if self.lexer == "text" or len(line) > 2000:
            return Text(line)
        try:
            text = _syntax(self.lexer).highlight(line)
            text.rstrip()
            # drop the theme's background (on every token span) so the pane's own shows through
            text.style = ""
            text.spans = [Span(sp.start, sp.end, _fg_only(sp.style)) for sp in text.spans]
            return text
        except Exception:  # noqa: BLE001
            return Text(line)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        i = scroll_y + y
        width = self.scrollable_content_region.width
        if i >= len(self.lines):
            return Strip.blank(width, self.rich_style)
        key = i
        strip = self._cache.get(key)
        if strip is None:
            console = self.app.console
            number = Text(f"{i + 1:>{self._gutter - 1}} ", style="dim")
            body = self._highlight(i)
            segs = list(number.render(console, end="")) + list(body.render(console, end=""))
            bg = None
            if i == self.cursor and self.has_focus:
                bg = Style(bgcolor="#3a3d5c")
            elif i == self.cursor:
                bg = Style(bgcolor="#2c2e40")
            elif i in self.marks:
                bg = Style(bgcolor="#3b3320")
            elif i in self.hits:
                bg = Style(bgcolor="#203b2a")
            # the pane's own style underneath (so unstyled text is not drawn on black), the
            # cursor/mark background on top
            strip = Strip(list(Segment.apply_style(segs, style=self.rich_style, post_style=bg))).simplify()
            self._cache[key] = strip
            if len(self._cache) > 2000:
                self._cache.clear()
        fill = self.rich_style
        if i == self.cursor or i in self.marks or i in self.hits:
            fill = self.rich_style + Style(bgcolor="#3a3d5c" if i == self.cursor and self.has_focus else "#2c2e40"
                                           if i == self.cursor else "#3b3320" if i in self.marks else "#203b2a")
        return strip.crop_extend(scroll_x, scroll_x + width, fill)

    def on_focus(self) -> None:
        self._cache.clear()
        self.refresh()

    def on_blur(self) -> None:
        self._cache.clear()
        self.refresh()

    def notify_style_update(self) -> None:
        self._cache.clear()
        super().notify_style_update()


__all__ = ["CodeView", "Segment"]
