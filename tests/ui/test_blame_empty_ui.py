"""``B`` on a graph with no blame: pane B says why there is none (not that the compile has not reached a stage),
and a status line about pane B does not stay when another pane is shown."""

from __future__ import annotations

import os

from inductor_step.tui.codeview import CodeView

DEMO = os.path.join(os.path.dirname(__file__), "..", "fixtures", "demo.jsonl")


class _Agent:
    """Stands in for the agent process's pipe (no torch involved): alive, and records what the app sends."""

    alive = True

    def __init__(self) -> None:
        self.sent: list = []

    def send(self, *a, **kw) -> None:
        self.sent.append((a, kw))


def test_b_with_no_blame_says_why_and_its_status_goes_with_pane_b(app_driver) -> None:
    seen: dict = {}

    async def steps(app, pilot):
        await pilot.press("B")  # a recorded session: no blame, no agent
        await pilot.pause()
        seen["recorded"] = app.query_one("#code-blame", CodeView).text
        app.current.agent = _Agent()  # as when the script still runs: B on a graph that did not diverge
        await pilot.press("1", "B")
        await pilot.pause()
        seen["status_b"] = str(app.query_one("#status").content)
        seen["sent"] = list(app.agent.sent)
        await pilot.press("6")
        await pilot.pause()
        seen["status_6"] = str(app.query_one("#status").content)

    app_driver(steps, size=(200, 50), path=DEMO)
    assert seen["recorded"].startswith("# this recorded session has no blame"), seen["recorded"]
    assert "has not reached" not in seen["recorded"]
    assert "nothing to blame yet: press e first" in seen["status_b"] and seen["sent"] == []
    assert "nothing to blame yet" not in seen["status_6"], seen["status_6"]
