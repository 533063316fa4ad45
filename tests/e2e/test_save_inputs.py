"""A kernel's real inputs, saved as a person asks for them, and the repro that loads them.

Live: a person steps a real CPU compile to its end, opens pane 6, puts the cursor on the C++ kernel and presses X; the
agent saves the kernel's arguments at its launch (repros/KERNEL.inputs.pt, the size said) and the repro that loads
them is written.  Run with this python, the repro says it loaded the real inputs, and the output it computes equals
the kernel's output in the model (bitwise) -- which is the script's own result.  Then: inputs that do not match the
recorded sizes are refused in one line; R's bundle carries the inputs beside the repro; in a recorded session (--open)
X says in one line why nothing can be saved now."""

from __future__ import annotations

import asyncio
import json
import os
import runpy
import shutil
import subprocess
import sys

import torch

from inductor_step.session import kernel_bundle
from inductor_step.session.format import read_session
from inductor_step.tui.app import StepApp
from inductor_step.tui.table import Table

from conftest import wait_for

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(HERE, "scripts", "save_inputs_small.py")
KERNEL = "cpp_fused_add_mul_relu_sin_sum_0"


def test_x_saves_a_kernels_real_inputs_and_its_repro_reproduces_the_model_output(tmp_path) -> None:
    out = tmp_path / "out.pt"
    session = tmp_path / "s.jsonl"
    repro = tmp_path / "repros" / f"{KERNEL}.py"
    seen: dict = {}
    app = StepApp(script=SCRIPT, script_args=[str(out)], session_path=str(session))

    async def steps(app, pilot):
        try:
            while app.session.done is None:  # n at each stop, to the end of the script
                await wait_for(pilot, lambda: app.view.paused is not None or app.session.done is not None)
                if app.view.paused is not None and app.view.paused["stage"] == "codegen" and "early" not in seen:
                    await pilot.press("6")  # X at the codegen stop: the script has not called the graph yet
                    await pilot.pause()
                    app.query_one("#table-codegen", Table).focus()
                    await pilot.press("X")
                    await wait_for(pilot, lambda: "not saved" in app._status_extra, timeout=60)
                    seen["early"] = app._status_extra
                if app.view.paused is not None:
                    at = app.view.paused
                    await pilot.press("n")
                    await wait_for(pilot, lambda at=at: app.view.paused is not at or app.session.done is not None)
            await pilot.press("6")
            await pilot.pause()
            app.query_one("#table-codegen", Table).focus()
            await pilot.press("X")
            await wait_for(pilot, lambda: f"{KERNEL}: repro " in app._status_extra or "no repro" in app._status_extra,
                           timeout=120,
                           seen=lambda: app._status_extra)
            seen["status"] = app._status_extra
        finally:
            app.action_quit_app()

    asyncio.run(_drive(app, steps))
    assert seen["early"] == (f"X: inputs of {KERNEL} not saved ([0/0] inference): the script has not called [0/0] "
                             "inference yet (its inputs are kept at its first call): let it run past the compile (n), "
                             "then ask again"), seen["early"]
    msgs = list(read_session(str(session)))
    saved = [m for m in msgs if m.get("type") == "inputs_saved"][-1]  # recorded in the session too (the early one first)
    assert saved["kernel"] == KERNEL and saved["real"] and not saved.get("error"), saved
    assert saved["path"] == str(tmp_path / "repros" / f"{KERNEL}.inputs.pt") and saved["bytes"] > 64 * 128 * 4 * 2
    assert "it loads the real inputs saved in" in seen["status"], seen["status"]
    # running the compiled module again to save them is not a compile of the script's: pane T lists no "[?]" graph
    stray = [(m["compile_id"], m.get("root")) for m in msgs if m.get("type") == "compile_time" and m["compile_id"] == "[?]"]
    assert not stray, stray

    p = subprocess.run([sys.executable, str(repro)], capture_output=True, text=True, timeout=300)
    lines = p.stdout.strip().splitlines()
    assert p.returncode == 0, p.stdout + p.stderr
    assert lines[0].startswith(f"inputs: the real ones, loaded from {KERNEL}.inputs.pt (0.066 MB of tensors; the "
                               "graph ran on the script's own inputs of its first call (all 2 tensors)"), lines
    assert lines[1] == "output: out_ptr0 equals the in-model output bitwise (64 elements)", lines
    res = json.loads(lines[-1])
    assert res["inputs"] == "saved" and res["outputs_equal"] is True and res["repro_ms"] > 0
    # the in-model output the repro matched is the model's own result
    data = torch.load(saved["path"], weights_only=True)
    assert torch.equal(data["outputs"]["2"]["flat"], torch.load(out))
    assert data["params"] == ["in_ptr0", "in_ptr1", "out_ptr0"]

    # saved inputs of other sizes are refused in one line, and the repro allocates instead
    mod = runpy.run_path(str(repro), run_name="repro")
    made = [torch.zeros(64, 64), torch.zeros(64, 128), torch.zeros(64)]
    args, line, got = mod["load_inputs"](KERNEL, ["in_ptr0", "in_ptr1", "out_ptr0"], made, "cpu")
    assert got is None and args is made
    assert line == (f"inputs: allocated, NOT the saved ones: {KERNEL}.inputs.pt's in_ptr0 is sizes [64, 128], "
                    "strides [128, 1], float32; the recording says sizes [64, 64], strides [64, 1], float32"), line

    # R's bundle carries them beside the repro
    text = kernel_bundle.add_kernels(str(session), msgs, str(tmp_path / "bundle"), None)
    assert (tmp_path / "bundle" / "kernels" / f"{KERNEL}.inputs.pt").exists()
    assert (tmp_path / "bundle" / "kernels" / f"{KERNEL}.py").exists()
    assert f"`kernels/{KERNEL}.inputs.pt` (0.069 MB: the real inputs)" in text, text


