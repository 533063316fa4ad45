"""FLOPs of a Triton template kernel (``triton_tem_*``): from the op it implements, read off its name, parameters and arguments."""

from __future__ import annotations

import math
import re
from typing import Any, Sequence

#: the op a template implements, by the ATen op names Inductor puts in the kernel's name (its origins)
_OPS = (("flex_attention_backward", "flex_attention_backward"), ("flex_attention", "flex_attention"),
        ("baddbmm", "bmm"), ("bmm", "bmm"), ("addmm", "mm"), ("mm", "mm"), ("convolution", "convolution"))


def template_op(name: str) -> str | None:
    """The op family a template kernel implements, from the origins in its name:
    ``triton_tem_fused_addmm_gelu_t_0`` -> ``"mm"`` (addmm), ``triton_tem_fused_bmm_mul_transpose_0`` -> ``"bmm"``,
    ``triton_tem_fused_convolution_0`` -> ``"convolution"``, ``triton_tem_fused_flex_attention_0`` ->
    ``"flex_attention"`` (``..._flex_attention_backward_1`` -> ``"flex_attention_backward"``); None for a
    kernel that is not a template or whose name names none of these (``triton_tem_fused_0``)."""
    if not name.startswith("triton_tem_"):
        return None
    tokens = name[len("triton_tem_"):]
    tokens = re.sub(r"_\d+$", "", tokens.removeprefix("fused_"))
    padded = f"_{tokens}_"
    for key, op in _OPS:
        if f"_{key}_" in padded:
            return op
    return None


def _shape(t: Any) -> tuple[int, ...] | None:
    s = getattr(t, "shape", None)
    return tuple(int(x) for x in s) if s is not None else None


def _by_param(params: Sequence[str], args: Sequence[Any]) -> dict[str, Any]:
    return {p: a for p, a in zip(params, args) if _shape(a) is not None}


def _dtype(args: dict[str, Any], *names: str) -> str | None:
    for n in names:
        t = args.get(n)
        dt = getattr(t, "dtype", None)
        if dt is not None and getattr(t, "is_floating_point", lambda: False)():
            return str(dt).replace("torch.", "")
    return None


def _out(args: dict[str, Any]) -> Any:
    outs = [a for p, a in args.items() if p.startswith("out_ptr")]
    return outs[0] if outs else None


