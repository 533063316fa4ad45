"""The post-grad graph made runnable eagerly for the run stage's eager baseline, and what keeps a graph in this process.

Timing re-ran the post-grad graph with ``torch.fx`` as the eager baseline and
lost it, silently or with the graph's timing, where that graph is not plain ATen on plain tensors:

* in-place foreach ops (a compiled ``Adam(foreach=True).step``): after Inductor's re-inplacing pass
  ``getitem(_foreach_add_.Scalar(xs, 1), 0)`` reads an output the in-place overload does not return
  (its schema returns nothing: eager returns None), so fx failed with "'NoneType' object is not
  subscriptable"; the element is the mutated input ``xs[0]`` (:func:`runnable_eager`);
* frozen parameters (``torch._inductor.config.freezing``): prepacked weights
  (``mkl._mkl_reorder_linear_weight``, mkldnn) are opaque tensors that cannot be pickled to the
  timing process (:func:`unsendable_reason`);
* custom ops (``torch.library.custom_op`` in the script): a fresh process has no such operator
  (:func:`script_ops_in`).

Reads ``OpOverload._schema`` (torch.fx nodes' targets) and ``torch._library.custom_ops.OPDEFS``.
"""

from __future__ import annotations

import io
import operator
import re
from typing import Any


def _returns_nothing(target: Any) -> bool:
    schema = getattr(target, "_schema", None)
    return schema is not None and len(schema.returns) == 0


def runnable_eager(gm: Any) -> list[str]:
    """Rewrite, in place, FX GraphModule ``gm`` (a post-grad graph) so that ``gm(*args)`` runs op by op:
    each ``getitem(op(xs, ...), i)`` whose ``op`` returns nothing (an in-place foreach overload after
    re-inplacing) reads ``xs[i]``, the input it mutated.  Recompiles when it changed something; returns
    the node names rewritten (empty: nothing to do).  Raises what ``gm.recompile()`` raises."""
    changed: list[str] = []
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target is not operator.getitem:
            continue
        src, idx = node.args[0], node.args[1]
        if getattr(src, "op", None) != "call_function" or not _returns_nothing(src.target):
            continue
        xs = src.args[0] if src.args else None
        if isinstance(xs, (list, tuple)) and isinstance(idx, int) and 0 <= idx < len(xs):
            node.replace_all_uses_with(xs[idx])
            gm.graph.erase_node(node)
            changed.append(node.name)
    if changed:
        gm.graph.lint()
        gm.recompile()
    return changed


def unsendable_reason(gm: Any) -> str | None:
    """Why ``gm`` cannot be pickled to the timing process (``torch.save``), naming the attribute
    (``_frozen_param7: an opaque torch._mkldnn tensor (a prepacked weight of a frozen graph)``), or
    None when it can."""
    import torch  # noqa: PLC0415

    if gm is None:
        return None
    try:
        torch.save(gm, io.BytesIO())
        return None
    except Exception as e:  # noqa: BLE001
        why = f"{type(e).__name__}: {e}"
    for name, t in list(gm.named_buffers()) + list(gm.named_parameters()) + [
            (k, v) for k, v in vars(gm).items() if isinstance(v, torch.Tensor)]:
        if isinstance(t, torch.Tensor) and (t.layout != torch.strided or t.is_mkldnn):
            return (f"{name} is an opaque {t.layout} tensor (a weight prepacked for a frozen graph) "
                    f"that cannot leave this process ({why})")
    return why


_OP_REF = re.compile(r"torch\.ops\.(\w+)\.(\w+)")


#: operator namespaces torch itself registers: never "defined by the script", whatever registry holds them
#: (torch 2.13 defines prims::convert_element_type, prims::iota ... with torch.library.custom_op, so they sit in
#: torch._library.custom_ops.OPDEFS beside the script's own)
TORCH_NAMESPACES = frozenset({"aten", "prims", "rngprims", "prim", "_c10d_functional", "c10d_functional",
                              "_c10d_functional_autograd", "c10d", "_dtensor", "inductor", "_inductor_test",
                              "quantized", "quantized_decomposed", "_quantized", "mkldnn", "mkl", "onednn",
                              "higher_order", "debugprims", "debug_mode_ops", "profiler", "_test", "fbgemm",
                              "symm_mem", "streams", "tensorrt", "_export", "export", "cuda", "xpu", "mps"})


def is_torch_op(q: str, opdef: Any = None) -> bool:
    """Whether operator ``ns::name`` is torch's own: its namespace is one torch registers
    (:data:`TORCH_NAMESPACES`), or the Python function that defined it (``CustomOpDef._init_fn``) lives
    in a ``torch`` module."""
    if q.split("::", 1)[0] in TORCH_NAMESPACES:
        return True
    mod = getattr(getattr(opdef, "_init_fn", None), "__module__", "") or ""
    return mod == "torch" or mod.startswith("torch.")


def script_ops_in(source: str) -> list[str]:
    """The ``ns::name`` operators that ``source`` (an output module's code) calls and that the script
    defined in Python (``torch.library.custom_op``; ``torch._library.custom_ops.OPDEFS``, less torch's
    own ops there, :func:`is_torch_op`: prims::convert_element_type is registered by torch._prims the same
    way): a fresh process, which never ran the script, has none of them.  Empty where none (or where
    the registry is not available on this torch)."""
    try:
        from torch._library.custom_ops import OPDEFS  # noqa: PLC0415
    except Exception:  # noqa: BLE001
        return []
    out = []
    for ns, name in _OP_REF.findall(source):
        q = f"{ns}::{name}"
        if q in OPDEFS and q not in out and not is_torch_op(q, OPDEFS[q]):
            out.append(q)
    return out
