"""Triton's lower stages recorded live on a CUDA GPU (marked ``gpu``): the run stage keeps
each Triton kernel's TTIR/TTGIR/LLIR/PTX/SASS from the binary that ran, they equal what ``inductor-step lower``
compiles offline for the same target with the same Triton, and a kernel's standalone repro times within 10% of
the time the run stage measured for it inside the model.  benchmarks/cuda_models.py ``pointwise`` (one
bandwidth-bound kernel over 64M floats, ~0.5 ms on an H100).  ``INDUCTOR_STEP_KEEP_SESSIONS=DIR`` keeps the
session.  Run: ``python -m pytest -m gpu tests/gpu/test_gpu_triton_stages.py -rA``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Any

import pytest

from gpu_helpers import GPU_MARKS
from test_gpu import MODEL_ARGS, HeadlessRun, _headless

from inductor_step.session.format import read_session

pytestmark = GPU_MARKS


@pytest.fixture(scope="module")
def pointwise(tmp_path_factory: pytest.TempPathFactory) -> HeadlessRun:
    reuse = os.environ.get("INDUCTOR_STEP_STAGES_SESSION")  # a session this test recorded before, on this GPU
    if reuse:
        return HeadlessRun("pointwise_stages", 0, "", "", list(read_session(reuse)))
    return _headless(tmp_path_factory, "pointwise_stages", MODEL_ARGS["pointwise"])


def _triton_entries(s: HeadlessRun) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    codegen = {k["name"]: (m, k) for m in s.messages if m.get("stage") == "codegen" for k in m.get("kernels") or []}
    out = []
    for run in s.of_type("run"):
        for k in run.get("kernels") or []:
            if k.get("backend") == "triton" and k["name"] in codegen:
                out.append((k, codegen[k["name"]]))
    return out


def _norm(text: str) -> str:
    """A stage text without file paths (the kernel's file is a temporary path): PTX without its DWARF sections
    (the path's bytes), LLVM IR without metadata, MLIR locations' file names replaced."""
    text = text.split("\t.section\t.debug")[0]
    text = re.sub(r'"[^"\n]*\.py"', '"K.py"', text)
    text = re.sub(r'\.file\s+\d+\s+"[^"]*"(\s+"[^"]*")?', ".file", text)
    return "\n".join(x for x in text.split("\n") if not x.lstrip().startswith((";", "source_filename", "!")))


def test_live_stages_are_recorded_and_linked(pointwise: HeadlessRun) -> None:
    entries = _triton_entries(pointwise)
    assert entries, pointwise.tail()
    for k, (_stop, kern) in entries:
        st = k.get("stages") or {}
        assert set(st.get("stages", {})) >= {"ttir", "ttgir", "llir", "ptx", "sass"}, st.get("missing")
        rows = kern["source"].split("\n")
        store = next(i + 1 for i, x in enumerate(rows) if "tl.store(" in x)
        sass = st["stages"]["sass"].split("\n")
        assert any("STG" in sass[i] for i, ln in enumerate(st["maps"]["lines"]["sass"]) if ln == store), st.get("line_shift")
        # the script's first call autotuned among configs_tried configs; each has its time, the winner ran
        if (k.get("configs_tried") or 0) > 1:
            tuned = k.get("autotune_candidates") or {}
            print("autotune:", tuned)
            assert len(tuned.get("candidates") or []) == k["configs_tried"]
            assert all(c["ms"] > 0 for c in tuned["candidates"]) and tuned["winner"] == k["config"]


def test_the_repro_times_within_10_percent_of_the_in_model_time(pointwise: HeadlessRun, tmp_path) -> None:
    from inductor_step.tracer import kernel_repro  # noqa: PLC0415

    for k, (stop, kern) in _triton_entries(pointwise):
        path, problems = kernel_repro.write_repro(kern, stop["wrapper"], str(tmp_path), k)
        assert not problems
        p = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=300)
        print(p.stdout)
        assert p.returncode == 0, p.stdout + p.stderr
        got = json.loads(p.stdout.strip().splitlines()[-1])
        assert abs(got["repro_ms"] / got["recorded_ms"] - 1) <= 0.10, got


def test_live_stages_equal_offline_ones_for_the_same_target(pointwise: HeadlessRun) -> None:
    from inductor_step.tracer import triton_stages  # noqa: PLC0415

    for k, (_stop, kern) in _triton_entries(pointwise):
        live = k["stages"]
        off = triton_stages.compile_kernel(kern["source"], kern["name"], live["target"], k)
        assert "error" not in off, off
        print("live stages:", live.get("source"), "| launcher regs", live.get("launcher_n_regs"),
              "| ptxas regs", live["sass_info"].get("n_regs"), "| offline ptxas", off.get("ptxas"))
        for st in ("ttir", "ttgir", "llir", "ptx"):
            assert _norm(off["stages"][st]) == _norm(live["stages"][st]), st
        ops = triton_stages._opcodes
        assert ops(off["stages"]["sass"]) == ops(live["stages"]["sass"])
        if live.get("launcher_n_regs") is not None:  # compiled again: the binary that ran has the same registers
            assert live["launcher_n_regs"] == live["sass_info"]["n_regs"]
