"""What the GPU tests (tests/gpu/test_*.py) share: whether CUDA is here, the marks every GPU test module carries,
the environment of a recording, keeping a copy of each session, and recording a tests/scripts script with
``inductor-step --headless --run --record``.  Imported as ``gpu_helpers`` (tests/gpu/ is on sys.path: pytest's
prepend import mode); not a test module."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from typing import Any

import pytest

from inductor_step.session.format import graph_key, read_session

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "tests", "scripts")


def has_cuda() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch  # noqa: PLC0415

    return torch.cuda.is_available()


#: every GPU test module's ``pytestmark``: marked ``gpu``, skipped without CUDA
GPU_MARKS = [pytest.mark.gpu,
             pytest.mark.skipif(not has_cuda(), reason="needs a CUDA GPU (torch.cuda.is_available() is False)")]


def headless_env(drop: tuple[str, ...] = ("TORCH_LOGS", "TORCH_TRACE")) -> dict[str, str]:
    """This environment with the repository first on PYTHONPATH and ``drop`` removed (torch's own logging
    would interleave with the recording)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for k in drop:
        env.pop(k, None)
    return env


def keep_session(rec: str, name: str) -> None:
    """``INDUCTOR_STEP_KEEP_SESSIONS=DIR``: a copy of session file ``rec`` as ``DIR/<name>.jsonl``."""
    keep = os.environ.get("INDUCTOR_STEP_KEEP_SESSIONS")
    if keep and os.path.exists(rec):
        os.makedirs(keep, exist_ok=True)
        shutil.copy(rec, os.path.join(keep, f"{name}.jsonl"))


def record_script(tmp_path_factory: pytest.TempPathFactory, name: str, args: list[str] | None = None) -> dict[str, Any]:
    """tests/scripts/<name>.py recorded with ``--headless --run``: ``{"rc", "stdout", "tail", "runs", "code"}``
    (runs and codegen stops keyed as the UI keys graphs)."""
    cwd = tmp_path_factory.mktemp(name)
    rec = str(cwd / f"{name}.jsonl")
    env = headless_env(("TORCH_LOGS",))
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--run", "--record", rec,
                        os.path.join(SCRIPTS, f"{name}.py"), *(args or [])], cwd=str(cwd), env=env,
                       capture_output=True, text=True, timeout=int(os.environ.get("INDUCTOR_STEP_GPU_TIMEOUT", "420")))
    msgs = [dict(m) for m in read_session(rec)] if os.path.exists(rec) else []
    keep_session(rec, name)
    tail = f"rc={p.returncode}\n{p.stdout[-3000:]}\n--- stderr\n{p.stderr[-3000:]}"
    assert msgs, tail
    # keyed as the UI keys graphs (protocol.graph_key: a part's "#2", a subgraph's " › true_graph_0")
    runs = {graph_key(m): m for m in msgs if m.get("type") == "run"}
    code = {graph_key(m): m for m in msgs if m.get("type") == "stop" and m["stage"] == "codegen"}
    return {"rc": p.returncode, "stdout": p.stdout, "tail": tail, "runs": runs, "code": code}


__all__ = ["GPU_MARKS", "ROOT", "SCRIPTS", "has_cuda", "headless_env", "keep_session", "record_script"]
