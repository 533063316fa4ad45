"""What if: Inductor's settings read and a captured graph compiled again under changed ones
(``torch._inductor.config``, ``compile_fx_inner``), without the original compile's fake values."""

from __future__ import annotations

import functools
import logging
import os
import re
import threading
import traceback
import weakref
from typing import Any, Callable

import torch



#: the common Inductor settings the what-if form offers (``torch._inductor.config`` names)
WHAT_IF_SETTINGS = ("max_autotune", "coordinate_descent_tuning", "benchmark_fusion", "aggressive_fusion",
                    "loop_ordering_after_fusion", "split_reductions", "realize_opcount_threshold",
                    "triton.cudagraphs", "emulate_precision_casts")
_FAKE_META = ("val", "tensor_meta", "example_value", "unbacked_bindings")


def inductor_setting(name: str) -> Any:
    """The current value of ``torch._inductor.config`` entry ``name`` (dotted: ``"triton.cudagraphs"``).
    Raises KeyError naming it when this torch has no such entry."""
    from torch._inductor import config as ic  # noqa: PLC0415

    obj: Any = ic
    for part in name.split("."):
        if part.startswith("_") or not hasattr(obj, part):
            raise KeyError(f"torch._inductor.config has no setting {name!r} (torch {torch.__version__})")
        obj = getattr(obj, part)
    if callable(obj) or hasattr(obj, "__dict__") and not isinstance(obj, (bool, int, float, str)):
        raise KeyError(f"torch._inductor.config.{name} is not a value setting")
    return obj


def inductor_settings(names: tuple[str, ...] = WHAT_IF_SETTINGS) -> dict[str, Any]:
    """``{name: current value}`` of the settings this torch has (JSON values; others as their repr)."""
    out: dict[str, Any] = {}
    for n in names:
        try:
            v = inductor_setting(n)
        except KeyError:
            continue
        out[n] = v if isinstance(v, (bool, int, float, str)) or v is None else repr(v)
    return out


def _hint(x: Any) -> Any:
    """An int for a size (a SymInt's hint, never a guard on its ShapeEnv)."""
    if isinstance(x, int):
        return x
    node = getattr(x, "node", None)
    if node is not None:
        hint = getattr(node, "hint", None)
        if isinstance(hint, int):
            return hint
        return int(node.shape_env.size_hint(node.expr))
    return int(x)


def graph_snapshot(gm: Any) -> dict[str, Any]:
    """A copy of ``gm``'s graph to compile again later (:func:`compile_variant`): ``graph`` (its nodes and
    their meta, without the fake values of the original compile's FakeTensorMode/ShapeEnv), ``attrs``
    (the tensors and submodules its ``get_attr`` nodes read, shared, not copied) and ``specs``: one per
    placeholder for :func:`example_inputs`: ``("tensor", shape, stride, dtype, device)`` (a symbolic size
    as its hint) or ``("int", value)``.  Taken at ``post_grad_custom_pre_pass``, this is the graph
    ``compile_fx_inner`` got, before Inductor's post-grad passes.  Costs about 10 us a node (the
    GraphModule, ten times that, is built only by :func:`compile_variant`)."""
    g = torch.fx.Graph()
    g.output(g.graph_copy(gm.graph, {}))
    specs: list[Any] = []
    attrs: dict[str, Any] = {}
    for n in gm.graph.nodes:
        if n.op == "get_attr":
            obj: Any = gm
            for part in str(n.target).split("."):
                obj = getattr(obj, part)
            # a subgraph (cond, invoke_subgraph, ...): Inductor's passes rewrite it in place, so its own copy
            attrs[str(n.target)] = {"snapshot": graph_snapshot(obj)} if isinstance(obj, torch.fx.GraphModule) else obj
        if n.op != "placeholder":
            continue
        v = n.meta.get("val", n.meta.get("example_value"))
        if isinstance(v, torch.Tensor):
            specs.append(("tensor", [_hint(s) for s in v.shape], [_hint(s) for s in v.stride()], v.dtype,
                          str(v.device)))
        elif isinstance(v, (int, torch.SymInt)):
            specs.append(("int", _hint(v)))
        elif isinstance(v, (float, bool)):
            specs.append(("scalar", v))
        else:
            specs.append(("none", None))
    for n in g.nodes:
        n.meta = {k: v for k, v in n.meta.items() if k not in _FAKE_META}
    return {"graph": g, "attrs": attrs, "specs": specs}


def _graph_module(snapshot: dict[str, Any]) -> Any:
    """A fresh GraphModule of a :func:`graph_snapshot` (its own copy of the graph: a compile mutates it)."""
    g = torch.fx.Graph()
    g.output(g.graph_copy(snapshot["graph"], {}))
    attrs = {k: _graph_module(v["snapshot"]) if isinstance(v, dict) else v for k, v in snapshot["attrs"].items()}
    return torch.fx.GraphModule(attrs, g)


def example_inputs(specs: list[Any], seed: int = 0) -> list[Any]:
    """Real inputs of the shapes, strides, dtypes and devices in ``specs`` (:func:`graph_snapshot`),
    random (``torch._dynamo.testing.rand_strided``, seeded)."""
    from torch._dynamo.testing import rand_strided  # noqa: PLC0415

    torch.manual_seed(seed)
    out: list[Any] = []
    for s in specs:
        if s[0] == "tensor":
            out.append(rand_strided(s[1], s[2], dtype=s[3], device=s[4]))
        else:
            out.append(s[1])
    return out


def _provenance_state() -> dict[str, Any]:
    """Copies of torch._inductor.debug's module-level provenance records (a compile fills them)."""
    import copy  # noqa: PLC0415

    from torch._inductor import debug  # noqa: PLC0415

    return {k: (v, copy.copy(v)) for k, v in vars(debug).items()
            if k.startswith(("_inductor_", "_pre_grad_graph_id", "_kernel_information")) and not callable(v)}


def compile_variant(snapshot: dict[str, Any], settings: dict[str, Any], is_backward: bool,
                    is_inference: bool) -> Any:
    """Compile a :func:`graph_snapshot` again with ``torch._inductor.compile_fx.compile_fx_inner``
    on real inputs of its ``specs``, under ``torch._inductor.config.patch(settings)`` (a per-thread override
    from torch 2.13); returns Inductor's compiled graph (its output code is logged as
    ``inductor_output_code``, so the stage hooks see every stage).  Inductor's module-level
    provenance records are restored afterwards, so a compile paused on another thread keeps its
    own.  Raises whatever the compile raises (a bad value of a setting: its TypeError/...)."""
    from torch._inductor import config as ic  # noqa: PLC0415
    from torch._inductor import debug  # noqa: PLC0415
    from torch._inductor.compile_fx import compile_fx_inner  # noqa: PLC0415

    saved = _provenance_state()
    try:
        with ic.patch(settings):
            return compile_fx_inner(_graph_module(snapshot), example_inputs(snapshot["specs"]),
                                    is_backward=is_backward, is_inference=is_inference)
    finally:
        for k, (obj, content) in saved.items():  # the same objects (others may hold them), as they were
            if isinstance(obj, dict):
                obj.clear()
                obj.update(content)
            setattr(debug, k, obj)
