"""The script's own compiled call timed whole, against the same call under ``torch.compiler.set_stance("force_eager")``.

The per-graph figures time one output module's ``call`` against Dynamo's graph run eagerly: Dynamo's guards,
AOTAutograd's runtime wrappers, the Python between graphs and around the torch ops are in neither.  This is
the figure a user compares with their own timing: the callable ``torch.compile`` returned, called with the
arguments of the script's latest call (:mod:`inductor_step.tracer.adapter.compiled_calls`), and the same call
with torch.compile switched off for it.  Taken in the script's process once the script has returned (a call
cannot be repeated while the script runs, or from inside a paused compile), never in a torchrun job (a rank's
extra calls would run collectives the other ranks do not).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable

import torch

HOW = ("the script's latest call of {name} ({grad}) repeated with its own arguments: compiled, what the script "
       "calls (Dynamo's guards, AOTAutograd's wrappers and every graph of the call: {graphs}); eager, {name} itself, "
       "what the script runs without torch.compile, Python included (under torch.compiler.set_stance(\"force_eager\"): "
       "a compiled function it reaches runs eagerly too)")


def _why(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}".strip().splitlines()[0][:300]
    if "fail_on_recompile" in text:
        return ("repeating it would recompile: Dynamo's guards fail on the kept arguments now (the script changed "
                f"what the call depends on after it): {text}")
    return f"it could not be repeated ({text})"


def _caller(fn: Callable[..., Any], rec: Any, mark_step: bool) -> Callable[[], Any]:
    """One call of ``fn`` with ``rec``'s (an adapter ``CompiledCallable``) kept arguments; ``mark_step``: a new
    CUDA-graph step first (``torch.compiler.cudagraph_mark_step_begin``), as a training loop's each step."""
    args, kwargs = rec.args, rec.kwargs

    def call() -> Any:
        if mark_step:
            torch.compiler.cudagraph_mark_step_begin()
        return fn(*args, **kwargs)
    return call


def _eager_round(one: Callable[[Callable], float], eager: Callable[[], Any]) -> Callable[[], float]:
    """One eager round (ms): ``eager`` timed by ``one`` under ``set_stance("force_eager")`` (a compiled function
    the call reaches runs eagerly too), entered once per round so that it costs the calls nothing."""
    def round_ms() -> float:
        with torch.compiler.set_stance("force_eager"):
            return one(eager)
    return round_ms


def time_call(rec: Any, labels: list[str], cuda: bool, bench: Callable[[Callable], float]) -> dict[str, Any]:
    """One compiled callable ``rec`` timed whole: ``{"name", "graphs" (labels of the graphs in its call,
    ``"[0/0] forward"``), "calls" (the script's), "grad_enabled", "compiled_ms", "eager_ms" (ms, medians of the
    last rounds, tracer.timing.rounds.whole_graph_rounds: do_bench on CUDA, Inductor's benchmark_cpu on CPU),
    "rounds_stable", "compiled_rounds_ms", "eager_rounds_ms", "load" (the load average, CPUs, session and scheduler
    autogroup of the rounds: tracer.timing.rounds.whole_graph_rounds), "verdicts" ({"compiled", "eager"}:
    tracer.timing.contention.judge), "how"}``; ``{"name", "missing": why}`` where a call cannot be repeated
    (every call runs under ``set_stance("fail_on_recompile")``, entered once, so a guard that fails now says so
    instead of compiling; eager rounds under ``force_eager``).  Compiled is what the script calls (the
    ``OptimizedModule``, or the function torch.compile returned), eager what it would call without torch.compile
    (the module, or the original function).  Never raises."""
    from inductor_step.tracer.timing.contention import judge  # noqa: PLC0415
    from inductor_step.tracer.timing.rounds import _one_round, whole_graph_rounds  # noqa: PLC0415

    out: dict[str, Any] = {"name": rec.name, "graphs": labels, "calls": rec.calls, "grad_enabled": rec.grad_enabled}
    # (``is None``: an OptimizedModule's truth value is its len(), which raises for most modules)
    fn, entry, plain = rec.fn(), rec.entry(), rec.eager()
    entry = fn if entry is None else entry
    if entry is None or plain is None or rec.args is None:
        return {**out, "missing": "the script let go of it (our record holds the compiled callable the script called "
                                  "last, and any other only while the script does)"}
    compiled = _caller(entry, rec, cuda)
    eager = _caller(plain, rec, False)
    try:
        with torch.compiler.set_stance("fail_on_recompile"), torch.set_grad_enabled(rec.grad_enabled):
            for what, fn, stance in (("compiled", compiled, "fail_on_recompile"), ("eager", eager, "force_eager")):
                try:
                    with torch.compiler.set_stance(stance):
                        fn()
                    if cuda:
                        torch.cuda.synchronize()
                except BaseException as e:  # noqa: BLE001 - the script's code, run again: any error is a reason
                    return {**out, "missing": f"the {what} call: {_why(e)}"}
            rounds = whole_graph_rounds(compiled, None, cuda, bench, eager_round=_eager_round(_one_round(cuda, bench),
                                                                                              eager))
    except BaseException as e:  # noqa: BLE001
        return {**out, "missing": f"timing the call failed ({type(e).__name__}: {e})"}
    out.update(compiled_ms=rounds["compiled_ms"], eager_ms=rounds.get("eager_ms"),
               rounds_stable=rounds.get("rounds_stable"), compiled_rounds_ms=rounds.get("compiled_rounds_ms"),
               eager_rounds_ms=rounds.get("eager_rounds_ms"), load=rounds.get("load"),
               verdicts={"compiled": judge(rounds.get("compiled_wait"), "the compiled call's rounds"),
                         "eager": judge(rounds.get("eager_wait"), "the eager call's rounds")},
               how=HOW.format(name=rec.name, grad="grad on" if rec.grad_enabled else "under no_grad",
                              graphs=", ".join(labels))
               + ("; on the script's main thread, as the script called it" if threading.current_thread()
                  is threading.main_thread() else "; on a thread of the agent, not the script's main thread "
                  "(a CPU call made there ran up to 2.5x slower)"))
    return out


