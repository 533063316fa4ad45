"""The decomposed post-grad graph run op by op: its per-node times for the ledger, and whether it can be run at all.

The ledger ("the eager time of the same FX nodes, so lines that got slower than eager stand out"): the graph
Inductor compiled, run op by op by ``torch.fx.Interpreter`` on the inputs the timing harness uses, each node's
call timed alone.  the whole graph run op by op is the run stage's third figure (``decomposed_ms``),
never its eager; :func:`_no_eager` and :func:`_probe_eager` say where it cannot be run in rounds."""

from __future__ import annotations

import time
from typing import Any, Callable

import torch

_TIMED_OPS = ("call_function", "call_method", "call_module")


def eager_node_times(gm: Any, args: list, cuda: bool, reps: int = 5, max_nodes: int = 20000) -> tuple[dict[str, float], str]:
    """``({post-grad node name: ms}, how)``: the median over ``reps`` runs of the whole graph under
    ``torch.fx.Interpreter`` of each ``call_function``/``call_method``/``call_module`` node's call
    (perf_counter around it; on CUDA with ``torch.cuda.synchronize()`` before and after, so the time is
    the node's kernels plus its dispatch, as eager mode pays it).  Views cost ~0 and are kept.
    ``({}, why)`` for a graph over ``max_nodes`` nodes or one the Interpreter cannot run."""
    nodes = list(gm.graph.nodes)
    if len(nodes) > max_nodes:
        return {}, f"not measured: {len(nodes)} nodes (over {max_nodes})"
    times: dict[str, list[float]] = {}
    sync = torch.cuda.synchronize if cuda else (lambda: None)

    class _Timed(torch.fx.Interpreter):
        def run_node(self, n: Any) -> Any:
            if n.op not in _TIMED_OPS:
                return super().run_node(n)
            sync()
            t0 = time.perf_counter()
            out = super().run_node(n)
            sync()
            times.setdefault(n.name, []).append(time.perf_counter() - t0)
            return out

    with torch.no_grad():
        for _ in range(reps):
            _Timed(gm).run(*args)
    out = {name: sorted(ts)[len(ts) // 2] * 1e3 for name, ts in times.items()}
    return out, (f"each post-grad FX node run alone by torch.fx.Interpreter on the timed inputs, median of {reps} runs"
                 + (" (torch.cuda.synchronize around each node)" if cuda else ""))


EAGER_SLOW_S = 1.0  # one eager call slower than this: eager is not timed in rounds (tens of calls)


def _no_eager(eager_gm: Any) -> str | None:
    """Why a post-grad graph is not run eagerly at all, or None: flex attention's backward has no eager
    kernel; torch runs its math reference (vmapped score-mod graphs), and on an H100 one call of a
    B=2, H=8, S=512 backward (tests/scripts/gpu_flex.py) had not returned after 140 s."""
    for n in getattr(getattr(eager_gm, "graph", None), "nodes", []):
        if n.op == "call_function" and "flex_attention_backward" in str(getattr(n.target, "__name__", n.target)):
            return ("eager not timed: flex attention's backward (the flex_attention_backward higher-order op) has no "
                    "eager kernel; torch's math reference for it ran over 140 s a call on an H100 at B=2, H=8, S=512")
    return None


def _probe_eager(eager_fn: Callable, cuda: bool) -> tuple[Callable | None, dict[str, Any]]:
    """Two eager calls of the post-grad graph, timed by the clock (synchronized on CUDA), before the
    rounds run it tens of times: ``(eager_fn, {})`` where they were quick, else ``(None, {"note"})``
    saying why eager is not timed -- it raised (a post-grad graph torch cannot run op by op), or one
    call took over :data:`EAGER_SLOW_S` (flex attention's backward run eagerly is torch's math
    reference, seconds per call at modest sizes: rounds of it looked like a hang)."""
    import time  # noqa: PLC0415

    try:
        took = []
        for _ in range(2):
            t0 = time.perf_counter()
            eager_fn()
            if cuda:
                torch.cuda.synchronize()
            took.append(time.perf_counter() - t0)
            if took[-1] > EAGER_SLOW_S:
                break
    except Exception as e:  # noqa: BLE001
        if cuda:
            try:
                torch.cuda.synchronize()
            except Exception:  # noqa: BLE001
                pass
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        return None, {"note": f"eager not timed: the post-grad graph raised when run op by op ({type(e).__name__}: {first})",
                      "raised": True}
    if took[-1] > EAGER_SLOW_S:
        return None, {"note": f"eager not timed in rounds: one eager call of the post-grad graph took {took[-1]:.2f} s "
                              f"(over {EAGER_SLOW_S:.0f} s; rounds would run it tens of times)", "slow": True}
    return eager_fn, {}
