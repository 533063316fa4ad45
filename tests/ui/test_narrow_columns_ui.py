"""What a new user could not read at 80x24 in panes 1-3, through the keys they press: pane 2's targets cut mid-word
(``ate…Tensor``), pane 3's sizes cut mid-number (``[3… 256]``), pane 1's node names abbreviated unlike the code
under them, and flex attention's ``score_mod`` nodes naming the ``flex_attention(...)`` call as their line."""

from __future__ import annotations

import asyncio
import os
import re

import pytest

from inductor_step.session.format import read_session
from inductor_step.tui.app import StepApp
from inductor_step.tui.codeview import CodeView
from inductor_step.tui.table import Table

from conftest import DEMO, screen_lines, screen_settled

FLEX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "subgraphs_flex.jsonl")
SIZES = pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])


def _drive(path: str, steps, size) -> StepApp:
    app = StepApp(messages=list(read_session(path)), session_path=path)

    async def main():
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await steps(app, pilot)
    asyncio.run(main())
    return app


def _drawn_rows(table: Table) -> list[str]:
    """The table's rows as drawn now (under the header), cut to its width."""
    return ["".join(s.text for s in table.render_line(y)) for y in range(1, table.size.height)]


def _cursor_cells(table: Table) -> list[str]:
    """The cursor row's cells as drawn (columns are two or more spaces apart)."""
    y = table.cursor_row - table.scroll_offset.y + 1
    return re.split(r"\s{2,}", "".join(s.text for s in table.render_line(y)).strip())


