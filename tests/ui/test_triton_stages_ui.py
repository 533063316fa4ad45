"""Triton's lower stages in the app, from a recorded GPU session (tests/fixtures/gpu_nanogpt.jsonl, no stages recorded in it):
a person opens pane 6 on a Triton kernel, presses t and waits for the kernel to be compiled here (inductor-step
lower in a child process), presses t until the PTX shows, sees the selected buffer's store marked as st.global
lines, moves the cursor onto one and reads which Triton line and buffer it came from; x writes the repro.
And a C++ kernel of a timed CPU session (tests/fixtures/cpu_asm.jsonl): t shows its compiled function's asm."""

from __future__ import annotations

import os
import shutil

import pytest

from inductor_step.tui.codeview import CodeView
from inductor_step.tui.table import Table

from conftest import wait_for

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "gpu_nanogpt.jsonl")
KERNEL = "triton_poi_fused_embedding_1"


def test_t_cycles_the_lower_stages_with_the_buffer_marked_and_the_cursor_told(app_driver, tmp_path) -> None:
    pytest.importorskip("triton")  # the child process compiles with it
    path = str(tmp_path / "s.jsonl")
    shutil.copy(FIXTURE, path)  # x writes repros/ beside the session
    seen: dict = {}

    async def steps(app, pilot):
        await pilot.press("6")
        await pilot.pause()
        stop = app.session.stop_for(app.view.graph, "codegen")
        row = next(i for i, k in enumerate(stop["kernels"]) if k["name"] == KERNEL)
        table = app.query_one("#table-codegen", Table)
        table.focus()
        await pilot.press("home", *["down"] * row)
        await pilot.pause()
        code = app.query_one("#code-codegen", CodeView)
        seen["source"] = code.text
        await pilot.press("t")
        await pilot.pause()
        seen["waiting"] = code.text
        # the child process compiles it (about 5 s on an idle box)
        await wait_for(pilot, lambda: code.text.startswith("// TTIR"), timeout=30, seen=lambda: code.text[:200])
        seen["ttir"] = code.text
        await pilot.press("t", "t", "t")  # TTGIR, LLIR, PTX
        await pilot.pause()
        seen["ptx"] = code.text
        seen["marked"] = [code.lines[i] for i in sorted(code.marks)]
        code.focus()
        first = sorted(code.marks)[0] if code.marks else 0
        code.action_goto_line(first + 1)
        await pilot.press("down", "up")
        await pilot.pause()
        seen["status"] = str(app.query_one("#status").render())
        await pilot.press("t")  # SASS
        await pilot.pause()
        seen["sass"] = code.text
        table.focus()
        await pilot.press("x")
        await wait_for(pilot, lambda: os.path.exists(tmp_path / "repros" / f"{KERNEL}.py"), timeout=20)
        await pilot.press("t")  # back to the source
        await pilot.pause()
        seen["back"] = code.text

    app_driver(steps, size=(160, 50), path=path)
    assert "tl.store(out_ptr0" in seen["source"]
    assert seen["waiting"].startswith("# TTIR of triton_poi_fused_embedding_1: compiling")
    assert seen["ttir"].startswith("// TTIR of triton_poi_fused_embedding_1 (compiled here with Triton")
    assert "for sm_90" in seen["ttir"] and "tt.store" in seen["ttir"]
    assert seen["ptx"].startswith("// PTX of") and ".target sm_90a" in seen["ptx"]
    # per Triton line, the memory instructions it became: the load vectorized to 128 bits, at a glance
    summary = [x for x in seen["ptx"].split("\n")[:6] if x.startswith("// line")]
    assert any("tl.load(in_ptr0" in x and "ld.global x128 x2" in x for x in summary), summary
    assert any("tl.store(out_ptr0" in x and "st.global x128 x2" in x for x in summary), summary
    assert "registers/thread" in seen["sass"].split("\n")[1]
    # the selected buffer (buf2, stored by this kernel) is marked where it became st.global
    assert any("st.global.v4.b32" in x for x in seen["marked"]), seen["marked"]
    assert "Triton line" in seen["status"] and "tl.store(out_ptr0" in seen["status"] and "buf2" in seen["status"]
    assert seen["sass"].startswith("// SASS of") and "STG.E.128" in seen["sass"]
    assert (tmp_path / "repros" / f"{KERNEL}.py").exists()
    assert seen["back"] == seen["source"]


