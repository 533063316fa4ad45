"""A matmul-heavy inference graph (two linear layers with a GELU) for max_autotune what-ifs:
``--device cuda`` (default: cuda when there is one)."""
import argparse

import torch

p = argparse.ArgumentParser()
p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
p.add_argument("--n", type=int, default=1024)
a = p.parse_args()
n = a.n
w1 = torch.randn(n, 4 * n, device=a.device, dtype=torch.float16)
w2 = torch.randn(4 * n, n, device=a.device, dtype=torch.float16)
x = torch.randn(2048, n, device=a.device, dtype=torch.float16)


def mlp(x):
    return torch.nn.functional.gelu(x @ w1) @ w2


f = torch.compile(mlp)
with torch.no_grad():
    for _ in range(3):
        f(x)
print("ok")
