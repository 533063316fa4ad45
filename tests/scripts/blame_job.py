"""Blame in a torchrun job (gloo, CPU): torch's own relu fault injection in a compiled function whose graph holds a
functional all_reduce, so every rank must take part in each call (the blame's comparison too).  Two lowerings (relu,
add; the collective's are not counted): one bisect step inside the lowerings, each step a job of its own."""
import torch
import torch._inductor.config as ic
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

ic.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"


@torch.compile
def f(x):
    return funcol.all_reduce(torch.relu(x), "sum", dist.group.WORLD) + x


def main() -> None:
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    out = f(torch.randn(64))
    print(f"rank {dist.get_rank()}: {float(out.sum()):.3f}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
