"""Compiled autograd: a compiled training step whose backward() runs under torch._dynamo.compiled_autograd
(issue 27: its graph has 0 FX nodes in the Dynamo stop)."""
import torch

torch._dynamo.config.compiled_autograd = True
m = torch.nn.Linear(8, 4)


@torch.compile
def train(x):
    m(x).relu().sum().backward()


for _ in range(2):
    train(torch.randn(2, 8))
print("ok", round(float(m.weight.grad.sum()), 3))
