"""Diff fixture (a): a dynamic-shape recompile.  [0/0] is specialized to 8 rows; the 16-row call
fails its size guard and Dynamo recompiles [0/1] with a symbolic row count."""
import torch


@torch.compile
def rms_norm(x, weight):
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * weight


with torch.no_grad():
    w = torch.ones(64)
    for rows in (8, 16):
        rms_norm(torch.randn(rows, 64), w)
