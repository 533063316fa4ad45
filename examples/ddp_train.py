"""A few compiled DDP training steps of a small nanoGPT; runs unmodified under plain torchrun.

    torchrun --nproc-per-node 2 examples/ddp_train.py            # gloo on CPU; NCCL, one GPU per rank, with CUDA
    python examples/ddp_train.py                                 # one process: a world of 1 (gloo, its own store)
    inductor-step --nproc-per-node 2 examples/ddp_train.py       # every rank under inductor-step

The model is examples/real/nanogpt_train.py's GPT (nanoGPT-style blocks: pre-norm LayerNorm, causal
self-attention, GELU MLP), wrapped in ``DistributedDataParallel`` and then ``torch.compile``d; each
step is a forward, a backward and an AdamW step on random tokens, each rank its own batch.

What the compiles show:

- **DDPOptimizer's graphs.** Under ``torch.compile`` DDP's gradients are all-reduced by its reducer
  in buckets of about ``bucket_cap_mb``, as each bucket's gradients are ready in the backward.
  Dynamo's DDPOptimizer (``torch._dynamo.config.optimize_ddp``, on by default) splits the model's
  graph at the bucket boundaries, so each bucket's backward can finish, and its all-reduce start,
  before the next one is computed.  ``--bucket-mb`` is DDP's smallest (1 MB: DDPOptimizer refuses a cap below DDP's
  first bucket, ``torch.distributed._DEFAULT_FIRST_BUCKET_BYTES``) against 0.64 M parameters
  (2.6 MB) at the default sizes, so there are three buckets: Dynamo compiles one frame, and
  DDPOptimizer hands Inductor one submodule per bucket, each with its forward graph (in the model's
  order) and its backward graph (compiled in the backward, last bucket first).
  The bucketed all-reduces
  themselves run in DDP's reducer (C++ hooks), outside the compiled graphs.
- **A collective inside a compiled graph.** ``global_mean`` (compiled on its own) averages each
  step's loss over the ranks with ``dist.all_reduce``: Dynamo rewrites it to
  ``_c10d_functional.all_reduce_`` and ``wait_tensor``, which appear in that graph's post-grad
  graph and as ``torch.ops._c10d_functional`` calls in its wrapper.

Sizes are small by default: under plain torchrun with 2 ranks on 2 CPU cores, 9.5 s with
Inductor's caches warm on an idle machine (28 s with other compiles running; 45-80 s cold, each
rank compiling its own C++ kernels); ``--n-layer``, ``--n-embd``,
``--block-size``, ``--batch-size`` and ``--steps`` make it bigger.
"""

import argparse
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "real"))
from nanogpt_train import GPT, GPTConfig  # noqa: E402


def init_distributed(device: str) -> torch.device:
    """The process group torchrun's environment describes (``RANK``, ``WORLD_SIZE``, ...), NCCL on
    CUDA else gloo; without torchrun, a world of 1.  Returns this rank's device."""
    use_cuda = device == "cuda" or (device == "auto" and torch.cuda.is_available())
    backend = "nccl" if use_cuda else "gloo"
    if "RANK" in os.environ:
        dist.init_process_group(backend)
    else:
        dist.init_process_group(backend, rank=0, world_size=1, store=dist.HashStore())
    if use_cuda:
        local = int(os.environ.get("LOCAL_RANK", 0))
        torch.cuda.set_device(local)
        return torch.device("cuda", local)
    return torch.device("cpu")


@torch.compile
def global_mean(x: torch.Tensor) -> torch.Tensor:
    """``x`` averaged over the ranks (an in-graph all-reduce; gloo has no ``ReduceOp.AVG``)."""
    y = x.detach().clone()
    dist.all_reduce(y)
    return y / dist.get_world_size()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--device", default="auto", help="auto (CUDA when there is one), cpu or cuda")
    parser.add_argument("--bucket-mb", type=float, default=1.0, help="DDP's bucket_cap_mb (DDPOptimizer splits there)")
    parser.add_argument("--n-layer", type=int, default=2)
    parser.add_argument("--n-embd", type=int, default=160)
    parser.add_argument("--n-head", type=int, default=4)
    parser.add_argument("--block-size", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=4)
    args = parser.parse_args()

    device = init_distributed(args.device)
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(1337)  # the same initial weights on every rank (DDP also broadcasts rank 0's)
    config = GPTConfig(block_size=args.block_size, n_layer=args.n_layer, n_head=args.n_head, n_embd=args.n_embd)
    model = GPT(config).to(device)
    model = DDP(model, device_ids=[device.index] if device.type == "cuda" else None, bucket_cap_mb=args.bucket_mb)
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95), weight_decay=0.1)
    model = torch.compile(model)

    gen = torch.Generator().manual_seed(rank)  # each rank its own batches
    data = torch.randint(0, config.vocab_size, (4096,), generator=gen)
    model.train()
    for it in range(args.steps):
        ix = torch.randint(len(data) - config.block_size - 1, (args.batch_size,), generator=gen)
        x = torch.stack([data[i:i + config.block_size] for i in ix]).to(device)
        y = torch.stack([data[i + 1:i + 1 + config.block_size] for i in ix]).to(device)
        _, loss = model(x, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        mean = global_mean(loss)
        if rank == 0:
            print(f"iter {it}: loss {loss.item():.4f} (mean over {world} ranks {mean.item():.4f})", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
