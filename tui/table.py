"""A virtual table for the stage panes: thousands of rows (FX nodes, IR buffers, kernels) at no cost.

Textual's ``DataTable`` keeps every cell as a renderable, measures each one through Rich to size
its columns, and revalidates its cursor per added row; on a graph with 20,000 post-grad FX nodes
that is most of a second per pane.  :class:`Table` instead takes a row count, the row keys and a
function that formats row ``i`` on demand: only visible rows are ever formatted, column widths come
from the text of :data:`WIDTH_SAMPLE` rows spread over the table, and filling a pane copies the key list
(the key index is built when a key is first looked up).
Its API is the subset of ``DataTable`` the app uses (``cursor_row``, ``row_count``,
``move_cursor``, ``get_row_index``, ``get_row_at``, ``clear``, ``add_columns``,
``RowHighlighted`` / ``RowSelected`` with ``data_table``, ``cursor_row`` and ``row_key.value``),
with DataTable's component classes for styling.
"""

from __future__ import annotations


from typing import Any, Callable, Sequence

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.events import Click
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from inductor_step.tui.cells import (  # noqa: F401 (Prose, cut_middle, abbreviate_ident: imported from here too)
    Cell, Exact, NameColumn, Names, PathName, Prose, Whole, _text, _width, abbreviate_ident, cut_cell, cut_middle,
    shortest,
)

#: Column widths are taken from the header and at most this many rows: the first, the last and an even
#: spread between (longer cells are cut with "…").
WIDTH_SAMPLE = 900
#: No column is wider than this many cells.
MAX_COLUMN = 80


class Widths(list):
    """Column widths as :meth:`Table.measure` gives them, with ``widest``: each column's widest sampled cell (at
    most :data:`MAX_COLUMN`), what a column may grow to where the table has cells to spare; ``least``: the
    narrowest each column can be with every sampled cell still whole in one of its forms (``Cell.short``), what
    a fitted table gives up first (:meth:`Table.fit`)."""

    def __init__(self, *a: Any) -> None:
        super().__init__(*a)
        self.widest: list[int] = []
        self.least: list[int] = []


class RowKey:
    """The key of a row, as ``DataTable``'s events carry it (``.value`` is the string key)."""

    __slots__ = ("value",)

    def __init__(self, value: str):
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RowKey) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)


class LineCache:
    """For a ScrollView that keeps what it rendered per line in ``self._cache``: dropped when focus
    or styles change (the cursor's look and the background depend on both)."""

    _cache: dict

    def on_focus(self) -> None:
        self._cache.clear()
        self.refresh()  # type: ignore[attr-defined]

    def on_blur(self) -> None:
        self._cache.clear()
        self.refresh()  # type: ignore[attr-defined]

    def notify_style_update(self) -> None:
        self._cache.clear()
        super().notify_style_update()  # type: ignore[misc]


