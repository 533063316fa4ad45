"""Repeated timing: whole-graph rounds that must agree (GPU) and quantiles of CPU calls."""

from __future__ import annotations

import os
from typing import Any, Callable

GRAPH_ROUNDS = 5  # whole-graph timing rounds on CUDA (compiled and eager alternating) that must agree
MAX_GRAPH_ROUNDS = 20
ROUNDS_SPREAD = 0.10  # the last GRAPH_ROUNDS rounds agree when (max - min) / min is at most this


# CPU: stop adding rounds after this long (s), once GRAPH_ROUNDS are done; INDUCTOR_STEP_CPU_ROUNDS_S sets it (the
# test suite's shorter cap: on a loaded 2-core box CPU rounds rarely agree, so every timed graph ran to the cap)
CPU_ROUNDS_S = float(os.environ.get("INDUCTOR_STEP_CPU_ROUNDS_S", "4"))

# CPU: the timed window (ms) of one measurement: a whole-graph round, a kernel's window (split over its rounds),
# and half of a script's call round (whose warm-up is 0.4 of it: Inductor's benchmark_cpu's 20 / 100 ms at 50);
# INDUCTOR_STEP_CPU_REP_MS sets it (the test suite's 10 ms: shorter windows time the same calls, with more noise)
CPU_REP_MS = float(os.environ.get("INDUCTOR_STEP_CPU_REP_MS", "50"))


def _loadavg() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        return None


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def scheduling_group() -> dict[str, Any]:
    """Where the scheduler put this process: ``{"session": its session id (os.getsid), "launch_session": the session
    inductor-step was started in (``INDUCTOR_STEP_LAUNCH_SESSION``, set by live.client.agent_env; None outside it),
    "autogroup": the text of /proc/self/autogroup ("/autogroup-123 nice 0"), or None where autogroups are off or
    not in the kernel}``.

    With autogroups on, Linux shares the CPUs between sessions (autogroups) first, so where a process runs decides
    how the load of other sessions weighs on it.  The agent and the timing worker run in the session inductor-step
    was started from (live.client.own_process_group), as the script run from that shell would; a plain process
    beside two busy loops of the shell left its two OpenMP threads on one core more often in a session of its own
    (BENCHMARKS.md, "Session 39")."""
    try:
        session: int | None = os.getsid(0)
    except (OSError, AttributeError):
        session = None
    group = None
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled", encoding="ascii") as f:
            on = f.read().strip() == "1"
        if on:
            with open("/proc/self/autogroup", encoding="ascii") as f:
                group = f.read().strip() or None
    except OSError:
        pass
    launch = os.environ.get("INDUCTOR_STEP_LAUNCH_SESSION")
    return {"session": session, "launch_session": int(launch) if launch and launch.isdigit() else None,
            "autogroup": group}


def stable_window(rounds: list[float], n: int = GRAPH_ROUNDS, spread: float = ROUNDS_SPREAD) -> list[float] | None:
    """The last ``n`` of ``rounds`` (ms) when they agree within ``spread`` ((max - min) / min),
    else None.  ``[1.83, 2.69, 2.64, 2.68, 1.77]`` (a slow spell in the middle): None."""
    last = rounds[-n:]
    if len(last) < n or min(last) <= 0:
        return None
    return last if (max(last) - min(last)) / min(last) <= spread else None


