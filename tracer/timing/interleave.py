"""Interleaved rounds: several callables timed in one process, round by round, so a change of the
machine during the timing moves every one of them alike instead of passing for a difference between them.

Used by a what-if variant against its original (:func:`tracer.whatif.interleaved_rounds`) and by two graphs of
one live session that a diff compares (``r`` in the diff view, :func:`pair_rounds`: a recompile ``[0/1]``
against ``[0/0]``).  Each round times every callable once, in an order that rotates every round; one timing is
Inductor's ``benchmark_cpu`` median on CPU (:func:`tracer.timing.rounds.cpu_quantiles`, 20 ms of calls) or
``triton.testing.do_bench``'s median on CUDA.  On CPU each round's run-queue wait
(:mod:`tracer.timing.contention`) is read, and the rounds together are judged.
"""

from __future__ import annotations

import statistics
import threading
from typing import Any, Callable

ROUNDS = 7  # rounds of every callable, in :func:`rounds`


def one_timing(cuda: bool) -> Callable[[Callable[[], Any]], float]:
    """The single timing a round takes of one callable, in ms: ``do_bench`` median (40 ms, L2 flushed) on
    CUDA, Inductor's ``benchmark_cpu`` median of 20 ms of calls on CPU (0.4 of tracer.timing.rounds.CPU_REP_MS) (through :mod:`tracer.adapter`)."""
    if cuda:
        from triton.testing import do_bench  # noqa: PLC0415

        return lambda fn: float(do_bench(fn, warmup=10, rep=40, return_mode="median"))
    from inductor_step.tracer import adapter  # noqa: PLC0415
    from inductor_step.tracer.timing.rounds import CPU_REP_MS, cpu_quantiles  # noqa: PLC0415

    bench = adapter.benchmarker()
    return lambda fn: cpu_quantiles(bench, fn, warmup_ms=2, rep_ms=0.4 * CPU_REP_MS)[0]


