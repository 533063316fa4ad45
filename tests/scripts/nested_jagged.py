"""A jagged NestedTensor through a compiled function: its graph takes a SymInt input."""
import torch

torch.manual_seed(0)
nt = torch.nested.nested_tensor([torch.randn(3, 8), torch.randn(5, 8)], layout=torch.jagged)
w = torch.randn(8, 8)


@torch.compile
def f(nt, w):
    return (nt @ w).relu() + 1


out = f(nt, w)
print("jagged", out.is_nested, out.values().shape)
