"""A kernel's saved inputs on a GPU (tests/gpu/test_gpu_repro_inputs.py): one bandwidth-bound Triton kernel over N floats
(argv[2], default 32M); the model's output is saved to argv[1].  STORE_CUBIN=1 sets Inductor's
``triton.store_cubin`` (its launcher then keeps the compiled binary, ``asm`` included); DEVICE=cpu runs it on CPU."""
import os
import sys

import torch

if os.environ.get("STORE_CUBIN") == "1":
    torch._inductor.config.triton.store_cubin = True


def f(x, y):
    return torch.relu(x) * 2 + torch.sin(y)


dev = os.environ.get("DEVICE", "cuda")
n = int(sys.argv[2]) if len(sys.argv) > 2 else 32 * 1024 * 1024
torch.manual_seed(0)
x = torch.randn(n, device=dev)
y = torch.randn(n, device=dev)
g = torch.compile(f)
out = g(x, y)
for _ in range(3):
    g(x, y)
torch.save(out.cpu(), sys.argv[1])
