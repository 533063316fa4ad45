"""A few compiled FSDP2 (``fully_shard``) training steps of a small nanoGPT; runs unmodified under torchrun.

    torchrun --nproc-per-node 2 examples/fsdp2_train.py          # gloo on CPU; NCCL, one GPU per rank, with CUDA
    python examples/fsdp2_train.py                               # one process: a world of 1 (gloo, its own store)
    inductor-step --nproc-per-node 2 examples/fsdp2_train.py     # every rank under inductor-step

The model is examples/real/nanogpt_train.py's GPT (without weight tying: FSDP2 shards each
parameter once).  Each transformer block and then the root are ``fully_shard``-ed (parameters
sharded over the ranks as DTensors along dim 0), and each block is ``torch.compile``d on its own,
the usual FSDP2 recipe.  Before a block runs, FSDP2 all-gathers its parameters (``all_gather_into_tensor``
through its copy-in/copy-out ops); after its backward it reduce-scatters the gradients
(``reduce_scatter_tensor``).  Those collectives run in FSDP2's hooks, outside the compiled graphs
(on torch 2.15 too, whose Dynamo no longer has ``skip_fsdp_hooks``): each block's forward and
backward graph holds only its own compute, and one compile serves every block (``[0/0]``).  To
see a collective inside a compiled graph, see examples/ddp_train.py's ``global_mean`` or
tests/scripts/collectives.py.

Sizes are small by default (under plain torchrun with 2 ranks on 2 CPU cores: 10.5-11 s, caches
warm; 17-22 s with other compiles running); ``--n-layer``, ``--n-embd``, ``--block-size``,
``--batch-size`` and ``--steps`` make it bigger.
"""

import argparse
import os
import sys

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "real"))
from nanogpt_train import GPT, GPTConfig  # noqa: E402


def init_distributed(device: str) -> torch.device:
    """The process group torchrun's environment describes, NCCL on CUDA else gloo; without
    torchrun, a world of 1.  Returns this rank's device."""
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--device", default="auto", help="auto (CUDA when there is one), cpu or cuda")
    parser.add_argument("--n-layer", type=int, default=2)
    parser.add_argument("--n-embd", type=int, default=64)
    parser.add_argument("--n-head", type=int, default=2)
    parser.add_argument("--block-size", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=4)
    args = parser.parse_args()

    device = init_distributed(args.device)
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(1337)
    config = GPTConfig(block_size=args.block_size, n_layer=args.n_layer, n_head=args.n_head, n_embd=args.n_embd)
    model = GPT(config)
    model.lm_head.weight = torch.nn.Parameter(model.lm_head.weight.detach().clone())  # untie: one owner per parameter
    model.to(device)
    for block in model.transformer.h:
        fully_shard(block)
        block.compile()
    fully_shard(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95), weight_decay=0.1)

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
        if rank == 0:
            print(f"iter {it}: loss {loss.item():.4f} ({world} ranks)", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
