"""People's flows: one selection drives every pane, whatever the order of the keys.

Each test presses the keys a person presses, in their order, on the recorded demo session, and
reads what the person sees: the highlighted row of the pane they switched to, the status line,
and the lines marked in the code pane.  The expected rows come from the session's own links (what
the tracer computed), so these check that the panes follow them, not how the app stores them.
"""

from __future__ import annotations

import asyncio
import os
import re

import pytest

from inductor_step.session.format import read_session
from inductor_step.tui.app import StepApp

from conftest import wait_for

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(HERE, "fixtures", "demo.jsonl")
#: the same demo recorded by today's tracer (format inductor-step/2: packed lines, kernel_spans, per-call links)
DEMO_V2 = os.path.join(HERE, "fixtures", "demo_v2.jsonl")

#: the pane keys a person presses, and the stage each shows
PANES = {"1": "dynamo", "2": "aot", "3": "lowering", "4": "scheduling", "5": "loopbody", "6": "codegen",
         "7": "run", "8": "linked"}
KEY_OF = {stage: key for key, stage in PANES.items()}


def _links(app: StepApp, graph: str = "[0/0] forward") -> dict:
    return app.session.links(graph)


def shown_row(app: StepApp, stage: str) -> tuple[str, ...]:
    """The highlighted row of ``stage``'s table, as its cells read on screen."""
    table = app.query_one(f"#table-{stage}")
    assert table.row_count, f"the {stage} table is empty"
    return tuple(str(c) for c in table.get_row_at(table.cursor_row))


def status(app: StepApp) -> str:
    return str(app.query_one("#status").content)


def expected_rows(app: StepApp, buf: str) -> dict[str, set[str]]:
    """For buffer ``buf``: the first cell each pane's highlighted row may show (from the links)."""
    b = _links(app)["buffers"][buf]
    return {
        "dynamo": set(b["dynamo_nodes"]),
        "aot": set(b["fx_nodes"]),
        "lowering": {buf},
        "scheduling": {b["fused_node"]},
        "loopbody": {b["scheduler_node"]},
        "codegen": {b["kernels"][0]},
        "run": {b["kernels"][0]},
        "linked": {buf},
    }


def kernel_marks(app: StepApp, buf: str) -> set[int]:
    """The wrapper lines (0-based) pane 6 should mark for ``buf``: its lines in its kernel (found by
    searching the wrapper here, not through the spans the app uses)."""
    stop = app.session.stop_for("[0/0] forward", "codegen")
    b = _links(app)["buffers"][buf]
    kernel = b["kernels"][0]
    lines = stop["wrapper"].split("\n")
    k = next(k for k in stop["kernels"] if k["name"] == kernel)
    first = k["source"].split("\n", 1)[0]
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"{kernel} = async_compile"))
    body = next(i for i in range(start, len(lines)) if lines[i] == first)
    return {body + i - 1 for a, e in b["kernel_lines"].get(kernel) or [] for i in range(a, e + 1)}


async def press(pilot, *keys: str) -> None:
    for k in keys:
        await pilot.press(k)
        await pilot.pause()


async def to_codegen_of_forward(pilot) -> None:
    """n x5 from the first stop: [0/0] forward codegen, every stage of the graph drawn on the way."""
    await press(pilot, *"nnnnn")


async def move_to_row(app: StepApp, pilot, stage: str, first_cell: str) -> None:
    """Press up/down in ``stage``'s table until the row whose first cell is ``first_cell``
    (the rows a person would pass over on the way)."""
    table = app.query_one(f"#table-{stage}")
    target = next(i for i in range(table.row_count) if str(table.get_row_at(i)[0]).split(" (call")[0] == first_cell)
    for _ in range(table.row_count):  # bounded: a cursor that cannot reach the row fails, never hangs
        if table.cursor_row == target:
            break
        await press(pilot, "down" if table.cursor_row < target else "up")
    assert table.cursor_row == target, (stage, first_cell, table.cursor_row, target)


def check_every_pane(app: StepApp, seen: dict, buf: str, where: str) -> None:
    want = expected_rows(app, buf)
    for stage, cells in seen.items():
        first = cells[0].split(" (call")[0]
        assert first in want[stage], f"{where}: pane {KEY_OF[stage]} ({stage}) shows {first!r}, not {buf}'s {sorted(want[stage])}"


