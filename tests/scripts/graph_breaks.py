"""Two graph breaks: a .item() call and a data-dependent branch."""
import torch

def f(x):
    y = x.sin()
    n = y.sum().item()
    if y.mean() > 0:
        return y * n
    return y.cos()

c = torch.compile(f)
print(c(torch.randn(8)))
