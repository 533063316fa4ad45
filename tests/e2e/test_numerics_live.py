"""Pane e in a live session before the script's first call of the graph.

``e`` while the compile is paused used random inputs for every tensor, and a random running variance of a
batch norm is negative: "first NaN/Inf: buf4 ... batch_norm" where ``--headless --numerics`` said none.  Now
it waits for the script's first call, compares on its real inputs when the call comes, and says where the
inputs came from in the pane's first line at 80 columns.
"""

from __future__ import annotations

import os

from conftest import screen_settled, wait_for
from test_live import SCRIPTS, live


def test_e_before_the_first_call_waits_and_compares_the_real_inputs_then(tmp_path):
    seen: dict = {}

    async def steps(app, pilot):
        await wait_for(pilot, lambda: app.view.paused is not None, timeout=120)
        await pilot.press("e")
        await wait_for(pilot, lambda: any(m.get("waiting") for m in app.session.numerics.values()),
                       timeout=60, seen=lambda: app.session.numerics)
        await wait_for(pilot, lambda: "waiting for" in app.query_one("#code-numerics").text, timeout=10,
                       seen=lambda: app.query_one("#code-numerics").text)
        seen["waiting_code"] = app.query_one("#code-numerics").text
        key = next(iter(app.session.numerics))
        seen["key"] = key
        for _ in range(20):  # n to the end of the compile: the script then calls the graph
            if app.session.numerics[key].get("rows") or app.session.done is not None:
                break
            at = app.view.paused
            await pilot.press("n")
            await wait_for(pilot, lambda at=at: app.view.paused is not at or app.session.done is not None
                           or app.session.numerics[key].get("rows"), timeout=120)
        await wait_for(pilot, lambda: app.session.numerics[key].get("rows"), seen=lambda: app.session.numerics[key])
        app.show_graph(key)
        await pilot.press("e")
        await wait_for(pilot, lambda: app.query_one("#code-numerics").text.startswith("inputs:"), timeout=10,
                       seen=lambda: app.query_one("#code-numerics").text[:200])
        await pilot.press("home")
        await screen_settled(pilot, app)
        seen["msg"] = app.session.numerics[key]
        seen["code"] = app.query_one("#code-numerics").text

    live(os.path.join(SCRIPTS, "numerics_bn.py"), steps, tmp_path, size=(80, 24))
    assert "waiting for the script's first call of this graph" in seen["waiting_code"]
    msg = seen["msg"]
    assert msg["inputs_origin"] == "real" and msg["inputs"].startswith("the script's own inputs of its first call")
    assert msg["summary"]["nonfinite"] == 0 and "first_nonfinite" not in msg
    first = seen["code"].splitlines()[0]
    assert first == "inputs: real, the script's first call of this graph" and len(first) <= 80