def rounds_until_stable(measure: Callable[[], float], max_rounds: int = MAX_GRAPH_ROUNDS) -> dict[str, Any]:
    """Call ``measure`` (one round, returns ms) until the last :data:`GRAPH_ROUNDS` rounds agree
    (:func:`stable_window`) or ``max_rounds`` are done: ``{"ms": median of the last GRAPH_ROUNDS,
    "rounds_ms": every round, "stable": bool}``.  The rule :func:`whole_graph_rounds` applies to the
    graph time, for any timing loop (benchmarks/gpu_vs_profiler.py's plain loop uses it)."""
    rounds: list[float] = []
    while len(rounds) < max_rounds:
        rounds.append(float(measure()))
        if stable_window(rounds) is not None:
            break
    last = sorted(rounds[-GRAPH_ROUNDS:])
    return {"ms": last[len(last) // 2], "rounds_ms": rounds, "stable": stable_window(rounds) is not None}


def whole_graph_rounds(compiled: Callable, eager: Callable | None, cuda: bool,
                       bench: Callable[[Callable], float], eager_round: Callable[[], float] | None = None,
                       decomposed: Callable | None = None) -> dict[str, Any]:
    """``compiled_ms`` and ``eager_ms`` (ms) of one graph, and ``decomposed_ms`` where ``decomposed`` (the
    post-grad graph run op by op) is given: each round times all three in turn.  ``eager_round`` (a callable
    returning one round's ms: autograd's backward, whose forward must not be timed,
    :func:`tracer.timing.eager_user.backward_round`) replaces the benchmark of ``eager``.

    CUDA: rounds of ``triton.testing.do_bench`` (L2 flushed, 40 ms each, median), compiled and
    eager alternating, until the last :data:`GRAPH_ROUNDS` compiled rounds agree within
    :data:`ROUNDS_SPREAD` (:func:`stable_window`) or :data:`MAX_GRAPH_ROUNDS` are done; each time
    is the median of the last :data:`GRAPH_ROUNDS` rounds.  Every round is kept
    (``compiled_rounds_ms``, ``eager_rounds_ms``) and ``rounds_stable`` says whether they agreed.
    CPU: the same rounds, each one ``bench`` call (Inductor's ``benchmark_cpu``, median), until the
    last :data:`GRAPH_ROUNDS` agree, or :data:`MAX_GRAPH_ROUNDS` are done, or :data:`CPU_ROUNDS_S`
    seconds have gone by after :data:`GRAPH_ROUNDS` rounds; each round's run-queue wait share is kept
    (``compiled_wait_shares``, ``eager_wait_shares``) and the last :data:`GRAPH_ROUNDS` rounds' together
    (``compiled_wait``, ``eager_wait``: :func:`tracer.timing.contention.combine`), which judge the figure; where a round's
    OpenMP threads ended on one core, they are kept apart for the next round (:class:`tracer.timing.contention.Apart`:
    a parallel region on one core waits for the other thread's turn, 340-352 ms for nanoGPT's call against 4-6 ms).
    ``load`` is the 1-minute load average
    before and after the rounds, the CPUs this process may use, and its session and scheduler autogroup
    (:func:`scheduling_group`): on a busy 2-core box one graph read
    15.97, 0.0027 and 15.90 ms in three single measurements, the OpenMP threads of a
    small kernel waiting for a core; rounds that never agree say so instead of picking one.

    Why rounds: a launch-bound graph's time is set by the CPU, and the GPU box has slow spells.
    On an H200 one do_bench of ResNet-18's training forward read 2.96 ms where runs before and after
    read 1.71-1.77 ms. A freshly started box read rounds of [1.83, 2.69, 2.64, 2.68, 1.77] ms, and even
    the GPU-bound backward graph read 10-20% slow in the same spell.  A median over five
    consecutive rounds was not enough; waiting for rounds that agree is."""

    import time  # noqa: PLC0415

    from inductor_step.tracer.timing import contention  # noqa: PLC0415

    one = _one_round(cuda, bench)
    t0 = time.monotonic()
    load_before = _loadavg()
    if eager_round is None and eager is not None:
        eager_round = lambda: one(eager)  # noqa: E731
    apart = None if cuda else contention.Apart()  # (CPU: OpenMP threads left on one core, kept apart a round)
    c = _Series(lambda: one(compiled), apart=apart)
    e = _Series(eager_round, guarded=True, apart=apart)
    d = _Series((lambda: one(decomposed)) if decomposed is not None else None, guarded=True, apart=apart)
    try:
        while len(c.rounds) < MAX_GRAPH_ROUNDS:
            for series in (c, e, d):
                series.round(contention)
            if stable_window(c.rounds) is not None and (not e.rounds or stable_window(e.rounds) is not None
                                                        or len(c.rounds) >= 2 * GRAPH_ROUNDS):
                break
            if not cuda and len(c.rounds) >= GRAPH_ROUNDS and time.monotonic() - t0 > CPU_ROUNDS_S:
                break
    finally:
        if apart is not None:
            apart.release()
    out = {"compiled_ms": _median_of_last(c.rounds), "compiled_rounds_ms": c.rounds,
           "rounds_stable": stable_window(c.rounds) is not None,
           "load": {"loadavg_1m_before": load_before, "loadavg_1m_after": _loadavg(), "cpus": _cpus(),
                    **scheduling_group()}}
    if e.rounds:
        out.update(eager_ms=_median_of_last(e.rounds), eager_rounds_ms=e.rounds)
    if d.rounds:
        out.update(decomposed_ms=_median_of_last(d.rounds), decomposed_rounds_ms=d.rounds)
    # how long the threads waited for a core in each round, and over the rounds used: on the GPU too, where a
    # launch-bound graph (an eager backward: autograd's engine launching kernel after kernel) is as slow as the
    # CPU that launches it
    for name, series in (("compiled", c), ("eager", e), ("decomposed", d)):
        if name == "compiled" or series.rounds:
            out[f"{name}_wait_shares"] = [round(x.get("wait_share", 0.0), 4) for x in series.spans]
            out[f"{name}_wait"] = contention.combine(series.spans[-GRAPH_ROUNDS:])
    return out


def _one_round(cuda: bool, bench: Callable[[Callable], float]) -> Callable[[Callable], float]:
    """How one round times a callable, in ms: on CUDA ``triton.testing.do_bench`` (L2 flushed, 40 ms,
    median), on CPU one ``bench`` call."""
    if cuda:
        from triton.testing import do_bench  # noqa: PLC0415

        return lambda fn: float(do_bench(fn, warmup=10, rep=40, return_mode="median"))
    return lambda fn: float(bench(fn))


def _median_of_last(xs: list[float]) -> float:
    """The middle one of the last :data:`GRAPH_ROUNDS` of ``xs`` (sorted; the upper middle of an even count)."""
    last = sorted(xs[-GRAPH_ROUNDS:])
    return last[len(last) // 2]


class _Series:
    """One figure's rounds (``rounds``, ms) and each round's run-queue wait (``spans``,
    :class:`tracer.timing.contention.Span` results).  A round whose working threads ended on one core
    (``one_core``) has them kept apart for the next (``apart``: a :class:`tracer.timing.contention.Apart`, shared by
    the series of one timing; the span's ``apart`` says so).  ``fn`` times one round; ``guarded``: a round
    that raises (eager of a post-grad graph can fail on exotic ops) drops the figure, its rounds and
    spans cleared and no more rounds taken; unguarded, the exception propagates.  No ``fn``: no rounds."""

    def __init__(self, fn: Callable[[], float] | None, guarded: bool = False, apart: Any = None) -> None:
        self.fn, self.guarded, self.apart = fn, guarded, apart
        self.rounds: list[float] = []
        self.spans: list[dict[str, Any]] = []

    def round(self, contention: Any) -> None:
        """Take one round under a contention span (``contention``: the :mod:`tracer.timing.contention` module)."""
        if self.fn is None:
            return
        with contention.Span() as s:
            x = _try(self.fn) if self.guarded else self.fn()
        if x is None:
            self.fn, self.rounds, self.spans = None, [], []
            return
        self.rounds.append(x)
        self.spans.append(s.result)
        if self.apart is not None:  # its OpenMP threads ended the round on one core: apart for the next round
            s.result["apart"] = self.apart.after(s)


def _try(fn: Callable[[], float]) -> float | None:
    """``fn()``, or None where it raises."""
    try:
        return fn()
    except Exception:  # noqa: BLE001 - eager of a post-grad graph can fail on exotic ops
        return None


def cpu_quantiles(benchmarker: Any, fn: Callable[[], Any], warmup_ms: float = 5,
                  rep_ms: float = CPU_REP_MS) -> tuple[float, float, float]:
    """(median, p20, p80) in ms of ``fn``'s calls on the CPU, run by Inductor's
    ``benchmarker.benchmark_cpu`` (``warmup_ms`` of calls, then ``rep_ms`` of timed calls).

    ``benchmark_cpu`` returns only the median of its per-call wall-clock times, so each call also
    reads ``time.perf_counter`` around ``fn`` itself; the warm-up calls are told apart by the same
    rule benchmark_cpu uses (they end with the first call that ends ``warmup_ms`` after the first
    began), and the three figures are quantiles of the timed calls.  Raises what ``fn`` raises."""
    import statistics  # noqa: PLC0415
    import time  # noqa: PLC0415

    calls: list[tuple[float, float]] = []

    def timed() -> Any:
        t0 = time.perf_counter()
        out = fn()
        calls.append((t0, time.perf_counter()))
        return out

    benchmarker.benchmark_cpu(timed, warmup=warmup_ms, rep=rep_ms)
    start = calls[0][0]
    first = next((i + 1 for i, (_, end) in enumerate(calls) if (end - start) * 1e3 > warmup_ms), 0)
    ms = [(end - t0) * 1e3 for t0, end in calls[first:]] or [(end - t0) * 1e3 for t0, end in calls]
    if len(ms) < 2:
        return ms[0], ms[0], ms[0]
    q = statistics.quantiles(ms, n=10, method="inclusive")  # q[1] is the 20th percentile, q[7] the 80th
    return statistics.median(ms), q[1], q[7]
