"""A tiny torchrun job for the job report/export tests (gloo, CPU): a compiled function with a
functional all_reduce (a collective in the post-grad graph and the wrapper).

``JOB_EXTRA_RANK=N``: one more all_reduce, compiled on rank N and eager on the others (rank N
compiles a graph the others do not: the ranks' compile ids and collective schedules diverge).
``JOB_DIE_RANK=N``: rank N ends with ``os._exit(3)`` after the last collective."""

import os

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol


@torch.compile
def allreduce_relu(x):
    return funcol.all_reduce(torch.relu(x) * 2, "sum", dist.group.WORLD) + 1


def extra(x):
    return funcol.all_reduce(torch.sin(x) * 3, "sum", dist.group.WORLD)


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    out = allreduce_relu(torch.full((8,), float(rank + 1)))
    print(f"rank {rank}: all_reduce {out[0].item():.1f}", flush=True)
    if os.environ.get("JOB_EXTRA_RANK") is not None:
        fn = torch.compile(extra) if os.environ["JOB_EXTRA_RANK"] == str(rank) else extra
        print(f"rank {rank}: extra {fn(torch.ones(4))[0].item():.3f}", flush=True)
    dist.barrier()
    if os.environ.get("JOB_DIE_RANK") == str(rank):
        os._exit(3)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
