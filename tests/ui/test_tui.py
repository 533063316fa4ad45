"""UI tests: recorded sessions (made by the real tracer, tests/make_fixtures.py) driven by keys.

No torch is needed here: these are exactly what `inductor-step --open` does on a laptop.
"""

from __future__ import annotations

import asyncio
import os

import pytest
from textual.widgets import OptionList, Static, TabbedContent

from inductor_step.tui.table import Table

from inductor_step.session.format import STAGES, graph_key, read_session
from inductor_step.tui.app import StepApp
from inductor_step.tui.codeview import CodeView
from inductor_step.tui.panes.base import StagePane

from conftest import screen_lines, screen_settled, wait_for

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join("tests", "fixtures", "demo.jsonl")
CODEGEN_ERROR = os.path.join("tests", "fixtures", "codegen_error.jsonl")


@pytest.fixture(autouse=True)
def _repo_root(monkeypatch):
    monkeypatch.chdir(os.path.dirname(HERE))


def open_app(path: str = DEMO, screenshots: str = "screenshots") -> StepApp:
    return StepApp(messages=list(read_session(path)), session_path=path, screenshots=screenshots)


def shown_stage(app: StepApp) -> str:
    """The stage the stage bar marks as the one shown (drawn reversed), without its ✓/●/✗ mark; the bar
    names every stage, so only its styles tell which one is shown."""
    bar = app.query_one("#stagebar", Static).content
    marked = [bar.plain[s.start:s.end] for s in bar.spans if "reverse" in str(s.style)]
    assert len(marked) == 1, (bar.plain, bar.spans)
    return marked[0].strip(" ✓●✗")


def drive(app: StepApp, coro_fn, size=(120, 40)):
    async def main():
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await coro_fn(pilot)

    asyncio.run(main())


def test_n_visits_every_recorded_stop_in_order_and_b_goes_back():
    app = open_app()
    stops = [(graph_key(s), s["stage"]) for s in app.session.stops]
    assert len(stops) == 18  # 3 graphs x 6 stages
    seen = []

    async def steps(pilot):
        seen.append((app.view.graph, app.view.stage))
        for _ in range(len(stops) - 1):
            await pilot.press("n")
            seen.append((app.view.graph, app.view.stage))
        await pilot.press("b")
        await pilot.press("b")
        seen.append((app.view.graph, app.view.stage))

    drive(app, steps)
    assert seen[:-1] == stops
    assert seen[-1] == stops[-3]


def test_keys_typed_ahead_land_on_the_right_stop_and_a_click_on_a_tab_still_switches():
    """Five `n` in one burst (no pause between keys) must end five stops on, showing that stop's pane;
    late focus messages from the intermediate stops once pulled the view back.  Then a mouse click
    on the IR tab switches the stage."""
    app = open_app()
    stops = [(graph_key(s), s["stage"]) for s in app.session.stops]
    seen = {}

    async def steps(pilot):
        await pilot.press(*"nnnnnnn")
        await wait_for(pilot, lambda: (app.view.graph, app.view.stage) == stops[7], timeout=10,
                       seen=lambda: (app.view.graph, app.view.stage))
        await screen_settled(pilot, app)  # late focus messages of the stops passed would pull the view back
        seen["after_n"] = (app.view.graph, app.view.stage, app.query_one("#panes", TabbedContent).active)
        await pilot.click("#panes Tab#--content-tab-pane-lowering")
        await pilot.pause()
        seen["after_click"] = (app.view.stage, app.query_one("#panes", TabbedContent).active)

    drive(app, steps)
    graph, stage = stops[7]
    assert seen["after_n"] == (graph, stage, f"pane-{stage}")
    assert seen["after_click"] == ("lowering", "pane-lowering")


def test_number_keys_switch_stage_panes_and_stage_bar():
    app = open_app()
    active = {}

    async def steps(pilot):
        for key, stage in zip("1234567", STAGES + ("run",)):
            await pilot.press(key)
            await pilot.pause()
            active[stage] = (app.query_one("#panes", TabbedContent).active, shown_stage(app))

    drive(app, steps)
    for stage, (pane, shown) in active.items():
        assert pane == f"pane-{stage}"
        assert shown == stage  # the one stage the bar draws reversed


