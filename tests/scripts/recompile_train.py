"""A training step recompiled for a new batch size: the recompile [0/1] has a forward and a backward graph."""
import torch

torch._dynamo.config.automatic_dynamic_shapes = False
lin = torch.nn.Linear(8, 8)
step = torch.compile(lambda x: lin(x).relu().sum())
for n in (4, 6):
    step(torch.randn(n, 8)).backward()
