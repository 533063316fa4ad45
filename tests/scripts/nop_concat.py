"""A concat Inductor makes a NopKernelSchedulerNode of: sin and cos write straight into the cat's output."""
import torch


def f(x, y):
    a = torch.sin(x)
    b = torch.cos(y)
    c = torch.cat([a, b])
    return c * 2


g = torch.compile(f)
print(g(torch.randn(64, 64), torch.randn(64, 64)).sum())
