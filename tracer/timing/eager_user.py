"""The run stage's eager: Dynamo's graph (what the script runs without torch.compile), timed like the script runs it.

"eager" was Inductor's post-grad graph, decomposed to ATen and prims and run op by op by
``torch.fx``: 2x the script's own time on CPU (an MLP block with LayerNorm: 1.15 ms against 0.59 ms for
the module without compile) and 2-25x on an H100.  Eager is now the GraphModule Dynamo handed
``compile_fx`` (:mod:`tracer.adapter.dynamo_graph`: the user's torch functions and modules, before
AOTAutograd and decompositions), on its real inputs from the script's first call:

* ``inference``: the graph called with grad mode as the script had it at that call;
* ``forward`` (of a training compile): the graph called with grad enabled, so autograd records the
  graph for backward as the script's eager would;
* ``backward``: autograd's backward of it -- each round runs the graph forward untimed, then times
  ``torch.autograd.backward(outputs, ones)`` over the outputs that require grad (the leaves' ``.grad``
  set to None first, as ``zero_grad()`` leaves them), by ``time.perf_counter`` on CPU and CUDA events on
  GPU; the round's figure is the median of its calls (the first dropped as warm-up).

The decomposed post-grad graph run op by op stays as a third figure (``decomposed_ms``), never as eager.
The Python the script runs around its torch ops (module ``__call__``, hooks, a model's argument checks and output
classes) is not in Dynamo's graph, so it is in neither figure: Hugging Face's GPT-2 forward reads 1.6-1.9 ms this way
on an H200 where the module's own call reads 1.8-3.0 ms (BENCHMARKS.md, "Session 33 on the GPU").
"""

from __future__ import annotations

import io
import statistics
import time
from typing import Any, Callable

import torch

#: what the run stage says eager is, per graph kind (the result's ``eager_how``)
EAGER_HOW = {
    "inference": "Dynamo's graph (the script's own torch ops as traced, as without torch.compile, but without the "
                 "Python around them: module calls, hooks, argument checks) run eagerly on the script's first-call "
                 "inputs",
    "forward": "Dynamo's graph (the script's own torch ops as traced, as without torch.compile, but without the "
               "Python around them: module calls, hooks, argument checks) run eagerly with grad enabled (autograd "
               "records it, as the script's eager does) on the script's first-call inputs",
    "backward": "autograd's backward of Dynamo's graph (torch.autograd.backward {from}), the graph's forward "
                "run untimed before each call, on the script's first-call inputs",
}
DECOMPOSED_HOW = ("Inductor's post-grad graph (decomposed to ATen/prims) run op by op by torch.fx on the compiled "
                  "graph's inputs: not what the script runs without torch.compile (shown for reference; the ledger's "
                  "per-line eager times come from it)")

ROUND_MS_CPU = 20.0  # one backward round: timed calls until this much backward time (ms), at least MIN_CALLS
ROUND_MS_CUDA = 40.0
MIN_CALLS = 5
MAX_CALLS = 500


def sendable_reason(dyn: dict[str, Any] | None) -> str | None:
    """Why Dynamo's graph and inputs (``dyn``, :func:`tracer.agent_timing` builds it) cannot go to a timing
    process, or None: ``torch.save`` of them and ``torch.load`` back (GraphModules pickle through
    ``torch.fx``'s ``__reduce__``; a user module the graph calls, when not inlined, needs the script's
    own classes)."""
    if not dyn or dyn.get("gm") is None:
        return None
    try:
        buf = io.BytesIO()
        torch.save({"gm": dyn["gm"], "inputs": dyn.get("inputs")}, buf)
        buf.seek(0)
        torch.load(buf, weights_only=False)
    except Exception as e:  # noqa: BLE001
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        return f"{type(e).__name__}: {first}"
    return None


def _grad_outputs(outs: Any, used: set[int] | None = None) -> tuple[list, list]:
    """The outputs of Dynamo's graph that autograd goes back from, and ones of their shapes: those the
    script's own backward reached (``used``: indices into the flat outputs,
    :func:`tracer.adapter.dynamo_graph.watch_grads`) where known; else the scalar ones where there are any
    (a loss: a script calls ``loss.backward()``, not a backward of its logits too: a nanoGPT graph returns
    both, and ones for the 16x256x4096 logits add a gradient the script never computes); else every output
    that requires grad."""
    seq = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    flat = [o for o in seq if isinstance(o, torch.Tensor) and o.requires_grad and o.grad_fn is not None]
    reached = [o for i, o in enumerate(seq) if used and i in used and any(o is f for f in flat)]
    flat = reached or [o for o in flat if o.dim() == 0] or flat
    return flat, [torch.ones_like(o) for o in flat]


def backward_from(used: set[int] | None, outs: int | None = None) -> str:
    """Where the eager backward starts, in words, for ``eager_how``."""
    if used:
        return (f"from the {len(used)} of its {outs or '?'} outputs that the script's own backward reached at its "
                "first step (gradient hooks on the compiled graph's outputs), ones as their grads")
    return ("from its scalar outputs that require grad (a loss, as loss.backward() starts from), else from every "
            "output that requires grad, ones as their grads")


