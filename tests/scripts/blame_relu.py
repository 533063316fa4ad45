"""Blame's planted bug: Inductor's C++ relu made wrong by torch's own fault injection (the compiler bisector names
the lowering of FX node relu).  Small: one graph, two kernels, so each bisect step compiles little."""
import torch
import torch._inductor.config as ic

ic.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"


def f(x):
    return torch.relu(x * 2.0) + x.sin()


torch.manual_seed(0)
x = torch.randn(64)
print(float(torch.compile(f)(x).sum()))
