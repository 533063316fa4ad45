"""The bare Textual app ``open_time.py --bare`` compares against: a Static showing a stage bar's text and a
Footer with ``n Next``, the two things whose appearance counts as the first frame (key_latency.FIRST_FRAME)."""

import sys

from textual.app import App, ComposeResult
from textual.widgets import Footer, Static


class Bare(App[None]):
    BINDINGS = [("n", "quit", "Next")]

    def compose(self) -> ComposeResult:
        yield Static(" ●dynamo  aot  lowering  scheduling  loopbody  codegen  run")
        yield Footer()


if __name__ == "__main__":
    Bare().run()
    sys.exit(0)