async def _drive(app: StepApp, steps) -> None:
    async with app.run_test(size=(160, 50)) as pilot:
        await steps(app, pilot)


def test_x_in_a_recorded_session_says_why_no_inputs_can_be_saved(app_driver, tmp_path) -> None:
    """--open: X says in one line why nothing can be saved now; x still writes the C++ kernel's repro, which then
    allocates its inputs and says so."""
    path = str(tmp_path / "s.jsonl")
    shutil.copy(os.path.join(HERE, "fixtures", "cpu_asm.jsonl"), path)
    repro = tmp_path / "repros" / "cpp_fused_add_mul_relu_sin_0.py"
    seen: dict = {}

    async def steps(app, pilot):
        await pilot.press("6")
        await pilot.pause()
        app.query_one("#table-codegen", Table).focus()
        await pilot.press("X")
        await pilot.pause()
        seen["status"] = app._status_extra
        await pilot.press("x")
        await wait_for(pilot, lambda: ": repro " in app._status_extra or "no repro" in app._status_extra, timeout=60)
        seen["x"] = app._status_extra

    app_driver(steps, size=(160, 50), path=path)
    assert seen["status"] == ("X: inputs cannot be saved now: this is a recorded session (--open), no process runs "
                              "the script; record it again with --save-inputs KERNEL (or press X while it runs live)")
    assert seen["x"].endswith("; inputs allocated at the recorded sizes (none saved)"), seen["x"]
    text = repro.read_text()
    assert "AsyncCompile().cpp_pybinding(ARGTYPES, SOURCE)" in text and "ARGTYPES = ['const float*', 'float*']" in text
    assert "in_ptr0 = make_input([4096], [1], 0, torch.float32)  # arg0_1" in text
    # the option with --open: refused in one line, before any view starts
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--open", path, "--save-inputs", "top"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and p.stderr.strip() == ("inductor-step: --save-inputs: inputs cannot be saved now: this "
                                                      "is a recorded session (--open), no process runs the script; "
                                                      "record it again with --save-inputs KERNEL (or press X while it "
                                                      "runs live)"), p.stderr


def test_save_inputs_option_headless_saves_them_and_writes_the_repro(tmp_path) -> None:
    """``--headless --save-inputs PART_OF_A_NAME``: the kernel is found by a part of its name; the saved file and its
    size are said, then the repro that loads them is written (the GPU test runs ``top`` with ``--run``)."""
    env = {**os.environ, "PYTHONPATH": os.path.dirname(HERE) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--record", str(tmp_path / "h.jsonl"),
                        "--save-inputs", "cpp_fused", SCRIPT, str(tmp_path / "out.pt")], cwd=str(tmp_path), env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    pt = tmp_path / "repros" / f"{KERNEL}.inputs.pt"
    assert (f"inputs of {KERNEL} ([0/0] inference) saved at its launch: {pt} (0.069 MB on disk, 3 tensors; the graph "
            "ran on the script's own inputs of its first call (all 2 tensors))") in p.stdout, p.stdout
    assert (f"[0/0] inference {KERNEL}: repro {tmp_path / 'repros' / KERNEL}.py; it loads the real inputs saved in "
            f"{KERNEL}.inputs.pt beside it") in p.stdout, p.stdout
