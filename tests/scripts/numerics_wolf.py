"""Graphs where numerics used to cry wolf: each compiled output equals eager's.

[0/0] a mean: Inductor's buffer of ``x.mean(dim=-1, keepdim=True)`` holds the reduction's sum (its LoopBody
      stores the sum; the division by n is in the consumer's kernel);
[1/0] a causal mask: ``torch.full(..., -inf).triu(1)`` added to the scores before softmax and
      returned (so a buffer holds it): -inf on purpose, in eager too;
[2/0] forward and backward with dropout (training): Inductor's own random numbers (inductor_random);
[3/0] a variance: the buffer of ``torch.var_mean`` holds Welford's sum of squared deviations (variance × (n - 1)).
``--device cuda`` runs them on a GPU (Triton kernels).
"""

import sys

import torch

DEVICE = sys.argv[sys.argv.index("--device") + 1] if "--device" in sys.argv else "cpu"
torch.manual_seed(0)


def mean_mul_add(x):
    return x.mean(dim=-1, keepdim=True) * 2.0 + x   # MEAN_LINE


def causal(q, k):
    t = q.shape[-2]
    mask = torch.full((t, t), float("-inf"), device=q.device).triu(1)   # MASK_LINE
    probs = torch.softmax(q @ k.transpose(-2, -1) / 4.0 + mask, dim=-1)
    return probs, mask   # the mask a buffer of its own, as a model that keeps it for later layers


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(32, 64)
        self.b = torch.nn.Linear(64, 32)
        self.drop = torch.nn.Dropout(0.1)

    def forward(self, x):
        h = self.drop(torch.relu(self.a(x)))   # DROPOUT_LINE
        return self.drop(self.b(h) * 2.0 + x).sum()


x = torch.randn(16, 64, device=DEVICE)
print(torch.compile(mean_mul_add)(x).sum().item())
q, k = torch.randn(2, 8, 16, device=DEVICE), torch.randn(2, 8, 16, device=DEVICE)
print(torch.compile(causal)(q, k)[0].sum().item())
m = Block().to(DEVICE)
loss = torch.compile(m)(torch.randn(8, 32, device=DEVICE))
loss.backward()
print(loss.item())
y = torch.randn(16, 64, device=DEVICE)
print(torch.compile(lambda y: torch.var_mean(y, dim=-1, keepdim=True)[0] * 3.0 + y)(y).sum().item())   # VAR_LINE
