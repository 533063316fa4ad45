"""A compile that fails in Inductor's lowering: the lowering of aten.sin raises (as a buggy lowering would)."""
import torch
from torch._inductor import lowering


def broken_sin(*args, **kwargs):
    raise RuntimeError("injected lowering failure for aten.sin")


lowering.lowerings[torch.ops.aten.sin.default] = broken_sin


@torch.compile
def f(x):
    return torch.sin(x) + 1


print(f(torch.randn(16)))
