"""What a new user could not read or do at 80x24 (trial 9), through the keys they press: pane 2's input names cut
without their layer, Enter on a pane-1 row doing nothing, pane 6's footer losing / and s, pane 5 calling a template
node a SchedulerNode without a LoopBody, and pane 8's kernel line numbers not saying what they count from."""

from __future__ import annotations

import os
import re

from inductor_step.session.fx_names import dynamo_input_path
from inductor_step.tui.table import Table

from conftest import screen_after, screen_lines, screen_settled

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")


def _cells(table: Table) -> list[list[str]]:
    """The table's rows as drawn now (under the header), split into cells (two or more spaces apart)."""
    rows = ["".join(s.text for s in table.render_line(y)) for y in range(1, table.size.height)]
    return [re.split(r"\s{2,}", r.replace("▌", " ").strip()) for r in rows if r.strip()]


def test_pane_2_cut_input_names_keep_the_layer_index_and_parameter_at_80x24(app_driver):
    """nanoGPT (two blocks), pane 2 at 80x24, paged through: every input holding a block's parameter
    (``transformer.h.0.ln_1.weight``) shows the block's index and the parameter's first letter, and no two inputs
    holding different parameters of different modules read the same (``ln_…weight`` read so for both blocks' ln_1
    and ln_2; ``ln_1.bias`` for both blocks')."""
    seen: dict[str, str] = {}

    async def steps(app, pilot):
        await pilot.press("2")
        await screen_settled(pilot, app)
        table = app.query_one("#table-aot", Table)
        held = app.pane("aot").input_names(app.pane("aot").data())
        for _ in range(8):
            for cells in _cells(table):
                if cells[0] in held and len(cells) > 2:
                    seen[held[cells[0]]] = cells[2]
            await pilot.press("pagedown")
            await screen_settled(pilot, app)

    app_driver(steps, size=(80, 24), path=os.path.join(FIXTURES, "gpu_nanogpt.jsonl"))
    layered = {h: c for h, c in seen.items() if re.search(r"\.\d+\.", h)}
    assert len(layered) >= 8, seen
    for h, c in layered.items():
        index = re.findall(r"\.(\d+)\.", h)[-1]
        assert index in c and h.rsplit(".", 1)[1][0] in c.split(index, 1)[1], (h, c)
    shown = list(seen.values())
    dup = {c: [h for h, s in seen.items() if s == c] for c in shown if shown.count(c) > 1}
    assert not dup, dup


def test_pane_1_and_2_cut_names_of_attn_and_mlp_c_proj_read_apart_at_80x24(app_driver):
    """nanoGPT at 80x24, panes 1 and 2 paged through: ``transformer.h.0.attn.c_proj.weight`` and
    ``transformer.h.0.mlp.c_proj.weight`` (the same module name under attn and mlp) read apart in pane 1's name
    column and pane 2's input column (both read ``…0…c_pr…w…``), and no two of a block's parameters read alike."""
    seen: dict[str, dict[str, str]] = {"dynamo": {}, "aot": {}}

    async def steps(app, pilot):
        for key, stage in (("1", "dynamo"), ("2", "aot")):
            await pilot.press(key)
            await screen_settled(pilot, app)
            table = app.query_one(f"#table-{stage}", Table)
            pane = app.pane(stage)
            nodes = pane.nodes(pane.data())
            held = pane.input_names(pane.data())
            paths = {n.name: held.get(n.name) or dynamo_input_path(str(n.target))
                     for n in nodes if n.op == "placeholder"}
            for _ in range(8):
                for y, cells in enumerate(_cells(table)):
                    n = nodes[table.scroll_offset.y + y]
                    if n.name in paths and "." in paths[n.name]:
                        seen[stage][paths[n.name]] = cells[0] if stage == "dynamo" else cells[2]
                await pilot.press("pagedown")
                await screen_settled(pilot, app)

    app_driver(steps, size=(80, 24), path=os.path.join(FIXTURES, "gpu_nanogpt.jsonl"))
    for stage, cut in seen.items():
        attn, mlp = cut.get("transformer.h.0.attn.c_proj.weight"), cut.get("transformer.h.0.mlp.c_proj.weight")
        assert attn and mlp and attn != mlp, (stage, attn, mlp)
        block = {h: c for h, c in cut.items() if ".h.0." in h}
        assert len(block) >= 12 and len(set(block.values())) == len(block), (stage, block)