@pytest.mark.parametrize("path", [DEMO, DEMO_V2], ids=["format-1", "format-2"])
def test_select_in_linked_view_after_stepping_then_panes_3_to_6_follow(app_driver, path):
    """A person's flow: n x5, 8, down x6 (buf6), then 4, 6, 3, 5 (on a session recorded before
    the tracer shipped kernel spans, and on one recorded now)."""
    seen: dict = {}

    async def steps(app, pilot):
        await to_codegen_of_forward(pilot)
        assert (app.view.graph, app.view.stage) == ("[0/0] forward", "codegen")
        await press(pilot, "8", *["down"] * 6)
        assert "selected buf6" in status(app)
        for key in "4635":
            await press(pilot, key)
            seen[PANES[key]] = shown_row(app, PANES[key])
            assert "buf6" in status(app)
        await press(pilot, "6")
        seen["marks"] = set(app.query_one("#code-codegen").marks)
        seen["want_marks"] = kernel_marks(app, "buf6")

    app_driver(steps, path=path)
    assert seen["scheduling"][0] == "op6"
    assert seen["codegen"][0] == "cpp_fused_gelu_1"
    assert seen["lowering"][0] == "buf6"
    assert seen["loopbody"][0] == "op6"
    assert seen["marks"] and seen["marks"] == seen["want_marks"]


def test_select_in_the_ir_pane_then_every_pane_follows(app_driver):
    """3, down to buf6, then every other pane; then back in 3, up to buf5: every pane again."""
    seen: dict = {}

    async def steps(app, pilot):
        await to_codegen_of_forward(pilot)
        for buf in ("buf6", "buf5"):
            await press(pilot, "3")
            await move_to_row(app, pilot, "lowering", buf)
            assert f"selected {buf}" in status(app)
            rows = {}
            for key in "12456788":
                await press(pilot, key)
                rows[PANES[key]] = shown_row(app, PANES[key])
            check_every_pane(app, rows, buf, f"selected {buf} in pane 3")
            seen[buf] = rows

    app_driver(steps)
    assert seen["buf6"]["codegen"][0] == "cpp_fused_gelu_1"
    assert seen["buf5"]["codegen"][0] == "extern_kernels.addmm#0"


# (source pane, the row to select there, the buffer that row selects).  Each row belongs to
# exactly one buffer, so the selection it makes is not a matter of taste.
SOURCES = [
    ("dynamo", "h_1", "buf6"),
    ("aot", "erf", "buf6"),
    ("lowering", "buf6", "buf6"),
    ("scheduling", "op6", "buf6"),
    ("loopbody", "op6", "buf6"),
    ("codegen", "cpp_fused_gelu_1", "buf6"),
    ("run", "cpp_fused_gelu_1", "buf6"),
    ("linked", "buf6", "buf6"),
]
SECOND = {"dynamo": ("linear_1", "buf7"), "aot": ("addmm_1", "buf7"), "lowering": ("buf7", "buf7"),
          "scheduling": ("op7", "buf7"), "loopbody": ("op7", "buf7"), "codegen": ("extern_kernels.addmm#1", "buf7"),
          "run": ("extern_kernels.addmm#1", "buf7"), "linked": ("buf7", "buf7")}


@pytest.mark.parametrize("source,row,buf", SOURCES, ids=[s[0] for s in SOURCES])
def test_a_selection_in_any_pane_moves_every_other_pane(app_driver, source, row, buf):
    """Every pair of panes, both ways: select in the source pane after stepping, switch to each
    other pane (its cursor is on the buffer's row), then select another buffer in the source pane
    and switch again (the panes drawn once already follow too), then come back to the source."""
    problems: list[str] = []

    async def steps(app, pilot):
        await to_codegen_of_forward(pilot)
        await press(pilot, "7")  # the run pane drawn too, before any selection
        for first_cell, want in ((row, buf), SECOND[source]):
            await press(pilot, KEY_OF[source])
            await move_to_row(app, pilot, source, first_cell)
            if f"selected {want}" not in status(app):
                problems.append(f"after choosing {first_cell} in {source}: status {status(app)!r}")
            rows = {}
            for stage in PANES.values():
                if stage == source:
                    continue
                await press(pilot, KEY_OF[stage])
                rows[stage] = shown_row(app, stage)
            try:
                check_every_pane(app, rows, want, f"selected {want} in {source}")
            except AssertionError as e:
                problems.append(str(e))
            await press(pilot, KEY_OF[source])
            back = shown_row(app, source)[0].split(" (call")[0]
            if back != first_cell:
                problems.append(f"back in {source}: the cursor moved to {back!r} from {first_cell!r}")

    app_driver(steps)
    assert not problems, "\n".join(problems)


