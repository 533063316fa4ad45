"""A CPU training step compiled with ``torch._inductor.config.graph_partition = True``: the output module's
``call`` is ``Runner.call`` (a method) with ``partitions=[]``, as torch writes it under CUDA graphs."""
import torch
import torch.nn as nn

torch._inductor.config.graph_partition = True
torch.manual_seed(0)
m = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 32), nn.LayerNorm(32))
f = torch.compile(m)
x = torch.randn(16, 32)
for _ in range(2):
    m.zero_grad(set_to_none=True)
    f(x).square().mean().backward()
print("done")