CPU_ASM = os.path.join(os.path.dirname(FIXTURE), "cpu_asm.jsonl")


def test_t_on_a_cpp_kernel_shows_its_compiled_function_with_vector_widths_per_line(app_driver) -> None:
    seen: dict = {}

    async def steps(app, pilot):
        await pilot.press("6")
        await pilot.pause()
        app.query_one("#table-codegen", Table).focus()
        code = app.query_one("#code-codegen", CodeView)
        seen["source"] = code.text
        await pilot.press("t")
        await pilot.pause()
        seen["asm"] = code.text
        seen["marked"] = [code.lines[i] for i in sorted(code.marks)]
        await pilot.press("t")
        await pilot.pause()
        seen["back"] = code.text
        await pilot.press("7")
        await pilot.pause()
        seen["run"] = app.query_one("#code-run", CodeView).text

    app_driver(steps, size=(160, 50), path=CPU_ASM)
    assert "below: asm 512-bit vector x" in seen["run"] and "t in pane 6 shows it" in seen["run"]
    assert seen["asm"].startswith("// x86 asm of cpp_fused_add_mul_relu_sin_0 (objdump -d -l")
    head = [x for x in seen["asm"].split("\n")[:12] if x.startswith("// line")]
    # the vectorized store line became 512-bit vector instructions (AVX-512 on the machine that recorded it)
    assert any("tmp6.store(" in x and "-bit vector" in x for x in head), head
    assert seen["marked"] and all(":\t" in x for x in seen["marked"])  # the selected buffer's instructions
    assert seen["back"] == seen["source"]


GPU_STAGES = os.path.join(os.path.dirname(FIXTURE), "gpu_stages.jsonl")


def test_stages_recorded_on_the_gpu_show_at_once_and_the_run_pane_tells_the_autotuning(app_driver) -> None:
    """tests/fixtures/gpu_stages.jsonl: recorded on an H200 with the stages and the autotuning candidates."""
    seen: dict = {}

    async def steps(app, pilot):
        await pilot.press("6")
        await pilot.pause()
        app.query_one("#table-codegen", Table).focus()
        code = app.query_one("#code-codegen", CodeView)
        await pilot.press("t", "t", "t", "t", "t")  # TTIR ... SASS, no compile: the session has them
        await pilot.pause()
        seen["sass"] = code.text
        seen["marked"] = [code.lines[i] for i in sorted(code.marks)]
        await pilot.press("7")
        await pilot.pause()
        seen["run"] = app.query_one("#code-run", CodeView).text

    app_driver(steps, size=(160, 50), path=GPU_STAGES)
    assert seen["sass"].startswith("// SASS of triton_poi_fused_add_mul_0 (compiled again in the run's process")
    assert "26 registers/thread" in seen["sass"]
    # the selected buf0 is this kernel's output: its store's instructions are marked, the inputs' loads are not
    assert any("STG.E.128" in x for x in seen["marked"]) and not any("LDG" in x for x in seen["marked"])
    assert "2 configs benchmarked" in seen["run"] and "XBLOCK=1024, num_warps=4, num_stages=1: 0.1877 ms  <- winner" \
        in seen["run"] and "XBLOCK=512, num_warps=8, num_stages=1: 0.1891 ms (+0.8%)" in seen["run"]
    assert "below: 26 registers · 0 B spilled · SASS ld.global x128 x4, st.global x128 x2 (sm_90a" in seen["run"]
