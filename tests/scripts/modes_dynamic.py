"""dynamic=True: one graph over a varying sequence length (symbolic sizes with sources and ranges)."""
import torch


def f(x, w):
    return torch.relu(x @ w).sum(-1)


torch.manual_seed(0)
w = torch.randn(8, 4)
compiled = torch.compile(f, dynamic=True, fullgraph=True, options={"epilogue_fusion": False})
for seq in (5, 7):
    x = torch.randn(2, seq, 8)
    torch.testing.assert_close(compiled(x, w), f(x, w))
print("ok")
