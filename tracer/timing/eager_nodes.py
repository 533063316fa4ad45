"""The eager time of each post-grad FX node (issue 20: "the eager time of the same FX nodes, so lines
that got slower than eager stand out"): the graph Inductor compiled, run op by op by
``torch.fx.Interpreter`` on the inputs the timing harness uses, each node's call timed alone."""

from __future__ import annotations

import time
from typing import Any

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