def test_each_stage_pane_shows_the_captured_level():
    app = open_app()
    got = {}

    async def steps(pilot):
        for key, stage in zip("123456", STAGES):
            await pilot.press(key)
            await pilot.pause()
            table = app.query_one(f"#table-{stage}", Table)
            code = app.query_one(f"#code-{stage}", CodeView)
            got[stage] = (table.row_count, code.text)

    drive(app, steps)
    assert got["dynamo"][0] >= 10 and "class GraphModule" in got["dynamo"][1]
    assert "AOT forward graph" in got["aot"][1] and "post-grad graph" in got["aot"][1]
    assert got["lowering"][0] >= 5 and "ComputedBuffer" in got["lowering"][1]
    assert "fusion decisions" in got["scheduling"][1]
    assert "ops.load(" in got["loopbody"][1]
    assert "async_compile" in got["codegen"][1] and 'extern "C"' in got["codegen"][1]


def test_selecting_a_kernel_scrolls_to_and_marks_its_source():
    app = open_app()
    result = {}

    async def steps(pilot):
        await pilot.press("6")
        await pilot.pause()
        table = app.query_one("#table-codegen", Table)
        table.focus()
        stop = app.session.stop_for(app.view.graph, "codegen")
        cpp = [i for i, k in enumerate(stop["kernels"]) if k["backend"] == "cpp"]
        table.move_cursor(row=cpp[-1])
        await pilot.pause()
        code = app.query_one("#code-codegen", CodeView)
        name = stop["kernels"][cpp[-1]]["name"]
        from inductor_step.tracer.codeparse import kernel_source_lines
        result["span"] = kernel_source_lines(stop["wrapper"], name)
        result["cursor"] = code.cursor + 1
        result["marks"] = sorted(m + 1 for m in code.marks)
        result["marked"] = [code.lines[i] for i in sorted(code.marks)]
        result["selected"] = app.view.selected
        result["buffers"] = stop["kernels"][cpp[-1]]["buffers"]

    drive(app, steps)
    first, last = result["span"]
    # the kernel is scrolled into view with the selected buffer's loads/stores marked inside it
    assert first <= result["cursor"] <= last
    assert result["marks"] and all(first <= m <= last for m in result["marks"])
    assert result["selected"] in result["buffers"]
    assert all("ptr" in line for line in result["marked"])


def test_search_moves_the_cursor_to_a_match():
    app = open_app()
    result = {}

    async def steps(pilot):
        await pilot.press("6")
        await pilot.pause()
        app.query_one("#code-codegen", CodeView).focus()
        await pilot.press("slash")
        for ch in "def call":
            await pilot.press(ch if ch != " " else "space")
        await pilot.press("enter")
        await pilot.pause()
        code = app.query_one("#code-codegen", CodeView)
        result["line"] = code.lines[code.cursor]
        await pilot.press("escape")
        result["focused"] = app.focused

    drive(app, steps)
    assert "def call" in result["line"]
    assert isinstance(result["focused"], CodeView)


def test_graph_picker_lists_graphs_by_compile_id_and_kind():
    app = open_app()
    result = {}

    async def steps(pilot):
        ol = app.query_one("#graphs", OptionList)
        result["options"] = [o.id for o in ol.options]
        await pilot.press("g")
        await pilot.press("down")
        await pilot.press("enter")
        await pilot.pause()
        result["graph"] = app.view.graph

    drive(app, steps)
    assert result["options"] == ["[0/0] forward", "[0/0] backward", "[1/0] inference"]
    assert result["graph"] == "[0/0] backward"


def test_run_pane_shows_recorded_timings_sorted_by_time():
    app = open_app()
    result = {}

    async def steps(pilot):
        await pilot.press("7")
        await pilot.pause()
        table = app.query_one("#table-run", Table)
        median = table.labels.index("median ms [p20-p80]")
        result["times"] = [float(str(table.get_row_at(r)[median]).split()[0]) for r in range(table.row_count)]
        result["text"] = app.query_one("#code-run", CodeView).text

    drive(app, steps)
    assert result["times"] and result["times"] == sorted(result["times"], reverse=True)
    assert "compiled graph" in result["text"] and "eager" in result["text"]


def test_screenshot_key_writes_svg_named_by_compile_id_and_stage(tmp_path):
    app = open_app(screenshots=str(tmp_path))

    async def steps(pilot):
        await pilot.press("3")
        await pilot.press("s")
        await pilot.pause()

    drive(app, steps)
    files = list(tmp_path.glob("*.svg"))
    assert len(files) == 1
    assert "0-0_forward_lowering" in files[0].name
    assert "buf0" in files[0].read_text()


