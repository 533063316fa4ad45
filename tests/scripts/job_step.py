"""A small torchrun job for the job tests (gloo on CPU): a DDP training step of a compiled MLP, then a
compiled function with an in-graph all_reduce.  ``--die-rank N``: rank N's Inductor fails lowering
aten.sin (as a buggy lowering would) while the others wait at the next collective.
``--crash-rank N``: rank N is killed by SIGSEGV after its first compile.  ``--device cuda`` puts
rank r on GPU ``r % device_count`` (two ranks share one GPU when there is one: use ``--backend gloo``
then, NCCL refuses two ranks on one GPU); ``--backend nccl`` for NCCL."""
import argparse
import ctypes
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

p = argparse.ArgumentParser()
p.add_argument("--die-rank", type=int, default=None)
p.add_argument("--crash-rank", type=int, default=None)
p.add_argument("--device", default="cpu")
p.add_argument("--backend", default="gloo")
args = p.parse_args()

dev = torch.device(args.device)
if dev.type == "cuda":
    dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)) % torch.cuda.device_count())
    torch.cuda.set_device(dev)
dist.init_process_group(args.backend)
rank = dist.get_rank()
if rank == args.die_rank:
    from torch._inductor import lowering

    def broken_sin(*a, **k):
        raise RuntimeError(f"injected lowering failure for aten.sin on rank {rank}")

    lowering.lowerings[torch.ops.aten.sin.default] = broken_sin

torch.manual_seed(0)
model = DDP(torch.compile(nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16)).to(dev)))
loss = model(torch.randn(4, 16, device=dev) + rank).pow(2).mean()
loss.backward()
if rank == args.crash_rank:
    ctypes.string_at(0)


@torch.compile
def reduce_sin(x):
    y = torch.sin(x) * 2
    dist.all_reduce(y)
    return y + 1


print(f"rank {rank}:", reduce_sin(torch.ones(4, device=dev) * (rank + 1)).tolist())
dist.destroy_process_group()
