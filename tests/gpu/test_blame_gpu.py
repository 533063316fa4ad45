"""Blame on a CUDA GPU (marked ``gpu``): torch's planted Triton relu bug bisected to the lowering of relu, each step
forked from the warm parent (which must not have touched CUDA before the fork).

    python -m pytest -m gpu tests/gpu/test_blame_gpu.py -rA
"""

from __future__ import annotations

import os
import subprocess
import sys

from gpu_helpers import GPU_MARKS, headless_env, keep_session  # (tests/gpu/ is on sys.path: pytest's prepend mode)

from inductor_step.session import blame as sb
from inductor_step.session.format import read_session, validate

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "blame_relu_cuda.py")
pytestmark = GPU_MARKS


def test_blame_names_the_triton_relu_lowering(tmp_path):
    rec = str(tmp_path / "blame_gpu.jsonl")
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--blame", "numerics", "--record", rec,
                        SCRIPT], cwd=str(tmp_path), env=headless_env(), capture_output=True, text=True, timeout=600)
    print(p.stdout[-6000:])
    print(p.stderr[-3000:])
    keep_session(rec, "blame_gpu")
    msgs = [m for m in read_session(rec) if m.get("type") == "blame"]
    assert msgs and all(validate(m) == [] for m in msgs)
    run = sb.runs(msgs)[-1]
    assert [s.outcome for s in run.steps][:2] == ["bad", "good"], [s.line() for s in run.steps]
    v = run.verdict
    assert v.found and v.subsystem == "lowerings" and v.what == "relu", v
    assert v.leaves is not None and v.leaves.status not in ("suspect", "diverges")