def test_help_lists_keys_and_escape_closes_it():
    app = open_app()
    result = {}

    async def steps(pilot):
        await pilot.press("question_mark")
        await pilot.pause()
        result["screen"] = type(app.screen).__name__
        from rich.console import Console

        console = Console(width=100, record=True, file=open(os.devnull, "w"))
        console.print(app.screen.query_one("Static").content)
        result["text"] = console.export_text()
        await pilot.press("escape")
        await pilot.pause()
        result["after"] = type(app.screen).__name__

    drive(app, steps)
    assert result["screen"] == "HelpScreen"
    for key in ("n / space", "screenshot", "search", "run and time"):
        assert key in result["text"]
    assert result["after"] != "HelpScreen"


def test_codegen_failure_is_shown_in_codegen_with_earlier_stages_kept():
    app = open_app(CODEGEN_ERROR)
    result = {}

    async def steps(pilot):
        await pilot.press("6")
        await pilot.pause()
        result["status"] = str(app.query_one("#status").render())
        result["bar"] = str(app.query_one("#stagebar").render())
        await pilot.press("3")
        await pilot.pause()
        result["lowering_rows"] = app.query_one("#table-lowering", Table).row_count

    drive(app, steps)
    assert "error in [0/0] inference codegen" in result["status"]
    assert "CppCompileError" in result["status"]
    assert "✗codegen" in result["bar"]  # the failed stage keeps its ✗ while it is the one shown
    assert result["lowering_rows"] >= 1


def test_log_pane_shows_the_scripts_output():
    app = open_app()
    result = {}

    async def steps(pilot):
        await pilot.press("l")
        await pilot.pause()
        result["text"] = app.query_one("#code-log", CodeView).text

    drive(app, steps)
    assert "train loss" in result["text"]


# ---------------------------------------------------------------- snapshots (pytest-textual-snapshot)

@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
@pytest.mark.parametrize("keys", [[], ["3"], ["6"], ["7"]], ids=["dynamo", "lowering", "codegen", "run"])
def test_snapshot(snap_compare, size, keys):
    assert snap_compare(open_app(), press=keys, terminal_size=size)


def test_record_screens_saves_one_screenshot_per_stop_without_keys(tmp_path):
    app = StepApp(messages=list(read_session(DEMO)), session_path=DEMO, screenshots=str(tmp_path), record_screens=True)

    async def main():
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: len(list(tmp_path.glob("*.svg"))) >= len(app.session.stops), timeout=60,
                           seen=lambda: sorted(p.name for p in tmp_path.glob("*.svg")))

    asyncio.run(main())
    names = sorted(p.name for p in tmp_path.glob("*.svg"))
    assert len(names) == 18
    for graph in ("0-0_forward", "0-0_backward", "1-0_inference"):
        for stage in STAGES:
            assert any(f"_{graph}_{stage}_" in n for n in names), (graph, stage)


def test_png_keeps_code_indentation(tmp_path):
    import shutil

    from inductor_step.tui.screenshots import svg_to_png

    if shutil.which("rsvg-convert") is None:
        pytest.skip("rsvg-convert is not installed (apt-get install librsvg2-bin): PNG screenshots are skipped")
    app = open_app(screenshots=str(tmp_path))

    async def steps(pilot):
        await pilot.press("6")
        await pilot.press("s")
        await pilot.pause()

    drive(app, steps)
    (svg,) = tmp_path.glob("*.svg")
    pngs = list(tmp_path.glob("*.png"))
    assert len(pngs) == 1 and pngs[0].stat().st_size > 10_000
    # the SVG keeps the indentation as non-breaking spaces; the converter's copy turns them into spaces
    assert "&#160;&#160;&#160;&#160;" in svg.read_text()
    assert svg_to_png(str(svg)) == str(pngs[0])


def test_fx_node_row_marks_its_definition_line_in_dynamo_and_post_grad_code():
    """The table cursor on an FX node marks the line defining it (dynamo: the FX graph; aot: in the
    post-grad section, not the AOT graphs above it)."""
    app = open_app()
    result = {}

    async def steps(pilot):
        for key, stage in (("1", "dynamo"), ("2", "aot")):
            await pilot.press(key)
            await pilot.pause()
            table = app.query_one(f"#table-{stage}", Table)
            table.focus()
            table.move_cursor(row=table.row_count - 2)
            code = app.query_one(f"#code-{stage}", CodeView)
            await wait_for(pilot, lambda: code.cursor in code.marks and code.cursor > 0, timeout=10,
                           seen=lambda: (code.cursor, code.marks))
            stop = app.session.stop_for(app.view.graph, stage)
            nodes = (stop["graph"] if stage == "dynamo" else stop["post_grad"])["nodes"]
            result[stage] = (nodes[table.cursor_row]["name"], code.lines[code.cursor], sorted(code.marks),
                             code.cursor, code.text.split("\n"))

    drive(app, steps)
    for stage in ("dynamo", "aot"):
        name, line, marks, cursor, lines = result[stage]
        assert cursor in marks  # with the selected buffer's other origin nodes (test_origin_marks_ui)
        assert line.strip().startswith(name) and "=" in line, (stage, name, line)
    post_grad = next(i for i, ln in enumerate(result["aot"][4]) if ln.startswith("# ===== post-grad"))
    assert result["aot"][3] > post_grad


