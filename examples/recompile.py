"""A compiled function called with different input shapes, so Dynamo recompiles.

The first call (8 rows) compiles ``[0/0]`` specialized to its static shape.  The second call
(16 rows) fails the size guard, so Dynamo recompiles the same frame as ``[0/1]``, this time with
a dynamic (symbolic) batch size; the third call (32 rows) reuses ``[0/1]``.
"""

import torch


@torch.compile
def rms_norm(x, weight):
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * weight


def main() -> None:
    torch.manual_seed(0)
    weight = torch.ones(64)
    with torch.no_grad():
        for rows in (8, 16, 32):
            out = rms_norm(torch.randn(rows, 64), weight)
            print(f"rows={rows} out.shape={tuple(out.shape)} mean={out.mean().item():.4f}")


if __name__ == "__main__":
    main()
