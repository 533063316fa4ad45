"""A virtualized, syntax-highlighted code view for very long generated code.

Only visible lines are rendered (``render_line``); each line is highlighted by Pygments (through
Rich's ``Syntax``) on first view and cached process-wide by (lexer, line text), so showing the same
code again (stepping back, the linked view moving between buffers of one kernel) never re-lexes it.
The text is split into lines a block at a time, when a line is first read (:class:`Lines`), so a
100,000-line graph is shown without splitting all of it.  Text is never parsed as markup: compiler
strings are full of ``[`` and ``]``.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from functools import lru_cache
from itertools import islice
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.control import strip_control_codes
from rich.segment import Segment
from rich.style import Style
from rich.text import Span, Text
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from inductor_step.tui.table import LineCache

if TYPE_CHECKING:
    from rich.syntax import Syntax

_THEME = "monokai"


@lru_cache(maxsize=16)
def _syntax(lexer: str) -> Syntax:
    # a Lexer object, not its name: Rich would look the name up again for every line.  Imported here: the
    # first frame draws plain text (highlight_code), and Rich's Syntax with Pygments took ~6 ms to import
    from pygments.lexers import get_lexer_by_name  # noqa: PLC0415
    from rich.syntax import Syntax  # noqa: PLC0415

    return Syntax("", get_lexer_by_name(lexer), theme=_THEME, background_color="default")


@lru_cache(maxsize=512)
def _fg_only(style: Style | str) -> Style:
    if isinstance(style, str):
        style = Style.parse(style)
    return Style(color=style.color, bold=style.bold, italic=style.italic, underline=style.underline)


#: lines longer than this (after tabs) are not highlighted
_LONG = 2000


@lru_cache(maxsize=1)
def _console() -> Console:
    # resolves the styles of highlighted text into segments; Style objects resolve the same on any console
    return Console()


@lru_cache(maxsize=20000)
def _body_segments(lexer: str, line: str) -> tuple[Segment, ...]:
    """The segments of one highlighted line (tabs expanded, foreground colours only), cached
    process-wide: Pygments costs ~0.2 ms a line, and generated code repeats lines."""
    line = line.expandtabs(4)
    if lexer == "text" or len(line) > _LONG:
        text = Text(line)
    else:
        try:
            text = _syntax(lexer).highlight(line)
            text.rstrip()
            # drop the theme's background (on every token span) so the pane's own shows through
            text.style = ""
            text.spans = [Span(sp.start, sp.end, _fg_only(sp.style)) for sp in text.spans]
        except Exception:  # noqa: BLE001
            text = Text(line)
    return tuple(text.render(_console(), end=""))


class Lines(Sequence[str]):
    """``text.split("\n")`` as a sequence, split a block (~64 KB) at a time when first read.

    Building it counts newlines per block (a few ms for 12 MB) instead of making every line a
    string (~15 ms per 100,000 lines); showing a pane reads only the lines on screen.
    ``text`` is the whole text; :meth:`offset` and :meth:`line_at` convert between line numbers
    (0-based) and character offsets, for regex searches over the text.
    """

    BLOCK = 1 << 16

    def __init__(self, text: str):
        self.text = text
        starts = [0]
        n, pos = len(text), self.BLOCK
        while pos < n:  # blocks end just after a newline
            nl = text.find("\n", pos)
            if nl < 0:
                break
            starts.append(nl + 1)
            pos = nl + 1 + self.BLOCK
        first = [0]
        for a, b in zip(starts, starts[1:]):
            first.append(first[-1] + text.count("\n", a, b))
        self._starts, self._first = starts, first
        self._len = first[-1] + text.count("\n", starts[-1]) + 1
        self._blocks: dict[int, tuple[str, ...]] = {}
        self._head_width: int | None = None

    def head_width(self) -> int:
        """Length of the longest of the first 20,000 lines (the horizontal scroll range), cached."""
        if self._head_width is None:
            self._head_width = max(map(len, islice(self, 20000)), default=0)
        return self._head_width

    def _block(self, k: int) -> tuple[str, ...]:
        b = self._blocks.get(k)
        if b is None:
            end = self._starts[k + 1] - 1 if k + 1 < len(self._starts) else len(self.text)
            # a tuple of strings is untracked by the garbage collector after its first pass; lists
            # of 100,000 lines made each full collection touch every line
            b = self._blocks[k] = tuple(self.text[self._starts[k]:end].split("\n"))
        return b

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._len))]
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError(i)
        k = bisect_right(self._first, i) - 1
        return self._block(k)[i - self._first[k]]

    def __iter__(self) -> Iterator[str]:
        for k in range(len(self._starts)):
            yield from self._block(k)

    def offset(self, i: int) -> int:
        """Character offset in ``text`` where line ``i`` starts."""
        k = bisect_right(self._first, i) - 1
        pos = self._starts[k]
        for _ in range(i - self._first[k]):
            pos = self.text.index("\n", pos) + 1
        return pos

    def line_at(self, pos: int) -> int:
        """The line (0-based) that character offset ``pos`` of ``text`` lies on."""
        k = bisect_right(self._starts, pos) - 1
        return self._first[k] + self.text.count("\n", self._starts[k], pos)


class CodeView(LineCache, ScrollView, can_focus=True):
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

        @property
        def control(self) -> "CodeView":
            return self.view

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None):
        super().__init__(name=name, id=id, classes=classes)
        self.lines: Sequence[str] = Lines("")
        self.lexer = "text"
        self.cursor = 0
        self.marks: set[int] = set()
        self.hits: set[int] = set()
        self._cache: dict[int, Strip] = {}
        self._gutter = 4
        self._frame: tuple | None = None
        self._pending_scroll: bool | None = None  # see _scroll_to_cursor

    def rehighlight(self) -> None:
        """Draw the lines again, highlighted now that the app's ``code_highlight`` is on."""
        self._cache.clear()
        self.refresh()

    # ------------------------------------------------------------------ content
    def set_code(self, text: str, lexer: str = "python", cursor_line: int = 1) -> None:
        """Show ``text``; keeps nothing from the previous content (the same text again keeps its
        split lines)."""
        if not (isinstance(self.lines, Lines) and self.lines.text == text):
            self.lines = _lines(text)
        self.lexer = lexer
        self.marks = set()
        self.hits = set()
        self._cache.clear()
        self._gutter = len(str(len(self.lines))) + 2
        width = self.lines.head_width() + self._gutter + 1
        self.virtual_size = Size(width, len(self.lines))
        self.cursor = max(0, min(cursor_line - 1, len(self.lines) - 1))
        self.scroll_to(0, max(0, self.cursor - 2), animate=False, immediate=True)
        self.refresh()

    @property
    def text(self) -> str:
        """The whole text shown."""
        return self.lines.text if isinstance(self.lines, Lines) else "\n".join(self.lines)

    def search_line(self, pattern: "re.Pattern[str]", start: int = 0, line_start: bool = False) -> int | None:
        """:func:`search_line` over this view's text."""
        return search_line(self._all_lines(), pattern, start, line_start)

    def search_word(self, word: str, start: int = 0) -> int | None:
        """:func:`search_word` over this view's text."""
        return search_word(self._all_lines(), word, start)

    def _all_lines(self) -> "Lines":
        return self.lines if isinstance(self.lines, Lines) else Lines("\n".join(self.lines))

    def mark(self, ranges: list[tuple[int, int]]) -> None:
        """Highlight 1-based inclusive line ranges (replacing earlier marks)."""
        self.marks = {i - 1 for a, b in ranges for i in range(a, b + 1)}
        self._cache.clear()
        self.refresh()

    def goto(self, line: int, center: bool = True) -> None:
        """Move the cursor to 1-based ``line`` and scroll it into view."""
        old = self.cursor
        self.cursor = max(0, min(line - 1, len(self.lines) - 1))
        before = self.scroll_offset
        self._scroll_to_cursor(center)
        # new content's virtual size is applied at the next layout: scroll again after it
        self.call_after_refresh(self._scroll_to_cursor, center)
        self._cache.pop(old, None)  # only the two cursor lines change
        self._cache.pop(self.cursor, None)
        if self.scroll_offset == before and self.size.height and self._pending_scroll is None:
            self.refresh_line(old)  # and only they are repainted
            self.refresh_line(self.cursor)
        else:
            self.refresh()
        self.post_message(self.CursorMoved(self, self.cursor + 1))

    def _scroll_to_cursor(self, center: bool) -> None:
        h = self.scrollable_content_region.height
        if not h:
            # not laid out yet (a pane never shown): Textual would not scroll it (no scrollbars
            # yet), and its first frame showed the top of the text, the cursor's lines only in a
            # second frame; render_lines scrolls it first thing instead
            self._pending_scroll = center
            return
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
    def render_lines(self, crop: Region) -> list[Strip]:
        if self._pending_scroll is not None and self.scrollable_content_region.height:
            center, self._pending_scroll = self._pending_scroll, None
            self._scroll_to_cursor(center)
        # what every line needs, looked up once per repaint (rich_style walks the ancestors)
        self._frame = (self.scroll_offset, self.scrollable_content_region.width, self.rich_style, self.has_focus)
        try:
            return super().render_lines(crop)
        finally:
            self._frame = None

    def render_line(self, y: int) -> Strip:
        frame = self._frame or (self.scroll_offset, self.scrollable_content_region.width,
                                self.rich_style, self.has_focus)
        (scroll_x, scroll_y), width, rich_style, focused = frame
        i = scroll_y + y
        if i >= len(self.lines):
            return Strip.blank(width, rich_style)
        key = i
        strip = self._cache.get(key)
        bg = None
        if strip is None:
            if i == self.cursor and focused:
                bg = Style(bgcolor="#3a3d5c")
            elif i == self.cursor:
                bg = Style(bgcolor="#2c2e40")
            elif i in self.marks:
                bg = Style(bgcolor="#3b3320")
            elif i in self.hits:
                bg = Style(bgcolor="#203b2a")
        fill = rich_style
        if i == self.cursor or i in self.marks or i in self.hits:
            fill = rich_style + Style(bgcolor="#3a3d5c" if i == self.cursor and focused else "#2c2e40"
                                      if i == self.cursor else "#3b3320" if i in self.marks else "#203b2a")
        line = self.lines[i]
        if strip is None and len(line) > _LONG:
            # a long line is never highlighted (one plain segment): cut out the cells on screen
            # instead of building and cropping it whole (Rich measures a segment char by char: a
            # 217,000-character signature line cost 15 ms a repaint)
            body = strip_control_codes(line.expandtabs(4))  # what Text(line) keeps
            full = f"{i + 1:>{self._gutter - 1}} " + body
            if full.isascii() and full.isprintable():  # one cell per character
                piece = full[max(0, scroll_x):max(0, scroll_x + width)]
                segs = [Segment(piece, rich_style + bg if bg else rich_style)] if piece else []
                return Strip(segs, len(piece)).crop_extend(0, width, fill)
        if strip is None:
            # the line number is unstyled: Text(style=...) without spans renders without its style
            # plain until the app's first frame is drawn (App.code_highlight): Pygments' lexer compiles ~110
            # regexes on its first line, 26 ms of a 281 ms first frame (benchmarks/open_time.py)
            lexer = self.lexer if getattr(self.app, "code_highlight", True) else "text"
            segs = [Segment(f"{i + 1:>{self._gutter - 1}} "), *_body_segments(lexer, line)]
            # the pane's own style underneath (so unstyled text is not drawn on black), the
            # cursor/mark background on top
            strip = Strip(list(Segment.apply_style(segs, style=rich_style, post_style=bg))).simplify()
            self._cache[key] = strip
            if len(self._cache) > 2000:
                self._cache.clear()
        return strip.crop_extend(scroll_x, scroll_x + width, fill)