def test_code_lines_are_the_split_text_however_they_are_read(monkeypatch):
    """tui.codeview.Lines splits a block at a time: the same lines as str.split, by index, slice,
    iteration, and offsets back and forth."""
    import random

    from inductor_step.tui.codeview import Lines

    rng = random.Random(5)
    for _ in range(200):
        monkeypatch.setattr(Lines, "BLOCK", rng.choice([1, 3, 16, 1 << 16]))
        text = "\n".join("".join(rng.choice("ab \t") for _ in range(rng.randint(0, 9)))
                         for _ in range(rng.choice([0, 1, 2, 40, 500])))
        text += rng.choice(["", "\n", "\n\n"])
        ref, lines = text.split("\n"), Lines(text)
        assert len(lines) == len(ref) and list(lines) == ref and lines[-1] == ref[-1] and lines[1:5] == ref[1:5]
        for i in rng.sample(range(len(ref)), min(10, len(ref))):
            assert lines[i] == ref[i]
            off = sum(len(x) + 1 for x in ref[:i])
            assert lines.offset(i) == off and lines.line_at(off) == i == lines.line_at(off + len(ref[i]))
        assert lines.head_width() == max(map(len, ref[:20000]))


def test_code_search_finds_what_a_per_line_regex_finds():
    import random
    import re

    from inductor_step.tui.codeview import Lines

    rng = random.Random(7)
    words = ["add", "add_1", "add_10", "x", "buf1", "é1", "_t", "= ", ": ", "(", " ", "\t", ".", "=", "\r"]
    view = CodeView()  # not mounted: its lines are set directly
    for _ in range(300):
        lines = ["".join(rng.choice(words) for _ in range(rng.randint(0, 6))) for _ in range(rng.randint(1, 30))]
        view.lines = Lines("\n".join(lines))
        start = rng.randrange(len(lines) + 1)
        for name in ("add", "add_1", "x", "é1", "_t"):
            pat = re.compile(rf"^\s*{re.escape(name)}(\s*[:=]|\b.*=)")
            want = next((i for i in range(start, len(lines)) if pat.match(lines[i])), None)
            got = view.search_line(re.compile(rf"[^\S\n]*{re.escape(name)}([^\S\n]*[:=]|\b.*=)"), start,
                                   line_start=True)
            assert got == want, (lines, start, name)
            want = next((i for i in range(start, len(lines)) if re.search(rf"\b{re.escape(name)}\b", lines[i])), None)
            assert view.search_word(name, start) == want, (lines, start, name)


def test_commented_guards_match_the_per_line_form():
    import random

    from inductor_step.session.text import commented as _commented

    rng = random.Random(3)
    for text in ["", "\n", "a", "a\n", "a\n\n", "\na", "a\r\nb", "x\x0cy\n", "é\u2028b\n"] + \
            ["".join(rng.choice("ab\n\r\x0c ") for _ in range(rng.randint(0, 12))) for _ in range(3000)]:
        assert _commented(text) == "\n".join("# " + x for x in text.splitlines()), repr(text)


def test_table_key_index_is_built_on_first_lookup():
    app = open_app()
    got = {}

    async def steps(pilot):
        table = app.query_one("#table-lowering", Table)
        table.set_rows(["a", "b", "c"], lambda i: ("abc"[i],))
        got["c"] = table.get_row_index("c")
        table.set_rows(["x", "y"], lambda i: ("xy"[i],))  # a new fill replaces the index
        got["y"] = table.get_row_index("y")
        with pytest.raises(KeyError):
            table.get_row_index("c")
        table.set_rows(["a", "a"], lambda i: ("a",))
        with pytest.raises(ValueError):
            table.get_row_index("a")
        got["done"] = True

    drive(app, steps)
    assert got == {"c": 2, "y": 1, "done": True}


