"""A small Linear-ReLU-Linear model compiled with torch._inductor.config.freezing=True (issue 27: "no eager baseline")."""
import torch

torch._inductor.config.freezing = True
m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8)).eval()
mc = torch.compile(m)
x = torch.randn(4, 16)
with torch.no_grad():
    for _ in range(2):
        y = mc(x)
print("ok", round(float(y.sum()), 3))
