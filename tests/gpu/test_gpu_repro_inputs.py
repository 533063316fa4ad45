"""A kernel's saved inputs on a CUDA GPU (marked ``gpu``): ``--save-inputs top --run`` saves the slowest Triton kernel's
real arguments at its launch, and its repro, run on the GPU, loads them, computes the in-model output bitwise (which
is the script's own result) and times within 10% of the in-model time the run stage measured; with Inductor's
``triton.store_cubin`` the launcher keeps its compiled binary, and the run stage reads the stages from that ``asm``
directly (not compiled again), equal to what ``inductor-step lower`` compiles offline for the same target.
tests/scripts/gpu_repro_inputs.py (one pointwise kernel over 32M floats).
Run: ``python -m pytest -m gpu tests/gpu/test_gpu_repro_inputs.py -rA``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from gpu_helpers import GPU_MARKS, ROOT, headless_env, keep_session

from inductor_step.session.format import read_session

pytestmark = GPU_MARKS
SCRIPT = os.path.join(ROOT, "tests", "scripts", "gpu_repro_inputs.py")


def _record(tmp_path_factory: pytest.TempPathFactory, name: str, extra: list[str], env_extra: dict[str, str]):
    cwd = tmp_path_factory.mktemp(name)
    rec = str(cwd / f"{name}.jsonl")
    env = {**headless_env(), **env_extra}
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--run", "--record", rec, *extra, SCRIPT,
                        str(cwd / "out.pt")], cwd=str(cwd), env=env, capture_output=True, text=True, timeout=400)
    print(p.stdout[-3000:], p.stderr[-3000:])
    keep_session(rec, name)
    return cwd, p, list(read_session(rec))


def test_saved_inputs_repro_reproduces_the_in_model_output_and_time(tmp_path_factory) -> None:
    import torch  # noqa: PLC0415

    cwd, p, msgs = _record(tmp_path_factory, "repro_inputs", ["--save-inputs", "top"], {})
    assert p.returncode == 0, p.stderr[-3000:]
    saved = next(m for m in msgs if m.get("type") == "inputs_saved")
    assert not saved.get("error") and saved["real"], saved
    k = saved["kernel"]
    assert k.startswith("triton_") and f"{k}: repro " in p.stdout and "it loads the real inputs" in p.stdout
    r = subprocess.run([sys.executable, str(cwd / "repros" / f"{k}.py")], capture_output=True, text=True, timeout=300)
    print(r.stdout, r.stderr[-2000:])
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.strip().splitlines()
    assert lines[0].startswith(f"inputs: the real ones, loaded from {k}.inputs.pt"), lines
    assert lines[1].startswith("output: out_ptr0 equals the in-model output bitwise"), lines
    got = json.loads(lines[-1])
    assert got["inputs"] == "saved" and got["outputs_equal"] is True
    assert abs(got["repro_ms"] / got["recorded_ms"] - 1) <= 0.10, got
    data = torch.load(saved["path"], weights_only=True)
    outs = list(data["outputs"].values())
    assert len(outs) == 1 and torch.equal(outs[0]["flat"], torch.load(cwd / "out.pt"))  # the script's own result


def _back(line: str, shift: int) -> int:
    return int(line) - shift if int(line) > 0 else 0  # line 0: no source line (compiler-made code)


def _lines_back(text: str, shift: int) -> str:
    """A stage with the kernel file's location line numbers moved back by ``shift`` (the kernel's first line in
    Inductor's module file against its recorded source: ``line_shift``; inlined helpers' files keep theirs), and
    the file-and-line comments after PTX ``.loc`` dropped.  Before :func:`_norm`, which names every file K.py."""
    m = re.search(r'#loc = loc\("([^"]+)":', text)  # MLIR: the function's own location names the kernel's file
    if m:
        text = re.sub(r'("' + re.escape(m.group(1)) + r'":)(\d+)', lambda x: f"{x.group(1)}{_back(x.group(2), shift)}",
                      text)
    first = re.search(r"\.loc\s+(\d+)\s+\d+", text)  # PTX: the function's first .loc is in the kernel's file
    if first:
        text = re.sub(r"(\.loc\s+" + first.group(1) + r"\s+)(\d+)", lambda x: f"{x.group(1)}{_back(x.group(2), shift)}",
                      text)
    return re.sub(r"(\.loc\s+\d+\s+\d+\s+\d+)[^\n]*", r"\1", text)


def test_a_launcher_that_keeps_its_binary_is_read_directly(tmp_path_factory) -> None:
    from inductor_step.tracer import triton_stages  # noqa: PLC0415

    from test_gpu_triton_stages import _norm  # noqa: PLC0415

    _cwd, p, msgs = _record(tmp_path_factory, "store_cubin", [], {"STORE_CUBIN": "1"})
    assert p.returncode == 0, p.stderr[-3000:]
    code = {k["name"]: k for m in msgs if m.get("stage") == "codegen" for k in m.get("kernels") or []}
    runs = [k for m in msgs if m.get("type") == "run" for k in m.get("kernels") or [] if k.get("backend") == "triton"]
    assert runs
    for k in runs:
        live = k["stages"]
        print("store_cubin:", k["name"], live.get("source"), live.get("target"))
        assert live.get("source") == "live: the compiled kernel's asm (the launcher's binary)", live.get("source")
        off = triton_stages.compile_kernel(code[k["name"]]["source"], k["name"], live["target"], k)
        assert "error" not in off, off
        # the binary Inductor built from its module file, where the kernel starts line_shift lines later than in
        # the recorded source the offline compile uses: equal once those line numbers are moved back
        shift = int(live.get("line_shift") or 0)
        print("line_shift", shift)
        for st in ("ttir", "ttgir", "llir", "ptx"):
            assert _norm(_lines_back(off["stages"][st], 0)) == _norm(_lines_back(live["stages"][st], shift)), st
        assert triton_stages._opcodes(off["stages"]["sass"]) == triton_stages._opcodes(live["stages"]["sass"])
