"""An MLP compiled for inference, called twice: `r` at its codegen stop times it before the script ever called it."""

import torch

model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 64))
compiled = torch.compile(model)
x = torch.randn(32, 64)
with torch.no_grad():
    for _ in range(2):
        compiled(x)
print("done")
