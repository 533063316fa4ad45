"""The memory plan on a real CPU compile (tests/scripts/memory_mlp.py, a small MLP training step, recorded headless): the
planned forward peak is the hand-computed one, the planned saved-for-backward bytes are what autograd really held
(the compiled function's saved tensors, measured in the script), Inductor's own estimate (torch._inductor.memory,
recorded at the codegen stop) agrees within 1%, and the headless run prints the memory lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import torch

from inductor_step import session
from inductor_step.session import memory as mem
from inductor_step.session.memory_saved import saved_for_backward

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_mlp_training_step_plan_matches_hand_count_and_autograd(tmp_path):
    out, measured = tmp_path / "s.jsonl", tmp_path / "measured.json"
    env = dict(os.environ, MEMORY_OUT=str(measured),
               PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), ROOT) if p))
    run = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--record", str(out),
                          os.path.join(ROOT, "tests", "scripts", "memory_mlp.py")],
                         cwd=str(tmp_path), env=env, check=True, capture_output=True, text=True, timeout=600)
    s = session.load(str(out))
    p = mem.plan(s.store, "[0/0] forward")
    # by hand: Linear(64, 256) on 16 rows (16x256 floats), GELU (16x256), Linear(256, 32) (16x32), the mean (one
    # float); the first three are saved for the backward and the loss is returned, so all four live at the end
    assert p.peak == (16 * 256 + 16 * 256 + 16 * 32 + 1) * 4
    assert p.inputs_bytes == (256 * 64 + 256 + 16 * 64 + 32 * 256 + 32) * 4
    for key in ("[0/0] forward", "[0/0] backward"):  # Inductor's own estimate (recorded at codegen) agrees
        q = mem.plan(s.store, key)
        if tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2]) < (2, 13):
            assert q.inductor_estimate is None, key  # not read before 2.13 (tracer.adapter.memory)
            continue
        assert q.inductor_estimate is not None and abs(q.inductor_estimate - q.peak) <= 0.01 * q.peak, key
    sv = saved_for_backward(s.store, "[0/0] forward")
    got = json.loads(measured.read_text())
    assert sv.storage_bytes == got["saved_storage_bytes"] > 0  # planned == held by autograd (params, batch apart)
    assert len(sv.tensors) == got["saved_tensors"]
    lines = [l for l in run.stdout.splitlines() if l.startswith("memory: ")]
    assert lines[0].startswith(f"memory: [0/0] forward planned peak {mem.fmt_bytes(p.peak)} at ")
    assert f"saved for backward {mem.fmt_bytes(sv.storage_bytes)} ({len(sv.tensors)} tensors" in lines[0]
    assert any(l.startswith("memory: [0/0] backward planned peak ") for l in lines)
