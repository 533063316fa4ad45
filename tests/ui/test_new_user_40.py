"""What a new user in tmux met, the small points: each driven by the keys a person presses on a recorded
session, checking what the screen then says."""

from __future__ import annotations

import copy
import re
import os

from inductor_step.session.format import read_session
from inductor_step.session.store import Store

from test_flows import move_to_row, press, status

from conftest import screen_settled, wait_for

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(HERE, "fixtures")


def test_f_on_a_concats_nop_node_says_it_has_no_kernel_not_a_library_call(app_driver):
    """Pressing f on op0 (sin), then on op2 (the cat's NopKernelSchedulerNode): it was called a library call
    with max_autotune to try, while Inductor's own can_fuse says 'node2 is extern or nop'."""
    seen: dict = {}

    async def steps(app, pilot):
        await press(pilot, "4")
        await move_to_row(app, pilot, "scheduling", "op0")
        await press(pilot, "f")
        await move_to_row(app, pilot, "scheduling", "op2")
        await press(pilot, "f")
        seen["code"] = " ".join(app.query_one("#code-scheduling").text.split())
        seen["status"] = status(app)

    app_driver(steps, path=os.path.join(FIX, "nop_concat.jsonl"))
    assert seen["code"].startswith("# op0 and op2: not fused"), seen["code"]
    assert "op2 is a NopKernelSchedulerNode: no kernel of its own" in seen["code"], seen["code"]
    assert "library call" not in seen["code"] and "max_autotune" not in seen["code"], seen["code"]


def test_the_ledger_does_not_suggest_max_autotune_to_a_graph_compiled_with_it():
    """REPORT.md and pane 9 said 'try w max_autotune=True' for library calls of a graph compiled with it."""
    from inductor_step.session.ledger.text import report_markdown, summary

    msgs = list(read_session(os.path.join(FIX, "ledger.jsonl")))
    plain = Store.of(msgs)
    assert "try w max_autotune=True" in summary(plain)  # the advice stands where it was not on
    tuned = [copy.deepcopy(m) for m in msgs]
    for m in tuned:
        if m.get("type") == "stop" and m.get("stage") == "dynamo":
            m["compiled_with"] = {"backend": "inductor", "mode": "max-autotune", "options": {},
                                  "config": {"max_autotune": True}}
    s = Store.of(tuned)
    for text in (summary(s), report_markdown(s)):
        assert "library call" in text and "try w max_autotune=True" not in text
        assert "compiled with max_autotune=True already" in text


def test_pane_t_names_a_frame_with_no_inductor_graph_as_such_and_enter_says_so(app_driver):
    """Pressing g lists 2 graphs; T listed [2/0] (a resume frame Dynamo made no graph of) as a third graph, and
    Enter on it said 'a cache hit skips our stops' with caches off; the line stayed after the cursor moved."""
    seen: dict = {}

    async def steps(app, pilot):
        seen["graphs"] = list(app.session.graphs)
        await press(pilot, "T")
        table = app.query_one("#table-ctime")
        rows = [tuple(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)]
        seen["rows"] = rows
        target = next(i for i, r in enumerate(rows) if r[0].startswith("[2/0]"))
        for _ in range(len(rows)):  # bounded: a cursor that cannot reach the row fails below, never hangs
            if table.cursor_row == target:
                break
            await press(pilot, "down" if table.cursor_row < target else "up")
        assert table.cursor_row == target, (table.cursor_row, target)
        await press(pilot, "enter")
        seen["status"] = status(app)
        seen["stage"] = app.view.stage
        await press(pilot, "up")
        seen["after"] = status(app)

    app_driver(steps, path=os.path.join(FIX, "no_graph_frame.jsonl"))
    assert seen["graphs"] == ["[0/0] inference", "[1/0] inference"]
    row = next(r for r in seen["rows"] if r[0].startswith("[2/0]"))
    assert row[0] == "[2/0] frame" and "made no Inductor graph" in " ".join(row), row
    assert not any(r[0] == "[2/0] inference" for r in seen["rows"])
    assert "made no Inductor graph" in seen["status"] and "cache hit" not in seen["status"], seen["status"]
    assert seen["stage"] == "ctime"
    assert "made no Inductor graph" not in seen["after"], seen["after"]


def test_esc_closes_the_graph_picker_as_g_does(app_driver):
    """Pressing g, then Esc: the list is gone and the keys are back in the pane (at 120 columns Esc left the
    list beside the panes)."""
    from inductor_step.tui.graphlist import GraphSide

    seen: dict = {}

    async def steps(app, pilot):
        side = app.query_one(GraphSide)
        await press(pilot, "g")
        seen["open"] = side.region.width
        await press(pilot, "down", "escape")
        seen["esc"] = (side.region.width, app.focused.id)
        await press(pilot, "g")
        seen["again"] = side.region.width

    app_driver(steps, size=(120, 40))
    assert seen["open"] > 26
    assert seen["esc"] == (0, "table-dynamo"), seen
    assert seen["again"] > 26


