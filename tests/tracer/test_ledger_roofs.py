"""The ledger's tracer side: the occupancy arithmetic and the device roofs (tracer/timing/machine.py), measured
on this CPU and cached, and ``gpu``-marked checks of the roofs, the ledger on real training and ncu's verdict
(skipped without CUDA; run on the device machine: ``python -m pytest -m gpu tests/tracer/test_ledger_roofs.py``).
The ledger on recorded sessions, without torch, is tests/session/test_ledger.py."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from inductor_step.live.children import run_ncu
from inductor_step.session import ledger
from inductor_step.session.format import read_session
from inductor_step.session.store import Store

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


H100 = {"sms": 132, "max_threads_per_sm": 2048, "regs_per_sm": 65536, "shared_per_sm": 233472,
        "max_blocks_per_sm": 32, "warp_size": 32}


def test_occupancy_names_what_limits_it():
    from inductor_step.tracer.timing.machine import grid_blocks, occupancy

    assert occupancy(4, 32, 0, H100)["occupancy"] == 1.0
    regs = occupancy(8, 128, 0, H100)  # 128 regs x 32 lanes = 4096 per warp: 16 warps fit, 2 blocks of 8
    assert (regs["blocks_per_sm"], regs["limiter"], regs["occupancy"]) == (2, "registers", 0.25)
    smem = occupancy(4, 32, 100_000, H100)
    assert (smem["blocks_per_sm"], smem["limiter"]) == (2, "shared memory")
    assert grid_blocks(["in_ptr0", "out_ptr0", "xnumel", "r0_numel"], (None, None, 1000, 64), {"XBLOCK": 128}) \
        == (8, [8], "ceil(numel / BLOCK) per dimension, from the call's numel arguments and the config")


def test_cpu_roofs_are_measured_once_and_cached(tmp_path, monkeypatch):
    """tracer side, on this CPU: a measured copy bandwidth and matmul rate, then read back from the cache."""
    from inductor_step.tracer.timing import machine
    from inductor_step.tracer.timing.machine import device_roofs

    monkeypatch.setenv("INDUCTOR_STEP_CACHE", str(tmp_path))
    monkeypatch.setattr(machine, "_MEASURED", {})  # an earlier test of this worker may have measured in-process
    first = device_roofs("cpu")
    bw = first["memory_gbps"]["measured"]
    assert first["cached"] is False and 0.1 < bw["value"] < 1000 and "measured on this machine" in bw["source"]
    assert first["compute_tflops"]["float32"]["measured"]["value"] > 0
    assert first["memory_gbps"]["datasheet"]["value"] is None and first["memory_gbps"]["datasheet"]["source"]
    again = device_roofs("cpu")
    kept = again["memory_gbps"]["measured"]
    assert again["cached"] is True and kept["value"] == bw["value"] and kept["source"].startswith(bw["source"])
    # the source says it was not measured now: from the file when a quiet machine kept it, else from this process
    assert kept["source"].endswith(f"read back from {tmp_path / 'roofs.json'}") or \
        kept["source"].endswith("measured earlier in this process"), kept["source"]
    stored = json.load(open(tmp_path / "roofs.json"))
    # kept in the file only when measured on a quiet machine (a busy one's roofs are too low)
    assert bool(stored) == (first["load"] <= 0.5 * first["cpus"])


# ----------------------------------------------------------------------------- GPU (the device machine)

def _has_cuda() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch  # noqa: PLC0415

    return torch.cuda.is_available()


gpu = [pytest.mark.gpu, pytest.mark.skipif(not _has_cuda(), reason="needs a CUDA GPU")]
#: measured copy bandwidth expected, GB/s, by device name
EXPECT_COPY = {"H200": (3800.0, 4800.0), "H100": (2500.0, 3350.0)}


@pytest.mark.gpu
@pytest.mark.skipif(not _has_cuda(), reason="needs a CUDA GPU")
def test_gpu_three_roofs_each_with_a_source_and_measured_below_the_datasheet(tmp_path, monkeypatch):
    import torch

    from inductor_step.tracer.timing.machine import datasheet, device_roofs

    monkeypatch.setenv("INDUCTOR_STEP_CACHE", str(tmp_path))
    roofs = device_roofs("cuda")
    mem = roofs["memory_gbps"]
    assert set(mem) == {"datasheet", "theoretical", "measured"} and all(r["source"] for r in mem.values())
    name = torch.cuda.get_device_name()
    assert mem["measured"]["value"] <= mem["theoretical"]["value"] * 1.02
    for key, (lo, hi) in EXPECT_COPY.items():
        if key in name:
            assert lo <= mem["measured"]["value"] <= hi, mem
    if datasheet(name):
        for dt in ("bfloat16", "float16", "tf32"):
            r = roofs["compute_tflops"][dt]
            assert r["measured"]["value"] <= r["datasheet"]["value"] * 1.05, (dt, r)


@pytest.mark.gpu
@pytest.mark.skipif(not _has_cuda(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("model", ["nanogpt", "resnet"])
def test_gpu_ledger_on_real_training_never_over_the_roof_and_adds_up(model, tmp_path):
    """On nanoGPT-style and ResNet-18 training, every kernel's % of roof is at most 100% of
    the measured roof, wasted + roofline = the kernel sum, Triton kernels have their resources."""
    record = str(tmp_path / f"{model}.jsonl")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--run", "--record", record,
                        os.path.join(ROOT, "benchmarks", "real_gpu_models.py"), model, "--steps", "4"],
                       cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "ledger:" in p.stdout
    s = Store.of(list(read_session(record)))
    rows = ledger.roofline_rows(s)
    over = [(r.graph, r.name, round(r.pct_of_roof, 1), r.gb_source) for r in rows
            if r.pct_of_roof is not None and r.pct_of_roof > 100.0]
    assert not over, over
    for key, run in s.runs.items():
        mine = [r for r in rows if r.graph == key and r.roofline_ms is not None]
        assert sum(r.wasted_ms + r.roofline_ms for r in mine) == \
            pytest.approx(sum(k["median_ms"] for k in run["kernels"] if k["name"] in {r.name for r in mine}))
        for k in run["kernels"]:
            if k["backend"] == "triton":
                res = k.get("resources") or {}
                assert res.get("n_regs") and res.get("limiter") and res.get("waves") is not None, (k["name"], res)


NCU_SCRIPT = '''
import torch

@torch.compile
def f(x, y):
    return x * 2 + y, (x - y).relu() * 3, torch.sigmoid(x) + y

x = torch.randn(64 * 1024 * 1024, device="cuda")
y = torch.randn_like(x)
for _ in range(3):
    f(x, y)
torch.cuda.synchronize()
'''


@pytest.mark.gpu
@pytest.mark.skipif(not _has_cuda(), reason="needs a CUDA GPU")
def test_gpu_ncu_agrees_that_memory_bound_kernels_are_bound_by_dram(tmp_path):
    """For the kernels the ledger calls memory-bound, ncu (where it reads counters) finds
    DRAM throughput the highest speed-of-light unit."""
    import shutil

    if not shutil.which("ncu"):
        pytest.skip("ncu is not installed")
    script = tmp_path / "pointwise.py"
    script.write_text(NCU_SCRIPT)
    record = str(tmp_path / "s.jsonl")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--run", "--record", record, str(script)],
                       cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    s = Store.of(list(read_session(record)))
    memory = [r for r in ledger.roofline_rows(s) if r.backend == "triton" and r.bound == "memory"][:3]
    assert memory, [(r.name, r.bound) for r in ledger.roofline_rows(s)]
    for r in memory:
        cmd, why = ledger.ncu_command(r.name, "cuda", str(script), [], sys.executable)
        assert cmd, why
        text = run_ncu(cmd, r.name, cwd=str(tmp_path))
        if "ERR_NVGPUCTRPERM" in text or "cannot read" in text:
            pytest.skip(text)
        assert "highest unit: DRAM Throughput" in text, text
