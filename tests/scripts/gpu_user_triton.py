"""User Triton kernels inside compiled functions: a ``@triton.jit`` kernel launched directly, and the
same kernel behind ``torch.library.triton_op`` / ``wrap_triton``."""

import argparse

import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@torch.compile
def direct(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024, num_warps=4)
    return out.relu() * 2


@triton_op("inductor_step_demo::scaled_add", mutates_args={})
def scaled_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    wrap_triton(add_kernel)[(triton.cdiv(n, 512),)](x, y, out, n, BLOCK=512, num_warps=2)
    return out


@torch.compile
def via_op(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return scaled_add(x * 2, y).sin()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1 << 20)
    p.add_argument("--steps", type=int, default=12)
    a = p.parse_args()
    x = torch.randn(a.n, device="cuda")
    y = torch.randn(a.n, device="cuda")
    for _ in range(a.steps):
        d = direct(x, y)
        o = via_op(x, y)
    torch.cuda.synchronize()
    print(f"max error direct {((x + y).relu() * 2 - d).abs().max().item():.3g} "
          f"op {((x * 2 + y).sin() - o).abs().max().item():.3g}")


if __name__ == "__main__":
    main()
