"""Triton templates' FLOPs from what an H100 run recorded: each template kernel's
name, parameters and one call's arguments from tests/fixtures/gpu_template_calls.json (codegen stops of
tests/scripts/gpu_templates.py and gpu_flex.py under torch 2.11), the argument shapes read from the
wrapper's ``assert_size_stride`` / ``empty_strided_cuda`` lines, as meta tensors."""

from __future__ import annotations

import json
import os
import re

import torch

from inductor_step.tracer.timing.template_flops import template_flops, template_op

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "gpu_template_calls.json")
_SHAPE = re.compile(r"(?:assert_size_stride\((\w+), \(([^)]*)\)|(\w+) = empty_strided_cuda\(\(([^)]*)\), \([^)]*\), torch\.(\w+)\))")


def _calls() -> dict[str, dict]:
    with open(FIXTURE, encoding="utf-8") as f:
        return {c["name"]: c for c in json.load(f)}


def _args(c: dict) -> list:
    shapes: dict[str, tuple[tuple[int, ...], torch.dtype]] = {}
    for m in _SHAPE.finditer(c["wrapper_call"]):
        name, dims = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        dt = getattr(torch, m.group(5)) if m.group(5) else torch.float16
        shapes[name] = (tuple(int(x) for x in dims.split(",") if x.strip()), dt)
    return [torch.empty(shapes[a][0], dtype=shapes[a][1], device="meta") if a in shapes else a for a in c["call"]]


def test_templates_get_the_flops_of_the_op_they_implement():
    calls = _calls()
    assert template_op("triton_poi_fused_gelu_0") is None and template_op("triton_tem_fused_0") is None
    mm = calls["triton_tem_fused_addmm_gelu_t_0"]  # gelu(x @ W.T + b): x 2048x1024, W 1024x1024, fp16
    flops, dtype, op, how = template_flops(mm["name"], mm["params"], _args(mm))
    assert (flops, dtype, op) == (2 * 2048 * 1024 * 1024, "float16", "mm"), how
    assert "M=2048, N=1024, K=1024" in how
    # q @ q.T: Inductor passes one buffer for both operands (arg_B only): K from it and the output
    bmm = calls["triton_tem_fused_bmm_mul_transpose_0"]
    assert bmm["params"][0] == "arg_B" and "arg_A" not in bmm["params"]
    flops, dtype, op, how = template_flops(bmm["name"], bmm["params"], _args(bmm))
    assert (flops, op) == (2 * 16 * 512 * 512 * 64, "bmm"), how
    fwd = calls["triton_tem_fused_flex_attention_0"]  # B=2, H=8, S=512, D=64; block counts unknown here: dense
    flops, dtype, op, how = template_flops(fwd["name"], fwd["params"], _args(fwd))
    assert (flops, op) == (4 * 2 * 8 * 512 * 512 * 64, "flex_attention"), how
    assert "dense" in how
    bwd = calls["triton_tem_fused_flex_attention_backward_1"]
    flops, _, op, how = template_flops(bwd["name"], bwd["params"], _args(bwd))
    assert op == "flex_attention_backward" and flops == 2.5 * 4 * 2 * 8 * 512 * 512 * 64, how


def test_a_block_mask_scales_flex_attention_flops_by_the_blocks_it_computes():
    fwd = _calls()["triton_tem_fused_flex_attention_0"]
    args = _args(fwd)
    p = fwd["params"]
    # a causal mask over 4x4 blocks of 128: the diagonal partly (KV_NUM_BLKS 1 per row), 6 full blocks below it
    args[p.index("arg_KV_NUM_BLKS")] = torch.ones(1, 1, 4, dtype=torch.int32)
    args[p.index("arg_KV_IDX")] = torch.zeros(1, 1, 4, 4, dtype=torch.int32)
    args[p.index("arg_FULL_KV_NUM_BLKS")] = torch.tensor([[[0, 1, 2, 3]]], dtype=torch.int32)
    flops, _, _, how = template_flops(fwd["name"], p, args)
    assert flops == 4 * 2 * 8 * 512 * 512 * 64 * 10 / 16, how
    assert "10 of 16" in how
