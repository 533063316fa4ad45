"""CUDA models for benchmarks/gpu_vs_profiler.py, usable two ways:

* as a script (what ``inductor-step --headless --run`` runs as ``__main__``)::

      python benchmarks/cuda_models.py attention [--dim 1024 --seq 512 --batch 16 --heads 16]
      python benchmarks/cuda_models.py pointwise [--numel 67108864]

* imported: ``build(argv)`` returns the same compiled model as a list of phases
  ``(graph_key, fn)``, called in this order once per iteration, so that each phase runs exactly one
  compiled graph (``"[0/0] forward"`` ...), with the same compile ids as the script gets.

``attention`` is examples/attention_block.py on CUDA and bigger (a training step, then inference:
graphs [0/0] forward, [0/0] backward, [1/0] inference); ``pointwise`` is
``torch.compile(lambda x, y: x * 2 + y)`` on two fp32 tensors (one graph, [0/0] inference).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))
from attention_block import Attention  # noqa: E402  - the example's own module, unchanged


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("model", choices=["attention", "pointwise"])
    p.add_argument("--dim", type=int, default=1024)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--numel", type=int, default=64 * 1024 * 1024)
    p.add_argument("--device", default="cuda")
    p.add_argument("--iters", type=int, default=1, help="iterations of the model loop (main only)")
    return p.parse_args(argv)


def build(argv: list[str]) -> list[tuple[str, Callable[[], None]]]:
    """The model as phases: ``[(graph_key, fn), ...]``; call each fn in order, once per iteration.

    The first iteration compiles (in the same order as ``main`` does, so compile ids match)."""
    a = parse(argv)
    torch.manual_seed(0)
    if a.model == "pointwise":
        x = torch.randn(a.numel, device=a.device)
        y = torch.randn(a.numel, device=a.device)
        f = torch.compile(lambda x, y: x * 2 + y)

        def run() -> None:
            f(x, y)

        return [("[0/0] inference", run)]

    block = Attention(a.dim, a.heads).to(a.device)
    step = torch.compile(lambda x: block(x).pow(2).mean())
    infer = torch.compile(block)
    x = torch.randn(a.batch, a.seq, a.dim, device=a.device)
    gout = torch.ones((), device=a.device)  # passed to backward so no ones_like kernel runs outside the graph
    state: dict = {}

    def fwd() -> None:
        for p in block.parameters():
            p.grad = None  # AccumulateGrad then steals the gradient: no add kernels outside the graph
        state["loss"] = step(x)

    def bwd() -> None:
        state.pop("loss").backward(gout)

    def inf() -> None:
        with torch.no_grad():
            infer(x)

    return [("[0/0] forward", fwd), ("[0/0] backward", bwd), ("[1/0] inference", inf)]


def main() -> None:
    phases = build(sys.argv[1:])
    for _ in range(parse(sys.argv[1:]).iters):
        for _, fn in phases:
            fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    print(f"ran {', '.join(k for k, _ in phases)}")


if __name__ == "__main__":
    main()
