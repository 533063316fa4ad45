"""Blame's planted bug: Inductor's C++ relu made wrong by torch's own fault injection (the compiler bisector names
the lowering of FX node relu).  Small: one graph, one kernel, so each bisect step compiles little.  Then a loop over
a dynamic size, which Dynamo specializes (recompile blame), called with two sizes."""
import torch
import torch._inductor.config as ic

ic.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"


def f(x):
    return torch.relu(x * 2.0) + x.sin()


def g(x):
    out = x.cos()
    for i in range(x.size(0)):  # a Python loop over a size: Dynamo must know it, so it specializes it
        out = out + i
    return out


torch.manual_seed(0)
x = torch.randn(64)
print(float(torch.compile(f)(x).sum()))
h = torch.compile(g, dynamic=True)
h(torch.randn(4, 3))
h(torch.randn(5, 3))
