"""Numerics on a CUDA GPU (marked ``gpu``): the three real divergences of tests/scripts/numerics_small.py
with Triton kernels, and the what-if variant ``emulate_precision_casts=True`` on the bf16 chain.

    python -m pytest -m gpu tests/gpu/test_numerics_gpu.py -rA
"""

from __future__ import annotations

import os
import subprocess
import sys

from gpu_helpers import GPU_MARKS, ROOT, headless_env, keep_session  # (tests/gpu/ is on sys.path: pytest's prepend mode)

from inductor_step.session.format import graph_key, read_session, validate

SCRIPT = os.path.join(ROOT, "tests", "scripts", "numerics_small.py")
pytestmark = GPU_MARKS


def test_numerics_on_cuda_finds_the_three_divergences(tmp_path):
    rec = str(tmp_path / "numerics_gpu.jsonl")
    env = headless_env()
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--numerics", "--what-if",
                        "emulate_precision_casts=True", "--record", rec, SCRIPT, "--device", "cuda", "--no-train"],
                       cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=400)
    print(p.stdout[-6000:])
    print(p.stderr[-3000:])
    keep_session(rec, "numerics_gpu")
    msgs = list(read_session(rec))
    num = {graph_key(m): m for m in msgs if m.get("type") == "numerics"}
    assert all(validate(m) == [] for m in num.values())
    assert num["[0/0] inference"]["device"].startswith("cuda")
    chain = num["[0/0] inference"]
    assert chain["first_divergence"]["fx_node"] == "mul_1" and chain["first_divergence"]["status"] == "closer"
    assert "first_suspect" not in chain
    assert "first_nonfinite" not in num["[1/0] inference"]  # eager and float64 hold the same NaNs
    nan = num["[1/0] inference"]["nonfinite_as_eager"]["first"]
    assert nan["kernel"].startswith("triton_") and nan["nan"] > 0
    sus = num["[2/0] inference"]["first_suspect"]
    assert sus["kernel"].startswith("triton_") and "tanh" in sus["kernel"]
    assert num["[2/0] inference"]["localized"]["first"] == "tanh"
    assert all(r["status"] == "ok" for r in num["[2/0] inference"]["rows"][:sus["index"]])
    variant = num.get("[0/0] inference · emulate_precision_casts=True")
    assert variant is not None and not variant.get("failed")
    print("emulate_precision_casts=True on the bf16 chain:", variant.get("first_divergence") or "no divergence")


def test_numerics_on_cuda_cries_no_wolf(tmp_path):
    """Numerics that cried wolf, on a GPU (tests/scripts/numerics_wolf.py, every compiled output equal to eager's): a
    mean's buffer is no suspect, a causal mask's -inf (eager's too) is no first NaN/Inf, and a training step's
    dropout buffers are compared with Inductor's random numbers replayed (Triton's tl.rand)."""
    rec = str(tmp_path / "numerics_wolf_gpu.jsonl")
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--numerics", "--record", rec,
                        os.path.join(ROOT, "tests", "scripts", "numerics_wolf.py"), "--device", "cuda"],
                       cwd=str(tmp_path), env=headless_env(), capture_output=True, text=True, timeout=400)
    print(p.stdout[-6000:])
    print(p.stderr[-3000:])
    keep_session(rec, "numerics_wolf_gpu")
    num = {graph_key(m): m for m in read_session(rec) if m.get("type") == "numerics"}
    assert set(num) == {"[0/0] inference", "[1/0] inference", "[2/0] forward", "[2/0] backward", "[3/0] inference"}, set(num)
    for key, m in num.items():
        assert not m.get("failed"), (key, m.get("error"))
        assert "first_suspect" not in m and "first_divergence" not in m, (key, m.get("first_suspect"))
        assert "first_nonfinite" not in m, (key, m["first_nonfinite"])
    fwd = num["[2/0] forward"]["summary"]
    assert fwd["compared"] == fwd["buffers"], (fwd, num["[2/0] forward"].get("random"))
