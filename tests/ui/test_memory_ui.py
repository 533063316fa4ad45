"""Pane M: a person opens a recorded training step, presses M, moves to a buffer live at the planned
peak, and pane 3 follows that buffer; Enter on another opens pane 3 at it.  No torch needed."""

from __future__ import annotations


def _row(app, stage: str) -> tuple[str, ...]:
    t = app.query_one(f"#table-{stage}")
    return tuple(str(c) for c in t.get_row_at(t.cursor_row))


def test_m_then_a_live_buffer_is_selected_in_pane_3(app_driver):
    seen: dict = {}

    async def steps(app, pilot):
        app.show_graph("[0/0] forward")
        await pilot.press("1")
        await pilot.press("M")
        await pilot.pause()
        seen["stage"] = app.view.stage
        seen["head"] = tuple(str(c) for c in app.query_one("#table-memory").get_row_at(0))
        await pilot.press("home", "down", "down")  # the head row, the largest live buffer, the next one
        await pilot.pause()
        seen["memory_row"] = _row(app, "memory")
        seen["selected"] = app.view.selected
        seen["code"] = app.query_one("#code-memory").text
        await pilot.press("3")
        await pilot.pause()
        seen["lowering_row"] = _row(app, "lowering")
        await pilot.press("8")  # the linked view: its bytes, lifetime and live at the peak
        await pilot.pause()
        seen["linked"] = app.query_one("#code-linkinfo").text
        await pilot.press("M", "home", "down", "enter")  # Enter on the largest: pane 3 at it
        await pilot.pause()
        seen["after"] = (app.view.stage, app.view.selected, _row(app, "lowering")[0])

    app = app_driver(steps, size=(160, 50))
    from inductor_step.session import memory as mem

    p = mem.plan(app.session, "[0/0] forward")
    assert seen["stage"] == "memory"
    assert seen["head"][0] == "PEAK" and seen["head"][1].strip() == mem.fmt_bytes(p.peak)
    second = p.live_at_peak[1]
    assert seen["memory_row"][0] == second and seen["selected"] == second
    assert seen["code"].startswith(f"# {second}: ") and "live at the peak: yes" in seen["code"]
    assert seen["lowering_row"][0] == second  # pane 3 follows the selection made in pane M
    assert f"# memory: {second} " in seen["linked"] and "live at the planned peak" in seen["linked"]
    assert seen["after"] == ("lowering", p.live_at_peak[0], p.live_at_peak[0])
