"""Memory diff/gate fixture: tests/scripts/memory_whatif.py's two compiles (an inference chain whose peak is mid-graph,
a small MLP training step) recorded with --run, so the timing worker measures each graph's compiled and eager peaks
and eager autograd's saved bytes.  With MEMORY_MORE=1 Inductor writes no kernel's output in place
(``inplace_buffers = False``: the chain's peak grows) and the partitioner saves at most half the activations
(``activation_memory_budget = 0.5``: the forward saves less than eager autograd)."""
import os

import torch

if os.environ.get("MEMORY_MORE") == "1":
    torch._inductor.config.inplace_buffers = False
    torch._functorch.config.activation_memory_budget = 0.5
torch.manual_seed(0)
ws = [torch.randn(256, 256) / 16 for _ in range(3)]
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 32))


@torch.compile
def chain(x):
    for w in ws:
        x = x + torch.nn.functional.gelu(x @ w)  # the residual stays live beside the matmul's output
    return x.sum()


@torch.compile
def step(x):
    return model(x).square().mean()


with torch.no_grad():
    chain(torch.randn(128, 256))
step(torch.randn(1024, 64)).backward()
