"""A deliberately large compile for size benchmarks: N pre-norm MLP blocks (LayerNorm, Linear, GELU,
Linear, residual) plus a softmax head.  Inference with N=400 gives one graph of ~2,900 IR buffers
and ~14.6k lines of output code; `--train` adds the backward (one training step), which brings the
session past 3,000 buffers in a graph and 50k lines of generated code.
Usage: python big_model.py [--blocks N] [--train]"""

import argparse

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 2 * dim)
        self.down = nn.Linear(2 * dim, dim)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x)))) * 0.5


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--blocks", type=int, default=400)
    p.add_argument("--train", action="store_true", help="one training step: forward and backward graphs")
    args = p.parse_args()
    model = nn.Sequential(*[Block(32) for _ in range(args.blocks)])
    if args.train:
        loss = torch.compile(model)(torch.randn(8, 32)).softmax(-1).sum()
        loss.backward()
        print("loss", float(loss))
        return
    with torch.no_grad():
        y = torch.compile(model)(torch.randn(8, 32)).softmax(-1)
    print("out", tuple(y.shape))


if __name__ == "__main__":
    main()