def test_long_lines_render_as_the_general_path_would():
    """Lines over 2,000 characters are cut to the visible cells directly; the result must be the
    strip the general path (build the whole line, crop it) gives, wherever it is scrolled."""
    from rich.segment import Segment
    from rich.style import Style

    from inductor_step.tui.codeview import _body_segments

    app = open_app()
    got = []

    async def steps(pilot):
        await pilot.press("6")
        await pilot.pause()
        view = app.query_one("#code-codegen", CodeView)
        long_line = "    def f(" + ", ".join(f"arg{i}: 'f32[8, 16]'" for i in range(400)) + "):\t# end"
        view.set_code("x = 1\n" + long_line + "\ny = 2", "python", cursor_line=2)
        await pilot.pause()
        _, width, rich_style, focused = (None, view.scrollable_content_region.width, view.rich_style, view.has_focus)
        for scroll_x in (0, 7, 5000, len(long_line) - 10, len(long_line) + 50):
            view.scroll_to(x=scroll_x, y=0, animate=False, immediate=True)
            for y, i in ((0, 0), (1, 1)):
                strip = view.render_line(y)
                bg = Style(bgcolor="#3a3d5c" if focused else "#2c2e40") if i == view.cursor else None
                fill = rich_style + bg if bg else rich_style
                segs = [Segment(f"{i + 1:>{view._gutter - 1}} "), *_body_segments("python", view.lines[i])]
                sx = view.scroll_offset.x
                want = Strip(list(Segment.apply_style(segs, style=rich_style, post_style=bg))).simplify() \
                    .crop_extend(sx, sx + width, fill)
                got.append((scroll_x, i, list(strip), list(want)))

    from textual.strip import Strip

    drive(app, steps, size=(160, 50))
    assert len(got) == 10
    for scroll_x, i, strip, want in got:
        assert "".join(s.text for s in strip) == "".join(s.text for s in want), (scroll_x, i)
        assert [(s.text, s.style) for s in strip if s.text] == [(s.text, s.style) for s in want if s.text], (scroll_x, i)


def test_preparing_the_next_stop_ahead_changes_nothing_shown():
    """The app prepares the next stop (and the linked view) while idle; stepping with n, switching
    to the linked view and back must show exactly what it shows without that preparation."""

    def walk(prepare: bool) -> list:
        app = open_app()
        if not prepare:
            app.preparer.DELAY_S = 3600.0
        seen = []

        async def steps(pilot):
            for key in ["n"] * 5 + ["8", "6", "n", "n"]:
                if key == "n":
                    nxt = app.session.stops[app.current_index() + 1]
                    want = (graph_key(nxt), nxt["stage"])
                    if prepare:  # the next stop's rows are made ready ahead, before the n (or this times out)
                        await wait_for(pilot, lambda: ("rows", nxt["stage"], id(nxt)) in app.session.cache,
                                       timeout=10, seen=lambda: want)
                else:
                    want = (app.view.graph, {"8": "linked", "6": "codegen"}[key])
                await pilot.press(key)
                await wait_for(pilot, lambda: (app.view.graph, app.view.stage) == want, timeout=10,
                               seen=lambda: (app.view.graph, app.view.stage))
                stage = app.view.stage
                views = ["code-linkinfo", "code-linkkernel"] if stage == "linked" else [f"code-{stage}"]
                table = app.query_one(f"#table-{stage}", Table)
                seen.append((app.view.graph, stage, table.row_count, table.cursor_row, table.column_widths,
                             [str(c) for c in table.get_row_at(table.cursor_row)] if table.row_count else None,
                             [(app.query_one(f"#{v}", CodeView).text, app.query_one(f"#{v}", CodeView).cursor,
                               sorted(app.query_one(f"#{v}", CodeView).marks)) for v in views],
                             app.view.selected))

        drive(app, steps, size=(160, 50))
        return seen

    prepared = walk(True)
    plain = walk(False)
    assert len(prepared) == 9 and prepared == plain


