"""Recompile blame: a Python loop over a dynamic size makes Dynamo specialize it (torch's
symbolic_shape_specialization), so the second call, with another size, recompiles."""
import torch


def f(x):
    n = x.size(0)
    out = x.sin()
    for i in range(n):  # a Python loop over a size: Dynamo must know n, so it specializes it
        out = out + i
    return out


g = torch.compile(f, dynamic=True)
g(torch.randn(4, 3))
g(torch.randn(5, 3))
