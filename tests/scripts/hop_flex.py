"""flex_attention compiled on CPU, small shapes: a score_mod and a mask_mod subgraph."""
import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention


def causal(b, h, q, kv):
    return q >= kv


def bias(score, b, h, q, kv):
    return score + (q - kv)


torch.manual_seed(0)
q, k, v = (torch.randn(1, 2, 128, 16) for _ in range(3))
mask = create_block_mask(causal, 1, 1, 128, 128, device="cpu")
out = torch.compile(flex_attention)(q, k, v, score_mod=bias, block_mask=mask)
print(torch.allclose(out, flex_attention(q, k, v, score_mod=bias, block_mask=mask), atol=1e-4))
