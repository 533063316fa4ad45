"""Pane 2 after a buffer is chosen in pane 3: every FX node the buffer comes from is marked, in the table
and in the code, the cursor on one of them."""

from __future__ import annotations

import os

from conftest import wait_for

from inductor_step.tui.codeview import CodeView
from inductor_step.tui.table import Table

DEMO = os.path.join(os.path.dirname(__file__), "..", "fixtures", "demo.jsonl")


def test_every_origin_node_of_the_selected_buffer_is_marked_in_pane_2(app_driver) -> None:
    seen: dict = {}

    async def steps(app, pilot):
        await pilot.press("3")
        await pilot.pause()
        table = app.query_one("#table-lowering", Table)
        target = next(i for i in range(table.row_count) if str(table.get_row_at(i)[0]) == "buf6")
        for _ in range(target - table.cursor_row):  # down to buf6, as a person moves
            await pilot.press("down")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("2")
        await pilot.pause()
        aot = app.query_one("#table-aot", Table)
        code = app.query_one("#code-aot", CodeView)
        await wait_for(pilot, lambda: len(code.marks) > 1, timeout=10, seen=lambda: code.marks)
        names = [str(aot.get_row_at(i)[0]) for i in range(aot.row_count)]
        seen["selected"] = app.view.selected
        seen["cursor"] = names[aot.cursor_row]
        seen["marked"] = sorted(names[i] for i in aot.marked | {aot.cursor_row})
        seen["code_marked"] = sorted(code.lines[i].split(":")[0].split("=")[0].strip() for i in code.marks)
        seen["origins"] = sorted(app.session.stage_links(app.view.graph)["buffers"]["buf6"]["fx_nodes"])

    app_driver(steps, size=(200, 50), path=DEMO)
    assert seen["selected"] == "buf6"
    assert len(seen["origins"]) > 1, seen["origins"]
    assert seen["marked"] == seen["origins"], seen
    assert seen["code_marked"] == seen["origins"], seen
    assert seen["cursor"] in seen["origins"]