def test_a_what_if_diff_is_not_headed_why_it_recompiled(app_driver):
    """Pressing d on a what-if variant: its first level says why the two differ (the settings), not 'why it
    recompiled'."""
    variant = "[0/1] inference · aggressive_fusion=True"
    seen: dict = {}

    async def steps(app, pilot):
        await press(pilot, "g")
        for _ in range(app.session.graphs.index(variant)):
            await press(pilot, "down")
        await press(pilot, "enter", "d")
        ol = app.screen.query_one("#diff-levels")
        seen["levels"] = [str(o.prompt) for o in ol.options]
        await press(pilot, "0")
        seen["text"] = app.screen.code.text

    app_driver(steps, path=os.path.join(FIX, "whatif_dynamic.jsonl"))
    assert not any("why it recompiled" in x for x in seen["levels"]), seen["levels"]
    assert any("why they differ (what if)" in x for x in seen["levels"]), seen["levels"]
    assert "recompiled by what-if with aggressive_fusion=True: not a recompile" in seen["text"], seen["text"]


def test_the_ledger_does_not_say_roofs_were_stored_when_a_busy_cpu_kept_none(app_driver):
    """Pane 9 said the measured roofs were 'stored in …/roofs.json', a file holding {}: a CPU measured
    while other processes held its cores (load 3.3 on 2 CPUs here) is not kept, and it says so."""
    seen: dict = {}

    async def steps(app, pilot):
        await press(pilot, "9")
        await wait_for(pilot, lambda: app.view.stage == "ledger" and app.query_one("#code-ledger").text, timeout=10)
        seen["code"] = " ".join(app.query_one("#code-ledger").text.split())

    app_driver(steps, path=os.path.join(FIX, "ledger.jsonl"))
    assert "measured roofs not stored in /tmp/ledger/c9/roofs.json: other processes held the cores" in seen["code"], \
        seen["code"]
    assert "stored in /tmp/ledger/c9/roofs.json" not in seen["code"].replace("not stored in", "")


def test_at_200_columns_no_cell_is_cut_that_fits_and_pane_8_shows_its_kernels(app_driver):
    """At 200 columns pane 1 showed '[1… 16]' for '[16, 16]' and 'si…oid' for 'sigmoid' beside 130
    empty columns (a column was as wide as its typical cell), and pane 8's table hid its kernel column."""
    from rich.cells import cell_len

    seen: dict = {}

    async def steps(app, pilot):
        for key, stage in (("1", "dynamo"), ("3", "lowering")):
            await press(pilot, key)
            await wait_for(pilot, lambda: app.view.stage == stage, timeout=10)
            await screen_settled(pilot, app)  # the columns are sized once the pane is laid out
            t = app.query_one(f"#table-{stage}")
            widest = [max(cell_len(str(t.get_row_at(i)[c])) for i in range(t.row_count))
                      for c in range(len(t.column_widths))]
            seen[stage] = (t.column_widths, widest, t.size.width)
        await press(pilot, "8")
        await wait_for(pilot, lambda: app.view.stage == "linked", timeout=10)
        await screen_settled(pilot, app)
        t = app.query_one("#table-linked")
        seen["linked"] = (t.column_widths, t.size.width, [str(c) for c in t.get_row_at(0)])

    app_driver(steps, size=(200, 50))
    for stage in ("dynamo", "lowering"):
        widths, widest, room = seen[stage]
        assert sum(widest) + 2 * len(widest) <= room, seen[stage]  # they all fit: none is cut
        assert all(w >= x for w, x in zip(widths, widest)), seen[stage]
    widths, room, row = seen["linked"]
    assert sum(w + 2 for w in widths) <= room + 1, seen["linked"]  # the kernel column is on screen
    assert row[3].startswith("cpp_fused_"), row


