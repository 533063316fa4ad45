"""Child processes the UI and the command line start besides the agent: a kernel's repro (``inductor-step lower``) and ncu."""

from __future__ import annotations

import os
import subprocess
import sys

from inductor_step.session.ledger import ncu_text
from inductor_step.session.saved_inputs import repro_dir


def write_repro(session_path: str, graph: str, kernel: str) -> str:
    """Write ``kernel``'s repro into :func:`inductor_step.session.saved_inputs.repro_dir` (child process:
    ``inductor-step lower --repro --no-compile``, which needs no GPU and no Triton; at most 300 s); returns its
    last line of output, or one line saying why it did not run."""
    cmd = [sys.executable, "-m", "inductor_step.tracer.lower", session_path, "--pick", f"{graph}|{kernel}",
           "--repro", repro_dir(session_path), "--no-compile"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"inductor-step lower did not run ({type(e).__name__})"
    return (p.stdout.strip().splitlines() or p.stderr.strip().splitlines() or ["no output"])[-1]


def run_ncu(cmd: list[str], kernel: str, timeout_s: int = 900, cwd: str | None = None) -> str:
    """Run ``cmd`` (:func:`inductor_step.session.ledger.ncu_command`) in ``cwd`` (when it exists) for at most
    ``timeout_s`` seconds and say what ncu found (:func:`inductor_step.session.ledger.ncu_text`), or one line
    saying why it did not finish."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False,
                           cwd=cwd if cwd and os.path.isdir(cwd) else None)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"# ncu did not finish: {e}"
    return ncu_text(p.stdout, p.stderr, p.returncode, kernel)
