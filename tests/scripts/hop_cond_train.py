"""A torch.cond training step: forward, backward and both branch subgraphs get an eager time."""
import torch


def f(x, w):
    return torch.cond(x.sum() > 0, lambda x, w: (x @ w).relu() + 1, lambda x, w: (x * 2).sin() @ w, (x, w)).sum()


torch.manual_seed(0)
x, w = torch.randn(16, 16), torch.randn(16, 16, requires_grad=True)
c = torch.compile(f)
for _ in range(2):
    c(x, w).backward()
print("grad", w.grad.shape)
