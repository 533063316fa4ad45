"""Compiled ``flex_attention`` on CUDA, forward and backward, with a score_mod and a causal block mask."""

import argparse

import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention


def rel_bias(score, b, h, q_idx, kv_idx):
    return score + (q_idx - kv_idx) * 0.01


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--steps", type=int, default=12)
    a = p.parse_args()
    B, H, S, D = 2, 8, a.seq, 64
    mask = create_block_mask(causal, B=None, H=None, Q_LEN=S, KV_LEN=S, device="cuda")
    attn = torch.compile(flex_attention)
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16, requires_grad=True) for _ in range(3))
    for _ in range(a.steps):
        out = attn(q, k, v, score_mod=rel_bias, block_mask=mask)
        out.float().square().mean().backward()
    torch.cuda.synchronize()
    print(f"out {tuple(out.shape)} grad {q.grad.norm().item():.4g}")


if __name__ == "__main__":
    main()
