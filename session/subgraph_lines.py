"""The user's line of a higher-order op subgraph's post-grad nodes (flex attention's ``score_mod``), where torch
recorded only the call's.

AOTAutograd traces a ``score_mod`` subgraph again inside the ``flex_attention`` call, and torch's recorded stack
of the post-grad nodes (``node.meta["stack_trace"]``) ends at the call (``y = flex_attention(...)``, then torch's
``flex_attention.py``): the line in the user's ``score_mod`` that made them is recorded only on the Dynamo
subgraph's nodes, which Dynamo traced through the user's function.
"""

from __future__ import annotations

from typing import Any, Sequence


def inner_user_lines(post_grad: Sequence[Any], dynamo: Sequence[Any]) -> dict[str, str]:
    """Post-grad node name -> the user's line inside the subgraph's function, for the post-grad nodes of a subgraph
    whose recorded line is the call's (``torch_line`` set: torch's own frame innermost) while the Dynamo subgraph's
    node of the same name (``ge``, ``where``) has a line of the user's own (no ``torch_line``); a node with no such
    namesake (``full_default``, the ``-inf`` of a ``torch.where``) gets the line when every computing node of the
    Dynamo subgraph has the same one.  ``post_grad``, ``dynamo``: the nodes (``name``, ``op``, ``user_line``,
    ``torch_line``) of the same subgraph's aot stop (``post_grad``) and dynamo stop (``graph``).  Nothing for a
    node whose recorded stack already ends in the user's code."""
    own = {n["name"]: n.get("user_line") for n in dynamo
           if n.get("op") not in ("placeholder", "output", "get_attr") and n.get("user_line") and not n.get("torch_line")}
    lines = set(own.values())
    only = next(iter(lines)) if len(lines) == 1 else None
    out: dict[str, str] = {}
    for n in post_grad:
        if n.get("op") in ("placeholder", "output") or not n.get("torch_line"):
            continue
        line = own.get(n["name"]) or only
        if line and line != n.get("user_line"):
            out[n["name"]] = line
    return out
