"""CPU timing detects contention instead of guessing it from the load average.

A real compiled graph (``torch.compile`` of a small layer norm + matmul, its output code written once for the
module) is timed by :func:`tracer.timing.time_graph` -- what the run stage does -- while busy-loop children
(``sh -c 'while :; do :; done'``) keep every core of this process busy: every figure must come back judged
not reliable, with the measured wait for a core beside it.  A quiet box cannot be had on a shared machine,
so the other direction is checked on what can be: the per-round measurement itself on this process alone.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import time

import pytest

from conftest import busy_loops, cpu_ticks, output_code_file, stop_loops, wait_until

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")


@pytest.fixture(scope="module")
def output_code(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Inductor's output code of a small inference graph (a matmul, a layer norm and gelu), as a file."""
    import torch

    def f(x, w):
        return torch.nn.functional.gelu(torch.nn.functional.layer_norm(x @ w, (64,))) * 2

    return output_code_file(f, (torch.randn(48, 32), torch.randn(32, 64)), tmp_path_factory.mktemp("contention"))


def test_every_figure_is_flagged_when_busy_loops_hold_every_core(output_code: str) -> None:
    from inductor_step.tracer.timing import time_graph
    from inductor_step.tracer.timing.contention import WAIT_SHARE_LIMIT

    cpus = len(os.sched_getaffinity(0))
    kids = busy_loops(cpus)
    try:
        wait_until(lambda: all(cpu_ticks(k.pid) >= 10 for k in kids), timeout=30)  # each loop has run 0.1 s
        t0 = time.monotonic()
        r = time_graph(output_code, None, "cpu")
        took = time.monotonic() - t0
    finally:
        stop_loops(kids)
    assert r["reliable"] is False and r["contended"] is True and r["settled"] is False, r.get("verdicts")
    for which in ("compiled", "kernels"):
        v = r["verdicts"][which]
        assert v["reliable"] is False and v["wait_share"] > WAIT_SHARE_LIMIT, v
        assert v["source"] == "schedstat" or not os.path.exists("/proc/self/task")
    assert "press r to time again" in r["unreliable"] and "waited for a core" in r["unreliable"]
    assert any("waited for a core" in w for w in r["warnings"])
    shares = r["graph_rounds"]["compiled_wait_shares"]
    assert len(shares) == len(r["graph_rounds"]["compiled_rounds_ms"]) and max(shares) > WAIT_SHARE_LIMIT
    assert took < 30, took


def test_a_span_measures_this_process_waiting_for_a_core_and_not_a_sleep() -> None:
    """A thread that sleeps wants no core (no wait); two busy threads per core of this process's
    affinity mask must wait about half the time they want one."""
    from inductor_step.tracer.timing import contention

    cpus = len(os.sched_getaffinity(0))
    stop = time.monotonic() + 0.6

    def spin() -> None:
        while time.monotonic() < stop:
            pass

    kids = busy_loops(cpus)  # the GIL lets one Python thread run at a time: the children hold the other cores
    try:
        with contention.Span() as busy:
            spin()
    finally:
        stop_loops(kids)
    assert busy.result["wait_share"] > contention.WAIT_SHARE_LIMIT, busy.result
    v = contention.judge(busy.result, "the loop")
    assert v["reliable"] is False and "not reliable" in v["text"]
    assert contention.judge(None, "x")["reliable"] is None

    # A sleeping thread wants no core: loaded box or not, this thread's time on a CPU plus its time waiting
    # for one stays far below the sleep's wall time (a measure that counted the sleep as waiting -- wall minus
    # CPU time -- reads ~200 ms here).  Not the process's wait *share*: with ~0.1 ms on a CPU, one wake-up
    # waiting behind another process's busy loop makes the share large on a loaded box, and that is right.
    me = str(threading.get_native_id())
    a = contention.snapshot()
    time.sleep(0.2)
    b = contention.snapshot()
    quiet = contention.between(a, b)
    assert quiet["wall_ms"] >= 150
    if quiet["source"] != "schedstat" or me not in (a["tasks"] or {}) or me not in (b["tasks"] or {}):
        pytest.skip(f"no per-thread schedstat here (source {quiet['source']}): the thread-CPU fallback counts a "
                    "sleep as waiting by design")
    wanted_ms = sum(y - x for x, y in zip(a["tasks"][me], b["tasks"][me])) / 1e6
    assert wanted_ms < 0.25 * quiet["wall_ms"], (wanted_ms, quiet)


def test_each_round_keeps_its_wait_for_a_core_beside_its_time() -> None:
    """whole_graph_rounds keeps each round's wait share next to its time, and the verdict is taken on the
    rounds the median came from (the last five)."""
    from inductor_step.tracer.timing.rounds import GRAPH_ROUNDS, whole_graph_rounds

    n = {"calls": 0}

    def graph() -> None:
        n["calls"] += 1

    out = whole_graph_rounds(graph, None, False, lambda fn: (fn(), 0.01)[1])
    assert len(out["compiled_wait_shares"]) == len(out["compiled_rounds_ms"]) >= GRAPH_ROUNDS
    assert out["compiled_wait"]["source"] in ("schedstat", "thread_cpu")
    assert n["calls"] == len(out["compiled_rounds_ms"])


