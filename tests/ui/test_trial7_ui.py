"""What a new user met at 80x24 driving nanoGPT, BERT and a flex-attention block, through the keys they pressed:
pane 6's kernel names pushed the buffers each kernel computes off screen, ``t`` called a C++ kernel's source "Triton
source", and pane 1 cut every weight's name to ``…weight_``."""

from __future__ import annotations

import html
import os
import re

from conftest import DEMO, screen_lines, screen_settled

GPU_NANOGPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "gpu_nanogpt.jsonl")
#: a flex-attention block recompiled at another length ([0/1]), the pair timed round by round: r in the diff, live
FLEX_PAIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "flex_recompile_pair.jsonl")
#: tests/scripts/expand_index_train.py recorded with --headless --run: its backward's timing failed
TIMING_FAILED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "timing_failed_expand.jsonl")


def test_pane_6_at_80_columns_shows_each_kernels_buffers(app_driver):
    """g, Down, Enter (the backward), 6: every kernel row on screen ends with the buffers it computes, whole
    (``buf8, buf9``), the kernel's name cut in the middle where it is too long for the rest to fit."""
    shown: list[str] = []
    kernels: list = []

    async def steps(app, pilot):
        for key in ("g", "down", "enter", "6"):
            await pilot.press(key)
            await screen_settled(pilot, app)
        assert "backward" in screen_lines(app)[1]
        kernels.extend(app.pane("codegen").data().kernels)
        shown.extend(screen_lines(app)[4:11])

    app_driver(steps, size=(80, 24), path=DEMO)
    assert "buffers" in shown[0], shown
    rows = [r for r in shown[1:] if re.match(r"▌ \S", r)]
    assert len(rows) >= 5, shown
    for row, k in zip(rows, kernels):
        assert re.search(rf"\s{re.escape(', '.join(k.buffers))}\s*(▄▄|▇▇|\s)*$", row), (row, k.name, k.buffers)


def test_t_back_on_a_cpp_kernel_says_cpp_source(app_driver):
    """6, then t twice on the demo's first kernel (C++): x86 asm, then back to its source, which the status line
    calls C++ source (it said "Triton source" for a C++ kernel)."""
    said: list[str] = []

    async def steps(app, pilot):
        await pilot.press("6")
        await screen_settled(pilot, app)
        assert "cpp_fused_native_layer_norm_0" in screen_lines(app)[5]
        for _ in range(2):
            await pilot.press("t")
            await screen_settled(pilot, app)
            said.append(screen_lines(app)[-2])

    app_driver(steps, size=(120, 40), path=DEMO)
    assert "x86 asm" in said[0], said
    assert "cpp_fused_native_layer_norm_0: C++ source" in said[1] and "Triton" not in said[1], said


def test_pane_1_at_80_columns_no_weight_reads_as_its_last_part_alone(app_driver):
    """1 on nanoGPT's forward, paging down the inputs: no node or target reads ``…weight_`` or ``…bias_`` alone, the
    same on every parameter's row (four rows of ``…weight_``); a cut name keeps a piece of the part before it."""
    from inductor_step.tui.table import Table  # noqa: PLC0415

    cells: list[str] = []

    async def steps(app, pilot):
        await pilot.press("1")
        await screen_settled(pilot, app)
        for _ in range(3):
            for row in screen_lines(app)[5:11]:
                cells.extend(re.split(r"\s{2,}", row.strip("▌ ▆▇▄▅▃▂▁"))[:3:2])
            await pilot.press("pagedown")
            await screen_settled(pilot, app)
        assert app.query_one("#table-dynamo", Table).cursor_row > 10

    app_driver(steps, size=(80, 24), path=GPU_NANOGPT)
    # a parameter's name whole (``…norm_weight_``) or cut keeping its layer and the parameter's first letters
    # (``…wte_weig…``, ``…c_attn_b…``)
    weights = [c for c in cells if re.search(r"_(?:weight|bias)_$|_(?:w|we|wei|weig|weigh|weight|b|bi|bia|bias)…$", c)]
    assert len(weights) >= 20, cells
    assert not [c for c in weights if c in ("…weight_", "…bias_")], weights
    assert len(set(weights)) >= 6, weights


