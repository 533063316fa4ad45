"""The graph list (``g``): one line per compiled graph, the highlighted graph's reason (recompile,
graph break, hint, user line) in a detail area below; beside the panes at 100 columns and more, and
opened by ``g`` at any width, wider, as the terminal allows; Esc or ``g`` closes it."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from inductor_step.tui.compat import BlankVertical


def graph_line(key: str, note: str) -> Text:
    """A graph list entry: the graph and the start of why it exists, on one line (cut with …)."""
    label = Text(key, no_wrap=True, overflow="ellipsis")
    if note:
        label.append(f"  {note}", style="dim")
    return label


class GraphOptions(OptionList):
    """The list itself (``#graphs``): Esc and ``g`` close the open list (at any width, Esc left
    the narrow list beside the panes at 100 columns and more, which read as not closed)."""

    BINDINGS = [Binding("escape", "close", "Close", show=False, id="graphs-close")]

    def action_close(self) -> None:
        side = self.parent
        if isinstance(side, GraphSide):
            side.hide()


class GraphSide(BlankVertical):
    """The list (``#graphs``) above the highlighted graph's reason (``#graph-why``)."""

    def __init__(self) -> None:
        super().__init__(id="graphside")
        self._notes: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield GraphOptions(id="graphs")
        yield Static(id="graph-why", markup=False)

    @property
    def options(self) -> OptionList:
        return self.query_one("#graphs", OptionList)

    @on(OptionList.OptionHighlighted, "#graphs")
    def _graph_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        """Arrows in the list: the highlighted graph is shown at once, its reason below the list."""
        if event.option_index != event.option_list.highlighted:
            return  # stale: the highlight has moved on
        try:
            self.show_why()
            if event.option.id and event.option.id != self.app.view.graph:
                self.app.show_graph(event.option.id)
        except NoMatches:  # a late highlight while the app is closing (its screen already gone)
            return

    @on(OptionList.OptionSelected, "#graphs")
    def _graph_chosen(self, event: OptionList.OptionSelected) -> None:
        """Enter in the graph list: that graph, and the keys go back to its pane."""
        if event.option.id:
            self.app.show_graph(event.option.id)
        self.close()
        self.app.focus_target().focus()

    def note_may_show(self, key: str) -> bool:
        """Whether graph ``key``'s entry has room for any of its note in the list as it is now (not opened by
        ``g``): its key is shorter than the list is wide (a width in cells; any other width: True)."""
        width = self.styles.width
        return self.has_class("shown") or width is None or not width.is_cells or len(key) + 1 < width.value

    def update(self, graphs: list[str], notes: dict[str, str], current: str | None) -> None:
        """The entries for ``graphs`` (``notes``: why each exists), ``current`` highlighted; an entry whose note
        changed is written again."""
        ol = self.options
        self.set_class(len(graphs) <= 1, "hidden")
        old, self._notes = self._notes, notes
        if [o.id for o in ol.options] != graphs:
            ol.clear_options()
            for key in graphs:
                ol.add_option(Option(graph_line(key, notes.get(key, "")), id=key))
        else:
            for key in graphs:
                if notes.get(key, "") != old.get(key, ""):
                    ol.replace_option_prompt(key, graph_line(key, notes.get(key, "")))
        if current in graphs and ol.highlighted != graphs.index(current):
            ol.highlighted = graphs.index(current)
        self.show_why()

    def show_why(self) -> None:
        """The highlighted graph's reason, in full (wrapped)."""
        ol = self.options
        key = ol.options[ol.highlighted].id if ol.highlighted is not None and ol.option_count else None
        note = self._notes.get(key or "", "")
        self.query_one("#graph-why", Static).update(
            f"{key}: {note}" if note else f"{key}: the first compile of its frame" if key else "")

    @property
    def is_open(self) -> bool:
        return self.has_class("shown")

    def open(self) -> None:
        self.remove_class("closed")
        self.add_class("shown")
        self.options.focus()

    def close(self) -> None:
        """Back to the panes: the list narrow beside them (100 columns and more) or hidden."""
        was_focused = self.options.has_focus
        self.remove_class("shown")
        if self.app.size.width < 100:
            self.add_class("closed")
        app: Any = self.app
        if was_focused and hasattr(app, "focus_target"):
            app.focus_target().focus()

    def hide(self) -> None:
        """``g`` on the open list: close it, at any width."""
        self.close()
        self.add_class("closed")
