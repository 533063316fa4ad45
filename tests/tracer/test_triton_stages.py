"""Triton's lower stages of a recorded GPU session's kernels, compiled again here without a GPU: ``inductor-step lower`` on tests/fixtures/gpu_nanogpt.jsonl for sm_90, the line maps from a
``tl.store`` line down to ``st.global``/``STG`` instructions, a source the installed Triton cannot compile said
in one line, and the standalone repro written and saying why it cannot run here.  Needs Triton (its ptxas and
nvdisasm); one kernel compiled once for the module."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("triton")

from inductor_step.tracer import kernel_repro, lower, triton_stages  # noqa: E402
from inductor_step.session.format import read_session  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NANOGPT = os.path.join(ROOT, "tests", "fixtures", "gpu_nanogpt.jsonl")
KERNEL = "triton_poi_fused_embedding_1"  # tmp0 = tl.load(in_ptr0 + (x2)); tl.store(out_ptr0 + (x2), tmp0)


@pytest.fixture(scope="module")
def lowered(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("lower")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):  # in-process: the UI test runs it as the child process people get
        rc = lower.main([NANOGPT, KERNEL, "--graph", "[0/0] forward", "--target", "sm_90", "--json", str(out / "r.json"),
                         "--stages-dir", str(out / "stages"), "--repro", str(out / "repro")])
    res = subprocess.CompletedProcess([], rc, buf.getvalue(), "")
    assert res.returncode == 0, res.stdout
    [r] = json.loads((out / "r.json").read_text())
    return {"r": r, "stdout": res.stdout, "dir": out}


def test_lower_prints_one_line_per_kernel_with_registers_and_vector_widths(lowered: dict) -> None:
    line = [x for x in lowered["stdout"].splitlines() if " sm_90 " in x]
    assert len(line) == 1, lowered["stdout"]
    assert KERNEL in line[0] and "regs" in line[0] and "0 spill bytes" in line[0]
    # the recorded launch config (XBLOCK=1024, 4 warps, fp32): 128-bit loads and stores
    assert "XBLOCK=1024" in line[0] and "ld.global x128 x2" in line[0] and "st.global x128 x2" in line[0]
    for st in ("ttir", "ttgir", "llir", "ptx", "sass"):
        assert (lowered["dir"] / "stages" / f"{KERNEL}.{st}").stat().st_size > 200


def test_stages_exist_for_sm_90_and_registers_come_from_ptxas(lowered: dict) -> None:
    r = lowered["r"]
    assert r["target"] == "sm_90" and r["config_source"].startswith("the run stage")
    assert ".target sm_90a" in r["stages"]["ptx"]
    assert "tt.store" in r["stages"]["ttir"] and "ttg.num-warps" in r["stages"]["ttgir"]
    assert "STG.E.128" in r["stages"]["sass"]
    assert r["sass_info"]["n_regs"] > 0 and r["sass_info"]["spill_store_bytes"] == 0
    assert "same instructions as the compiled cubin" in r["sass_info"]["lines_from"]


def test_the_tl_store_line_maps_to_st_global_in_every_lower_stage(lowered: dict) -> None:
    r = lowered["r"]
    src = next(k["source"] for m in read_session(NANOGPT) if m.get("stage") == "codegen"
               for k in m["kernels"] if k["name"] == KERNEL)
    rows = src.split("\n")
    store = next(i + 1 for i, x in enumerate(rows) if "tl.store(" in x)
    load = next(i + 1 for i, x in enumerate(rows) if "tl.load(" in x)
    for st, needle in (("ttgir", "tt.store"), ("ptx", "st.global"), ("sass", "STG")):
        text = r["stages"][st].split("\n")
        lines = r["maps"]["lines"][st]
        assert len(lines) == len(text)
        mapped = [text[i] for i, ln in enumerate(lines) if ln == store]
        assert any(needle in x for x in mapped), (st, mapped)
        # and nothing of the store appears on the load's line (inline-asm line numbers are not source lines)
        assert not any(needle in text[i] for i, ln in enumerate(lines) if ln == load), st
    assert r["maps"]["counts"]["sass"][str(store)].get("st.global x128") == 2
    assert r["maps"]["counts"]["ptx"][str(load)].get("ld.global x128") == 2


def test_a_source_the_installed_triton_cannot_compile_is_said_in_one_line() -> None:
    src = next(k["source"] for m in read_session(NANOGPT) if m.get("stage") == "codegen"
               for k in m["kernels"] if k["name"] == KERNEL)
    res = triton_stages.compile_kernel(src.replace("tl.load(", "tl.lod("), KERNEL, "sm_80")
    assert set(res) == {"error"} and "\n" not in res["error"]
    assert res["error"].startswith(f"Triton ") and "cannot compile" in res["error"] and "sm_80" in res["error"]
    assert "error" in triton_stages.compile_kernel(src, KERNEL, "gfx942")


def test_repro_is_written_with_recorded_sizes_and_says_why_not_without_a_gpu(lowered: dict) -> None:
    path = lowered["dir"] / "repro" / f"{KERNEL}.py"
    text = path.read_text()
    # primals_3 is (256, 512) fp32 in the wrapper; buf2 likewise; the recorded grid and config
    assert "make_input([256, 512], [512, 1], 0, torch.float32)  # primals_3" in text
    assert "GRID = tuple([128])" in text and "XBLOCK=1024, num_warps=4, num_stages=1" in text
    import torch  # noqa: PLC0415

    if torch.cuda.is_available():
        pytest.skip("a GPU is here: tests/gpu/test_gpu_triton_stages.py runs the repro")
    p = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and p.stdout.startswith("no CUDA GPU here"), p.stdout + p.stderr


def test_every_kernel_of_the_attention_fixture_gets_a_repro_with_all_arguments_sized() -> None:
    fx = os.path.join(ROOT, "tests", "fixtures", "gpu_attention.jsonl")
    items = list(lower.session_kernels(fx))
    assert len(items) >= 10
    for it in items:
        _text, problems = kernel_repro.repro_text(it["kernel"], it["wrapper"], it["run"], it["graph"])
        assert problems == [], (it["kernel"]["name"], problems)
