"""Tried as a new user: the selection while the compile is still before codegen, pane 8's
own pick, the graph list, ctrl+p, d without a recompile, w's diff when the timing comes, 80x24 cuts,
paths.  Keys a person presses, in order, on the recorded demo (or the demo cut before a stop, as a
compile paused there has recorded it); pure functions where the rule itself is the point."""

from __future__ import annotations

import asyncio
import copy

from inductor_step.session.format import graph_key, read_session
from inductor_step.tui.app import StepApp
from inductor_step.tui.codeview import CodeView
from inductor_step.tui.table import Table, cut_middle

from conftest import DEMO, screen_settled, wait_for

FWD = "[0/0] forward"


def _row(app: StepApp, stage: str) -> str:
    t = app.query_one(f"#table-{stage}", Table)
    return str(t.get_row_at(t.cursor_row)[0])


def _drive(app: StepApp, steps, size=(80, 24)) -> None:
    async def main():
        async with app.run_test(size=size, notifications=True) as pilot:
            await pilot.pause()
            await steps(app, pilot)
    asyncio.run(main())


def _until(stage: str) -> list[dict]:
    """The demo's messages up to [0/0] forward's ``stage`` stop: what a compile paused there recorded."""
    out = []
    for m in read_session(DEMO):
        out.append(m)
        if m.get("type") == "stop" and graph_key(m) == FWD and m["stage"] == stage:
            return out
    raise AssertionError(stage)


def test_before_codegen_every_pane_follows_the_selection_and_later_stages_say_they_have_not_run():
    """With buf6 selected at the lowering stop; at the loopbody stop (no codegen yet) pane 4's cursor
    is on op6, pane 5's on op6, pane 2's on a post-grad node of buf6, pane 1's on the Dynamo node it came
    from (the post-grad nodes' ``from_node``: the one codegen's links name later); pane 6 says codegen has not
    run, pane 8 shows buf6's nodes with its kernel to come with codegen; the status line keeps the buffer's name at 80 columns."""
    app = StepApp(messages=_until("loopbody"))
    seen: dict = {}

    async def steps(app, pilot):
        await pilot.press("3", *["down"] * 6)
        await pilot.pause()
        seen["selected"] = app.view.selected
        seen["status"] = str(app.query_one("#status").content)
        for key, stage in (("4", "scheduling"), ("5", "loopbody"), ("2", "aot"), ("1", "dynamo")):
            await pilot.press(key)
            await pilot.pause()
            seen[stage] = _row(app, stage)
        for key, stage in (("6", "codegen"), ("8", "linked")):
            await pilot.press(key)
            await pilot.pause()
            seen[stage] = app.query_one(f"#code-{'linkinfo' if stage == 'linked' else stage}", CodeView).text
        seen["linked_row"] = _row(app, "linked")
        seen["linked_kernel"] = app.query_one("#code-linkkernel", CodeView).text

    _drive(app, steps)
    lowering = app.session.stop_for(FWD, "lowering")
    buf6 = next(b for b in lowering["buffers"] if b["name"] == "buf6")
    assert seen["selected"] == "buf6" and "buf6" in seen["status"], seen
    assert seen["scheduling"] == "op6" and seen["loopbody"] == "op6", seen
    assert seen["aot"] in buf6["origins"], seen
    later = next(m for m in read_session(DEMO) if m.get("type") == "stop" and graph_key(m) == FWD
                 and m["stage"] == "codegen")["links"]["buffers"]["buf6"]["dynamo_nodes"]
    assert later and seen["dynamo"] in later, (seen, later)
    assert "has not reached codegen" in seen["codegen"], seen["codegen"]
    # pane 8 before codegen: the buffer's row, its nodes from lowering and scheduling, the kernel said to come later
    assert seen["linked_row"] == "buf6", seen
    assert seen["linked"].startswith("# buf6: scheduler node op6") and "post-grad FX nodes: " in seen["linked"], seen
    assert "kernel:             comes with codegen (recorded up to loopbody" in seen["linked"], seen["linked"]
    assert "the kernel that computes buf6 comes with codegen" in seen["linked_kernel"], seen["linked_kernel"]