def test_title_at_80_columns_names_the_session_or_leaves_it_out(app_driver):
    """At 80x24 the title bar ends with the session file's name cut in the middle (``….jsonl``), never with the
    word "session" alone, which the screen's edge left naming nothing; at 200 columns the whole path."""
    titles: list[str] = []

    async def steps(app, pilot):
        await screen_settled(pilot, app)
        titles.append(screen_lines(app)[0].rstrip())
        await pilot.resize_terminal(200, 50)
        await screen_settled(pilot, app)
        titles.append(screen_lines(app)[0].rstrip())

    app_driver(steps, size=(80, 24), path=DEMO)
    assert not titles[0].endswith("session"), titles
    assert titles[0].endswith(".jsonl") and "…" in titles[0], titles
    assert titles[1].endswith(f"session {DEMO}"), titles


def test_diff_timings_level_after_r_does_not_ask_for_r_again(app_driver):
    """A recompile of a flex-attention block timed round by round (r in the diff, recorded live): g, the
    ``[0/1]``, Enter, d, n down to level 7.  The top line gives both graphs' times; level 7, which compares each
    kernel's own time, says the kernels were not timed and where the graph times are, not "A was not timed (r in
    the app ...)", which sent the person back to the r they had just pressed."""
    seen: list[str] = []

    async def steps(app, pilot):
        for key in ("g", "down", "down", "down", "enter", "d"):
            await pilot.press(key)
            await screen_settled(pilot, app)
        seen.append("\n".join(screen_lines(app)))
        for _ in range(6):
            await pilot.press("n")
            await screen_settled(pilot, app)
        seen.append("\n".join(screen_lines(app)))

    app_driver(steps, size=(200, 50), path=FLEX_PAIR)
    assert "diff A [0/0] inference  ->  B [0/1] inference" in seen[0], seen[0]
    assert re.search(r"timed round by round in one process .*: A [\d.]+ ms, B [\d.]+ ms", seen[0]), seen[0]
    assert "7 timings:" in seen[1], seen[1]
    assert "r in the app" not in seen[1], seen[1]
    assert "A's kernels were not timed (pane 7, r); the two graphs' times, round by round, are at the top" in seen[1]


def test_s_on_the_diff_names_the_file_for_the_two_graphs_it_compares(app_driver, tmp_path):
    """g, the ``[0/1]``, Enter, d, s: the screenshot's file is named ``diff_0-0_inference_vs_0-1_inference``, what
    the screen shows, not ``0-0_inference_dynamo`` (a graph and pane the diff covers up); the SVG holds the diff."""

    async def steps(app, pilot):
        for key in ("g", "down", "down", "down", "enter", "d", "s"):
            await pilot.press(key)
            await screen_settled(pilot, app)

    app_driver(steps, size=(120, 40), path=FLEX_PAIR, screenshots=str(tmp_path))
    svgs = [p.name for p in tmp_path.glob("*.svg")]
    assert len(svgs) == 1 and re.fullmatch(r"flex_recompile_pair_diff_0-0_inference_vs_0-1_inference_\d{6}\.svg",
                                           svgs[0]), svgs
    text = html.unescape((tmp_path / svgs[0]).read_text()).replace("\xa0", " ")
    assert "diff" in text and "why it recompiled" in text, text[:300]


def test_pane_7_at_80_columns_shows_a_failed_timings_whole_error(app_driver):
    """A graph whose timing failed (an embedding backward's expanded index, tests/scripts/expand_index_train.py,
    recorded with --headless --run): g, the backward, Enter, 7 at 80x24.  The error reads whole on screen, wrapped,
    down to "Please clone() the tensor before performing the operation." (it was cut at the 80th column)."""
    lines: list[str] = []

    async def steps(app, pilot):
        for key in ("g", "down", "enter", "7"):
            await pilot.press(key)
            await screen_settled(pilot, app)
        lines.extend(screen_lines(app))

    app_driver(steps, size=(80, 24), path=TIMING_FAILED)
    assert "backward" in lines[1] and "✗run" in lines[1], lines[1]
    said = " ".join(re.sub(r"^\s*\d+ #\s*", "", ln).strip(" ▁▂▃▄▅▆▇") for ln in lines[12:18] if re.match(r"^\s*\d+ #", ln))
    assert said.startswith("timing failed: RuntimeError: unsupported operation"), lines[12:18]
    assert "Please clone() the tensor before performing the operation." in said, lines[12:18]
