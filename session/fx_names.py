"""Dynamo's FX names without the module-path markers it spells out (``l_self_modules_norm_parameters_weight_``
reads ``l_self_norm_weight_``): one short name per name, the same in pane 1's table and in the graph's code."""

from __future__ import annotations

import re
from typing import Iterable

#: the parts Dynamo writes between a module path's parts: ``L['self']._modules['norm']._parameters['weight']``
#: becomes ``l_self_modules_norm_parameters_weight_``
MARKERS = ("modules", "parameters", "buffers")
_IDENT = re.compile(r"\b[A-Za-z]\w*\b")
_IDENT_SPLIT = re.compile(r"\b([A-Za-z]\w*)\b")  # _IDENT as re.split's one group
_MARKED = re.compile(r"[A-Za-z0-9]_(?:modules|parameters|buffers)_\w")


def short_name(name: str) -> str:
    """``name`` without the marker parts (:data:`MARKERS`) inside it: ``g_model_modules_model_modules_layers_modules_0_
    modules_self_attn_modules_k_proj_parameters_weight_`` -> ``g_model_model_layers_0_self_attn_k_proj_weight_``;
    a name with none is returned as it is.  (An attribute whose own name has such a part, ``my_buffers_x``, loses
    it too: :func:`short_names` keeps the full name wherever two names would read the same.)"""
    if not _MARKED.search(name):
        return name
    parts = name.split("_")
    return "_".join(p for i, p in enumerate(parts) if i == 0 or p not in MARKERS)


def short_names(code: str, names: Iterable[str] = ()) -> dict[str, str]:
    """Full name -> short name (:func:`short_name`) for every identifier of a Dynamo graph's ``code`` (its
    ``print_readable``) and ``names`` (its nodes' names and targets) that has markers, leaving out any whose short
    name is already an identifier there or is shared with another name: the map is one to one, so every short
    name names one node in both the table and the code."""
    idents = set(_IDENT.findall(code)) | set(names)
    short: dict[str, str] = {}
    taken: dict[str, int] = {}
    for n in idents:
        s = short_name(n)
        if s != n:
            short[n] = s
            taken[s] = taken.get(s, 0) + 1
    return {n: s for n, s in short.items() if taken[s] == 1 and s not in idents}


def with_short_names(text: str, names: dict[str, str]) -> str:
    """``text`` with every whole identifier in ``names`` replaced by its short name."""
    if not names:
        return text
    # only the lines with a marker can hold a name to replace (every name in ``names`` has one: short_name): a
    # large graph's guards are hundreds of KB without any, on the first frame's path.  Each such line is split
    # around its identifiers (odd items), which are mapped: a third faster than a sub with a callback
    get = names.get
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if "_modules_" in line or "_parameters_" in line or "_buffers_" in line:
            parts = _IDENT_SPLIT.split(line)
            parts[1::2] = [get(p, p) for p in parts[1::2]]
            lines[i] = "".join(parts)
    return "\n".join(lines)


#: a graph input's line in an AOT graph's code (torch 2.9+ notes what each input is):
#: ``primals_4: "f32[1000, 64][64, 1]cpu",  # PlainAOTInput(idx=3)``, ``arg0_1: "..."  # ParamAOTInput(target='fc1.weight')``
_AOT_INPUT = re.compile(r"^\s*(\w+): \"[^\"]*\",?\s*# (?:PlainAOTInput\(idx=(\d+)\)|(?:Param|Buffer)AOTInput\(target='([^']+)'\))",
                        re.M)
_MARKER_SPLIT = re.compile(r"_(?:modules|parameters|buffers)_")


def dynamo_input_path(target: str) -> str:
    """What a Dynamo graph input holds, as the script names it: a module's parameter or buffer by its dotted path
    (``L_self_modules_fc1_parameters_weight_`` -> ``fc1.weight``, ``L_model_modules_blocks_modules_0_buffers_bias_``
    -> ``model.blocks.0.bias``: a module the script passed in keeps its name), any other input by Dynamo's name for it (``L_x_``)."""
    parts = _MARKER_SPLIT.split(target.rstrip("_"))
    if len(parts) < 2:
        return target
    root = re.sub(r"^[LG]_", "", parts[0])  # L['self'] / L['model'] / G['model']: the module's own name, not self
    return ".".join(([root] if root != "self" else []) + parts[1:])


def aot_input_names(aot_graphs: dict[str, str] | None, dynamo_nodes: Iterable[dict] | None) -> dict[str, str]:
    """AOT graph input name (``primals_1``, ``arg0_1``) -> what it holds (``fc1.weight``, ``L_x_``): the notes AOTAutograd
    writes beside each input of its graphs' code, the n-th (``PlainAOTInput(idx=n)``) of Dynamo's graph inputs (its
    placeholders in order) read by :func:`dynamo_input_path`.  Empty where the code has no such notes (older torch)."""
    inputs = [n.get("target") or n.get("name") for n in dynamo_nodes or [] if n.get("op") == "placeholder"]
    out: dict[str, str] = {}
    for code in (aot_graphs or {}).values():
        for name, idx, target in _AOT_INPUT.findall(code if isinstance(code, str) else ""):
            if target:
                out.setdefault(name, target)
            elif int(idx) < len(inputs) and inputs[int(idx)]:
                out.setdefault(name, dynamo_input_path(str(inputs[int(idx)])))
    return out

