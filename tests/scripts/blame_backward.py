"""Blame's planted bug in a backward graph only: Inductor's lowering of aten.cos swapped for aten.sin's.  The
forward computes sin (right); the backward of sin is cos (wrong), so only the input gradients diverge."""
import torch
import torch._inductor.lowering as lowering

aten = torch.ops.aten
lowering.lowerings[aten.cos.default] = lowering.lowerings[aten.sin.default]


def f(x, w):
    return (x.sin() * w).relu()


torch.manual_seed(0)
x = torch.randn(64, requires_grad=True)
w = torch.randn(64)
out = torch.compile(f)(x, w)
out.sum().backward()
print(float(out.sum()), float(x.grad.sum()))
