"""Numerics' inputs where the script's own are missing: random ones made valid for the ops that read them."""

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