def describe(table: dict[str, str], dyn: dict[str, Any]) -> str:
    """The eager note for ``dyn``'s mode from ``table`` (:data:`EAGER_HOW`, or the memory figures' own): where the
    backward starts (:func:`backward_from`) and, for a graph timed inside its compile before any call, the
    example inputs it ran on (``dyn["example"]``, :meth:`tracer.agent_timing.TimingRequests.dynamo_eager`)."""
    mode = dyn.get("mode") or "inference"
    how = table.get(mode, table["inference"]).replace("{from}", backward_from(dyn.get("grad_used"), dyn.get("outputs")))
    return how.replace("the script's first-call inputs", str(dyn["how"])) if dyn.get("example") else how


def backward_round(gm: Any, inputs: list, cuda: bool, used: set[int] | None = None) -> float:
    """One round of eager backward (ms): calls of (forward of ``gm`` untimed, then
    ``torch.autograd.backward``) until :data:`ROUND_MS_CPU` (:data:`ROUND_MS_CUDA`) of backward time,
    at least :data:`MIN_CALLS`; the median of the calls after the first.  ``used``: the outputs the script's
    backward reached (:func:`_grad_outputs`).  Raises ValueError where no
    output requires grad, else what autograd raises."""
    leaves = [t for t in inputs if isinstance(t, torch.Tensor) and t.is_leaf and t.requires_grad]
    budget = ROUND_MS_CUDA if cuda else ROUND_MS_CPU
    times: list[float] = []
    while len(times) < MIN_CALLS + 1 or (sum(times[1:]) < budget and len(times) < MAX_CALLS):
        for t in leaves:
            t.grad = None
        with torch.enable_grad():
            outs, grads = _grad_outputs(gm(*inputs), used)
        if not outs:
            raise ValueError("no output of Dynamo's graph requires grad: there is no backward to time")
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record()
            torch.autograd.backward(outs, grads)
            end.record()
            end.synchronize()
            times.append(float(start.elapsed_time(end)))
        else:
            t0 = time.perf_counter()
            torch.autograd.backward(outs, grads)
            times.append((time.perf_counter() - t0) * 1e3)
        del outs, grads
    return statistics.median(times[1:])


def user_eager(dyn: dict[str, Any] | None, cuda: bool) -> dict[str, Any]:
    """What the rounds time as eager for one graph, from ``dyn`` = ``{"gm": Dynamo's GraphModule, "inputs":
    its first-call inputs, "grad_enabled": grad mode at that call, "grad_used": the outputs the script's
    backward reached (optional), "outputs": how many the graph has (optional), "mode": "inference" | "forward" |
    "backward"}`` (or ``{"missing": why}``): ``{"fn": a no-argument callable timed by the rounds' benchmark
    (inference, forward)}`` or ``{"round": a callable returning one round's ms (backward)}``, with ``how``
    (:data:`EAGER_HOW`); or ``{"error": one line}`` when there is none, or one call of it raised.  One call
    is made here (two for a backward round's first calls), so a graph that cannot run says why."""
    if not dyn:
        return {"error": "Dynamo's graph of this compile was not captured (eager is the graph Dynamo hands "
                         "torch.compile's backend)"}
    if dyn.get("missing"):
        return {"error": dyn["missing"]}
    gm, inputs, mode = dyn.get("gm"), dyn.get("inputs"), dyn.get("mode") or "inference"
    if gm is None or inputs is None:
        return {"error": f"Dynamo's graph has no inputs to run on ({dyn.get('how') or 'the script never called it'})"}
    used = dyn.get("grad_used") or None
    how = describe(EAGER_HOW, dyn)
    try:
        from inductor_step.tracer import adapter  # noqa: PLC0415

        # a rank's graph: its collectives run as the same local stand-ins as the compiled graph's (no process
        # group here; tracer.adapter.collectives); Dynamo's graph calls the packets, AOT's graphs the overloads
        adapter.collective_packets_to_overloads(gm)
        stubbed = adapter.stand_ins_in_graph(gm)
        if stubbed:
            how += (f"; its collective(s) {', '.join(sorted(set(stubbed.values())))} ran as local stand-ins (no "
                    "communication), as in the compiled graph")
    except Exception:  # noqa: BLE001 - the graph runs as it is, and says why where it cannot
        pass
    try:
        if mode == "backward":
            backward_round(gm, inputs, cuda, used)  # once: warms up and says why where it cannot run

            def one_round() -> float:
                return backward_round(gm, inputs, cuda, used)
            return {"round": one_round, "how": how}
        grad = True if mode == "forward" else bool(dyn.get("grad_enabled"))

        def call() -> Any:
            with torch.set_grad_enabled(grad):
                return gm(*inputs)
        call()
        if cuda:
            torch.cuda.synchronize()
        return {"fn": call, "how": how}
    except Exception as e:  # noqa: BLE001
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        what = "autograd's backward of Dynamo's graph" if mode == "backward" else "Dynamo's graph"
        return {"error": f"{what} raised when run eagerly ({type(e).__name__}: {first})"}


def measure_fn(fn: Callable[[], Any] | None, round_fn: Callable[[], float] | None,
               one: Callable[[Callable], float]) -> Callable[[], float] | None:
    """One eager round as the rounds take it: ``round_fn()`` where given, else ``one(fn)``; None where neither."""
    if round_fn is not None:
        return round_fn
    if fn is not None:
        return lambda: one(fn)
    return None
