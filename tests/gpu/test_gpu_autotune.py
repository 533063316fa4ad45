"""Max-autotune's selections on the GPU against torch's own AUTOTUNE tables, marked ``gpu``; skipped without CUDA.

    python -m pytest -m gpu tests/gpu/test_gpu_autotune.py -rA

On the GPU, under ``benchmark_epilogue_fusion`` (on by default), select_algorithm returns a MultiTemplateBuffer and
the scheduler benchmarks the choices later: every selection was recorded "not benchmarked", with no times and no
winner (27 of 27 in GPT-2's max-autotune recording).  tests/scripts/cudagraph_modes.py's bf16 MLP under
``mode="max-autotune"`` is recorded here with torch's stderr kept whole: each recorded selection has its times, the
times of the choices torch's table prints agree with it, and the winner is the table's fastest (or, where the
scheduler timed choices with the epilogue fused, the fastest of those, as torch's ``get_min_choice`` reads them).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from gpu_helpers import GPU_MARKS, SCRIPTS, headless_env

from inductor_step.session.format import read_session

pytestmark = GPU_MARKS


def _torch_tables(stderr: str) -> list[tuple[str, dict[str, float]]]:
    """torch's ``AUTOTUNE op(sizes)`` tables (select_algorithm's log_results): the head line, {choice: ms}."""
    out = []
    for block in re.split(r"\n(?=AUTOTUNE )", stderr):
        if block.startswith("AUTOTUNE "):
            rows = {m.group(1): float(m.group(2)) for m in re.finditer(r"^\s+(\S+) (\d+\.\d+) ms", block, re.M)}
            out.append((block.splitlines()[0], rows))
    return out


def test_deferred_selections_have_torchs_times_and_its_fastest_as_winner(tmp_path):
    rec = tmp_path / "s.jsonl"
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--record", str(rec),
                        os.path.join(SCRIPTS, "cudagraph_modes.py"), "max-autotune", "bf16", "infer", "--steps", "3"],
                       cwd=tmp_path, env=headless_env(("TORCH_LOGS",)), capture_output=True, text=True, timeout=420)
    assert p.returncode == 0, p.stderr[-3000:]
    tables = _torch_tables(p.stderr)
    ours = [a for m in read_session(str(rec)) if m.get("type") == "stop" and m.get("stage") == "codegen"
            for a in (m.get("autotune") or [])]
    assert tables and len(ours) == len(tables), (len(ours), [h for h, _ in tables])
    for sel in ours:
        timed = {c["name"]: c["ms"] for c in sel["choices"] if c.get("ms") is not None}
        head, rows = max(tables, key=lambda t: len(set(t[1]) & set(timed)))
        assert sel["benchmarked"] and set(rows) <= set(timed), (sel, head)
        assert all(abs(timed[k] - v) <= max(0.002 * v, 1e-4) for k, v in rows.items()), (timed, rows)
        # where the scheduler timed choices with the epilogue fused, get_min_choice reads those (scheduler.py
        # speedup_by_fusion replaces the buffer's timings with them): the fastest fused one is torch's pick
        fused = sel.get("fused_ms") or rows
        assert sel["winner"] == min(fused, key=fused.get), (sel["winner"], head, rows, sel.get("fused_ms"))
        assert "scheduler" in sel["note"], sel["note"]
