"""Collectives inside one compiled training step (tests/tracer/test_collectives.py).

Runs as one process (a world of 1 on the gloo backend, its own HashStore) or under torchrun (any
world size; gloo on CPU).  The compiled function has, in its forward graph, a functional
``reduce_scatter_tensor`` and ``all_gather_tensor`` (their autograd versions), and Dynamo's
rewrites of the in-place ``dist.all_reduce`` and ``dist.all_gather_into_tensor`` into
``_c10d_functional`` ops (each followed by its ``wait_tensor``); its backward graph has the
all-gather and reduce-scatter that are those autograd versions' gradients, and the all-reduce of a
Megatron-style "copy to the tensor-parallel region" (identity forward, all-reduced gradient).
"""

import os

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

if "RANK" in os.environ:
    dist.init_process_group("gloo")
else:
    dist.init_process_group("gloo", rank=0, world_size=1, store=dist.HashStore())
WORLD = dist.group.WORLD
ws = dist.get_world_size()


class CopyToRegion(torch.autograd.Function):
    """Identity forward, the gradient all-reduced (Megatron's ``f``)."""

    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return funcol.all_reduce(g, "sum", WORLD)


torch.manual_seed(0)
lin = torch.nn.Linear(8, 8)


def step(x):
    y = lin(CopyToRegion.apply(x)) + 1
    z = funcol.reduce_scatter_tensor_autograd(y, "sum", 0, WORLD)
    w = funcol.all_gather_tensor_autograd(z * 3, 0, WORLD)
    s = w.detach().cos()
    dist.all_reduce(s)
    out = torch.empty(ws * s.shape[0], *s.shape[1:])
    dist.all_gather_into_tensor(out, s)
    return (w * out[: w.shape[0]]).sum()


x = torch.randn(4 * ws, 8, requires_grad=True)
loss = torch.compile(step)(x)
loss.backward()
print(f"rank {dist.get_rank()}/{ws}: loss {loss.item():.4f} grad {x.grad.abs().sum().item():.4f}")
dist.destroy_process_group()
