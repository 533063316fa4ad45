"""A few compiled training steps of a small MLP with LayerNorm on CPU.

Compiles the training step's forward ``[0/0] forward`` on the first call and its backward
``[0/0] backward`` lazily at ``loss.backward()``; later steps reuse both.  Takes ``--steps N``
and ``--lr X`` on the command line and prints the parsed arguments, so a runner that passes the
script's argv verbatim can be checked.
"""

import argparse
import sys

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, dim: int = 32, hidden: int = 64, classes: int = 4):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.fc2(torch.nn.functional.gelu(self.fc1(self.norm(x))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2, help="training steps (default 2)")
    parser.add_argument("--lr", type=float, default=1e-2, help="SGD learning rate (default 1e-2)")
    args = parser.parse_args()
    print(f"argv: {sys.argv[1:]}")
    print(f"steps={args.steps} lr={args.lr}")

    torch.manual_seed(0)
    model = Net().to('cuda')
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)

    @torch.compile
    def loss_fn(x, y):
        return torch.nn.functional.cross_entropy(model(x), y)

    x = torch.randn(16, 32, device='cuda')
    y = torch.randint(0, 4, (16,), device='cuda')
    for step in range(args.steps):
        opt.zero_grad()
        loss = loss_fn(x, y)
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