class _Discard:
    """A text stream that counts the lines written to it and keeps none: the script's prints, repeated by every
    timed call, stay off the terminal."""

    def __init__(self) -> None:
        self.lines = 0

    def write(self, text: str) -> int:
        self.lines += text.count("\n")
        return len(text)

    def flush(self) -> None:
        pass


def cpu_bench() -> Callable[..., float]:
    """One round's timing of a script's call on the CPU: Inductor's ``benchmark_cpu`` (the median of its calls'
    wall-clock times, ms) over ``2 * CPU_REP_MS`` of calls after ``0.4 * CPU_REP_MS`` of warm-up (its own defaults,
    100 and 20 ms, at the default 50; tracer.timing.rounds.CPU_REP_MS)."""
    import functools  # noqa: PLC0415

    from inductor_step.tracer import adapter  # noqa: PLC0415
    from inductor_step.tracer.timing.rounds import CPU_REP_MS  # noqa: PLC0415

    return functools.partial(adapter.benchmarker().benchmark_cpu, warmup=0.4 * CPU_REP_MS, rep=2 * CPU_REP_MS)


def figures(callables: list[Any], labels_of: dict[str, str], cuda: bool, bench: Callable[[Callable], float],
            missing: str | None = None) -> dict[str, dict[str, Any]]:
    """``{graph label: figure}`` for every graph that ran inside a call of one of ``callables`` (adapter
    ``CompiledCallable``\\ s); ``labels_of`` maps an output-module key to its label (``"[0/0] forward"``).  A
    graph gets its call's figure (:func:`time_call`); ``missing`` given: every graph but a backward gets
    ``{"name", "missing"}`` instead, untimed.  A callable the script never called, or whose graphs are not among ``labels_of``, is
    left out."""
    out: dict[str, dict[str, Any]] = {}
    if missing:  # every graph a call runs (a backward runs outside them), whether or not a call ran it yet
        return {label: {"name": next((r.name for r in callables for k in r.graphs if labels_of.get(k) == label),
                                     "the script's call"), "missing": missing}
                for label in labels_of.values() if " backward" not in label}
    for rec in callables:
        labels = sorted({labels_of[k] for k in rec.graphs if k in labels_of})
        if not rec.calls or not labels:
            continue
        sink = _Discard()
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            fig = time_call(rec, labels, cuda, bench)
        if sink.lines and fig.get("how"):
            fig["how"] += f"; the {sink.lines} line(s) the repeated calls printed were discarded"
        for label in labels:
            out.setdefault(label, fig)
    return out
