"""A pre-norm self-attention block (LayerNorm, QKV projection, softmax attention, output projection)
trained for one step and then run for inference; compiles [0/0] forward, [0/0] backward and
[1/0] inference.  Usage: python attention_block.py [--dim 64] [--heads 4]"""

import argparse

import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (c // self.heads) ** -0.5
        att = att.softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, c)
        return x + self.out(y)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    args = p.parse_args()
    torch.manual_seed(0)
    block = Attention(args.dim, args.heads).to('cuda')
    step = torch.compile(lambda x: block(x).pow(2).mean())
    x = torch.randn(2, 16, args.dim, device='cuda')
    loss = step(x)
    loss.backward()
    print(f"loss {loss.item():.4f}")
    with torch.no_grad():
        y = torch.compile(block)(x)
    print(f"inference out {tuple(y.shape)}")


if __name__ == "__main__":
    main()
