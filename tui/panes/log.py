"""The log pane (``l``): the script's stdout and stderr, as it printed them."""

from __future__ import annotations

from textual.app import ComposeResult

from inductor_step.session.format.messages import Output
from inductor_step.session.format.records import Record
from inductor_step.tui.codeview import CodeView
from inductor_step.tui.compat import BlankVertical


class LogPane(BlankVertical):
    stage = "log"
    title = "Log"

    def __init__(self) -> None:
        super().__init__(id="stage-log")
        self._shown_len = -1

    def compose(self) -> ComposeResult:
        yield CodeView(id="code-log")

    @property
    def table(self) -> None:
        return None

    def session_message(self, msg: Record) -> None:
        if msg.SCHEMA is Output:
            self.show()

    def show(self, force: bool = False) -> None:
        log = self.app.session.log
        if not force and self._shown_len == len(log):
            return
        self._shown_len = len(log)
        code = self.query_one(CodeView)
        text = "\n".join((f"[stderr] {x}" if st == "stderr" else x) for st, x in log)
        at_end = code.cursor >= len(code.lines) - 2
        code.set_code(text or "(the script has printed nothing yet)", "text",
                      cursor_line=len(text.split("\n")) if at_end else code.cursor + 1)
