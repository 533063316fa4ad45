"""Inference with a compiled MLP classifier on CPU.

Compiles one graph, ``[0/0] inference``: a two-layer MLP (Linear -> ReLU -> Linear) followed by a
softmax and an argmax, called under ``torch.no_grad()`` so AOTAutograd builds an inference graph
(no backward).  Inductor lowers the matmuls to extern kernels and fuses the bias/ReLU and the
softmax/argmax reductions into C++ kernels.
"""

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, dim: int = 32, hidden: int = 64, classes: int = 10):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def main() -> None:
    torch.manual_seed(0)
    model = MLP().eval()

    @torch.compile
    def predict(x):
        probs = torch.softmax(model(x), dim=-1)
        return probs, probs.argmax(dim=-1)

    x = torch.randn(16, 32)
    with torch.no_grad():
        probs, labels = predict(x)
    print(f"predicted classes: {labels.tolist()}")
    print(f"mean top probability: {probs.max(dim=-1).values.mean().item():.4f}")


if __name__ == "__main__":
    main()
