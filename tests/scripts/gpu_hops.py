"""torch.cond, a nested_compile_region called twice and while_loop, compiled on CUDA: each
higher-order op's subgraphs are graphs of their own with Triton kernels.  Prints each result against eager."""
import torch
from torch._higher_order_ops.while_loop import while_loop


def branchy(x, w):
    return torch.cond(x.sum() > 0, lambda x, w: (x @ w).relu() + 1, lambda x, w: (x * 2).sin() @ w, (x, w)) * 3


@torch.compiler.nested_compile_region
def block(x, w, b):
    return torch.nn.functional.linear(x, w, b).relu()


def regions(x, w, b):
    return block(block(x, w, b), w, b).sum(1)


def loop(i, x):
    return while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, (x * 2).cos()), (i, x))


torch.manual_seed(0)
x, w, b = torch.randn(64, 64, device="cuda"), torch.randn(64, 64, device="cuda"), torch.randn(64, device="cuda")
print("cond", torch.allclose(torch.compile(branchy)(x, w), branchy(x, w), atol=1e-3, rtol=1e-3))
print("nested", torch.allclose(torch.compile(regions)(x[:32], w, b), regions(x[:32], w, b), atol=1e-3, rtol=1e-3))
i0 = torch.tensor(0, device="cuda")
print("while_loop", all(torch.allclose(p, q, atol=1e-4) for p, q in zip(torch.compile(loop)(i0, x[0]), loop(i0, x[0]))))
