"""What a buffer holds where it is not its FX node's value: an intermediate Inductor's lowering stores.

Inductor lowers ``aten.mean`` as a sum reduction (a ComputedBuffer whose LoopBody stores the sum) and a
pointwise division that it inlines into the kernel that reads it: ``x.mean(dim=-1, keepdim=True) * 2.0 + x``
on CPU writes ``buf0`` = the sum, whose FX node (its origin) is ``mean``.  Compared with ``mean`` it read
"SUSPECT 4.24e+05x the tolerance" while the graph's output was within 2.4e-07 of eager.  A buffer is compared
with what its LoopBody stores: the eager value of its FX node mapped to that intermediate
(:func:`intermediates`); where none matches it is "not comparable: holds an intermediate of <node>".
"""

from __future__ import annotations

from typing import Any, Callable

import torch


def _numel(v: Any) -> int | None:
    try:
        return int(v.numel()) if isinstance(v, torch.Tensor) else None
    except Exception:  # noqa: BLE001 - symbolic sizes
        return None


def _reduced(node: Any) -> int | None:
    """Elements of ``node``'s first tensor input reduced into each element of its (first) output, or None."""
    ins = [a for a in node.all_input_nodes if isinstance(a.meta.get("val"), torch.Tensor)]
    out = node.meta.get("val")
    out = out[0] if isinstance(out, (list, tuple)) and out else out
    n_in, n_out = (_numel(ins[0].meta.get("val")) if ins else None), _numel(out)
    if not n_in or not n_out or n_in % n_out:
        return None
    return n_in // n_out


def intermediates(node: Any) -> list[tuple[str, Callable[[Any], Any]]]:
    """The intermediates Inductor's lowering of FX node ``node`` may store in the node's buffer instead of its
    value, each ``(what it is, in words; the map from the node's whole eager value to it)``: ``aten.mean``'s sum
    (``mean × n``, n the elements reduced into each output) and ``aten.var_mean``'s Welford sum of squared
    deviations (``var × (n - correction)``).  Empty for a node whose buffer holds its value."""
    t = str(getattr(node, "target", ""))
    if node.op != "call_function":
        return []
    n = _reduced(node)
    if not n:
        return []
    if t.startswith("aten.mean.") or t == "aten.mean":
        return [(f"the sum of {node.name} ({node.name} × {n}): Inductor's reduction stores the sum, and the division "
                 f"by {n} is in the kernel that reads it", lambda x, n=n: x * n)]
    if t.startswith("aten.var_mean."):
        corr = node.kwargs.get("correction", 1)
        corr = 1 if corr is None else corr
        if not isinstance(corr, (int, float)):
            return []
        d = n - corr
        return [(f"the sum of squared deviations of {node.name} (its variance × {d:g}): Inductor's Welford "
                 "reduction stores it, and the division is in the kernel that reads it",
                 lambda x, d=d: (x[0] if isinstance(x, (list, tuple)) else x) * d)]
    return []


def not_comparable(node: Any) -> str:
    """The row's ``why`` for a buffer of ``node`` that matches neither its value nor any intermediate."""
    what = "; ".join(w.split(":")[0] for w, _ in intermediates(node))
    return (f"not comparable: holds an intermediate of {node.name} ({what}, as far as its lowering tells), and "
            "neither it nor the node's value matches; compared through the buffers computed from it")
