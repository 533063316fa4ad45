"""One rank of a data-parallel job, run alone (the rank comparison): ``--rank N`` stands for
torchrun's RANK and picks what rank-dependent code does in a real job.

- [0/0] forward / backward: a small MLP's training step, the same on every rank;
- [1/0] inference: a layer norm and pointwise ops; rank 1 runs it under ``max_fusion_size=1`` (a
  per-rank setting), so its scheduler nodes do not fuse;
- [2/0] inference: called twice; rank 1's second call has more rows, so only rank 1 recompiles [2/1];
- [3/0] inference: each rank's shard of a batch, rank 1's twice as many rows (uneven sharding), so
  its kernel is slower;
- ``--die``: the process exits (``os._exit(1)``) while Inductor fuses the backward's scheduler nodes,
  as a rank killed midway would (the out-of-memory killer, a crash in the compiler).
"""
import argparse
import os

import torch

p = argparse.ArgumentParser()
p.add_argument("--rank", type=int, default=int(os.environ.get("RANK", 0)))
p.add_argument("--die", action="store_true")
args = p.parse_args()
rank = args.rank
torch.manual_seed(0)

if args.die:
    from torch._inductor import scheduler

    fuse, calls = scheduler.Scheduler.fuse_nodes, []

    def fuse_nodes(self, nodes):
        calls.append(1)
        if len(calls) == 2:  # the backward's
            os._exit(1)
        return fuse(self, nodes)

    scheduler.Scheduler.fuse_nodes = fuse_nodes

model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))


@torch.compile
def step(x, y):
    return torch.nn.functional.mse_loss(model(x), y)


step(torch.randn(8, 16), torch.randn(8, 4)).backward()


@torch.compile
def norm(x, w):
    y = torch.nn.functional.layer_norm(x, (x.shape[-1],)) * w
    return (y.sin() + 1).relu(), y.sum(dim=0)


@torch.compile
def scale(x):
    return torch.tanh(x) * 2 + 1


@torch.compile
def shard(x):
    return (x.sin() * x.cos()).exp().sum(dim=1)


with torch.no_grad():
    x, w = torch.randn(64, 32), torch.randn(32)
    if rank == 1:
        with torch._inductor.config.patch(max_fusion_size=1):
            norm(x, w)
    else:
        norm(x, w)
    scale(torch.randn(16, 8))
    scale(torch.randn(16 if rank == 0 else 24, 8))
    shard(torch.randn(512 * (1 + rank), 1024))
print(f"rank {rank} ok")