_ONE_CORE_CHILD = """
import json, os, sys, tempfile
if sys.argv[1] == "one":  # this process and every thread it starts on the first CPU of its mask
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
import torch
torch.set_num_threads(2)
from torch._inductor.utils import run_and_get_code
from inductor_step.tracer.timing import time_graph

def f(x, w):
    return torch.nn.functional.gelu(x @ w) @ w

with torch.no_grad():
    _, codes = run_and_get_code(torch.compile(f), torch.randn(256, 384), torch.randn(384, 384))
path = os.path.join(tempfile.mkdtemp(), "graph.py")
open(path, "w").write(codes[-1])
r = time_graph(path, None, "cpu")
print("RESULT " + json.dumps(r["verdicts"]["compiled"]))
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/task") or len(os.sched_getaffinity(0)) < 2,
                    reason="reads /proc/self/task/*/stat; needs two CPUs")
def test_a_verdict_says_when_the_openmp_threads_shared_one_core() -> None:
    """Two OpenMP threads on one core wait for each other at every parallel region (nanoGPT's call read 340-352 ms
    that way beside two busy processes, 4-6 ms with a core each, both at a ~50% wait: BENCHMARKS.md, "Session 39").
    A real compiled graph timed by time_graph in a child process whose two threads are confined to one CPU
    (sched_setaffinity) must say so in every round; bound to two CPUs (GOMP_CPU_AFFINITY="A B"), in none."""
    import json
    import subprocess
    import sys

    a, b = sorted(os.sched_getaffinity(0))[:2]
    env = dict(os.environ, INDUCTOR_STEP_CPU_ROUNDS_S="1")
    env.pop("OMP_NUM_THREADS", None)
    verdicts = {}
    for how, extra in (("one", {}), ("two", {"GOMP_CPU_AFFINITY": f"{a} {b}"})):
        out = subprocess.run([sys.executable, "-c", _ONE_CORE_CHILD, how], env={**env, **extra}, capture_output=True,
                             text=True, timeout=600)
        line = next((x for x in out.stdout.splitlines() if x.startswith("RESULT ")), None)
        assert line, out.stderr[-3000:]
        verdicts[how] = json.loads(line[len("RESULT "):])
    one, two = verdicts["one"], verdicts["two"]
    assert one["spans"] >= 5 and one["one_core_spans"] == one["spans"], one
    assert "working threads ended" in one["text"] and "on the same core" in one["text"], one["text"]
    assert two["spans"] >= 5 and two["one_core_spans"] == 0 and "same core" not in two["text"], two


@pytest.mark.skipif(not os.path.exists("/proc/self/task") or len(os.sched_getaffinity(0)) < 2,
                    reason="reads /proc/self/task/*/stat; needs two CPUs")
def test_apart_keeps_a_thread_off_the_timing_threads_core_for_one_round() -> None:
    """contention.Apart, what follows a round whose working threads ended on one core: a thread last on the caller's
    core may not use it until the next round ends (it runs elsewhere when it wakes), then has its whole mask back;
    a thread allowed that core only is left alone; a round that did not end on one core moves nothing."""
    from inductor_step.tracer.timing import contention

    a, b = sorted(os.sched_getaffinity(0))[:2]
    both = {a, b}
    ready, wake, done = threading.Event(), threading.Event(), threading.Event()
    tids: dict[str, int] = {}
    woke_on: dict[str, int | None] = {}

    def sleeper(name: str, final: set[int]) -> None:
        os.sched_setaffinity(0, {a})  # run on a, then wait there (a sleeping thread keeps its last core)
        time.sleep(0.01)
        os.sched_setaffinity(0, final)
        tids[name] = threading.get_native_id()
        if len(tids) == 2:
            ready.set()
        wake.wait(30)
        woke_on[name] = contention._last_cpu(str(threading.get_native_id()))
        done.wait(30)

    class Round:  # a Span's two fields Apart reads
        def __init__(self, one_core: bool) -> None:
            self.result = {"one_core": one_core}
            self.workers = [str(tids["free"]), str(tids["held"])]

    mine = os.sched_getaffinity(0)
    threads = [threading.Thread(target=sleeper, args=("free", both)),
               threading.Thread(target=sleeper, args=("held", {a}))]
    apart = contention.Apart()
    try:
        os.sched_setaffinity(0, {a})  # the timing thread on a
        for t in threads:
            t.start()
        assert ready.wait(30)
        assert contention._last_cpu(str(tids["free"])) == a == contention._last_cpu(str(tids["held"]))
        assert apart.after(Round(False)) is False and os.sched_getaffinity(tids["free"]) == both
        assert apart.after(Round(True)) is True and apart.times == 1
        assert os.sched_getaffinity(tids["free"]) == both - {a} and os.sched_getaffinity(tids["held"]) == {a}
        wake.set()
        wait_until(lambda: len(woke_on) == 2, timeout=30)
        assert woke_on["free"] != a and woke_on["held"] == a, woke_on
        apart.after(Round(False))  # the next round ended: the mask is given back
        assert os.sched_getaffinity(tids["free"]) == both and not apart.held
    finally:
        apart.release()
        wake.set()
        done.set()
        for t in threads:
            t.join()
        os.sched_setaffinity(0, mine)
