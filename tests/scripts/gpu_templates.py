"""Triton templates under ``max-autotune``: a Linear + GELU (addmm with a fused epilogue) and a
batched matmul, with Inductor allowed only Triton templates, so the chosen kernels are ``triton_tem_*``."""

import argparse

import torch
import torch._inductor.config as inductor_config


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--m", type=int, default=2048)
    p.add_argument("--steps", type=int, default=12)
    a = p.parse_args()
    inductor_config.max_autotune_gemm_backends = "TRITON"
    torch.manual_seed(0)
    lin = torch.nn.Linear(1024, 1024, device="cuda", dtype=torch.float16)

    @torch.compile(mode="max-autotune-no-cudagraphs")
    def mlp(x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(lin(x))

    @torch.compile(mode="max-autotune-no-cudagraphs")
    def scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return torch.bmm(q, k.transpose(1, 2)) * 0.125

    x = torch.randn(a.m, 1024, device="cuda", dtype=torch.float16)
    q = torch.randn(16, 512, 64, device="cuda", dtype=torch.float16)
    with torch.no_grad():
        for _ in range(a.steps):
            y = mlp(x)
            s = scores(q, q)
    torch.cuda.synchronize()
    print(f"mlp {tuple(y.shape)} scores {tuple(s.shape)}")


if __name__ == "__main__":
    main()
