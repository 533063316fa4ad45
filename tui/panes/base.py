"""The shared base of the stage panes: a table of the stop's rows above a code view of the row's detail.

A pane declares what it answers, as functions of the session's data only:

- :meth:`StagePane.data`: the message it shows for the viewed graph (a stop, by default);
- :meth:`StagePane.rows`: its rows for that message (keys and a row formatter; rows are formatted
  only when drawn);
- :meth:`StagePane.detail`: the code view's text, marks and line for a row;
- :meth:`StagePane.row_for`: the row of an IR buffer;
- :meth:`StagePane.buffers_of`: the IR buffers of a row.

and the base does the rest the same way for every pane: filling the table when the data changes,
putting the cursor on the selected buffer's row every time the pane is shown, showing the row's
detail, and telling the app when a person's cursor move selects another buffer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterator, Sequence

from textual import on
from textual.app import ComposeResult

from inductor_step.tui.codeview import CodeView, prepare
from inductor_step.tui.compat import BlankVertical
from inductor_step.tui.table import Cell, NameColumn, Names, Table

if TYPE_CHECKING:
    from inductor_step.tui.app import StepApp


#: dtypes as FX prints them in a graph's code (``"f32[8, 64]"``; torch.fx.graph.dtype_abbrs), for a narrow dtype column
DTYPE_SHORT = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64", "int64": "i64",
               "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8", "uint16": "u16", "uint32": "u32",
               "uint64": "u64", "bool": "b8", "complex64": "c64", "complex128": "c128", "complex32": "c32",
               "float8_e4m3fn": "f8e4m3fn", "float8_e5m2": "f8e5m2"}


def dtype_cell(dtype: Any) -> Cell:
    """A dtype cell (``float32``) with FX's short name (``f32``) as its shorter form."""
    short = DTYPE_SHORT.get(str(dtype)) if dtype is not None else None
    return T(dtype, short=[short] if short else ())


def text_of(s: Any) -> str:
    """The text of :func:`T`'s cell for a name ``s`` (a string, or None for none), without making the cell."""
    return "" if s is None else str(s)


def field_columns(n: int, item: Callable[[int], Any], fields: dict[int, str]) -> dict[int, NameColumn]:
    """Columns of names read off ``n`` row objects (row ``i`` is ``item(i)``), column ``c`` holding each one's
    ``fields[c]`` attribute as :func:`T`'s cell: :meth:`StagePane.names` for a table of such objects."""
    def column(field: str) -> NameColumn:
        return NameColumn(lambda: [text_of(getattr(item(i), field)) for i in range(n)],
                          lambda i: T(getattr(item(i), field)))
    return {c: column(f) for c, f in fields.items()}


def T(s: Any, style: str = "", short: Sequence[str] = (), kind: type[Cell] = Cell) -> Cell:
    """A plain-text cell (never markup: compiler strings contain brackets) of class ``kind``; lists print as
    [a, b], with [a,b] as their shorter form (``short``: other shorter forms, longest first)."""
    if isinstance(s, (list, tuple)):
        def listed(sep: str) -> str:
            return "[" + sep.join(str(x) if not isinstance(x, list) else "[" + sep.join(map(str, x)) + "]"
                                  for x in s) + "]"
        text, compact = listed(", "), listed(",")
        return kind(text, style, (*short, compact) if compact != text else short)
    return kind("" if s is None else str(s), style, short)


@dataclass
class Detail:
    """What a code view shows for a row: ``text`` in ``lexer``, 1-based line ranges ``marks`` to mark,
    the 1-based line ``goto`` to bring into view (a third down), None to leave the view where it is."""

    text: str
    lexer: str = "python"
    marks: list[tuple[int, int]] = field(default_factory=list)
    goto: int | None = None


