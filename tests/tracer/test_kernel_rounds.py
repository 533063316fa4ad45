"""CPU kernel times survive a burst of other processes' work: each kernel is timed in windows spread over rounds.

A real compiled graph (``torch.compile`` of an addmm, gelu and a second addmm, its output code written once) is timed
by :func:`tracer.timing.time_graph` -- what the run stage does -- and busy-loop children hold every core of this
process exactly while the first kernel call's first window runs (started when the timing says it begins that call,
stopped when it says it moves on).  The first call, an addmm whose OpenMP threads then wait for a core at every call,
read 10-40 ms against its quiet 0.01 ms (99.8% of the graph's kernel time on a busy box, its twin beside it at
0.01 ms); the windows of the later rounds are quiet, and the lowest window is what the run keeps.
"""

from __future__ import annotations

import importlib.util
import os
import re

import pytest

from conftest import busy_loops, cpu_ticks, output_code_file, stop_loops, wait_until

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")


@pytest.fixture(scope="module")
def output_code(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Inductor's output code of a small MLP inference graph ([32, 64] x [64, 256] addmm, gelu, addmm), as a file."""
    import torch

    def f(x, w1, b1, w2, b2):
        return torch.nn.functional.gelu(x @ w1 + b1) @ w2 + b2

    args = (torch.randn(32, 64), torch.randn(64, 256), torch.randn(256), torch.randn(256, 64), torch.randn(64))
    return output_code_file(f, args, tmp_path_factory.mktemp("kernel_rounds"))


def test_a_burst_during_one_kernels_window_does_not_make_it_the_slowest(output_code: str) -> None:
    from inductor_step.tracer.timing import time_graph

    cpus = len(os.sched_getaffinity(0))
    kids: list = []
    said: list[str] = []

    def progress(what: str) -> None:
        said.append(what)
        first = re.match(r"kernel 1/\d+(, round 1/\d+)?: ", what)
        if first and not kids and len([w for w in said if w.startswith("kernel 1/")]) == 1:
            kids.extend(busy_loops(4 * cpus))
            wait_until(lambda: all(cpu_ticks(k.pid) >= 5 for k in kids), timeout=30)  # each loop has run 50 ms
        elif kids and what.startswith("kernel ") and not what.startswith("kernel 1/"):
            stop_loops(kids)

    try:
        r = time_graph(output_code, None, "cpu", progress=progress)
    finally:
        stop_loops(kids)
    ks = r["kernels"]
    assert ks and ks[0]["name"].startswith("extern_kernels.addmm"), [k["name"] for k in ks]
    assert said.count(next(w for w in said if w.startswith("kernel 1/"))) == 1  # the burst held one window
    # quiet, this addmm takes ~0.01 ms, a core-starved window ~5-120 ms a call.  Its twin addmm#1 had no burst of
    # ours: where it read slow too, other processes kept this box busy throughout and nothing here can be told
    twin = next(k for k in ks if k["name"] == "extern_kernels.addmm#1")
    if twin["median_ms"] >= 1.0:
        pytest.skip(f"other processes kept every core busy: addmm#1 (no burst) read {twin['median_ms']:.1f} ms")
    assert ks[0]["median_ms"] < 1.0, [(k["name"], k["median_ms"], k["p20_ms"], k["p80_ms"]) for k in ks]