def test_moving_in_a_pane_after_switching_selects_there_and_the_first_pane_follows(app_driver):
    """Select buf6 in 8, switch to 4, move to op7 there: 8 now shows buf7, and 6 its kernel."""
    seen: dict = {}

    async def steps(app, pilot):
        await to_codegen_of_forward(pilot)
        await press(pilot, "8")
        await move_to_row(app, pilot, "linked", "buf6")
        await press(pilot, "4")
        await move_to_row(app, pilot, "scheduling", "op7")
        seen["status"] = status(app)
        await press(pilot, "8")
        seen["linked"] = shown_row(app, "linked")
        await press(pilot, "6")
        seen["codegen"] = shown_row(app, "codegen")
        seen["marks"] = set(app.query_one("#code-codegen").marks)

    app_driver(steps)
    assert "selected buf7" in seen["status"]
    assert seen["linked"][0] == "buf7"
    assert seen["codegen"][0] == "extern_kernels.addmm#1"
    assert seen["marks"], "pane 6 marks the extern call that computes buf7"


GRAPH_BREAKS = os.path.join(HERE, "fixtures", "graph_breaks.jsonl")


def test_graph_break_reasons_are_on_screen_in_pane_1_the_graph_list_and_the_report(app_driver, tmp_path):
    """A .item() break and a data-dependent branch.  Pane 1 shows Dynamo's reason, its
    hint and the user line for the graph each break ended; the graph list shows them uncut (wrapped);
    REPORT.md lists them."""
    app = StepApp(messages=list(read_session(GRAPH_BREAKS)), session_path=GRAPH_BREAKS)
    seen: dict = {}

    async def main():
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause()
            seen["code0"] = app.query_one("#code-dynamo").text
            await press(pilot, "g", "down")
            seen["code1"] = app.query_one("#code-dynamo").text
            seen["list"] = [str(o.prompt) for o in app.query_one("#graphs").options]

    asyncio.run(main())
    assert "Unsupported Tensor.item() call with capture_scalar_outputs=False" in seen["code0"]
    assert "hint: Set `torch._dynamo.config.capture_scalar_outputs = True`" in seen["code0"]
    assert re.search(r"user code: \S*graph_breaks\.py:6\n", seen["code0"])
    assert "Data-dependent branching" in seen["code1"] and re.search(r"user code: \S*graph_breaks\.py:7\n", seen["code1"])
    assert "Unsupported Tensor.item() call with capture_scalar_outputs=False" in seen["list"][0]
    assert "torch.cond" in seen["list"][1]  # the hint, uncut

    from inductor_step.session.report import build_report

    out = build_report(GRAPH_BREAKS, str(tmp_path / "report"))
    report = open(os.path.join(out, "REPORT.md")).read()
    assert "Unsupported Tensor.item() call with capture_scalar_outputs=False" in report
    assert "Data-dependent branching" in report and "graph_breaks.py:7" in report


def test_f_says_not_fused_for_a_fused_node_and_an_extern_one_and_stops_asking(app_driver):
    """Pressing f on op0_op1_op2_op3_op4, then on op5 (an extern addmm): not fused, and the status
    line no longer asks for a second node."""
    seen: dict = {}

    async def steps(app, pilot):
        await press(pilot, "4")
        await move_to_row(app, pilot, "scheduling", "op0_op1_op2_op3_op4")
        await press(pilot, "f")
        seen["asking"] = status(app)
        await move_to_row(app, pilot, "scheduling", "op5")
        await press(pilot, "f")
        seen["code"] = app.query_one("#code-scheduling").text
        seen["status"] = status(app)

    app_driver(steps)
    assert "fusion pair: op0_op1_op2_op3_op4 and …" in seen["asking"]
    assert seen["code"].startswith("# op0_op1_op2_op3_op4 and op5: not fused")
    assert "and …" not in seen["status"]


def test_at_80x24_the_footer_shows_quit_and_help_and_the_help_scrolls_to_its_end(app_driver):
    """Quit and help are on an 80-column footer; ? opens a help box that End scrolls."""
    seen: dict = {}

    async def steps(app, pilot):
        footer = app.query_one("Footer")
        keys = {str(k.key_display or k.key): k.region for k in footer.query("FooterKey")}
        seen["q"] = keys.get("q")
        seen["help"] = keys.get("?")
        await press(pilot, "question_mark")
        box = app.screen.query_one("#help-box")
        seen["top"] = box.scroll_y
        await press(pilot, "end")
        seen["end"], seen["max"] = box.scroll_y, box.max_scroll_y

    app_driver(steps, size=(80, 24))
    for key in ("q", "help"):
        assert seen[key] is not None and seen[key].right <= 80, f"{key} is off the 80-column footer: {seen[key]}"
    assert seen["max"] > 0 and seen["top"] == 0 and seen["end"] == seen["max"]