def rounds(fns: dict[str, Callable[[], Any]], cuda: bool, n: int = ROUNDS,
           cancel: threading.Event | None = None,
           progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Time every callable of ``fns`` (name -> no-argument callable) once per round for ``n`` rounds, the order
    rotating each round: ``{"rounds": n done, "<name>_rounds_ms": [...], "<name>_ms": median}`` and, on CPU,
    ``reliable`` / ``wait_share`` (and ``why`` when not reliable) from the rounds' run-queue wait
    (:func:`tracer.timing.contention.judge`).  ``cancel`` set: stops after the round in progress (at least
    one is kept).  A round whose OpenMP threads ended on one core has them kept apart for the next
    (:class:`tracer.timing.contention.Apart`).  Raises what the callables raise."""
    from inductor_step.tracer.timing import contention  # noqa: PLC0415

    one = one_timing(cuda)
    names = list(fns)
    times: dict[str, list[float]] = {k: [] for k in names}
    spans: list[dict[str, Any]] = []
    apart = None if cuda else contention.Apart()  # (CPU: OpenMP threads left on one core, kept apart a round)
    try:
        for r in range(n):
            if r and cancel is not None and cancel.is_set():
                break
            if progress is not None:
                progress(f"round {r + 1} of {n}")
            order = names[r % len(names):] + names[:r % len(names)]
            with contention.Span() as s:
                for k in order:
                    times[k].append(one(fns[k]))
            spans.append(s.result)
            if apart is not None:
                s.result["apart"] = apart.after(s)
    finally:
        if apart is not None:
            apart.release()
    out: dict[str, Any] = {"rounds": len(spans), **{f"{k}_rounds_ms": v for k, v in times.items()},
                           **{f"{k}_ms": statistics.median(v) for k, v in times.items()}}
    if not cuda:
        v = contention.judge(contention.combine(spans), "the interleaved rounds")
        out.update(reliable=v["reliable"] is not False, wait_share=v.get("wait_share"))
        if v["reliable"] is False:
            out["why"] = v["text"]
    return out


def ratio(times: dict[str, Any], num: str, den: str) -> float | None:
    """The median over rounds of each round's ``num`` / ``den`` time (both timed in that round), or None."""
    xs = [a / b for a, b in zip(times.get(f"{num}_rounds_ms") or [], times.get(f"{den}_rounds_ms") or []) if b > 0]
    return statistics.median(xs) if xs else None


def pair_rounds(path_a: str, path_b: str, eager_a: Any = None, eager_b: Any = None,
                script_a: dict[str, Any] | None = None, script_b: dict[str, Any] | None = None,
                n: int = ROUNDS, cancel: threading.Event | None = None,
                progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Two compiled graphs of one session (``path_a``/``path_b``: their output-code files) and, where given,
    their post-grad graphs run eagerly (``eager_a``/``eager_b``: GraphModules), timed round by round in this
    process (:func:`rounds`; :class:`session.format.PairRounds`).

    Each graph runs on its own output module's ``get_args()`` (random tensors of its compiled shapes) with the
    script's first-call tensors where shapes match (``script_a``/``script_b``: ``{"inputs": {...}}``), as
    timing does; its eager graph on the same inputs.  ``b_vs_a`` is the median of each round's B / A compiled
    time, ``eager_b_vs_a`` the same of the eager times: two graphs of different sizes do different work, and
    the eager ratio, taken in the same rounds, says how much.  ``sizes_a``/``sizes_b``: what each ran on
    (:func:`tracer.timing.harness.input_sizes`).  Collectives run as local stand-ins.  Raises what loading or
    running the compiled modules raises; an eager graph that fails is left out (``eager_error``)."""
    import torch  # noqa: PLC0415

    from inductor_step.tracer import adapter  # noqa: PLC0415
    from inductor_step.tracer.timing.harness import _graph_args, _use_script_inputs, input_sizes  # noqa: PLC0415

    mods, args, sources = {}, {}, {}
    for side, path in (("a", path_a), ("b", path_b)):
        mods[side] = adapter.load_output_module(path)
        with open(path, encoding="utf-8") as f:
            sources[side] = f.read()
    out: dict[str, Any] = {}
    with torch.no_grad(), adapter.stand_ins_in_module(mods["a"], sources["a"]), \
            adapter.stand_ins_in_module(mods["b"], sources["b"]):
        for side, script in (("a", script_a), ("b", script_b)):
            args[side] = _graph_args(mods[side])
            _use_script_inputs(args[side], (script or {}).get("inputs") or {})
            out[f"sizes_{side}"] = input_sizes(args[side])
        cuda = any(isinstance(t, torch.Tensor) and t.is_cuda for t in args["a"] + args["b"])
        fns: dict[str, Callable[[], Any]] = {"a": lambda: mods["a"].call(list(args["a"])),
                                             "b": lambda: mods["b"].call(list(args["b"]))}
        errors = []
        for side, gm in (("a", eager_a), ("b", eager_b)):
            if gm is None:
                continue
            try:
                adapter.stand_ins_in_graph(gm)
                gm.recompile()
                gm(*args[side])
                fns[f"eager_{side}"] = lambda gm=gm, side=side: gm(*args[side])
            except Exception as e:  # noqa: BLE001 - eager of a post-grad graph can fail on exotic ops
                errors.append(f"eager {side.upper()}: {type(e).__name__}: {e}")
        if errors:
            out["eager_error"] = "; ".join(errors)
        if "eager_a" not in fns or "eager_b" not in fns:  # a ratio needs both sides
            fns.pop("eager_a", None)
            fns.pop("eager_b", None)
        out.update(rounds(fns, cuda, n, cancel=cancel, progress=progress))
    out["b_vs_a"] = ratio(out, "b", "a")
    if "eager_a_ms" in out:
        out["eager_b_vs_a"] = ratio(out, "eager_b", "eager_a")
    out["device"] = "cuda" if cuda else "cpu"
    return out


__all__ = ["ROUNDS", "one_timing", "pair_rounds", "ratio", "rounds"]
