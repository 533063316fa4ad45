"""Blame's planted bug: Inductor's lowering of aten.cos swapped for aten.sin's (a wrong lowering)."""
import torch
import torch._inductor.lowering as lowering

aten = torch.ops.aten
lowering.lowerings[aten.cos.default] = lowering.lowerings[aten.sin.default]


def f(x):
    return x.cos() * 2.0 + x.relu()


torch.manual_seed(0)
print(float(torch.compile(f)(torch.randn(64)).sum()))