def test_enter_on_a_pane_1_row_opens_the_buffer_it_became(app_driver):
    """Pane 1, the demo's forward: Enter on ``h`` (its ``up`` Linear) opens pane 8 at the buffer it became, selected, and the
    status line says so; Enter on an input, which became no buffer, says what Enter does in pane 1."""
    got: dict = {}

    async def steps(app, pilot):
        await pilot.press("1")
        await screen_settled(pilot, app)
        table = app.query_one("#table-dynamo", Table)
        await pilot.press("enter")  # row 0: an input
        await screen_settled(pilot, app)
        got["input"] = (app.view.stage, screen_lines(app)[-2])
        nodes = app.pane("dynamo").nodes(app.pane("dynamo").data())
        row = next(i for i, n in enumerate(nodes) if n.name == "h")
        for _ in range(row):
            await pilot.press("down")
        await screen_settled(pilot, app)
        got["want"] = app.session.links(app.view.graph)["dynamo_nodes"]["h"]["buffers"]
        await pilot.press("enter")
        await screen_settled(pilot, app)
        got["h"] = (app.view.stage, app.view.selected, screen_lines(app)[-2], table.cursor_row)

    app_driver(steps, size=(80, 24))
    stage, status = got["input"]
    assert stage == "dynamo" and "became no IR buffer" in status, got
    stage, sel, status, _ = got["h"]
    assert stage == "linked" and sel == got["want"][0], got
    assert f"pane 8 at {sel}" in status, got


def test_pane_6_footer_at_80_columns_keeps_search_and_screenshot(app_driver):
    """Pane 6 at 80x24 (a recorded session: no r): the footer keeps its own keys t and x and still shows
    ``/ Find`` and ``s Shot`` on its one line, with q, ?, n and 1-9; every other pane shows ``s Shot`` too, in a
    GPU session as well (pane 9's own ``u``).  A live session's footer: tests/e2e/test_live.py."""
    footers: dict[str, str] = {}

    async def steps(app, pilot):
        for key in "123456789l":
            await pilot.press(key)
            await screen_settled(pilot, app)
            footers[key] = screen_lines(app)[-1]

    for path in (None, os.path.join(FIXTURES, "gpu_nanogpt.jsonl")):
        app_driver(steps, size=(80, 24), **({"path": path} if path else {}))
        assert all("s Shot" in f for f in footers.values()), (path, footers)
    footer = screen_after(app_driver, ("6",), size=(80, 24))[-1]
    for key in ("t IR/asm", "x Repro", "q Quit", "? Help", "n Next", "1-9 panes", "/ Find", "s Shot", "^p palette"):
        assert key in footer, footer


def test_pane_5_says_a_template_node_is_a_template_kernel(app_driver):
    """max-autotune's C++ GEMM template (modes_autotune.jsonl, op0 in op0_op1): pane 5 at 80x24 names it a template
    kernel (CppTemplateBuffer), where its code is (pane 6, its kernel) and the epilogue's LoopBody (op1)."""
    got = screen_after(app_driver, ("5",), size=(80, 24), path=os.path.join(FIXTURES, "modes_autotune.jsonl"))
    text = "\n".join(got)
    assert "SchedulerNode has no LoopBody" not in text, text
    assert "op0: a template kernel (CppTemplateBuffer buf0)" in text, text
    assert "pane 6, kernel cpp_fused_addmm_relu_0" in text and "op1 (epilogue)" in text, text


def test_pane_8_says_its_kernel_lines_count_from_the_kernels_start(app_driver):
    """Pane 8 at 80x24: the kernel's code under the detail is labelled with what its line numbers count from (the
    kernel's start; pane 6 counts the wrapper's), and the table keeps its width."""
    got = screen_after(app_driver, ("8",), size=(80, 24))
    assert any("counted from the kernel's start (pane 6 counts the wrapper's)" in line for line in got), got


def test_pane_8_labels_its_kernel_lines_at_every_width(app_driver):
    """Pane 8 at 80 to 200 columns (kernel under the table, beside it from 130, under the detail from 180): the
    kernel's code is labelled with what its line numbers count from, whole (beside the table from 130 to 179 it had
    no border to hold the label); at 200 the whole label with pane 6's, and after a resize to 150 the shorter one,
    not cut."""
    got: dict[int, list[str]] = {}

    async def steps(app, pilot):
        await pilot.press("8")
        await screen_settled(pilot, app)
        got[app.size.width] = screen_lines(app)
        if app.size.width == 200:
            await pilot.resize_terminal(150, 30)
            await screen_settled(pilot, app)
            got[-150] = screen_lines(app)

    for width in (80, 129, 130, 150, 179, 180, 200):
        app_driver(steps, size=(width, 30))
    for width, lines in got.items():
        label = [ln for ln in lines if "lines counted from the kernel's start" in ln]
        assert len(label) == 1 and "…" not in label[0].split("kernel's start")[1], (width, label or lines)
    assert any("(pane 6 counts the wrapper's)" in ln for ln in got[200]), got[200]
