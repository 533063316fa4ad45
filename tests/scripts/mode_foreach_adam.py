"""A compiled optimizer step: torch.compile(opt.step) with Adam(foreach=True) (issue 27: eager baseline
fails on %getitem (%_foreach_add__scalar, 0))."""
import torch

torch.manual_seed(0)
m = torch.nn.Linear(8, 4)
opt = torch.optim.Adam(m.parameters(), lr=1e-2, foreach=True)
m(torch.randn(2, 8)).sum().backward()
step = torch.compile(opt.step)
for _ in range(2):
    step()
print("ok", round(float(m.weight.sum()), 3))
