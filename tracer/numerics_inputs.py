"""Numerics' inputs: the script's own where kept, else random ones made valid for the ops that read them."""

from __future__ import annotations

from typing import Any

import torch


#: ops whose argument at this position must not be negative: a batch norm's running variance
_NON_NEGATIVE = {"batch_norm": 4, "instance_norm": 4}


def valid_random_inputs(gm: Any, args: list, real: set[int]) -> list[str]:
    """Random graph inputs (positions not in ``real``) made valid where an op needs it: a batch
    norm's running variance (``abs``: a negative one made 38 of 41 buffers NaN).  Changes ``args`` in place;
    returns the placeholders changed, in words."""
    places = [n for n in gm.graph.nodes if n.op == "placeholder"]
    pos = {n: i for i, n in enumerate(places)}
    done: list[str] = []
    for n in gm.graph.nodes:
        for word, at in _NON_NEGATIVE.items():
            if n.op != "call_function" or word not in str(n.target) or len(n.args) <= at:
                continue
            a = n.args[at]
            i = pos.get(a) if hasattr(a, "op") else None
            if i is None or i in real or i >= len(args) or not isinstance(args[i], torch.Tensor):
                continue
            if args[i].is_floating_point() and a.name not in [d.split(" ")[0] for d in done]:
                args[i].abs_()
                done.append(f"{a.name} (the running variance of {n.name}) >= 0")
    return done


def graph_inputs(base: Any, gm: Any, script: dict[str, Any] | None) -> tuple[list, bool, str]:
    """The inputs compare_graph (tracer.numerics) runs the compiled graph and eager on: ``(args, real, what they
    are)``, the script's own inputs of its first call of the output module ``base``'s graph where kept, random ones
    (made valid for ``gm`` where needed) for the rest."""
    from inductor_step.tracer.timing.harness import _graph_args, _use_script_inputs  # noqa: PLC0415

    with torch.no_grad():
        args = _graph_args(base)
        ints, floats = _use_script_inputs(args, (script or {}).get("inputs") or {})
    n_tensors = sum(1 for a in args if isinstance(a, torch.Tensor))
    real = ints + floats >= n_tensors
    made_valid = [] if real else valid_random_inputs(gm, args, set(((script or {}).get("inputs") or {})))
    inputs = (f"the script's own inputs of its first call of the graph (all {n_tensors} tensors)"
              if real else
              f"the script's own inputs for {ints + floats} of {n_tensors} tensors; the rest random (get_args, "
              "seeded): the script did not call this graph, or its floats were over the copy budget"
              + (f"; made valid: {', '.join(made_valid)}" if made_valid else ""))
    return args, real, inputs
