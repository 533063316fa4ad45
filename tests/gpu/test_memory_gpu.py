"""The memory plan against what the allocator measured, on a CUDA GPU (marked ``gpu``): tests/scripts/memory_whatif.py
on cuda recorded with ``--headless --run``; the timing worker measures each graph's peak over one call
(``torch.cuda.max_memory_allocated()`` minus ``memory_allocated()`` before it, on inputs it keeps, so nothing of the
caller's is freed: the planned peak of the graph's own buffers is the figure to compare).

    python -m pytest -m gpu tests/gpu/test_memory_gpu.py -rA -s

The whole-model check (nanoGPT and GPT-2 training against plain torch.compile in a process of its own, each graph
against its own call, within 5%) is ``python benchmarks/memory_check.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from gpu_helpers import GPU_MARKS, SCRIPTS, headless_env, keep_session

pytestmark = GPU_MARKS


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """tests/scripts/memory_whatif.py on cuda recorded once with ``--headless --run`` for the module: its store."""
    from inductor_step import session

    tmp = tmp_path_factory.mktemp("memory_gpu")
    rec = str(tmp / "memory.jsonl")
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--run", "--record", rec,
                        os.path.join(SCRIPTS, "memory_whatif.py"), "cuda"], cwd=str(tmp), env=headless_env(),
                       capture_output=True, text=True, timeout=600)
    keep_session(rec, "memory_gpu")
    assert p.returncode == 0, p.stderr[-3000:]
    return session.load(rec).store


def test_each_graphs_measured_peak_is_its_planned_peak_within_5_percent(recorded):
    from inductor_step.session.memory import plan

    s = recorded
    rows = []
    for key in ("[0/0] inference", "[1/0] forward", "[1/0] backward"):
        measured = (s.runs[key].get("memory") or {}).get("peak_bytes")
        planned = plan(s, key).peak
        rows.append((key, planned, measured))
    print(rows)
    for key, planned, measured in rows:  # the allocator rounds each block up to 512 bytes: a little above the plan
        assert measured is not None and abs(measured - planned) <= 0.05 * planned, (key, planned, measured)


def test_eager_peak_and_saved_bytes_of_the_training_step_are_the_hand_count(recorded):
    """Eager for the same graph, measured by the allocator (tracer.timing.memory.eager_peak, eager_saved): the MLP step
    on 1024 rows, Linear(64, 256) -> GELU -> Linear(256, 32), ``.square().mean()``."""
    from inductor_step.tracer.timing.memory import ALLOCATOR

    mem = recorded.runs["[1/0] forward"]["memory"]
    eager, saved = mem["eager"], mem["eager_saved"]
    print(mem)
    # by hand: the first Linear's 1024x256 output (GELU saves it) and GELU's (the second Linear saves it) live
    # together with the 1024x32 output (pow saves it) and its square: (2*1024*256 + 2*1024*32) floats, plus the
    # mean's 512-byte block
    hand = (2 * 1024 * 256 + 2 * 1024 * 32) * 4
    assert eager["source"] == ALLOCATOR and abs(eager["peak_bytes"] - hand) <= 0.05 * hand, eager
    assert saved["storage_bytes"] == (2 * 1024 * 256 + 1024 * 32) * 4 and saved["storages"] == 3, saved
    bwd = recorded.runs["[1/0] backward"]["memory"]["eager"]
    grads = (64 * 256 + 256 + 256 * 32 + 32) * 4  # the parameters' .grad, allocated by the backward
    assert bwd["source"] == ALLOCATOR and bwd["peak_bytes"] >= grads, bwd
    inf = recorded.runs["[0/0] inference"]["memory"]["eager"]
    assert inf["source"] == ALLOCATOR and inf["peak_bytes"] > 0 and "eager_saved" not in \
        recorded.runs["[0/0] inference"]["memory"], inf
