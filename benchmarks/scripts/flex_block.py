"""A flex-attention block (projection, flex_attention with a relative-bias score_mod and a causal block mask),
B=2, H=4, S=128, D=32, inference; `python flex_block.py --bench` times the script's calls with torch.utils.benchmark."""
import sys

import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

B, H, S, D = 2, 4, 128, 32


def rel_bias(score, b, h, q, kv):
    return score + (q - kv) * 0.01


def causal(b, h, q, kv):
    return q >= kv


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(H * D, 3 * H * D)
        self.out = torch.nn.Linear(H * D, H * D)

    def forward(self, x, mask):
        q, k, v = self.qkv(x).view(B, S, 3, H, D).permute(2, 0, 3, 1, 4)
        y = flex_attention(q, k, v, score_mod=rel_bias, block_mask=mask)
        return self.out(y.transpose(1, 2).reshape(B, S, H * D))


torch.manual_seed(0)
m = Block().eval()
x = torch.randn(B, S, H * D)
mask = create_block_mask(causal, None, None, S, S, device="cpu")
c = torch.compile(m)
with torch.no_grad():
    for _ in range(3):
        c(x, mask)
if "--bench" in sys.argv:
    import torch.utils.benchmark as tb

    torch.set_num_threads(2)
    for round_ in range(3):
        with torch.no_grad():
            comp = tb.Timer("c(x, mask)", globals=globals(), num_threads=2).blocked_autorange(min_run_time=2).median
            eag = tb.Timer("m(x, mask)", globals=globals(), num_threads=2).blocked_autorange(min_run_time=2).median
        print(f"round {round_}: compiled call {comp * 1e3:.4f} ms, eager module {eag * 1e3:.4f} ms, {eag / comp:.2f}x",
              flush=True)
print("done")
