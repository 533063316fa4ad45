"""The saved inputs' CPU test script: one graph, one C++ kernel reading two inputs; its output is saved to argv[1]
(the model's own result, which the kernel's repro must reproduce from the saved inputs)."""
import sys

import torch


def f(x, y):
    return (torch.relu(x) * 2 + torch.sin(y)).sum(dim=1)


torch.manual_seed(0)
x = torch.randn(64, 128)
y = torch.randn(64, 128)
out = torch.compile(f)(x, y)
torch.save(out, sys.argv[1])
