"""Blame on CUDA: Inductor's Triton relu made wrong by torch's own fault injection."""
import torch
import torch._inductor.config as ic

ic.triton.inject_relu_bug_TESTING_ONLY = "accuracy"


def f(x):
    return torch.relu(x * 2.0) + x.sin()


torch.manual_seed(0)
print(float(torch.compile(f)(torch.randn(4096, device="cuda")).sum()))