class StagePane(BlankVertical):
    """One stage's pane: ``#table-<stage>`` above ``#code-<stage>``.  Subclasses set ``stage``,
    ``title``, ``columns`` and answer :meth:`rows`, :meth:`detail`, :meth:`row_for`, :meth:`buffers_of`."""

    stage: ClassVar[str] = ""
    title: ClassVar[str] = ""
    columns: ClassVar[tuple[str, ...]] = ()
    #: columns that give up cells first when the table is too wide: (columns, last column to keep on screen)
    fit: ClassVar[tuple[tuple[int, ...], int] | None] = None
    fit_min: ClassVar[int] = 12
    #: columns that give up cells only after those of ``fit`` (Table.fit's ``last``)
    fit_last: ClassVar[tuple[int, ...]] = ()
    #: columns of names (buffers, scheduler nodes, kernels) that hold the row's key as it is: the table keeps their
    #: cuts apart (:meth:`names`)
    name_columns: ClassVar[tuple[int, ...]] = ()
    #: seconds of quiet after a cursor move before the detail follows it (key repeat over SSH)
    DETAIL_DELAY_S: ClassVar[float] = 0.04

    def __init__(self) -> None:
        super().__init__(id=f"stage-{self.stage}")
        self._stamp: Any = None
        self._shown: tuple | None = None  # (row keys, row) whose detail is on screen
        self._timer: Any = None

    app: "StepApp"

    def compose(self) -> ComposeResult:
        yield Table(id=f"table-{self.stage}", classes="stage-table", cursor_type="row", zebra_stripes=True)
        yield CodeView(id=f"code-{self.stage}", classes="stage-code")

    def on_mount(self) -> None:
        self.table.add_columns(*self.columns)
        if self.fit:
            self.table.fit(self.fit[0], self.fit[1], min_width=self.fit_min, last=self.fit_last)

    @property
    def table(self) -> Table:
        return self.query_one(Table)

    @property
    def code(self) -> CodeView:
        return self.query_one(f"#code-{self.stage}", CodeView)

    # ------------------------------------------------------------------ what a pane answers
    def data(self) -> dict[str, Any] | None:
        """The message this pane shows for the viewed graph (its stop), None when there is none yet."""
        v = self.app.view
        return self.app.session.stop_for(v.graph, self.stage) if v.graph else None

    def rows(self, data: dict[str, Any]) -> tuple[Sequence[str], Callable[[int], tuple]]:
        """Row keys (unique strings) and the formatter of row ``i``'s cells."""
        raise NotImplementedError

    def detail(self, data: dict[str, Any], row: int) -> Detail | None:
        """The code view's content for row ``row``."""
        raise NotImplementedError

    def row_for(self, data: dict[str, Any], buffer: str) -> int | None:
        """The row that shows IR buffer ``buffer``, None when none does."""
        return None

    def buffers_of(self, data: dict[str, Any], row: int) -> list[str]:
        """The IR buffers row ``row`` stands for (the first is selected when the row is chosen)."""
        return []

    def empty(self, data: dict[str, Any] | None) -> Detail | None:
        """What the code view says when there is nothing to list (None: the rows' detail)."""
        return None

    def names(self, data: dict[str, Any], keys: tuple[str, ...]) -> dict[int, NameColumn]:
        """The columns of names whose cuts the table keeps apart, where two names would read alike cut: for each,
        every row's text in it and row ``i``'s cell in it (:class:`NameColumn`).  Here: each of
        :attr:`name_columns`, whose texts are the row keys ``keys``."""
        return {c: NameColumn(lambda: keys, lambda i: Cell(keys[i])) for c in self.name_columns}

    def row_named(self, data: dict[str, Any], name: str) -> int | None:
        """The row whose key, or else whose first cell, is ``name``."""
        keys, row, _w, _n = self.cached_rows(data)
        i = self.row_of_key(data, name)
        return i if i is not None else next((i for i in range(len(keys)) if str(row(i)[0]) == name), None)

    def point_at(self, name: str) -> None:
        """Put the cursor on the row named ``name`` (Enter in the run, diff or ledger views)."""
        data = self.data()
        i = self.row_named(data, name) if data is not None else None
        if i is not None and self.table.cursor_row != i:
            self.table.move_cursor(row=i)

    def session_message(self, msg: dict[str, Any]) -> None:
        """A message the agent sent while this pane is on screen (besides stops, which every pane
        follows through :meth:`show`): a pane that shows it updates itself."""

    # ------------------------------------------------------------------ shared helpers
    @property
    def links(self) -> dict[str, Any]:
        """The viewed graph's links: codegen's, or before codegen what the earlier stops tell."""
        return self.app.session.stage_links(self.app.view.graph)

    def cached_rows(self, data: dict[str, Any]) -> tuple[tuple[str, ...], Callable[[int], tuple], list[int],
                                                         Names | None]:
        """:meth:`rows`, their column widths (measuring samples 900 rows) and their columns of names (:meth:`names`,
        whose cuts are worked out as the table first cuts them, and kept), kept per message."""
        def build() -> tuple:
            keys, row = self.rows(data)
            keys = tuple(keys)  # the garbage collector soon stops tracking a tuple of strings
            columns = self.names(data, keys)
            return keys, row, Table.measure(self.columns, len(keys), row), Names(columns) if columns else None
        return self.app.session.cache.get(("rows", self.stage, id(data)), (data,), build)

    def row_of_key(self, data: dict[str, Any], key: str | None) -> int | None:
        """The row keyed ``key`` (None for none), by an index built once per message."""
        keys = self.cached_rows(data)[0]
        return self.cached_index(data, "key_rows", lambda: {k: i for i, k in enumerate(keys)}).get(key or "")

    def key_of_row(self, data: dict[str, Any], row: int) -> str | None:
        keys = self.cached_rows(data)[0]
        return keys[row] if 0 <= row < len(keys) else None

    def cached_index(self, data: dict[str, Any], name: str, build: Callable[[], dict]) -> dict:
        """An index over ``data`` (built once per message), e.g. node name -> row."""
        return self.app.session.cache.get((name, self.stage, id(data)), (data,), build)

    # ------------------------------------------------------------------ showing
    def stamp(self, data: dict[str, Any] | None) -> Any:
        """What, when changed, makes the pane fill its table again (with no stop to show, the stages the
        graph reached: the text saying how far its compile got follows the compile)."""
        g = self.app.view.graph
        if data is None:
            return (g, None, tuple(self.app.session.stages_done(g)) if g else (), self.app.session.done is not None)
        return (g, id(data))

    def show(self, force: bool = False, detail: bool = True) -> None:
        """Bring the pane up to date with the view: fill it when its data changed, then put the
        cursor on the selected buffer's row and show that row's detail (every time the pane is
        shown, so a selection made anywhere else is followed).  ``detail=False``: the table only
        (the app's first frame; the selection and the detail follow in the next)."""
        data = self.data()
        stamp = self.stamp(data)
        if force or stamp != self._stamp:
            self._stamp = stamp
            self._shown = None
            self.fill(data)
        if detail:
            self.follow_selection(data)

    def fill(self, data: dict[str, Any] | None) -> None:
        table, code = self.table, self.code
        if data is None:
            table.clear()
            code.set_code(self.app.missing_text(self.stage), "python")
            return
        keys, row, widths, names = self.cached_rows(data)
        table.set_rows(keys, row, widths=widths, names=names)
        if not keys:
            d = self.empty(data)
            if d is not None:
                self.apply(d)

    #: (selection, row, the rows' keys) where a person put this pane's cursor: a row standing for several
    #: buffers stays where they put it; any other selection moves the cursor to the buffer's own row
    _picked: tuple[Any, ...] | None = None

    def follow_selection(self, data: dict[str, Any] | None) -> None:
        """The cursor to the selected buffer's row (:meth:`row_for`: the same row whatever was selected before,
        the row a person chose in this pane stays), then that row's detail; with nothing selected
        yet, the cursor row's buffer becomes the selection."""
        table = self.table
        if data is None or not table.row_count:
            return
        sel = self.app.view.selected
        row = table.cursor_row
        if sel is None:
            owned = self.buffers_of(data, row)
            if owned:
                self.app.select(owned[0])  # before the detail, which marks the selection's lines
                self._picked = (owned[0], row, table.row_keys)
        elif not (self._picked == (sel, row, table.row_keys) and sel in self.buffers_of(data, row)):
            target = self.row_for(data, sel)
            if target is not None and target != row and target < table.row_count:
                table.move_cursor(row=target)
                row = target
        self.show_row(data, row)

    def show_row(self, data: dict[str, Any], row: int) -> None:
        d = self.detail(data, row)
        if d is not None:
            self.apply(d)
        self._shown = (self.table.row_keys, row)

    def apply(self, d: Detail) -> None:
        code = self.code
        if code.text is not d.text and code.text != d.text:
            code.set_code(d.text, d.lexer)
        if d.marks or code.marks:
            code.mark(d.marks)
        if d.goto is not None:
            code.goto(d.goto)

    def warm(self, data: dict[str, Any], height: int) -> Iterator[None]:
        """Work done ahead, while the user reads, for this pane's next showing of ``data``: its rows
        and widths, and the lines its code view will show highlighted (see StepApp.prepare_next)."""
        keys, _row, _w, _n = self.cached_rows(data)
        yield
        sel = self.app.view.selected
        row = self.row_for(data, sel) if sel else None
        d = self.detail(data, row if row is not None and row < len(keys) else 0) if keys else None
        if d is not None:
            yield
            first = max(0, (d.goto or 1) - 1 - height // 3)
            yield from prepare(d.text, d.lexer, first, height + 2)

    # ------------------------------------------------------------------ a person's cursor moves
    @on(Table.RowHighlighted)
    def _row_moved(self, event: Table.RowHighlighted) -> None:
        event.stop()
        table = event.data_table
        if event.cursor_row != table.cursor_row:
            return  # stale: the cursor has moved on (key repeat)
        if self._shown == (table.row_keys, event.cursor_row):
            return  # ours: follow_selection put it there and showed its detail
        if self._timer is not None:
            self._timer.stop()
        if self.DETAIL_DELAY_S <= 0:
            self._chosen(event.cursor_row)
        else:
            self._timer = self.set_timer(self.DETAIL_DELAY_S, lambda: self._chosen(event.cursor_row))

    def _chosen(self, row: int) -> None:
        self._timer = None
        if row != self.table.cursor_row or not self.is_attached:
            return
        data = self.data()
        if data is None:
            return
        owned = self.buffers_of(data, row)
        if owned and self.app.view.selected not in owned:
            self.app.select(owned[0])  # before the detail, which marks the selection's lines
        self._picked = (self.app.view.selected, row, self.table.row_keys)
        self.show_row(data, row)
