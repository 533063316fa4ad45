"""flex_attention compiled on CPU (a score_mod and a mask_mod subgraph, whose stages the compile does not pause at),
then, seconds later, another compile: `n` pressed while the compile runs between them must not walk into the
subgraphs' recorded stops but wait for the next pause."""
import time

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
time.sleep(4)  # the window in which a person presses n again while the compile runs on
print(torch.compile(lambda x: torch.relu(x) * 2)(out).sum().item() > 0)
