"""inductor-step's bundled demo: one compiled training step of a small MLP block with LayerNorm.

Run by ``inductor-step`` with no script.  Compiles three graphs: the training step's forward
``[0/0] forward``, its backward ``[0/0] backward`` (at ``loss.backward()``) and an inference
graph ``[1/0] inference`` for evaluation under ``torch.no_grad()``.

Runs on the GPU when torch sees one (Triton kernels), otherwise on the CPU (C++ kernels);
``--device cpu`` or ``--device cuda`` chooses (``inductor-step tracer/demo/train_step.py --device cpu``).
"""

import argparse

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim: int = 64, hidden: int = 256):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)

    def forward(self, x):
        h = self.up(self.norm(x))
        h = torch.nn.functional.gelu(h)
        return x + self.down(h)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu",
                        help="cuda when torch sees a GPU, else cpu")
    device = parser.parse_args().device
    torch.manual_seed(0)
    model = Block().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)

    @torch.compile
    def train_loss(x, y):
        return torch.nn.functional.mse_loss(model(x), y)

    x, y = torch.randn(32, 64, device=device), torch.randn(32, 64, device=device)
    loss = train_loss(x, y)
    loss.backward()
    opt.step()
    print(f"train loss {loss.item():.4f}")

    @torch.compile
    def evaluate(x):
        return model(x).softmax(dim=-1).amax(dim=-1)

    with torch.no_grad():
        print(f"eval max prob {evaluate(x).mean().item():.4f}")


if __name__ == "__main__":
    main()