def template_flops(name: str, params: Sequence[str], args: Sequence[Any]) -> tuple[float | None, str | None, str | None, str]:
    """``(FLOPs, dtype, op, how)`` of one call of template kernel ``name``, whose parameters (from its
    source: ``arg_A``, ``arg_B``, ``out_ptr1``...) got ``args`` (tensors, or anything with ``shape``
    and ``dtype``).  Counted with torch.utils.flop_counter's formulas for the op the template
    implements (:func:`template_op`), from the shapes:

    - mm / addmm: the output is M x N; K is the ``arg_A`` input's elements over M (or ``arg_B``'s over
      N, where Inductor passed one buffer for both operands); ``mm_flop`` = 2*M*N*K;
    - bmm / baddbmm: the same per batch (``bmm_flop``);
    - convolution: ``conv_flop_count(arg_X, arg_W, output)``;
    - flex attention: ``sdpa_flop_count`` (4*B*H*M*N*D) forward, ``sdpa_backward_flop_count`` backward,
      times the share of (query block, key block) pairs the block mask computes
      (``KV_NUM_BLKS`` + ``FULL_KV_NUM_BLKS`` over all blocks): the blocks the mask skips cost nothing.

    The epilogue's pointwise work (a fused GELU) is not counted.  ``(None, None, op, reason)`` where the
    shapes do not fit the op; ``(None, None, None, reason)`` for a kernel that is no known template."""
    op = template_op(name)
    if op is None:
        return None, None, None, "not a template for mm, bmm, convolution or flex attention"
    a = _by_param(params, args)
    try:
        from torch.utils import flop_counter as fc  # noqa: PLC0415
    except Exception as e:  # noqa: BLE001
        return None, None, op, f"torch.utils.flop_counter unavailable ({type(e).__name__}: {e})"
    out = _out(a)
    try:
        if op in ("mm", "bmm"):
            os_ = _shape(out)
            if not os_ or len(os_) < 2:
                return None, None, op, "no output tensor among the template's arguments"
            m, n = os_[-2], os_[-1]
            batch = math.prod(os_[:-2]) if op == "bmm" else 1
            if "arg_A" in a and m:
                k = math.prod(_shape(a["arg_A"]) or ()) // (batch * m)
            elif "arg_B" in a and n:
                k = math.prod(_shape(a["arg_B"]) or ()) // (batch * n)
            else:
                return None, None, op, "neither arg_A nor arg_B among the template's tensor arguments"
            flops = fc.bmm_flop((batch, m, k), (batch, k, n)) if op == "bmm" else fc.mm_flop((m, k), (k, n))
            how = f"{op} template: 2*M*N*K with M={m}, N={n}, K={k}" + (f", batch {batch}" if op == "bmm" else "")
            return float(flops), _dtype(a, "arg_A", "arg_B"), op, how + " (torch.utils.flop_counter)"
        if op == "convolution":
            x, w = _shape(a.get("arg_X")), _shape(a.get("arg_W"))
            if not x or not w or not _shape(out):
                return None, None, op, "arg_X, arg_W or the output missing among the template's arguments"
            flops = fc.conv_flop_count(list(x), list(w), list(_shape(out)), transposed=False)
            return float(flops), _dtype(a, "arg_X", "arg_W"), op, "convolution template: conv_flop_count (torch.utils.flop_counter)"
        q, k, v = (_shape(a.get(p)) for p in ("arg_Q", "arg_K", "arg_V"))
        if not q or not k or not v or len(q) != 4:
            return None, None, op, "arg_Q, arg_K or arg_V missing among the template's arguments"
        b, h, m, d = q
        kk = (b, h, k[2], k[3])  # grouped-query attention: as many key heads as query heads, for the formula
        vv = (b, h, v[2], v[3])
        if op == "flex_attention":
            dense = fc.sdpa_flop_count(q, kk, vv)
        else:
            dense = fc.sdpa_backward_flop_count((b, h, m, v[3]), q, kk, vv)
        share, how_share = _block_share(a)
        flops = dense * share
        how = (f"{op} template: torch.utils.flop_counter's {'sdpa_flop_count' if op == 'flex_attention' else 'sdpa_backward_flop_count'}"
               f" for Q {list(q)}, K/V {list(k)}, {how_share}")
        return float(flops), _dtype(a, "arg_Q"), op, how
    except Exception as e:  # noqa: BLE001
        return None, None, op, f"FLOPs not counted ({type(e).__name__}: {e})"


def _block_share(a: dict[str, Any]) -> tuple[float, str]:
    """The share of (query block, key block) pairs a flex attention block mask computes:
    ``(KV_NUM_BLKS.sum() + FULL_KV_NUM_BLKS.sum()) / (KV_NUM_BLKS.numel() * KV_IDX.shape[-1])``; 1.0 where the
    counts are not among the arguments."""
    num, idx, full = a.get("arg_KV_NUM_BLKS"), a.get("arg_KV_IDX"), a.get("arg_FULL_KV_NUM_BLKS")
    try:
        if num is None or idx is None or not hasattr(num, "sum"):
            return 1.0, "dense (no block counts among the arguments)"
        total = float(num.sum()) + (float(full.sum()) if full is not None and hasattr(full, "sum") else 0.0)
        blocks = float(num.numel() * _shape(idx)[-1])
        share = min(1.0, total / blocks) if blocks else 1.0
        return share, f"x {share:.3g}: the block mask computes {total:.0f} of {blocks:.0f} (query block, key block) pairs"
    except Exception as e:  # noqa: BLE001
        return 1.0, f"dense (block counts not read: {type(e).__name__})"