class Table(LineCache, ScrollView, can_focus=True):
    """Rows of text cells with a row cursor; rows are formatted only when drawn.

    Fill with :meth:`set_rows` (``keys``: one unique string per row; ``row(i)``: the cells of row
    ``i``, ``Cell`` or plain values) or :meth:`add_rows_keyed` (rows given as a list).  Moving the
    cursor posts :class:`Table.RowHighlighted`; Enter or a click on the cursor row posts
    :class:`Table.RowSelected`.
    """

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "first", "Top", show=False),
        Binding("end", "last", "Bottom", show=False),
        Binding("left", "scroll_left", "Left", show=False),
        Binding("right", "scroll_right", "Right", show=False),
        Binding("enter", "select", "Select", show=False),
    ]

    COMPONENT_CLASSES = {"datatable--header", "datatable--cursor", "datatable--even-row"}

    DEFAULT_CSS = """
    Table {
        background: $surface;
        color: $foreground;
        &:focus {
            background-tint: $foreground 5%;
            & > .datatable--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
        }
        &:dark > .datatable--even-row { background: $surface-darken-1 40%; }
        & > .datatable--header { text-style: bold; background: $panel; color: $foreground; }
        &:ansi > .datatable--header { background: ansi_bright_blue; color: ansi_default; }
        & > .datatable--even-row { background: $surface-lighten-1 50%; }
        & > .datatable--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
    }
    """

    class _RowEvent(Message):
        def __init__(self, table: "Table", cursor_row: int, row_key: RowKey):
            super().__init__()
            self.data_table, self.cursor_row, self.row_key = table, cursor_row, row_key

        @property
        def control(self) -> "Table":
            return self.data_table

    class RowHighlighted(_RowEvent):
        """The cursor moved to row ``cursor_row`` (key ``row_key.value``)."""

    class RowSelected(_RowEvent):
        """Enter (or a click) on row ``cursor_row`` (key ``row_key.value``)."""

    def __init__(self, *, id: str | None = None, classes: str | None = None, cursor_type: str = "row",
                 zebra_stripes: bool = False, name: str | None = None):
        super().__init__(name=name, id=id, classes=classes)
        self.zebra_stripes = zebra_stripes
        self.labels: list[str] = []
        self._label_cells: list[Cell] = []
        self._keys: tuple[str, ...] = ()
        self._index: dict[str, int] | None = {}
        self._frame: tuple | None = None
        self._row: Callable[[int], Sequence[Any]] = lambda i: ()
        self._names: Names | None = None  # see set_rows
        self._widths: list[int] = []  # as drawn: _natural, with the fitted column cut (see fit)
        self._natural: list[int] = []  # what measure() gives
        self._fit: tuple[tuple[int, ...], int, int] | None = None
        self._cursor = 0
        self._cache: dict[int, list[Segment]] = {}
        self._pending_scroll = False  # see _scroll_to_cursor
        self._fit_size: Size | None = None  # the size the widths were last fitted to (_refit)
        self.marked: frozenset[int] = frozenset()  # rows drawn marked besides the cursor's (see mark_rows)

    # ------------------------------------------------------------------ content
    def add_columns(self, *labels: Any) -> None:
        """Set the column headers (once, before rows): strings, or Cells with shorter forms
        (``Cell("operation", short=("op",))``)."""
        self.labels = [str(x) for x in labels]
        self._label_cells = [x if isinstance(x, Cell) else Cell(str(x)) for x in labels]
        self._measure()

    def clear(self) -> None:
        """Remove every row; the cursor goes back to the top."""
        self.set_rows([], lambda i: ())

    def set_rows(self, keys: Sequence[str], row: Callable[[int], Sequence[Any]],
                 widths: list[int] | None = None, names: Names | None = None) -> None:
        """Show ``len(keys)`` rows, row ``i`` keyed ``keys[i]`` with cells ``row(i)`` (called only
        when row ``i`` is drawn, searched or read).  Replaces any earlier rows; the cursor goes to
        row 0, which is announced with ``RowHighlighted`` like DataTable does for a new table.
        The key index is built on the first :meth:`get_row_index` (stepping through stops shows
        tables of 28,000 rows that are never looked up by key); a duplicate key raises ValueError
        there.  ``widths``: what :meth:`measure` gives for these rows and this table's headers,
        when the caller kept it (it is measured here otherwise).  ``names``: the columns of names whose cuts are
        kept apart, where two names would read alike cut (``…um_blocks`` for flex attention's ``q_num_blocks`` and
        ``full_q_num_blocks``; :class:`Names`)."""
        # a tuple of strings: the garbage collector stops tracking it (a list of 28,000 keys made
        # every full collection touch 28,000 strings)
        self._keys = keys if isinstance(keys, tuple) else tuple(keys)
        self._index = None
        self._row = row
        self._names = names
        self._cache.clear()
        self._cursor = 0
        self.marked = frozenset()
        self._measure(widths)
        self.scroll_to(0, 0, animate=False, immediate=True)
        self.refresh()
        if self._keys:
            self.post_message(self.RowHighlighted(self, 0, RowKey(self._keys[0])))

    #: how :meth:`mark_rows`'s rows are drawn
    MARK_STYLE = Style.parse("bold on #3a3a00")

    def mark_rows(self, rows: Sequence[int]) -> None:
        """Draw rows ``rows`` (0-based) marked, replacing earlier marks (e.g. every FX node a selected
        buffer comes from, while the cursor is on one of them)."""
        new = frozenset(rows)
        if new == self.marked:
            return
        for i in new ^ self.marked:
            self._cache.pop(i, None)
        self.marked = new
        self.refresh()

    def add_rows_keyed(self, rows: Sequence[Sequence[Any]], keys: Sequence[str]) -> None:
        """Show ``rows`` (lists of cells) keyed by ``keys``: :meth:`set_rows` with a list."""
        rows = list(rows)
        self.set_rows(keys, rows.__getitem__)

    @staticmethod
    def measure(labels: Sequence[Any], n: int, row: Callable[[int], Sequence[Any]]) -> list[int]:
        """Column widths for ``n`` rows formatted by ``row`` under headers ``labels``: a column's
        typical width, not its widest cell: the widest of the header and the 90th percentile of
        :data:`WIDTH_SAMPLE` sampled rows (a shape column whose one row is 44 cells and the rest blank
        took 44 columns from the names), at most :data:`MAX_COLUMN`.  Longer cells are cut in the
        middle.  A column of :class:`Whole` cells is as wide as the widest of them in its shortest form.
        ``labels``: strings, or Cells with shorter forms of the header.  What :meth:`set_rows` computes; callers
        that show the same rows again can keep it."""
        if n <= WIDTH_SAMPLE:
            sample: Sequence[int] = range(n)
        else:  # the first and last rows (names grow: buf5547) and an even spread between
            third = WIDTH_SAMPLE // 3
            sample = sorted({*range(third), *range(n - third, n), *range(0, n, max(1, n // third))})
        seen: list[list[int]] = [[] for _ in labels]
        least = [_width(shortest(label)) for label in labels]
        whole = [0 for _ in labels]
        for i in sample:
            for c, cell in enumerate(row(i)):
                if c < len(seen):
                    t = _text(cell)
                    seen[c].append(len(t) if t.isascii() else cell_len(t))
                    short = _width(shortest(cell)) if isinstance(cell, Cell) and cell.short else seen[c][-1]
                    least[c] = max(least[c], short)
                    if isinstance(cell, Whole):
                        whole[c] = max(whole[c], short)
        widths = Widths()
        for c, (label, ws) in enumerate(zip(labels, seen)):
            ws.sort()
            typical = ws[min(len(ws) - 1, (len(ws) * 9) // 10)] if ws else 0
            widths.append(min(max(cell_len(_text(label)), typical, whole[c]), MAX_COLUMN))
            widths.widest.append(min(max([cell_len(_text(label)), *ws[-1:]]), MAX_COLUMN))
            widths.least.append(min(least[c], widths[c]))
        return widths

    def _measure(self, widths: list[int] | None = None) -> None:
        measured = widths if widths is not None else self.measure(self._label_cells or self.labels, len(self._keys),
                                                                  self._row)
        self._natural = list(measured)
        self._widest = list(getattr(measured, "widest", None) or measured)
        self._least = list(getattr(measured, "least", None) or measured)
        self._widths = self._fitted()
        self.virtual_size = Size(sum(w + 2 for w in self._widths), len(self._keys) + 1)

    def fit(self, column: int | Sequence[int], through: int, min_width: int = 12, last: Sequence[int] = ()) -> None:
        """Let ``column`` (one index, or several) give up cells (each down to ``min_width``) so
        that the columns up to ``through`` fit in the table's width; cut cells end with "…".  With
        several columns the widest gives up cells first, so they end up as wide as each other.
        Kept across fills and applied again when the table is resized.  The run pane's kernel
        names are 40-60 cells long: at 80 columns they pushed the times off screen; an FX node's
        name and target are 80 each in a Hugging Face model and pushed shape, dtype and the user's
        line off a 200-column screen.  ``last``: columns that give up cells only once ``column`` are
        all at their minimum (a user line, cut keeping its file and line, rather than cropped by
        the screen's edge).  Before any of that, every column up to ``through`` gives up the cells its
        cells' shorter forms do not need (``Widths.least``: ``aten.addmm`` or ``addmm`` for
        ``aten.addmm.default``, ``[32,256]`` for ``[32, 256]``), the widest first: nothing is cut by that."""
        columns = (column,) if isinstance(column, int) else tuple(column)
        self._fit = (columns, through, min_width)
        self._fit_last = tuple(last)
        self._refit()

    def _inner_width(self) -> int:
        # the width inside the vertical scrollbar, which shows once the rows (and the header) are
        # more than the table's height; it can appear after the last resize, so it is not read
        # from the current scrollbars
        width = self.size.width - self.styles.gutter.width
        if len(self._keys) + 1 > self.size.height:
            width -= self.styles.scrollbar_size_vertical
        return width

    def _grown(self, widths: list[int]) -> list[int]:
        """``widths`` with the table's spare cells given to the columns whose longer cells are cut, narrowest
        need first (at 200 columns ``[16, 16]`` read ``[1… 16]`` beside 130 empty columns)."""
        widest = getattr(self, "_widest", None) or widths
        if not self.size.width or len(widest) != len(widths):
            return widths
        spare = self._inner_width() - sum(w + 2 for w in widths)
        for c in sorted(range(len(widths)), key=lambda k: widest[k] - widths[k]):
            if spare <= 0:
                break
            more = min(max(0, widest[c] - widths[c]), spare)
            widths[c] += more
            spare -= more
        return widths

    def _fitted(self) -> list[int]:
        widths = list(self._natural)
        if self._fit is None or not self.size.width:
            return self._grown(widths)
        width = self._inner_width()
        columns, through, min_width = self._fit
        columns = [c for c in columns if c < len(widths)]
        over = sum(w + 2 for w in widths[:through + 1]) - width
        least = getattr(self, "_least", None) or widths
        while over > 0:  # first what the shorter forms leave spare, from the widest column: nothing is cut
            can = [c for c in range(min(through + 1, len(widths))) if widths[c] > least[c]]
            if not can:
                break
            c = max(can, key=lambda k: widths[k] - least[k])
            widths[c] -= 1
            over -= 1
        while over > 0:  # one cell at a time from the widest column: tied columns end up equal
            can = [c for c in columns if widths[c] > min(min_width, self._natural[c])]
            if not can:
                can = [c for c in getattr(self, "_fit_last", ()) if c < len(widths)
                       and widths[c] > min(min_width, self._natural[c])]
            if not can:
                break
            c = max(can, key=lambda k: widths[k])
            widths[c] -= 1
            over -= 1
        return self._grown(widths)

    def _refit(self) -> None:
        self._fit_size = self.size
        widths = self._fitted()
        if widths != self._widths:
            self._widths = widths
            self._cache.clear()
            self.virtual_size = Size(sum(w + 2 for w in widths), len(self._keys) + 1)
            self.refresh()

    def on_resize(self) -> None:
        self._refit()

    # ------------------------------------------------------------------ DataTable's API
    @property
    def row_count(self) -> int:
        return len(self._keys)

    @property
    def row_keys(self) -> tuple[str, ...]:
        """The row keys, as given to :meth:`set_rows` (a new tuple whenever the rows are replaced by
        a different list of keys)."""
        return self._keys

    @property
    def column_widths(self) -> list[int]:
        """The columns' widths as drawn (cells), after any fit."""
        return list(self._widths)

    @property
    def cursor_row(self) -> int:
        return self._cursor

    def get_row_index(self, key: str) -> int:
        """Index of the row keyed ``key``; raises KeyError when there is none (ValueError when
        two rows share a key)."""
        if self._index is None:
            index = {k: i for i, k in enumerate(self._keys)}
            if len(index) != len(self._keys):
                raise ValueError("duplicate row key")
            self._index = index
        return self._index[key.value if isinstance(key, RowKey) else key]

    def get_row_at(self, i: int) -> list[Any]:
        """The cells of row ``i``; raises IndexError outside the table."""
        if not 0 <= i < len(self._keys):
            raise IndexError(i)
        return list(self._row(i))

    def move_cursor(self, *, row: int | None = None, column: int | None = None, animate: bool = False,
                    scroll: bool = True) -> None:
        """Put the cursor on ``row`` (clamped), scroll it into view, post ``RowHighlighted``."""
        if row is None or not self._keys:
            return
        row = max(0, min(row, len(self._keys) - 1))
        old, self._cursor = self._cursor, row
        self._cache.pop(old, None)
        self._cache.pop(row, None)
        before = self.scroll_offset
        if scroll:
            self._scroll_to_cursor()
        if self.scroll_offset == before and self.size.height and not self._pending_scroll:
            # only the two rows change (a whole repaint sent the whole table to the terminal again:
            # ~12 KB per key at 160x50); row i is line i + 1, under the header
            self.refresh_line(old + 1)
            self.refresh_line(row + 1)
        else:
            self.refresh()
        if row != old:
            self.post_message(self.RowHighlighted(self, row, RowKey(self._keys[row])))

    def _scroll_to_cursor(self) -> None:
        if not self.scrollable_content_region.height:
            # not laid out yet (a pane never shown): Textual would not scroll it, and the cursor
            # row stayed out of sight; render_lines scrolls it first thing instead
            self._pending_scroll = True
            return
        h = max(1, self.scrollable_content_region.height - 1)  # minus the header
        y = self.scroll_offset.y
        if self._cursor < y:
            self.scroll_to(y=self._cursor, animate=False, immediate=True)
        elif self._cursor >= y + h:
            self.scroll_to(y=self._cursor - h + 1, animate=False, immediate=True)

    # ------------------------------------------------------------------ actions
    def action_cursor(self, delta: int) -> None:
        self.move_cursor(row=self._cursor + delta)

    def action_page(self, direction: int) -> None:
        self.move_cursor(row=self._cursor + direction * max(1, self.scrollable_content_region.height - 2))

    def action_first(self) -> None:
        self.move_cursor(row=0)

    def action_last(self) -> None:
        self.move_cursor(row=len(self._keys) - 1)

    def action_select(self) -> None:
        if self._keys:
            self.post_message(self.RowSelected(self, self._cursor, RowKey(self._keys[self._cursor])))

    def on_click(self, event: Click) -> None:
        i = self.scroll_offset.y + event.y - 1
        if event.y >= 1 and 0 <= i < len(self._keys):
            if i == self._cursor:
                self.action_select()
            else:
                self.move_cursor(row=i)

    # ------------------------------------------------------------------ rendering
    def _cells(self, values: Sequence[Any], base: Style, cursor: Style | None,
               names: Names | None = None) -> list[Segment]:
        """Row ``values`` as segments, each cell in its column's width, cut where wider (:func:`cut_cell`; a
        column of ``names`` keeps distinct names apart)."""
        segs: list[Segment] = []
        for c, w in enumerate(self._widths):
            v = values[c] if c < len(values) else None
            t = _text(v).replace("\n", " ")
            n = len(t) if t.isascii() else cell_len(t)
            if n > w:
                kept = names.cut(c, w, _text(v)) if names is not None else None
                t = kept if kept is not None else cut_cell(v, w)
                n = _width(t)
            if n < w:
                t += " " * (w - n)
            style = base
            if isinstance(v, Cell) and v.style:
                style = base + Style.parse(v.style)
            if cursor is not None:
                style = style + cursor
            segs.append(Segment(" ", base + cursor if cursor is not None else base))
            segs.append(Segment(t, style))
            segs.append(Segment(" ", base + cursor if cursor is not None else base))
        return segs

    def render_lines(self, crop: Region) -> list[Strip]:
        # the widths for this size: the first frame is drawn before the Resize event reaches
        # on_resize, and drew the columns two cells narrower than the frame after it
        if self._fit_size != self.size:
            self._refit()
        if self._pending_scroll and self.scrollable_content_region.height:
            self._pending_scroll = False
            self._scroll_to_cursor()
        # what every line needs, looked up once per repaint (rich_style walks the ancestors, and
        # component styles are resolved through the CSS each time)
        self._frame = self._styles()
        try:
            return super().render_lines(crop)
        finally:
            self._frame = None

    def _styles(self) -> tuple:
        get = self.get_component_rich_style
        return (self.scroll_offset, self.scrollable_content_region.width, self.rich_style,
                get("datatable--header"), get("datatable--even-row"), get("datatable--cursor"))

    def render_line(self, y: int) -> Strip:
        (scroll_x, scroll_y), width, base, header, even, cursor_style = self._frame or self._styles()
        if y == 0:
            segs = self._cells(self._label_cells or self.labels, base + header, None)
            return Strip(segs).crop_extend(scroll_x, scroll_x + width, base + header)
        i = scroll_y + y - 1
        if i >= len(self._keys):
            return Strip.blank(width, base)
        segs = self._cache.get(i)
        row_style = base
        if self.zebra_stripes and i % 2 == 1:
            row_style = base + even
        if i in self.marked:
            row_style = row_style + self.MARK_STYLE
        cursor = cursor_style if i == self._cursor else None
        if segs is None:
            segs = self._cells(self._row(i), row_style, cursor, self._names)
            self._cache[i] = segs
            if len(self._cache) > 4000:
                self._cache.clear()
        fill = row_style + cursor if cursor is not None else row_style
        return Strip(segs).crop_extend(scroll_x, scroll_x + width, fill)


__all__ = ["Cell", "Exact", "LineCache", "NameColumn", "Names", "PathName", "Prose", "RowKey", "Table", "Whole",
           "abbreviate_ident", "cut_middle"]
