"""Pane M's "what to change", the diff screen's memory line and pane M before codegen, driven by the keys a person
presses on recorded sessions (tests/fixtures/memory_whatif.jsonl; no torch)."""

from __future__ import annotations

import json
import os

from test_flows import press, status

FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "memory_whatif.jsonl")


def _rows(app) -> list[tuple[str, ...]]:
    t = app.query_one("#table-memory")
    return [tuple(str(c) for c in t.get_row_at(i)) for i in range(t.row_count)]


def test_m_lists_the_settings_priced_and_enter_on_one_says_a_recording_cannot_recompile(app_driver):
    seen: dict = {}

    async def steps(app, pilot):
        app.show_graph("[1/0] forward")
        await press(pilot, "M", "end")  # the last row: the partitioner's budget
        seen["row"] = _rows(app)[app.query_one("#table-memory").cursor_row]
        seen["code"] = app.query_one("#code-memory").text
        seen["heads"] = [r[0] for r in _rows(app) if r[2] == ""]
        await press(pilot, "enter")
        seen["status"] = status(app)
        await press(pilot, "home")  # the PEAK head: the plan, and what the timing measured
        seen["peak"] = app.query_one("#code-memory").text

    app = app_driver(steps, size=(160, 50), path=FIX)
    assert "# measured (compiled): not measured (on CPU torch keeps no allocator statistics" in seen["peak"]
    name, fig, how = seen["row"][:3]
    assert (name, fig.strip(), how) == ("activation_memory_budget=0.5", "-53%", "priced")
    assert "saved for backward 2.2 MB -> 1.0 MB (-53%)" in seen["code"] and "trades: AOTAutograd's partitioner" in \
        seen["code"]
    assert seen["heads"][-1] == "CHANGE" and "PEAK" in seen["heads"] and "SAVED" in seen["heads"]
    assert "needs the live script's agent" in seen["status"] and "--what-if activation_memory_budget=0.5" in \
        seen["status"], seen["status"]
    assert app.view.graph == "[1/0] forward"


def test_enter_on_a_setting_asks_the_live_agent_for_that_what_if(app_driver):
    sent: list = []

    class Agent:  # the app's side of the agent's control pipe: what Enter sends (a live script is not started here)
        alive = True

        def send(self, cmd, **kw):
            sent.append((cmd, kw))

    async def steps(app, pilot):
        app.current.agent = Agent()
        app.show_graph("[0/0] inference")
        await press(pilot, "M", "end")
        await press(pilot, "up", "up", "up", "up", "enter")  # the first setting: inplace_buffers=False
        sent.append(status(app))

    app_driver(steps, size=(160, 50), path=FIX)
    assert sent[0] == ("what_if", {"compile_id": "[0/0]", "graph_kind": "inference",
                                   "settings": {"inplace_buffers": False}, "run": True}), sent
    assert "what if: recompiling [0/0] inference with inplace_buffers=False" in sent[1]


def test_d_on_a_variant_shows_both_peaks_and_what_changed_above_the_levels(app_driver):
    seen: dict = {}

    async def steps(app, pilot):
        app.show_graph("[0/0] inference · inplace_buffers=False")
        await press(pilot, "d")
        seen["memory"] = str(app.screen.query_one("#diff-memory").content)
        seen["shown"] = app.screen.query_one("#diff-memory").display

    app_driver(steps, size=(160, 50), path=FIX)
    assert seen["shown"] and seen["memory"].startswith("memory: planned peak 262.1 kB -> 393.2 kB (+50%)")
    assert "what changed: allocations 3 -> 4" in seen["memory"], seen["memory"]


def test_m_before_codegen_says_why_there_is_no_plan_and_lists_the_lowered_buffers(app_driver, tmp_path):
    path = tmp_path / "to_lowering.jsonl"  # the session as it stood at [1/0] forward's lowering stop
    with open(FIX, encoding="utf-8") as f, open(path, "w", encoding="utf-8") as out:
        for line in f:
            m = json.loads(line)
            if m.get("compile_id") == "[1/0]" and (m.get("type") != "stop" or m.get("stage") not in
                                                   ("dynamo", "aot", "lowering")):
                continue
            out.write(line)
    seen: dict = {}

    async def steps(app, pilot):
        app.show_graph("[1/0] forward")
        await press(pilot, "M")
        seen["rows"] = _rows(app)
        seen["code"] = app.query_one("#code-memory").text
        await press(pilot, "home", "down", "down", "down")  # PEAK, LOWERED, the largest buffer
        seen["selected"] = app.view.selected
        seen["row"] = _rows(app)[app.query_one("#table-memory").cursor_row]

    app_driver(steps, size=(160, 50), path=str(path))
    heads = {r[0]: r for r in seen["rows"] if r[2] == ""}
    assert heads["PEAK"][1].strip() == "not yet" and "not planned yet: the wrapper" in seen["code"]
    assert heads["LOWERED"][1].strip() == "2.2 MB"  # addmm, GELU, addmm_1 ... as laid out at lowering
    assert seen["row"][0] == seen["selected"] and seen["row"][1].strip() == "1.0 MB"  # 1024 x 256 float32
    assert seen["row"][3] == "at codegen"
