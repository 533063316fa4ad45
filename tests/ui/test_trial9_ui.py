"""What a new user met driving a flex-attention block, Hugging Face Llama and nanoGPT (trial 9): after ``r`` pane 7's
cursor stood on the selected buffer's kernel, often below the slowest rows the table is sorted by."""

from __future__ import annotations

import asyncio
import re

from inductor_step.session.format import CMD_RUN, read_session
from inductor_step.tui.app import StepApp
from inductor_step.tui.codeview import CodeView
from inductor_step.tui.table import Table

from conftest import DEMO, screen_settled, wait_for


class TimingPlayback:
    """The agent's pipe after the script finished, played from the demo's recording: ``r`` (run) brings the
    recorded timings (run_status, then one run per graph), as the real agent sends them."""

    def __init__(self, app: StepApp, runs: list[dict]) -> None:
        self.app, self.runs, self.alive, self.sent = app, runs, True, []

    def send(self, cmd) -> None:
        self.sent.append(cmd)
        if cmd == CMD_RUN:
            for m in self.runs:
                self.app.call_later(self.app.on_agent_message, m)


def live_after_the_script(steps, size=(120, 40)) -> StepApp:
    """The demo as a live session whose script has finished (every stop, no timing yet); ``r`` times it."""
    msgs = [m for m in read_session(DEMO) if m.get("type") != "agent_exit"]
    runs = [m for m in msgs if m.get("type") in ("run", "run_status")]
    app = StepApp(messages=[m for m in msgs if m.get("type") not in ("run", "run_status")])

    async def main():
        async with app.run_test(size=size) as pilot:
            app.live = True
            app.current.agent = agent = TimingPlayback(app, runs)
            await pilot.pause()
            await steps(app, pilot, agent)

    asyncio.run(main())
    return app


def _status(app: StepApp) -> str:
    return str(app.query_one("#status").content)


def test_r_opens_pane_7_at_the_slowest_kernel():
    """[0/0] forward, buf0 selected in pane 3 (its kernel, cpp_fused_native_layer_norm_0, is the fourth of five),
    then 7, r: the timings come and the cursor stands on the first row, the slowest kernel (extern_kernels.addmm#0),
    whose buffer (buf5) is now the selection; the status line says so.  Then 3, Down (buf6), 7: pane 7 follows that
    selection again (buf6's kernel, cpp_fused_gelu_1), as every pane does once the new timing has been seen."""
    seen: dict = {}

    async def steps(app, pilot, agent):
        await pilot.press("3")
        await screen_settled(pilot, app)
        assert app.view.graph == "[0/0] forward" and app.view.selected == "buf0", (app.view.graph, app.view.selected)
        await pilot.press("7", "r")
        table = app.query_one("#table-run", Table)
        await wait_for(pilot, lambda: table.row_count > 0 and "timed" in _status(app), timeout=20, seen=lambda: _status(app))
        await screen_settled(pilot, app)
        seen["row"] = table.cursor_row
        seen["detail"] = app.query_one("#code-run", CodeView).text.splitlines()[0]
        seen["status"] = _status(app)
        seen["selected"] = app.view.selected
        for key in ("3", "down", "7"):
            await pilot.press(key)
            await screen_settled(pilot, app)
        seen["after"] = (app.view.selected, app.query_one("#code-run", CodeView).text.splitlines()[0])

    live_after_the_script(steps)
    assert seen["row"] == 0, seen
    assert "extern_kernels.addmm#0" in seen["detail"], seen
    assert "slowest first, extern_kernels.addmm#0" in seen["status"], seen
    assert re.search(r"· timed \d.* · selected buf5", seen["status"]), seen  # the run's own status stays, before it
    assert seen["selected"] == "buf5", seen
    assert seen["after"][0] == "buf6" and "cpp_fused_gelu_1" in seen["after"][1], seen


