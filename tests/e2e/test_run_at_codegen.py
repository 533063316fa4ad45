"""`r` pressed at the codegen stop, the first moment a graph can be timed, inside its compile: the run pane shows
eager beside compiled, from the inputs Dynamo handed torch.compile (the script has not called the graph yet)."""

from __future__ import annotations

import os
import re

from test_live import SCRIPTS, live, n_until

from conftest import wait_for


def test_r_at_the_codegen_stop_times_eager_too(tmp_path):
    seen: dict = {}

    async def steps(app, pilot):
        await n_until(pilot, app, "codegen")
        await pilot.press("7", "r")
        text = lambda: app.query_one("#code-run").text  # noqa: E731
        await wait_for(pilot, lambda: re.search(r"^compiled graph\s+[\d.]+ ms", text(), re.M), timeout=180, seen=text)
        seen["text"] = text()
        seen["paused"] = dict(app.view.paused or {})

    live(os.path.join(SCRIPTS, "run_at_codegen.py"), steps, tmp_path)
    assert seen["paused"].get("stage") == "codegen"  # still inside the compile
    eager = next(ln for ln in seen["text"].splitlines() if ln.startswith("eager"))
    assert re.match(r"eager( \(.*\))?\s+[\d.]+ ms", eager), eager
    assert "example inputs Dynamo handed" in seen["text"], seen["text"]
    # the whole call cannot be repeated from inside its own paused compile: pane 7 says when it can
    call = next(ln for ln in seen["text"].splitlines() if ln.startswith("script's call"))
    assert "not timed: taken once the script has returned" in call, call
