"""What a new user met driving Hugging Face BERT, timm's resnet10t and nanoGPT (trial 8): ``t``'s asm view stayed on
in the next graph's pane 6, and ``r Run`` stood in the footer of a recorded session, where r cannot run anything."""

from __future__ import annotations

import re

from conftest import DEMO, screen_lines, screen_settled


def test_t_asm_view_ends_when_another_graph_is_shown(app_driver):
    """6, t (x86 asm of the forward's first C++ kernel), then g, Down, Enter (the backward): its kernels show their
    C++ source, not "x86 asm ... not recorded" (t stayed on across graphs); t there turns asm on again."""
    seen: dict[str, str] = {}

    async def steps(app, pilot):
        for key in ("6", "t"):
            await pilot.press(key)
            await screen_settled(pilot, app)
        seen["forward"] = "\n".join(screen_lines(app)[12:])
        for key in ("g", "down", "enter", "6"):
            await pilot.press(key)
            await screen_settled(pilot, app)
        assert "backward" in screen_lines(app)[1]
        seen["backward"] = "\n".join(screen_lines(app)[12:])
        await pilot.press("t")
        await screen_settled(pilot, app)
        seen["backward t"] = "\n".join(screen_lines(app)[12:])

    app_driver(steps, size=(120, 40), path=DEMO)
    assert "x86 asm" in seen["forward"], seen["forward"]
    assert "x86 asm" not in seen["backward"], seen["backward"]
    assert "x86 asm" in seen["backward t"], seen["backward t"]


def test_recorded_session_footer_has_no_run_key_and_r_says_why(app_driver):
    """--open of the demo at 120x40: the footer lists q, ?, n, ... but not ``r Run`` (nothing in a recording can be
    timed: r only said so); r still answers, with why (a toast); ? lists r once."""
    seen: dict[str, object] = {}

    async def steps(app, pilot):
        await screen_settled(pilot, app)
        seen["footer"] = screen_lines(app)[-1]
        await pilot.press("r")
        await screen_settled(pilot, app)
        seen["toasts"] = [str(n.message) for n in app._notifications]

    app_driver(steps, size=(120, 40), path=DEMO, notifications=True)
    footer = str(seen["footer"])
    assert "Quit" in footer and "Next" in footer, footer
    assert "Run" not in footer, footer
    assert any("no live script to time" in t for t in seen["toasts"]), seen["toasts"]
    from inductor_step.tui.keys import BINDINGS, help_rows  # noqa: PLC0415

    assert [k for k, _ in help_rows(BINDINGS)].count("r") == 1  # ? lists r once, not once per binding


def test_pane_2_names_what_each_primals_input_holds(app_driver):
    """2 on the demo's forward, at 120x40 and at 80x24: ``primals_1`` reads ``model.norm.weight`` (the parameter it
    holds, from AOTAutograd's ``PlainAOTInput(idx=0)`` note and Dynamo's first input) where the target column said
    ``primals_1`` again; the script's own input ``primals_3`` reads Dynamo's ``L_x_``; at 80 columns the name keeps
    its last parts (``norm.weight``), never ``weight`` alone."""
    rows: dict[int, list[str]] = {}

    async def steps(app, pilot):
        await pilot.press("2")
        await screen_settled(pilot, app)
        rows[app.size[0]] = screen_lines(app)[3:12]

    for size in ((120, 40), (80, 24)):
        app_driver(steps, size=size, path=DEMO)
    def by_input(lines: list[str]) -> dict[str, str]:  # primals_N -> its row, right of the graph list
        return {m.group(1): r[m.start():] for r in lines for m in [re.search(r"▌ (primals_\d+) ", r)] if m}

    wide = by_input(rows[120])
    assert "model.norm.weight" in wide["primals_1"], rows[120]
    assert "model.up.bias" in wide["primals_5"], rows[120]
    assert "L_x_" in wide["primals_3"], rows[120]
    narrow = by_input(rows[80])
    assert "norm.weight" in narrow["primals_1"], rows[80]
    assert " weight " not in narrow["primals_1"] and "primals_1" not in narrow["primals_1"].split("input")[1], rows[80]


def test_pane_8_at_200_columns_gives_the_detail_the_width_the_table_leaves(app_driver):
    """3, Down x6 (buf6), 8 at 200x50: the detail (FX nodes, your code, LoopBody) stands over the kernel's code, each
    as wide as the 84-cell table and the graph list leave (90 cells; it had 36 beside the kernel's code, 46 in a live
    session: nanoGPT's "kernel cpp_fused_add_embedding_native_lay" was cut);
    every line of the detail is on screen whole; at 160 columns the three stay side by side."""
    seen: dict[int, dict] = {}

    async def steps(app, pilot):
        for key in ["3"] + ["down"] * 6 + ["8"]:
            await pilot.press(key)
        await screen_settled(pilot, app)
        info, kernel = app.query_one("#code-linkinfo"), app.query_one("#code-linkkernel")
        seen[app.size[0]] = {"info": info.region, "kernel": kernel.region, "text": info.text,
                             "screen": "\n".join(screen_lines(app))}

    for size in ((200, 50), (160, 50)):
        app_driver(steps, size=size, path=DEMO)
    wide = seen[200]
    assert wide["info"].width >= 85 and wide["kernel"].width >= 85, wide  # 200 - graph list 26 - table 84
    assert wide["kernel"].y > wide["info"].y, wide  # one over the other
    for line in [ln for ln in wide["text"].splitlines() if ln.strip()][:12]:
        assert line.strip() in wide["screen"], (line, wide["screen"])
    mid = seen[160]
    assert mid["kernel"].x > mid["info"].x and mid["kernel"].y == mid["info"].y, mid


def test_fusion_pair_status_stays_with_pane_4(app_driver):
    """4, f, Down, f: the status line says "fusion pair op… and op…: answer below" (the answer is in pane 4's code);
    then 8: the status line no longer says it (pane 8 read "answer below" over its own detail, timm at 80x24)."""
    status: dict[str, str] = {}

    async def steps(app, pilot):
        for key in ("4", "f", "down", "f"):
            await pilot.press(key)
            await screen_settled(pilot, app)
        status["4"] = screen_lines(app)[-2]
        await pilot.press("8")
        await screen_settled(pilot, app)
        status["8"] = screen_lines(app)[-2]

    app_driver(steps, size=(120, 40), path=DEMO)
    assert "fusion pair" in status["4"] and "answer below" in status["4"], status
    assert "fusion pair" not in status["8"], status
