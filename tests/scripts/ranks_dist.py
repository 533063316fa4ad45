"""A two-rank job (torchrun, gloo on CPU) for the rank comparison: [0/0] all-reduces inside
the compiled graph (a functional collective, the same on every rank); [1/0] is a model head fed each
rank's shard, and the data does not divide evenly: rank 1's last batch is short (5 rows, not 8), so
only rank 1 recompiles it, [1/1]; [2/0] has an ``if rank == 0:`` branch (rank 0 adds a bias the
others do not), so rank 0's graph has one node more."""
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(rank)


@torch.compile
def sync(x):
    return funcol.all_reduce(x.sin(), "sum", dist.group.WORLD) * 2


@torch.compile
def head(x, w):
    return torch.nn.functional.gelu(x @ w).sum(dim=1)


@torch.compile
def stats(x):
    y = x.abs().mean(dim=0)
    if rank == 0:
        y = y + 1
    return y.sqrt()


w = torch.randn(16, 8)
with torch.no_grad():
    print("sync", sync(torch.ones(4, 4))[0, 0].item())
    for i in range(2):
        head(torch.randn(5 if (rank == 1 and i == 1) else 8, 16), w)
    stats(torch.randn(8, 8))
print(f"rank {rank} ok")
dist.destroy_process_group()