@SIZES
def test_pane_2_targets_and_pane_3_sizes_read_whole(size):
    """Every row of the demo's forward in pane 3 (IR buffers) and pane 2 (post-grad nodes), paged through: no
    size, range or target is cut (``[32,256]``, ``aten.mul`` or ``mul`` where the column is narrow)."""
    seen: dict[str, list[str]] = {"3": [], "2": []}

    async def steps(app, pilot):
        for key, stage in (("3", "lowering"), ("2", "aot")):
            await pilot.press(key)
            await screen_settled(pilot, app)
            table = app.query_one(f"#table-{stage}", Table)
            for _ in range(table.row_count // 4 + 1):
                seen[key] += [r for r in _drawn_rows(table) if r.strip()]
                await pilot.press("pagedown")
                await screen_settled(pilot, app)
            seen[key] += [r for r in _drawn_rows(table) if r.strip()]

    _drive(DEMO, steps, size)
    for key in "32":  # (pane 2's output node lists every output's shape, each shown whole on its own node's row)
        cut = [r for r in seen[key] if "…" in r and not r.startswith(" output ")]
        assert seen[key] and not cut, (key, cut)
    assert any(re.search(r"buf6 .*\[32, ?256\]", r) for r in seen["3"]), seen["3"]
    assert any(re.search(r" (aten\.)?mul(\.Tensor)? ", r) for r in seen["2"]), seen["2"]


@SIZES
def test_pane_1_node_names_read_as_in_the_code_under_them(size):
    """Down through the demo's Dynamo graph: the node name the cursor row shows (whole, or with "…" where it is cut)
    is, piece by piece, the name on the code line the cursor brings into view (both without Dynamo's
    ``_modules_`` / ``_parameters_``, said at the top of the code), never another abbreviation of it."""
    pairs: list[tuple[str, str]] = []
    head: list[str] = []

    async def steps(app, pilot):
        await pilot.press("1")
        await screen_settled(pilot, app)
        table = app.query_one("#table-dynamo", Table)
        code = app.query_one("#code-dynamo", CodeView)
        head.append(code.text[:400])
        for _ in range(min(10, table.row_count - 1)):
            await pilot.press("down")
            await screen_settled(pilot, app)
            pairs.append((_cursor_cells(table)[0], code.text.split("\n")[code.cursor]))

    _drive(DEMO, steps, size)
    assert len(pairs) == 10 and "_modules_" not in "".join(line for _, line in pairs), pairs
    for cell, line in pairs:
        pieces = [p for p in cell.split("…") if p]
        assert pieces and re.search(".*".join(map(re.escape, pieces)), line.split("=")[0]), (cell, line)
    assert any("l_model_norm_weight_" in line for _, line in pairs), pairs
    assert "_modules_, _parameters_, _buffers_ left out" in head[0], head


@SIZES
def test_flex_score_mod_nodes_show_the_line_in_score_mod(size):
    """The flex attention block (tests/fixtures/subgraphs_flex.jsonl, /work/ts2/flex.py's script): g, the
    ``sdpa_score0`` subgraph, pane 2, the cursor on ``where``: its user line is ``score_mod``'s (flex.py:7, the
    line Dynamo recorded inside the user's function), not the ``flex_attention(...)`` call's (flex.py:13)."""
    got: dict = {}

    async def steps(app, pilot):
        await pilot.press("g", "down", "enter")
        await screen_settled(pilot, app)
        got["graph"] = app.view.graph
        await pilot.press("2", "end", "up")
        await screen_settled(pilot, app)
        table = app.query_one("#table-aot", Table)
        got["row"] = _cursor_cells(table)

    _drive(FLEX, steps, size)
    assert got["graph"].endswith("sdpa_score0"), got
    assert got["row"][0] == "where" and got["row"][-1] == "flex.py:7", got


@pytest.mark.parametrize("path", ["flex_recompile_pair.jsonl", "gpu_attention.jsonl"])
def test_pane_1_cut_parameter_names_keep_their_layer_at_80x24(path):
    """At 80x24 pane 1 gives a parameter's name 10 cells: where ``l_self_qkv_weight_`` does not fit, the cut keeps
    the layer it belongs to (``…qkv_weig…``), never only a letter or index before the parameter (``…v_weight_``,
    ``…m_weight_`` read the same for every layer's weight), and what it shows reads in the name, in order."""
    seen: list[tuple[str, str]] = []

    async def steps(app, pilot):
        await pilot.press("1")
        await screen_settled(pilot, app)
        table = app.query_one("#table-dynamo", Table)
        nodes = app.pane("dynamo").nodes(app.pane("dynamo").data())
        shown = app.pane("dynamo").shown_names(app.pane("dynamo").data())
        for y, row in enumerate(_drawn_rows(table)[:6]):
            cell = re.split(r"\s{2,}", row.replace("▌", " ").strip())[0]
            n = nodes[table.scroll_offset.y + y]
            if n.op == "placeholder":
                seen.append((cell, shown.get(n.name, n.name)))

    _drive(os.path.join(os.path.dirname(FLEX), path), steps, (80, 24))
    cut = [(cell, name) for cell, name in seen if "…" in cell]
    assert cut, seen
    for cell, name in cut:
        pieces = [p for p in cell.split("…") if p]
        assert re.search(".*".join(map(re.escape, pieces)), name), (cell, name)
        layers = set(name.strip("_").split("_")[:-1]) - {"l", "self"}
        assert any(part in layers for p in pieces for part in p.split("_")), (cell, name)


def test_pane_1_flex_block_mask_inputs_read_apart_at_80x24():
    """The flex attention block (tests/fixtures/subgraphs_flex.jsonl: the script's BlockMask ``bm``, a global, comes
    into Dynamo's graph as eight inputs): at 80x24 pane 1's node column is about 10 cells, where each cell cut on its
    own read ``…um_blocks`` for both ``g_bm_q_num_blocks`` and ``g_bm_full_q_num_blocks`` and ``…q_indices`` for
    both ``g_bm_q_indices`` and ``g_bm_full_q_indices``.  Down the table, as a person reads it: the node cell on
    screen on each row, against the code line the cursor brings into view; every input of the mask reads
    differently, as pieces of its own name."""
    cells: dict[str, str] = {}

    async def steps(app, pilot):
        await pilot.press("1")
        await screen_settled(pilot, app)
        table = app.query_one("#table-dynamo", Table)
        code = app.query_one("#code-dynamo", CodeView)
        for _ in range(table.row_count):
            name = code.text.split("\n")[code.cursor].split("=")[0].strip()
            y = table.region.y + 1 + table.cursor_row - table.scroll_offset.y
            row = screen_lines(app)[y][table.region.x:table.region.right]
            if name.startswith("g_bm_"):
                cells[name] = re.split(r"\s{2,}", row.replace("▌", " ").strip())[0]
            await pilot.press("down")
            await screen_settled(pilot, app)

    _drive(FLEX, steps, (80, 24))
    assert len(cells) == 8, cells
    for a, b in (("g_bm_q_num_blocks", "g_bm_full_q_num_blocks"), ("g_bm_q_indices", "g_bm_full_q_indices"),
                 ("g_bm_kv_num_blocks", "g_bm_full_kv_num_blocks"), ("g_bm_kv_indices", "g_bm_full_kv_indices")):
        assert cells[a] != cells[b], (a, b, cells)
    assert len(set(cells.values())) == len(cells), cells
    for name, cell in cells.items():
        pieces = [p for p in cell.split("…") if p]
        assert len(cell) <= 12 and pieces and re.search(".*".join(map(re.escape, pieces)), name), (name, cell)
    assert any("…" in cell for cell in cells.values()), cells  # (the column cuts them: 80 columns)
