"""How each graph was compiled, in the app, from recorded sessions (tests/make_fixtures.py: modes_autotune.jsonl, modes_dynamic.jsonl):
a person switches to pane 1, the code pane and the run pane and reads how the graph was compiled, the
template kernel and the autotuning choice beside the kernel it chose, and the sizes the graph was timed at."""

from __future__ import annotations

import os

from inductor_step.tui.codeview import CodeView
from inductor_step.tui.table import Table

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")
AUTOTUNE = os.path.join(FIXTURES, "modes_autotune.jsonl")
DYNAMIC = os.path.join(FIXTURES, "modes_dynamic.jsonl")


def _marked(app) -> str:
    code = app.query_one("#code-codegen", CodeView)
    return "\n".join(code.lines[i] for i in sorted(code.marks))


def test_pane_1_mode_and_pane_6_autotune_and_template_beside_their_kernels(app_driver) -> None:
    seen: dict = {}

    async def steps(app, pilot):
        await pilot.press("1")
        await pilot.pause()
        seen["pane1"] = app.query_one("#code-dynamo", CodeView).text
        await pilot.press("6")
        await pilot.pause()
        table = app.query_one("#table-codegen", Table)
        table.focus()
        # down to the kernel the GEMM's autotuning chose (the template or MKL: whichever benchmarked faster)
        stop = app.session.stop_for(app.view.graph, "codegen")
        (sel,) = stop["autotune"]
        row = next(i for i, k in enumerate(stop["kernels"]) if sel["buffer"] in k["buffers"])
        await pilot.press("home", *["down"] * row)
        await pilot.pause()
        seen["winner"] = sel["winner"]
        seen["tuned_row"] = [str(c) for c in table.get_row_at(table.cursor_row)]
        seen["tuned"] = _marked(app)
        await pilot.press("g", "down", "enter")  # the second graph: the C++ GEMM template
        await pilot.pause()
        await pilot.press("6")
        await pilot.pause()
        table = app.query_one("#table-codegen", Table)
        table.focus()
        await pilot.press("down", "up")
        await pilot.pause()
        seen["graph"] = app.view.graph
        seen["template_row"] = [str(c) for c in table.get_row_at(table.cursor_row)]
        seen["template"] = _marked(app)

    app_driver(steps, size=(160, 50), path=AUTOTUNE)
    assert "compiled with: torch.compile(mode='max-autotune'" in seen["pane1"]
    assert "freezing=True" in seen["pane1"] and "max_autotune=True" in seen["pane1"]
    # the autotuning candidates, their times and the winner, marked with the kernel the winner became
    assert "autotune packed_linear(" in seen["tuned"] and "<- chosen" in seen["tuned"] and " ms" in seen["tuned"]
    assert f"winner {seen['winner']}" in seen["tuned"]
    assert seen["tuned_row"][1] == ("extern" if "mkl" in seen["winner"] else "cpp template")
    assert seen["graph"] == "[0/1] inference"
    assert seen["template_row"][1] == "cpp template"
    assert "template kernel (CppTemplateBuffer op0), epilogue fused into it: op1" in seen["template"]
    assert "async_compile.cpp_pybinding" in seen["template"]  # the notes sit right above the kernel's definition


def test_pane_1_symbols_and_pane_7_timed_sizes(app_driver) -> None:
    seen: dict = {}

    async def steps(app, pilot):
        await pilot.press("1")
        await pilot.pause()
        seen["pane1"] = app.query_one("#code-dynamo", CodeView).text
        await pilot.press("2")
        await pilot.pause()
        seen["pane2"] = app.query_one("#code-aot", CodeView).text
        await pilot.press("7")
        await pilot.pause()
        app.query_one("#table-run", Table).focus()
        await pilot.press("down", "up")
        await pilot.pause()
        seen["run"] = app.query_one("#code-run", CodeView).text

    app_driver(steps, size=(160, 50), path=DYNAMIC)
    assert "torch.compile(mode=None, options={epilogue_fusion=False}, dynamic=True, fullgraph=True)" in seen["pane1"]
    assert "= L['x'].size()[1]  range [2, int_oo]  (5 at this compile)" in seen["pane1"]
    assert "= L['x'].size()[1]  range [2, int_oo]" in seen["pane2"]  # above the post-grad graph's f32[s77, s27, s53]
    assert "timed at sizes: " in seen["run"] and "=2x5x8 float32" in seen["run"]