def test_pane_8_follows_its_own_kernel_line_pick(app_driver):
    """In pane 8, a kernel line of another buffer picks it: the table's row and the buffer's
    detail follow at once, the kernel view stays on the line the person moved to."""
    seen: dict = {}

    async def steps(app, pilot):
        links = app.session.links(FWD)
        pick = None
        for kname, k in links["kernels"].items():
            lines = {b: {n for x, y in links["buffers"][b]["kernel_lines"].get(kname) or [] for n in range(x, y + 1)}
                     for b in k["buffers"]}
            for a in lines:
                for b in lines:
                    only = sorted(lines[b] - lines[a])
                    if a != b and lines[a] and only and min(lines[a]) < only[0]:
                        pick = pick or (a, b, min(lines[a]), only[0])
        assert pick, "the demo has a kernel storing two buffers on different lines"
        first, other, at, line = pick
        await pilot.press("8")
        table = app.query_one("#table-linked", Table)
        await pilot.press(*["down"] * table.get_row_index(first))
        await pilot.pause()
        seen["before"] = app.view.selected
        await pilot.press("tab", "tab")
        kcode = app.query_one("#code-linkkernel", CodeView)
        assert kcode.has_focus
        await pilot.press(*["down"] * (line - 1 - kcode.cursor))
        await pilot.pause()
        seen["after"], seen["other"], seen["first"] = app.view.selected, other, first
        seen["row"] = _row(app, "linked")
        seen["info"] = app.query_one("#code-linkinfo", CodeView).text.splitlines()[0]
        seen["kernel line"] = kcode.cursor + 1
        seen["line"] = line

    app_driver(steps, size=(160, 50))
    assert seen["before"] == seen["first"]
    assert seen["after"] != seen["first"], seen
    assert seen["row"] == seen["after"] and seen["info"].startswith(f"# {seen['after']}:"), seen
    assert seen["kernel line"] == seen["line"], seen


def test_graph_list_one_line_each_reason_below_and_g_closes_it(app_driver):
    """Pressing g opens the list wider than its 26 columns, one line per graph; the highlighted graph's
    reason is in full below; g again closes it and the keys go back to the pane."""
    seen: dict = {}

    async def steps(app, pilot):
        side = app.query_one("#graphside")
        seen["closed width"] = side.region.width
        await pilot.press("g", "down", "down")
        await pilot.pause()
        seen["open width"] = side.region.width
        ol = app.query_one("#graphs")
        seen["heights"] = [ol.get_option_at_index(i) for i in range(ol.option_count)]
        seen["list height"] = ol.virtual_size.height
        seen["why"] = str(app.query_one("#graph-why").content)
        await pilot.press("g")
        await pilot.pause()
        seen["after"] = (side.display, type(app.focused).__name__)

    app = app_driver(steps, size=(200, 60))
    assert seen["closed width"] == 26 and seen["open width"] >= 90, seen
    assert seen["list height"] == 3, seen  # one line per graph
    assert seen["why"].startswith("[1/0] inference:"), seen["why"]
    assert seen["after"] == (False, "Table"), seen


def test_ctrl_p_lists_ours_first_and_diff_with_names_the_pair(app_driver):
    """Pressing ctrl+p with nothing typed: our commands come before Textual's; a Diff with entry says
    which graph is A and which is B."""
    seen: dict = {}

    async def steps(app, pilot):
        from textual.command import CommandList

        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: app.screen.query(CommandList) and app.screen.query_one(CommandList).option_count >= 3,
                       timeout=10)
        cl = app.screen.query_one(CommandList)
        seen["first"] = [str(cl.get_option_at_index(i).prompt).split("\n")[0] for i in range(3)]
        await pilot.press(*"diff with")
        await wait_for(pilot, lambda: "Diff with" in str(app.screen.query_one(CommandList).get_option_at_index(0).prompt)
                       if app.screen.query_one(CommandList).option_count else False, timeout=10)
        cl = app.screen.query_one(CommandList)
        seen["diff"] = str(cl.get_option_at_index(0).prompt)

    app_driver(steps, size=(120, 40))
    assert all(p.startswith("Go to stage") for p in seen["first"]), seen
    assert "[0/0] forward (shown) as A against [0/0] backward as B" in seen["diff"], seen["diff"]


def test_d_without_a_recompile_says_so_and_offers_the_choice(app_driver):
    """Pressing d on [0/0] forward (no recompile) opens no diff of forward against backward: it says so
    and opens ctrl+p on "Diff with"."""
    seen: dict = {}

    async def steps(app, pilot):
        await pilot.press("d")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "CommandPalette", timeout=10,
                       seen=lambda: type(app.screen).__name__)
        await screen_settled(pilot, app)
        seen["screen"] = type(app.screen).__name__
        seen["status"] = str(app.query_one("#status").content)
        from textual.command import CommandInput

        seen["typed"] = app.screen.query_one(CommandInput).value

    app_driver(steps, size=(120, 40))
    assert seen["screen"] == "CommandPalette" and seen["typed"] == "Diff with", seen
    assert "has no recompile" in seen["status"], seen


