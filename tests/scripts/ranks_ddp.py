"""A small DDP training job (gloo, CPU) for issue 23's rank comparison, run under torchrun with one
inductor-step agent per rank.  Two steps; the data does not divide evenly, so rank 1's second
batch is short (5 rows, not 8) and only rank 1 recompiles the model with a dynamic batch size.

Not a fixture yet: recorded with one headless agent per rank (torch 2.15, CPU), Dynamo compiles three
frames (their ``guards`` messages arrive) but the sessions have no stop at all, with or without
``torch._dynamo.config.optimize_ddp`` (a plain module in its place records every stage)."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = DDP(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4)))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
step = torch.compile(model)
for i in range(2):
    rows = 5 if (rank == 1 and i == 1) else 8
    x, y = torch.randn(rows, 16), torch.randn(rows, 4)
    loss = torch.nn.functional.mse_loss(step(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"rank {rank} loss {loss.item():.4f}")
dist.destroy_process_group()
