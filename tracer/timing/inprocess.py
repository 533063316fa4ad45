"""Timing a graph in the agent's own process, for graphs a fresh timing process cannot rebuild.

Each graph is timed in a worker process (:mod:`.isolate`), which imports torch
and loads the output module, but never ran the user's script.  Two kinds of graph cannot be rebuilt
there: one that calls a custom op the script defined (``torch.library.custom_op``: the worker has
no such operator, and timing failed with "'_OpNamespace' 'istep' object has no attribute
'scale_add'"), and one whose post-grad graph holds tensors that cannot be pickled (a frozen graph's
prepacked mkldnn weights: "no eager baseline").  These are timed here, on a thread of the agent, by
the same :func:`tracer.timing.harness.time_graph`, and the result says so (``in_process``).  The
price: a crash in a kernel takes the agent with it, and a graph over its time limit cannot be
stopped, only abandoned (it is reported as timed out, and its thread runs on in the background).
"""

from __future__ import annotations

import copy
import threading
import time
import traceback
from typing import Any, Callable

from inductor_step.tracer import adapter
from inductor_step.tracer.graph_device import on_graph_device
from inductor_step.tracer.timing.isolate import CANCEL_GRACE_S, TimingFailed

#: a worker's failure that says the graph needs something only this process has
MISSING_IN_WORKER = ("'_OpNamespace'", "No such operator", "Cannot access storage of OpaqueTensorImpl")


def in_process_reason(output_path: str, eager_gm: Any) -> str | None:
    """Why graph (``output_path``, ``eager_gm``) must be timed in this process, in one sentence, or
    None when a worker can time it.  Never raises."""
    try:
        with open(output_path, encoding="utf-8") as f:
            ops = adapter.script_ops_in(f.read())
    except Exception:  # noqa: BLE001
        ops = []
    if ops:
        return (f"timed in the agent's own process: the graph calls {', '.join(ops)}, defined by the script "
                "(torch.library.custom_op), which a fresh timing process does not have")
    try:
        why = adapter.unsendable_reason(eager_gm)
    except Exception as e:  # noqa: BLE001
        why = f"{type(e).__name__}: {e}"
    if why:
        return f"timed in the agent's own process: the post-grad graph cannot be sent to a timing process: {why}"
    return None


def needs_this_process(reason: str) -> bool:
    """Whether a worker's failure ``reason`` says the graph needs this process (a script-defined op)."""
    return any(s in reason for s in MISSING_IN_WORKER)


def time_in_process(output_path: str, eager_gm: Any, device: str, why: str, *,
                    cancel: threading.Event | None = None, progress: Callable[[str], None] | None = None,
                    num_gb: dict[str, float] | None = None, script: dict[str, Any] | None = None,
                    timeout_s: float = 600.0, compare: dict[str, Any] | None = None,
                    dynamo: dict[str, Any] | None = None) -> dict[str, Any]:
    """:func:`tracer.timing.harness.time_graph` on a thread of this process (arguments and result as
    :meth:`tracer.timing.isolate.TimingWorker.time`'s); the result gets ``in_process`` = ``why``.
    Raises :class:`TimingFailed`: the exception time_graph raised, ``timed out`` (the limit ran out,
    naming the step), or ``cancelled`` (``cancel`` set and the harness did not stop within
    :data:`CANCEL_GRACE_S`)."""
    from inductor_step.tracer.timing.harness import time_graph  # noqa: PLC0415

    try:  # the harness rewrites the graph it runs (stand-ins, foreach getitems): not the agent's own
        gm = copy.deepcopy(eager_gm) if eager_gm is not None else None
    except Exception:  # noqa: BLE001 - opaque tensors: the rewrites keep the graph's meaning
        gm = eager_gm
    state: dict[str, Any] = {"step": "loading the output module"}

    def step(text: str) -> None:
        state["step"] = text
        if progress is not None:
            progress(text)

    def go() -> None:
        try:  # a new thread's current CUDA device is cuda:0; this graph's may be cuda:1
            with on_graph_device(device):
                _go()
        except BaseException as e:  # noqa: BLE001
            state["error"] = (f"{type(e).__name__}: {e}", traceback.format_exc())

    def _go() -> None:
        try:
            from inductor_step.tracer.timing.ingraph import cupti_detached  # noqa: PLC0415

            with cupti_detached(str(device)) as cupti:  # the script's profiled calls left CUPTI attached here
                res = time_graph(output_path, gm, device, cancel=cancel, progress=step, num_gb=num_gb, script=script,
                                 dynamo=dynamo)
            res["cupti"] = cupti
            if compare:
                step("comparing outputs with the original and eager")
                res["numerics"] = _numerics(output_path, compare, script)
            state["result"] = res
        except BaseException as e:  # noqa: BLE001
            state["error"] = (f"{type(e).__name__}: {e}", traceback.format_exc())

    # on the script's main thread where it serves (tracer.main_thread: CPU kernels called from another thread ran
    # 1.8-2.5x slower), else on a thread of its own
    from inductor_step.tracer.main_thread import WORK  # noqa: PLC0415

    handed = WORK.submit(go)
    t0 = time.monotonic()
    if handed is None:
        t = threading.Thread(target=go, daemon=True, name="inductor-step in-process timing")
        t.start()
        alive, wait = t.is_alive, lambda: t.join(0.05)
    else:
        alive, wait = (lambda: not handed.done.is_set()), (lambda: handed.done.wait(0.05))
    where = "on the script's main thread" if handed is not None or threading.current_thread() is threading.main_thread() \
        else "on a thread of the agent (the script's main thread was busy)"
    _wait(alive, wait, state, t0 + timeout_s, timeout_s, cancel)
    if "error" in state:
        raise TimingFailed(*state["error"])
    res = state["result"]
    res["in_process"] = f"{why}, {where}"
    return res


def _numerics(output_path: str, compare: dict[str, Any], script: dict[str, Any] | None) -> dict[str, Any]:
    """tracer.whatif.compare_outputs of the graph against its original and eager (``compare``: ``original_path``,
    ``eager_gm``, ``random_ops``), or ``{"unavailable": why}`` where the comparison raised."""
    try:
        from inductor_step.tracer.whatif import compare_outputs  # noqa: PLC0415

        return compare_outputs(output_path, compare["original_path"], compare.get("eager_gm"), script,
                               random_ops=compare.get("random_ops"))
    except Exception as e:  # noqa: BLE001
        return {"unavailable": f"{type(e).__name__}: {e}"}


def _wait(alive: Callable[[], bool], wait: Callable[[], Any], state: dict[str, Any], deadline: float,
          timeout_s: float, cancel: threading.Event | None) -> None:
    """Wait while the timing runs (``alive``; ``wait`` blocks ~50 ms).  Raises :class:`TimingFailed`:
    ``cancelled`` once ``cancel`` has been set for :data:`CANCEL_GRACE_S`, ``timed out`` at ``deadline``
    (time.monotonic), each naming ``state["step"]``."""
    cancelled_at = None
    while alive():
        wait()
        if cancel is not None and cancel.is_set() and cancelled_at is None:
            cancelled_at = time.monotonic()
        if cancelled_at is not None and time.monotonic() - cancelled_at > CANCEL_GRACE_S:
            raise TimingFailed(f"cancelled (while {state['step']}; it stops at its next kernel, in this process)",
                               cancelled=True)
        if time.monotonic() > deadline:
            raise TimingFailed(f"timed out: the per-graph limit of {timeout_s:g} s ran out (while {state['step']}; "
                               "timed in the agent's own process, so it runs on in the background) "
                               "(--timing-limit S sets it)")
