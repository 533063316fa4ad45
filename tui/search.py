"""``/``: search the part of the pane that has the keys (its table or its code view), as the person
sees it; a table search with no match goes on in the code view below it.  Enter: next match; Esc:
back to where the keys were."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.events import Key
from textual.message import Message
from textual.widgets import Input

from inductor_step.tui.codeview import CodeView
from inductor_step.tui.table import Table


class SearchBox(Input):
    """The search line docked at the bottom; hidden until ``/``."""

    class Done(Message):
        """A search ran: ``result`` says where it looked and what it found (for the status line)."""

        def __init__(self, result: str) -> None:
            super().__init__()
            self.result = result

    def __init__(self) -> None:
        super().__init__(placeholder="search (Enter: next match, Esc: close)", id="search", disabled=True)
        self.target: Any = None

    def open(self, target: Any) -> None:
        """Search ``target`` (a Table or a CodeView)."""
        self.target = target
        self.disabled = False
        self.add_class("shown")
        where = "table" if isinstance(target, Table) else "code"
        self.placeholder = f"search the {where} (tab before / to search the other part); Enter: next; Esc: close"
        self.focus()

    def find(self, needle: str) -> str:
        target, found, where = self.target, None, "code"
        if isinstance(target, CodeView):
            found = target.find(needle)
        elif isinstance(target, Table):
            where = "table"
            low, n = needle.lower(), target.row_count
            for k in range(1, n + 1):
                r = (target.cursor_row + k) % n
                if any(low in str(c).lower() for c in target.get_row_at(r)):
                    target.move_cursor(row=r)
                    found = r + 1
                    break
            if found is None:  # not in the table: the code below it, which the person sees too
                code = target.parent.query_one(CodeView) if target.parent is not None else None
                if code is not None:
                    found, where = code.find(needle), "code"
        label = "row" if where == "table" else "line"
        return f"'{needle}' in the {where}: " + (f"{label} {found}" if found else "no match")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        needle = event.value.strip()
        if needle and self.target is not None:
            self.post_message(self.Done(self.find(needle)))

    def on_key(self, event: Key) -> None:
        if event.key == "escape":
            self.remove_class("shown")
            self.disabled = True
            if self.target is not None:
                self.target.focus()
            event.stop()


class SearchLine:
    """The app's search line (``/``), hidden until opened: mounted right after the first frame (an Input and its
    CSS, ~3 ms the first frame does not show) by :meth:`box`, or then by a ``/`` pressed before that; one
    mount, shared."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self._mount: tuple[SearchBox, Any] | None = None  # the box and its mount, once begun

    async def box(self) -> SearchBox:
        """The search line, mounted (above the status line) if it was not yet."""
        if self._mount is None:
            box = SearchBox()
            self._mount = box, self.app.mount(box, before=self.app.query_one("#status"))
        box, mounting = self._mount
        await mounting
        return box

    async def open(self) -> None:
        """``/``: the line opened on the focused table or code view (else the shown pane's)."""
        f = self.app.focused
        box = await self.box()
        box.open(f if isinstance(f, (CodeView, Table)) else self.app.focus_target())
