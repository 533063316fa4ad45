"""A small DDP training job (gloo, CPU) for the rank comparison, run under torchrun with one
inductor-step agent per rank.  Two steps; the data does not divide evenly, so rank 1's second
batch is short (5 rows, not 8) and only rank 1 recompiles the model's forward and backward.

The model is compiled inside DDP (``DDP(torch.compile(model))``): on torch 2.15 (CPU, gloo)
``torch.compile(DDP(model))`` graph-breaks in DDP's forward (``Logger.set_runtime_stats_and_log``,
the skipped ``_inside_ddp_forward``) and never calls the backend: the model runs eagerly and
nothing is compiled, so a session would have no stop."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = DDP(torch.compile(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
step = model
for i in range(2):
    rows = 5 if (rank == 1 and i == 1) else 8
    x, y = torch.randn(rows, 16), torch.randn(rows, 4)
    loss = torch.nn.functional.mse_loss(step(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"rank {rank} loss {loss.item():.4f}")
dist.destroy_process_group()
