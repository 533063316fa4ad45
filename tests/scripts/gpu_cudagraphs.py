"""CUDA graphs (``mode="reduce-overhead"``): one training graph pair cudagraph trees capture, and two
graphs torch declines to capture (an input mutated in place; a CPU tensor input), with their reasons."""

import argparse

import torch
import torch.nn as nn


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=25)
    p.add_argument("--width", type=int, default=256)
    a = p.parse_args()
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(a.width, a.width), nn.GELU(), nn.Linear(a.width, a.width)).cuda()
    f = torch.compile(m, mode="reduce-overhead")
    x = torch.randn(64, a.width, device="cuda")
    for _ in range(a.steps):
        m.zero_grad(set_to_none=True)
        f(x).square().mean().backward()

    @torch.compile(mode="reduce-overhead")
    def bump(acc: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        acc.add_(y)  # an input mutated in place: cudagraph trees skip this graph
        return (acc * y).sum()

    @torch.compile(mode="reduce-overhead")
    def mixed(y: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        return (y * scale.to(y.device)).relu()  # a CPU tensor input: skipped

    acc = torch.zeros(64, a.width, device="cuda")
    s = torch.tensor([0.5])
    with torch.no_grad():
        for _ in range(a.steps):
            bump(acc, x)
            mixed(x, s)
            ref = m(x)
            out = f(x)
    torch.cuda.synchronize()
    print(f"max |compiled - eager| = {(out - ref).abs().max().item():.3g}")


if __name__ == "__main__":
    main()