def search_line(lines: Lines, pattern: "re.Pattern[str]", start: int = 0, line_start: bool = False) -> int | None:
    """The first line of ``lines`` (0-based, from line ``start``) where ``pattern`` matches,
    searched over the whole text at once (a Python loop over 100,000 lines takes tens of ms);
    None when it does not.  With ``line_start`` it must match at the start of a line, as ``pattern.match(line)``
    would.  Keep ``pattern`` from matching across a newline (``[^\\S\\n]`` for ``\\s``)."""
    if start >= len(lines):
        return None
    text, pos = lines.text, lines.offset(max(0, start))
    if not line_start:
        m = pattern.search(text, pos)
        return None if m is None else lines.line_at(m.start())
    if pattern.match(text, pos):
        return lines.line_at(pos)
    # "\n" first: the regex engine then scans for it in C and tries the pattern once a line
    m = re.compile("\n(?:" + pattern.pattern + ")", pattern.flags).search(text, pos)
    return None if m is None else lines.line_at(m.start() + 1)


def search_word(lines: Lines, word: str, start: int = 0) -> int | None:
    """The first line from ``start`` where ``word`` stands between word boundaries, as
    ``re.search(rf"\\b{re.escape(word)}\\b", line)`` would find it."""
    if not word or start >= len(lines):
        return None
    text, pos = lines.text, lines.offset(max(0, start))
    # the literal first (fast), then the boundary before it (a leading \b defeats that scan)
    first_is_word = word[0].isalnum() or word[0] == "_"
    for m in re.compile(re.escape(word) + r"\b").finditer(text, pos):
        p = m.start()
        before = text[p - 1] if p else ""
        if (before.isalnum() or before == "_") != first_is_word:
            return lines.line_at(p)
    return None