def test_enter_in_pane_8_opens_the_pane_of_the_line_and_says_what_it_does(app_driver):
    """Pane 8 of the demo's forward at 120x40, buf0 selected, Tab into its detail: Enter did nothing and said nothing.
    Now Enter on ``post-grad FX nodes:`` opens pane 2 at buf0, on the first line pane 4 at its fused node, on a
    blank line it says what Enter does there; in the kernel's code (Tab to it) it opens pane 6 at buf0's kernel;
    Enter on the table's row does the same."""
    seen: dict = {}

    async def steps(app, pilot):
        async def at(keys: list[str]):
            for key in keys:
                await pilot.press(key)
                await screen_settled(pilot, app)
            return app.view.stage, app.view.selected, _status(app)

        info = app.query_one("#code-linkinfo", CodeView)
        await at(["8", "tab"])
        seen["focus"] = app.focused is info
        lines = info.text.splitlines()
        seen["post-grad"] = await at(["down", "enter"])  # line 2
        seen["first"] = await at(["8", "tab", "home", "enter"])
        blank = lines.index("")
        seen["blank"] = await at(["8", "tab", "home"] + ["down"] * blank + ["enter"])
        await at(["8"])
        kernel = app.query_one("#code-linkkernel", CodeView)
        for _ in range(4):  # Tab from where pane 8's focus was left to the kernel's code
            if app.focused is kernel:
                break
            await at(["tab"])
        seen["kernel code"] = await at(["enter"])
        seen["row"] = await at(["8", "enter"])

    app_driver(steps, size=(120, 40), path=DEMO)
    assert seen["focus"], seen
    assert seen["post-grad"][:2] == ("aot", "buf0"), seen
    assert seen["first"][:2] == ("scheduling", "buf0") and "pane 4" in seen["first"][2], seen
    assert seen["blank"][0] == "linked" and "Enter in pane 8's detail opens" in seen["blank"][2], seen
    assert seen["kernel code"][:2] == ("codegen", "buf0") and "cpp_fused_native_layer_norm_0" in seen["kernel code"][2], seen
    assert seen["row"][:2] == ("codegen", "buf0"), seen


def test_s_on_a_subgraph_names_the_file_in_plain_ascii(app_driver, tmp_path):
    """g, Down, Enter on a flex attention recording (the subgraph ``[0/0] inference › sdpa_...``), then s: the file is
    ``subgraphs_flex_0-0_inference_sdpa_..._dynamo_HHMMSS.svg``; it held the ``›`` of the graph's name."""
    import os

    fix = os.path.join(os.path.dirname(DEMO), "subgraphs_flex.jsonl")
    seen: dict = {}

    async def steps(app, pilot):
        for key in ("g", "down", "enter"):
            await pilot.press(key)
            await screen_settled(pilot, app)
        seen["graph"] = app.view.graph
        await pilot.press("s")
        await wait_for(pilot, lambda: app.saved_screenshots, timeout=30)
        seen["saved"] = [os.path.basename(p) for p in app.saved_screenshots]

    app_driver(steps, size=(120, 40), path=fix, screenshots=str(tmp_path))
    assert "›" in seen["graph"], seen
    svg = next(n for n in seen["saved"] if n.endswith(".svg"))
    assert svg.isascii() and " " not in svg, svg
    assert svg.startswith("subgraphs_flex_0-0_inference_sdpa_") and "_dynamo_" in svg, svg
    assert os.path.isfile(tmp_path / svg)


def test_pane_3_names_an_extern_buffers_ir_type_once(app_driver):
    """3 on the demo's forward, the cursor down to its first ExternKernelOut (an addmm): the detail's first line read
    ``# buf5 (op5): ExternKernelOut ExternKernelOut`` (IR type, then kind, the same word); a Pointwise buffer keeps
    ``ComputedBuffer Pointwise``."""
    seen: dict = {}

    async def steps(app, pilot):
        await pilot.press("3")
        await screen_settled(pilot, app)
        table = app.query_one("#table-lowering", Table)
        code = app.query_one("#code-lowering", CodeView)
        for _ in range(table.row_count):
            first = code.text.splitlines()[0]
            seen.setdefault(first.split(":")[1].split("dtype")[0].strip(), first)
            await pilot.press("down")
            await screen_settled(pilot, app)

    app_driver(steps, size=(120, 40), path=DEMO)
    assert "ExternKernelOut" in seen and "ComputedBuffer Pointwise" in seen, seen
    assert "ExternKernelOut ExternKernelOut" not in seen, seen
