"""Diff fixture (b): a dtype change.  [0/0] compiles for float32 inputs; the float64 call fails the
dtype guard and Dynamo recompiles [0/1] for float64."""
import torch


@torch.compile
def gelu_norm(x):
    return torch.nn.functional.gelu(x - x.mean(dim=-1, keepdim=True))


with torch.no_grad():
    gelu_norm(torch.randn(8, 32))
    gelu_norm(torch.randn(8, 32, dtype=torch.float64))