def test_a_stop_shows_its_first_rows_details_without_waiting_for_the_cursor_delay(monkeypatch):
    """n fills the pane with its cursor row's details at once: in pane 2 the code pane on the FX node's
    line, marked; one n on, in pane 3, the first buffer selected and named in the status line.  They came
    DETAIL_DELAY_S later, in a second frame where the code pane jumped (here the delay is made an hour long:
    nothing may wait for it)."""
    app = open_app()
    monkeypatch.setattr(StagePane, "DETAIL_DELAY_S", 3600.0)
    got = {}

    async def steps(pilot):
        await pilot.press("n")  # dynamo -> aot
        await pilot.pause()
        table = app.query_one("#table-aot", Table)
        code = app.query_one("#code-aot", CodeView)
        name = app.session.stop_for(app.view.graph, "aot")["post_grad"]["nodes"][table.cursor_row]["name"]
        got.update(stage=app.view.stage, name=name, line=code.lines[code.cursor], marks=sorted(code.marks),
                   cursor=code.cursor)
        await pilot.press("n")  # aot -> lowering, whose first row selects its buffer
        await pilot.pause()
        got.update(sel=app.view.selected, status=str(app.query_one("#status").render()))

    drive(app, steps)
    assert got["stage"] == "aot"
    assert got["name"] in got["line"] and got["marks"] == [got["cursor"]]
    assert got["sel"] and f"selected {got['sel']}" in got["status"], (got["sel"], got["status"])


def test_the_tab_underline_moves_with_the_pane_not_a_frame_later():
    """The underline under the stage tabs is placed when the pane switches (Textual's Tabs moves it
    after the next refresh: a second frame)."""
    app = open_app()
    got = {}

    async def steps(pilot):
        app.action_stage("lowering")  # no refresh in between
        tab = app.query_one("#--content-tab-pane-lowering")
        under = app.query_one("#panes Underline")  # Textual's widget under the tabs, queried by its type name
        got["now"] = (under.highlight_start, under.highlight_end)
        got["tab"] = tab.virtual_region.shrink(tab.styles.gutter).column_span
        await pilot.pause()
        got["later"] = (under.highlight_start, under.highlight_end)

    drive(app, steps)
    assert got["now"] == got["tab"] == got["later"]


def test_a_pane_shown_the_first_time_draws_its_cursor_lines_in_its_first_frame():
    """A pane never shown has no size until it is laid out; scrolling its views to the cursor then
    did nothing, so its first frame showed the top of the table and of the code, and the code
    jumped to the cursor a frame later (the table stayed at the top).  Recorded: what each view
    draws the first time, after the linked view selects the last buffer and 6 shows its kernel."""
    app = open_app()
    first: dict[str, tuple] = {}

    def spy(view):
        orig = view.render_lines

        def render_lines(crop):
            strips = orig(crop)
            if view.id not in first:
                first[view.id] = (view.scroll_offset.y, view.scrollable_content_region.height,
                                  view.cursor if isinstance(view, CodeView) else view.cursor_row)
            return strips
        view.render_lines = render_lines

    async def steps(pilot):
        await pilot.press("8")
        await pilot.pause()
        table = app.query_one("#table-linked", Table)
        await pilot.press("end")  # the last buffer of the linked table
        await wait_for(pilot, lambda: table.cursor_row == table.row_count - 1, timeout=10)
        await screen_settled(pilot, app)
        for view in (app.query_one("#table-codegen", Table), app.query_one("#code-codegen", CodeView)):
            spy(view)
        await pilot.press("6")
        await pilot.pause()

    drive(app, steps, size=(80, 24))
    for vid, (top, height, cursor) in first.items():
        header = 1 if vid.startswith("table-") else 0
        assert top <= cursor < top + height - header, (vid, top, height, cursor)
    code_top, _, code_cursor = first["code-codegen"]
    assert code_cursor > 20 and code_top > 0  # the kernel is far down the wrapper


def test_moving_a_cursor_repaints_what_a_full_repaint_shows():
    """A cursor move repaints only the two rows (lines) it changes when nothing scrolls; what is on
    screen after a few moves, down and up, in a table and in a code pane, must be what repainting
    everything shows."""
    app = open_app()
    frames = []

    def screen_text():
        return app.export_screenshot(simplify=False)  # every cell's text and style

    async def steps(pilot):
        await pilot.press("3")
        await wait_for(pilot, lambda: app.view.stage == "lowering", timeout=10)
        for keys in (["down", "down", "down", "up"], ["tab", "down", "down", "pagedown", "up"]):
            await pilot.press(*keys)
            await screen_settled(pilot, app)
            shown = screen_text()
            for w in app.query("Table, CodeView"):
                w.refresh()
            await pilot.pause()
            frames.append((shown, screen_text()))

    drive(app, steps, size=(100, 30))
    for shown, full in frames:
        assert shown == full
    assert frames[0][0] != frames[1][0]