def test_panes_1_and_2_land_on_the_same_row_for_a_buffer_whatever_was_selected_before(app_driver):
    """Select buffer b in pane 3, then 1 (or 2): the row depended on the previous selection (a row that
    also stood for b stayed).  Found here: a buffer a whose pane-1/2 row also stands for b; the keys go 3 -> a,
    1 (2), 3 -> b, 1 (2), and the row must be the one 3 -> b, 1 (2) gives from a fresh start."""
    from test_flows import move_to_row

    seen: dict = {}

    async def steps(app, pilot):
        await press(pilot, "3")
        lowering = app.query_one("#table-lowering")
        bufs = [str(lowering.get_row_at(i)[0]) for i in range(lowering.row_count)]
        for key, stage in (("1", "dynamo"), ("2", "aot")):
            pane = app.pane(stage)
            data = pane.data()
            pair = None
            for a in bufs:
                ra = pane.row_for(data, a)
                for b in bufs:
                    rb = pane.row_for(data, b)
                    if b != a and ra is not None and rb is not None and ra != rb and b in pane.buffers_of(data, ra):
                        pair = (a, b)
                        break
                if pair:
                    break
            assert pair, f"no such pair in pane {key}"
            a, b = pair
            await press(pilot, "3")
            await move_to_row(app, pilot, "lowering", b)
            await press(pilot, key)
            fresh = app.query_one(f"#table-{stage}").cursor_row
            await press(pilot, "3")
            await move_to_row(app, pilot, "lowering", a)
            await press(pilot, key)
            await press(pilot, "3")
            await move_to_row(app, pilot, "lowering", b)
            await press(pilot, key)
            seen[stage] = (pair, fresh, app.query_one(f"#table-{stage}").cursor_row)

    app_driver(steps)
    for stage, (pair, fresh, after) in seen.items():
        assert after == fresh, (stage, pair, fresh, after)


def test_at_80_columns_ts_answer_on_a_cpp_kernel_fits_the_code_view(app_driver):
    """Pressing t on a C++ kernel at 80 columns: its reason was one line of ~200 cells (200 presses of Right)."""
    seen: dict = {}

    async def steps(app, pilot):
        await press(pilot, "6")
        table = app.query_one("#table-codegen")
        row = next(i for i in range(table.row_count) if str(table.get_row_at(i)[0]).startswith("cpp_fused"))
        await move_to_row(app, pilot, "codegen", str(table.get_row_at(row)[0]).split(" (call")[0])
        code = app.query_one("#code-codegen")
        await press(pilot, "t")
        await wait_for(pilot, lambda: "x86 asm of" in code.text, timeout=10, seen=lambda: code.text[:200])
        seen["text"], seen["width"] = code.text, code.size.width

    app_driver(steps, size=(80, 24))
    lines = seen["text"].split("\n")
    assert "x86 asm of cpp_fused" in lines[0], lines
    assert len(lines) > 1 and max(len(x) for x in lines) <= seen["width"] - 6, (seen["width"], lines)


def test_at_80_columns_the_newest_result_ends_the_status_line_uncut(app_driver):
    """At 80 columns the search's row number (and x's, r's, what-if's results) were cut off the end of the
    status line; the result is what the person waits for: where the line is too long, the rest gives way."""
    from rich.cells import cell_len

    seen: dict = {}

    async def steps(app, pilot):
        await press(pilot, "3", "down", "down")  # a selection, and an error-free recorded session's long line
        app.session.note_run_status("timed 3 of 3 graph(s) · x: the last kernel's repro written")
        await press(pilot, "7", "slash", *"native_layer_norm", "enter")
        seen["status"] = status(app)
        await press(pilot, "escape")

    app_driver(steps, size=(80, 24))
    text = seen["status"]
    assert cell_len(text) <= 80, (cell_len(text), text)
    assert text.rstrip().endswith("'native_layer_norm' in the table: row 1") or \
        re.search(r"'native_layer_norm' in the (table|code): (row|line) \d+$", text.rstrip()), text


def test_at_80_columns_the_diff_footer_and_status_line_fit(app_driver):
    """The diff's footer read 'r Time A+B ? H▏^p paletteR' and its status line (the what-if's result
    after r among them) was cut at 80 columns."""
    from rich.cells import cell_len

    seen: dict = {}

    async def steps(app, pilot):
        await press(pilot, "g", "down", "enter", "d")
        screen = app.screen
        footer = screen.query_one("Footer")
        seen["keys"] = {str(k.key_display or k.key): (k.region, str(k.description)) for k in footer.query("FooterKey")}
        st = screen.query_one("#diff-status")
        note = ("[0/1] inference · aggressive_fusion=True timed: 7 shows the timings and numerics; the variant "
                "compiled 35.99 -> 0.0022 ms")
        screen._status(note)
        await wait_for(pilot, lambda: str(st.content) == note, timeout=10, seen=lambda: str(st.content))
        await screen_settled(pilot, app)  # laid out with the new text
        seen["status"] = (note, st.region)

    app_driver(steps, size=(80, 24), path=os.path.join(FIX, "diff_recompile.jsonl"))
    for key, (region, what) in seen["keys"].items():
        assert region.right <= 80, (key, what, region)
    assert "p" not in seen["keys"]  # one pair: p does nothing, and is not offered
    note, region = seen["status"]
    assert region.width * region.height >= cell_len(note) and region.height >= 2, region
