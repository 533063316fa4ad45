"""A small compiled function for the ledger's tests: a row sum read back after a matmul
(two generated kernels with the matmul between them, so they cannot fuse), and a matmul whose result a
pointwise kernel reads back (an extern call Inductor's scheduler does not fuse)."""

import torch


def f(x, w):
    a = x.sum(1, keepdim=True)
    y = (x / a) @ w
    return torch.relu(y) * a


x = torch.rand(512, 256) + 0.5
w = torch.randn(256, 256)
g = torch.compile(f)
for _ in range(2):
    out = g(x, w)
print("rows", out.shape[0])