def lines_of(text: str) -> Lines:
    """``Lines(text)``, kept for the last texts shown or prepared (by identity)."""
    return _lines(text)


def _lines(text: str) -> Lines:
    hit = _recent.get(id(text))
    if hit is not None and hit.text is text:
        return hit
    lines = Lines(text)
    _recent[id(text)] = lines
    while len(_recent) > 8:
        del _recent[next(iter(_recent))]
    return lines


def highlight_code(app: Any) -> None:
    """After the app's first frame: its code views highlight their lines (Pygments) from now on
    (``app.code_highlight``; until then they draw plain text)."""
    app.code_highlight = True
    for view in app.query(CodeView):
        view.rehighlight()


def prepare(text: str, lexer: str, first: int, count: int) -> Iterator[None]:
    """Do ahead what showing ``text`` with lines ``first`` .. ``first + count - 1`` on screen will
    cost: split and count its lines (kept for the same string object), highlight those lines (kept
    by their text).  A generator: each step is a few ms, so an idle-time caller can stop between
    steps when a key comes.  Changes no widget."""
    lines = _lines(text)
    yield
    lines.head_width()
    yield
    end = min(first + count, len(lines))
    for a in range(max(0, first), end, 8):
        for i in range(a, min(a + 8, end)):
            _body_segments(lexer, lines[i])
        yield


#: the last texts shown (by identity), so showing one again (an earlier stop) does not count its lines again
_recent: dict[int, Lines] = {}




__all__ = ["CodeView", "Lines", "Segment", "lines_of", "prepare", "search_line", "search_word"]
