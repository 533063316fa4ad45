"""A compile that fails in Inductor's scheduler, while fusing nodes."""
import torch
from torch._inductor import scheduler


def broken_fuse_nodes(self, nodes):
    raise RuntimeError("injected scheduler failure in fuse_nodes")


scheduler.Scheduler.fuse_nodes = broken_fuse_nodes


@torch.compile
def f(x):
    return (x.cos() * 2).sum()


print(f(torch.randn(16)))
