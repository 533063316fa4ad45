"""A deliberately large compile for size benchmarks: N pre-norm MLP blocks (LayerNorm, Linear, GELU,
Linear, residual) plus a softmax head, inference.  With N=400 Inductor makes 3000+ IR buffers and
the output code runs past 50k lines.  Usage: python big_model.py [--blocks N]"""

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
    args = p.parse_args()
    model = nn.Sequential(*[Block(32) for _ in range(args.blocks)])
    with torch.no_grad():
        y = torch.compile(model)(torch.randn(8, 32)).softmax(-1)
    print("out", tuple(y.shape))


if __name__ == "__main__":
    main()
