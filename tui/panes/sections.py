"""A pane whose table is ranked sections, each opened by a head row (title, figure, what it holds): panes T and M."""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Sequence

from inductor_step.tui.panes.base import StagePane, T
from inductor_step.tui.table import Prose

HEAD = "bold reverse"


class SectionPane(StagePane):
    """The table lists :meth:`items`: ``("head", (title, figure, what))`` opens a section, any other
    ``(kind, row object)`` is one of its rows, formatted by :meth:`item_row`.  Reached by its key (and ctrl+p); its
    tab stays off the tab bar, which is full at 80 columns (tui.compat.Panes)."""

    HIDE_TAB = True
    #: the head row's figure right-aligned in this many cells (0: as it is)
    figure_width: ClassVar[int] = 0

    def items(self, data: dict[str, Any]) -> list[tuple[str, Any]]:
        """(section, row) per table row; section heads are ("head", (title, figure, what))."""
        raise NotImplementedError

    def row_context(self, data: dict[str, Any]) -> Any:
        """What :meth:`item_row` needs, computed once per fill (links, the script's folder)."""
        return None

    def item_row(self, kind: str, r: Any, ctx: Any) -> tuple:
        """The cells of row object ``r`` of section ``kind``."""
        raise NotImplementedError

    def item_key(self, kind: str, r: Any) -> str:
        """A name for the row's key (a buffer, a graph)."""
        return ""

    def rows(self, data: dict[str, Any]) -> tuple[Sequence[str], Callable[[int], tuple]]:
        items = self.items(data)
        ctx = self.row_context(data)
        blanks = len(self.columns) - 3

        def row(i: int) -> tuple:
            kind, r = items[i]
            if kind == "head":
                fig = f"{r[1]:>{self.figure_width}}" if self.figure_width else r[1]
                return (T(r[0], HEAD), T(fig, HEAD), *[T("", HEAD)] * blanks, Prose(r[2], HEAD))
            return self.item_row(kind, r, ctx)
        return [f"{i}:{k}:{r[0] if k == 'head' else self.item_key(k, r)}" for i, (k, r) in enumerate(items)], row
