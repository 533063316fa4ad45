"""Three tiny graphs with real numerical differences from eager (tests/tracer/test_numerics.py).

[0/0] a bf16 chain: Inductor keeps (b + 256) - 256 in float32 and rounds once, eager rounds after each op.
[1/0] a NaN from the script's data: log of a value the data made negative.
[2/0] a deliberately wrong lowering registered here: aten.tanh lowered as sigmoid.
[3/0] forward and backward: a training step (no divergence expected);
[4/0] an in-place update of the script's tensor (an SGD step): the kernel writes the graph's input.
``--device cuda`` runs them on a GPU (Triton kernels); ``--no-train`` leaves out [3/0] and [4/0].
"""

import sys

import torch
from torch._inductor.lowering import lowerings, register_lowering

aten = torch.ops.aten


def wrong_tanh(x):  # a deliberately wrong lowering: tanh computed as sigmoid
    return lowerings[aten.sigmoid.default](x)


register_lowering(aten.tanh.default)(wrong_tanh)

DEVICE = sys.argv[sys.argv.index("--device") + 1] if "--device" in sys.argv else "cpu"
torch.manual_seed(0)
w = torch.randn(32, 16, device=DEVICE)


def chain(x, w):
    a = x * 2                      # exact in bf16
    b = a @ w                      # the same ATen mm in both
    return ((b + 256) - 256) * 3   # BF16_CHAIN: eager rounds b + 256 to bf16


def nan_from_data(x, w):
    a = x @ w
    return torch.log(a - a.min() - 1.0) * 2   # NAN_LINE: log of a negative value


def lowered_wrong(x, w):
    a = x @ w
    return torch.tanh(a) * 2 + 1   # WRONG_LINE: tanh lowered as sigmoid


x = torch.randn(8, 32, device=DEVICE)
print(torch.compile(chain)(x.bfloat16(), w.bfloat16()).float().sum().item())
print(torch.compile(nan_from_data)(x, w).sum().item())
print(torch.compile(lowered_wrong)(x, w).sum().item())


def train_loss(x, p):
    return torch.sigmoid(x @ p).square().mean()


def sgd(p, g):
    p.add_(g, alpha=-0.1)  # INPLACE_LINE


if "--no-train" not in sys.argv:
    p = w.clone().requires_grad_()
    loss = torch.compile(train_loss)(x, p)
    loss.backward()
    with torch.no_grad():
        torch.compile(sgd)(p, p.grad)
    print(loss.item(), p.sum().item())