@pytest.mark.parametrize("path", [DEMO, os.path.join("tests", "fixtures", "gpu_attention.jsonl")], ids=["cpu", "gpu"])
def test_run_pane_at_80x24_shows_the_times_beside_cut_names_and_the_full_name_below(path):
    """Generated kernel names are 40-60 cells: at 80 columns the run table showed the name column
    alone.  The names are now cut ("…") so the median, share, GB/s and % of peak fit beside them,
    and the detail pane below names the selected kernel in full, with its numbers."""
    app = open_app(path)
    got = {}

    def screen() -> list[str]:
        return screen_lines(app)

    async def steps(pilot):
        await pilot.press("7")
        await wait_for(pilot, lambda: app.view.stage == "run", timeout=10)
        await screen_settled(pilot, app)
        table = app.query_one("#table-run", Table)
        code = app.query_one("#code-run", CodeView)
        names = [k["name"] for k in sorted(app.session.runs[app.view.graph]["kernels"], key=lambda k: -k["median_ms"])]
        got["names"] = names
        got["screen"] = screen()
        got["first"] = code.text
        await pilot.press("down")
        await wait_for(pilot, lambda: code.text != got["first"], timeout=10)
        got["second"] = code.text
        got["rows"] = table.row_count

    drive(app, steps, size=(80, 24))
    top = next(i for i, line in enumerate(got["screen"]) if "kernel" in line and "median" in line)
    for label in ("median ms", "share", "GB/s", "% peak BW"):
        assert label in got["screen"][top], (label, got["screen"][top])
    border = next(i for i, line in enumerate(got["screen"]) if i > top and line.startswith("▔"))
    rows = [line for line in got["screen"][top + 1:border] if line.strip(" ▉▊▋▌▍▎▏")]
    assert len(rows) >= min(got["rows"], 4) and all("%" in line for line in rows)  # each row's share
    assert any("…" in line for line in rows)  # long names cut in the table
    assert not any(n in line for n in got["names"] if len(n) > 34 for line in rows)
    assert got["first"].startswith(f"# {got['names'][0]}") and "median" in got["first"].split("\n")[1]
    assert got["rows"] > 1 and got["second"].startswith(f"# {got['names'][1]}")
    assert "compiled graph" in got["second"]  # the graph's summary follows


def test_run_pane_warns_when_the_graph_timing_rounds_never_agreed():
    """On CUDA the compiled graph is timed in do_bench rounds until five agree within 10%.  Where
    they never do (the GPU box's slow spells), the run pane says the graph time is not reliable
    instead of showing it as settled.  The rounds below are the ones ResNet-18's training backward
    recorded on an H200 during such a spell (3.0 ms, then 5.0 ms for eight rounds)."""
    spell = [3.012, 3.017, 3.014, 3.011, 3.012, 3.012, 3.011, 3.012, 3.009, 5.033, 4.475, 5.019, 5.016, 4.946,
             5.412, 5.608, 4.925, 3.009, 3.003, 3.367]
    texts = {}
    for stable in (True, False):
        messages = list(read_session(os.path.join("tests", "fixtures", "gpu_attention.jsonl")))
        for m in messages:
            if m.get("type") == "run":
                m["graph_rounds"] = ({"compiled_rounds_ms": [3.012, 3.017, 3.014, 3.011, 3.012], "rounds_stable": True}
                                     if stable else {"compiled_rounds_ms": spell, "rounds_stable": False})
        app = StepApp(messages=messages, session_path="gpu_attention.jsonl", screenshots="screenshots")

        async def steps(pilot, stable=stable):
            await pilot.press("7")
            await wait_for(pilot, lambda: app.view.stage == "run", timeout=10)
            texts[stable] = app.query_one("#code-run", CodeView).text

        drive(app, steps)
    assert "graph time from 5 do_bench rounds" in texts[True] and "not reliable" not in texts[True]
    assert "timing rounds never agreed (3.0030 to 5.6080 ms)" in texts[False], texts[False]
    assert "press r to time again" in texts[False]


def test_run_pane_before_any_timing_shows_only_this_devices_columns():
    """Before ``r`` a CPU session's run pane showed the CUDA-only columns (in graph ms, in script
    ms) over its empty table; it now shows the columns the CPU table will have."""
    messages = [m for m in read_session(DEMO) if m.get("type") != "run"]
    app = StepApp(messages=messages, session_path=DEMO, screenshots="screenshots")
    got = {}

    async def steps(pilot):
        await pilot.press("7")
        await wait_for(pilot, lambda: app.view.stage == "run", timeout=10)
        got["labels"] = list(app.query_one("#table-run", Table).labels)
        got["text"] = app.query_one("#code-run", CodeView).text

    drive(app, steps)
    assert "median ms [p20-p80]" in got["labels"] and "share" in got["labels"]
    assert "in graph ms" not in got["labels"] and "in script ms" not in got["labels"], got["labels"]
    assert got["text"] == "# this recorded session has no timing for this graph", got["text"]


