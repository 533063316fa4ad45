"""The memory settings' what-if fixture: an inference chain whose planned peak is mid-graph (a residual live beside
a matmul's output, which the GELU and the add write in place), and a small MLP training step (saved activations)."""

import torch

torch.manual_seed(0)
ws = [torch.randn(256, 256) / 16 for _ in range(3)]
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 32))


@torch.compile
def chain(x):
    for w in ws:
        x = x + torch.nn.functional.gelu(x @ w)  # the residual stays live beside the matmul's output
    return x.sum()


@torch.compile
def step(x):
    return model(x).square().mean()


with torch.no_grad():
    chain(torch.randn(128, 256))
step(torch.randn(1024, 64)).backward()
