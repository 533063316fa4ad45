"""Speed blame's planted cause: a setting that slows a CPU kernel measurably (cpp.simdlen = 1: no vector
instructions in Inductor's C++ kernels), which the blame names by timing a variant with it set back."""
import torch
import torch._inductor.config as ic

ic.cpp.simdlen = 1


def f(x):
    return (x * 1.5 + 0.5).relu().sum(dim=-1)


torch.manual_seed(0)
x = torch.randn(512, 2048)
g = torch.compile(f)
for _ in range(3):
    g(x)