def test_search_finds_what_is_on_screen_and_picking_a_graph_gives_the_keys_back_to_the_pane(app_driver):
    """/ omp in pane 6 with the table focused finds the `#pragma omp` line below it; after
    g and Enter, down moves the pane's cursor instead of switching graphs."""
    seen: dict = {}

    async def steps(app, pilot):
        await press(pilot, "6", "slash", *"omp", "enter")
        seen["search"] = status(app)
        await press(pilot, "escape", "g", "down", "enter")
        seen["graph"] = app.view.graph
        row = app.query_one(f"#table-{app.view.stage}").cursor_row
        await press(pilot, "down")
        seen["graph_after"] = app.view.graph
        seen["moved"] = app.query_one(f"#table-{app.view.stage}").cursor_row == row + 1

    app_driver(steps)
    assert "'omp' in the code: line" in seen["search"]
    assert seen["graph"] == seen["graph_after"] == "[0/0] backward"
    assert seen["moved"]


def test_search_pressed_as_the_app_opens_finds_in_the_table():
    """/ and the words typed at once, before the app settled (the search line is mounted after the first
    frame): one search line opens, takes the letters, and Enter moves the table's cursor to the row; Esc
    closes it and gives the keys back to the table."""
    app = StepApp(messages=list(read_session(DEMO)), session_path=DEMO)
    seen: dict = {}

    async def main():
        async with app.run_test(size=(160, 50)) as pilot:
            for k in ("slash", *"mse_loss", "enter"):
                await pilot.press(k)
            await wait_for(pilot, lambda: shown_row(app, "dynamo")[0] == "mse_loss", timeout=30,
                           seen=lambda: shown_row(app, "dynamo"))
            seen["boxes"] = len(app.query("#search"))
            await pilot.press("escape")
            await pilot.pause()
            seen["closed"] = not app.query_one("#search").has_class("shown")
            seen["focused"] = app.focused.id if app.focused else None

    asyncio.run(main())
    assert seen == {"boxes": 1, "closed": True, "focused": "table-dynamo"}, seen


def test_the_too_small_screen_fits_its_words_at_50x14(app_driver):
    """Every line of the too-small message is on a 50x14 screen."""
    seen: dict = {}

    async def steps(app, pilot):
        await pilot.pause()
        static = app.screen.query_one("#toosmall")
        seen["lines"] = str(static.content).splitlines()

    app_driver(steps, size=(50, 14))
    assert seen["lines"] and all(len(line) <= 50 for line in seen["lines"]), seen["lines"]
    assert "q to quit" in seen["lines"][-1]


CODEGEN_ERROR = os.path.join(HERE, "fixtures", "codegen_error.jsonl")


def test_a_codegen_failure_puts_the_compilers_error_at_the_top_of_pane_6(app_driver):
    """The C++ compiler's `error:` line is above the generated code, not at line 75 of a
    1,168-line log."""
    app = StepApp(messages=list(read_session(CODEGEN_ERROR)), session_path=CODEGEN_ERROR)
    seen: dict = {}

    async def main():
        async with app.run_test(size=(120, 40)) as pilot:
            await press(pilot, "6")
            seen["head"] = app.query_one("#code-codegen").text.split("\n")[:6]

    asyncio.run(main())
    assert seen["head"][0].startswith("# codegen failed: InductorError: CppCompileError")
    assert any("error: ‘compile’ was not declared in this scope" in line for line in seen["head"])


def test_results_show_as_a_toast_at_80_columns_and_tab_never_stops_on_the_tab_bar(app_driver, tmp_path):
    """The path s writes is shown whole at 80 columns; tab goes table -> code -> ... and
    never to the tab bar."""
    app = StepApp(messages=list(read_session(DEMO)), session_path=DEMO, screenshots=str(tmp_path))
    seen: dict = {}

    async def main():
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await press(pilot, "s")
            await wait_for(pilot, lambda: app.screen.query("Toast"), timeout=10)
            seen["toasts"] = [str(t.render()) for t in app.screen.query("Toast")]
            focused = []
            for _ in range(4):
                await press(pilot, "tab")
                focused.append(type(app.focused).__name__)
            seen["focused"] = focused

    asyncio.run(main())
    svg = next(tmp_path.glob("*.svg"))
    assert any(f"{svg.name} (+ .png) in {svg.parent}" in t.replace("\n", "") or f"{svg.name} in {svg.parent}"
               in t.replace("\n", "") for t in seen["toasts"]), seen["toasts"]
    assert "Tabs" not in seen["focused"] and "ContentTabs" not in seen["focused"], seen["focused"]
