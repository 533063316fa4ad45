"""Compile time on a CUDA GPU (tests/gpu/test_compile_time_gpu.py): a tiny training step whose forward and backward
have Triton kernels (gelu, the row sums) around a cuBLAS mm.  CTIME_SALT goes into Inductor's cache key through a
joint-graph pass that does nothing (as tests/scripts/ctime_small.py): with a fresh TORCHINDUCTOR_CACHE_DIR the
first run misses every cache, a second run with the same salt and directory hits."""

import os

import torch
from torch._inductor.custom_graph_pass import CustomGraphPass


class Salt(CustomGraphPass):
    def __call__(self, graph):
        return None

    def uuid(self):
        return os.environ.get("CTIME_SALT", "none")


torch._inductor.config.joint_custom_post_pass = Salt()


@torch.compile
def f(x, w):
    return torch.nn.functional.gelu(x @ w).sum(dim=-1).sin()


w = torch.randn(64, 64, device="cuda", requires_grad=True)
f(torch.randn(32, 64, device="cuda"), w).sum().backward()
torch.cuda.synchronize()
print("grad", tuple(w.grad.shape))
