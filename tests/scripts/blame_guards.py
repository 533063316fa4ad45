"""Recompile blame's constraint guards: a dynamic size the script's lines guard without making it static (a branch
on a size, a torch._check, a view that needs divisibility), then a call whose size fails the branch's guard."""
import torch


def f(x, y):
    if x.size(0) > 16:  # a guard on x's size: s > 16
        x = x * 2
    torch._check(y.size(0) % 2 == 0)  # a guard on y's size: even
    z = y.view(-1, 4)  # a view that needs y's size divisible by 4
    return x.sum() + z.sum()


h = torch.compile(f, dynamic=True)
h(torch.randn(32), torch.randn(8))
h(torch.randn(40), torch.randn(16))
h(torch.randn(8), torch.randn(16))  # 8 > 16 fails: a recompile