def _drawn_line(widget, y: int) -> str:
    """The text of line ``y`` of ``widget`` as drawn on screen (cut to the widget's width)."""
    return "".join(seg.text for seg in widget.render_line(y))


def test_every_pane_fits_the_screen_beside_the_graph_list():
    """With several graphs the graph list takes the left 26 columns.  The panes beside it kept
    the whole screen's width, so their right 26 columns (the FX tables' user line, the ends of
    code lines, the run table's last columns) were drawn off screen."""
    app = open_app()
    outside = []

    async def each_pane(pilot):
        graphs = app.query_one("#graphs", OptionList)
        assert graphs.display and graphs.region.width > 0, "the demo's three graphs show the graph list"
        for key, stage in zip("1234567", STAGES + ("run",)):
            await pilot.press(key)
            await pilot.pause()
            for widget in (app.query_one(f"#table-{stage}", Table), app.query_one(f"#code-{stage}", CodeView)):
                if widget.region.right > app.size.width or widget.region.x < graphs.region.right:
                    outside.append((stage, widget.id, widget.region, app.size.width))

    drive(app, each_pane, size=(160, 50))
    assert not outside, outside


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
def test_fx_table_cuts_long_node_names_before_shape_dtype_and_user_line(size):
    """Dynamo's node names and targets (39 cells in the demo, 80 in a Hugging Face model) give up
    cells so that shape, dtype and the user's line stay on screen; the user's line is shown
    relative to the script's directory (the code pane keeps the full path)."""
    app = open_app()
    lines = {}

    async def look(pilot):
        await pilot.press("1")
        await pilot.pause()
        t = app.query_one("#table-dynamo", Table)
        lines["header"] = _drawn_line(t, 0)
        lines["row"] = _drawn_line(t, 1)

    drive(app, look, size=size)
    header, row = lines["header"], lines["row"]
    assert "shape" in header and "dtype" in header, header
    assert "[64]" in row and ("float32" in row or " f32 " in row), row  # (f32: FX's own short name, when narrow)
    # the node name and target were cut (Dynamo's module-path parts left out, as in the code below; then the
    # name's end kept) ...
    assert "norm_weig" in row and "l_model_modules" not in row, row
    node_w = header.index(" op ") + 1 - header.index("node")
    target_w = header.index("shape") - header.index("target")
    assert abs(node_w - target_w) <= 1, (header, node_w, target_w)  # ... evenly (both are 39 cells in full)
    if size[0] >= 120:  # all of it, inside the vertical scrollbar
        assert header.rstrip().endswith("user line") and row.rstrip().endswith("train_step.py:20"), (header, row)
        assert "/work" not in row, row


def test_fx_table_shows_torchs_own_line_beside_the_users():
    """A post-grad node whose innermost frame is inside torch (``F.pad``'s ``constant_pad_nd`` in
    ``torch/nn/functional.py``): pane 2's user-line column shows the user's line, then torch's."""
    messages = list(read_session(DEMO))
    aot = next(m for m in messages if m.get("type") == "stop" and m["stage"] == "aot")
    node = aot["post_grad"]["nodes"][8]  # var_mean, the first call_function
    node["torch_line"] = "/venv/lib/python3.11/site-packages/torch/nn/functional.py:2910"
    app = StepApp(messages=messages, session_path=DEMO, screenshots="screenshots")
    rows = {}

    async def look(pilot):
        await pilot.press("2")
        await pilot.pause()
        t = app.query_one("#table-aot", Table)
        rows.update({y: _drawn_line(t, y) for y in range(1, 12)})

    drive(app, look, size=(200, 50))
    row = next(r for r in rows.values() if "var_mean" in r)
    # one long cell among short ones is cut (Table.measure): both ends keep their line, the user's first
    cell = row.rstrip().split("  ")[-1]
    user, arrow, torch_side = cell.partition(" -> ")
    assert arrow and user.endswith(":20") and torch_side.endswith(":2910"), row
    assert not any("2910" in r for r in rows.values() if "var_mean" not in r)