def test_ws_diff_stays_open_when_the_variants_timing_comes():
    """The diff a what-if opens is still on screen after the variant's run arrives (it used to
    be popped and pushed again, which raised DuplicateIds and left the person on the panes)."""
    msgs = list(read_session(DEMO))
    cut = next(i for i, m in enumerate(msgs) if m.get("type") == "done")
    base = "[1/0] inference"
    variant = {"variant": "max_fusion_size=1", "settings": {"max_fusion_size": 1}}
    stops = [dict(copy.deepcopy(m), **variant) for m in msgs[:cut] if m.get("type") == "stop" and graph_key(m) == base]
    runs = [m for m in msgs if m.get("type") == "run" and graph_key(m) == base]
    vrun = dict(copy.deepcopy(runs[0]), **variant)
    done = {"type": "what_if", "compile_id": "[1/0]", "graph_kind": "inference", "status": "done", **variant}
    app = StepApp(messages=msgs[:cut + 1] + stops)
    seen: dict = {}

    async def steps(app, pilot):
        app.on_agent_message(done)
        await wait_for(pilot, lambda: type(app.screen).__name__ == "DiffScreen", timeout=10)
        seen["opened"] = type(app.screen).__name__
        app.on_agent_message(runs[0])
        app.on_agent_message(vrun)
        await wait_for(pilot, lambda: "timed" in str(app.screen.query_one("#diff-status").content), timeout=10,
                       seen=lambda: (type(app.screen).__name__, str(app.screen.query_one("#diff-status").content)))
        seen["after"] = (type(app.screen).__name__, app.screen.pair.key_b)
        seen["status"] = str(app.screen.query_one("#diff-status").content)

    _drive(app, steps, size=(120, 40))
    assert seen["opened"] == "DiffScreen"
    assert seen["after"] == ("DiffScreen", graph_key(vrun)), seen
    assert "timed" in seen["status"], seen


def test_80x24_cuts_keep_what_tells_rows_apart_and_paths_read_as_torch_prints_them():
    """Three weights stay apart when cut; a user line keeps file and line;
    paths relative to the script's folder, installed code from the package down, "your code" only
    for the user's files; missed-fusion reasons cut at a word."""
    from inductor_step.session.paths import code_label, cut_words, short_path, shorten_in_text

    names = [f"l_model_modules_{m}_parameters_{p}_" for m in ("norm", "up", "down") for p in ("weight", "bias")]
    for w in (10, 12, 16):
        cut = [cut_middle(n, w) for n in names]
        assert len(set(cut)) == len(cut) and all(len(c) <= w for c in cut), (w, cut)
    assert cut_middle("torch/optim/adam.py:47", 12).endswith("adam.py:47")
    assert cut_middle("cpp_fused_add_mse_loss_mse_loss_backward_2", 12).endswith("ward_2")  # kernels: as before
    site = "/venv/lib/python3.11/site-packages/transformers/models/qwen2/modeling_qwen2.py:47"
    assert short_path(site, "/home/u/proj") == "transformers/models/qwen2/modeling_qwen2.py:47"
    assert short_path("/home/u/proj/train.py:12", "/home/u/proj") == "train.py:12"
    assert code_label("/home/u/proj/train.py:12", "/home/u/proj") == "your code: train.py:12"
    assert code_label(site, "/home/u/proj").startswith("library code: transformers/")
    assert shorten_in_text('  File "/home/u/proj/m.py", line 3, in f', "/home/u/proj") == '  File "m.py", line 3, in f'
    cut = cut_words("which Inductor's scheduler decided not to fuse these two nodes", 30)
    assert cut.endswith("…") and cut[:-1] == "which Inductor's scheduler", cut


def test_a_list_of_names_is_cut_between_names_not_inside_one():
    """Pane 4's members of nanoGPT's ``op48_op49_op51`` at 80 columns read ``op4…, op51``: a name cut inside
    reads as another (``op4``).  A list cell keeps whole names and counts the rest; shapes and prose are not lists."""
    from inductor_step.tui.cells import cut_cell

    assert cut_cell("op48, op49, op51", 10) == "op48 +2"
    assert cut_cell("op48, op49, op51", 13) == "op48, op49 +1"
    assert cut_cell("buf4, buf5, buf6 +3", 10) == "buf4 +5"  # joined()'s own +K is added to
    assert cut_cell("cpp_fused_add_native_layer_norm_0, cpp_fused_gelu_1", 20).endswith("norm_0 +1")
    assert cut_cell("op48, op49, op51", 16) == "op48, op49, op51"  # fits: untouched
    assert "+" not in cut_cell("[4, 64, 1]", 6)  # a shape is no list of names
