"""Every higher-order op Inductor compiles on CPU, one compiled function each: torch.cond
([0/0]), a nested_compile_region called twice ([1/0]), while_loop ([2/0]) and flex_attention with a
score_mod and a block mask ([3/0]).  Prints each compiled result against eager."""
import torch
from torch._higher_order_ops.while_loop import while_loop
from torch.nn.attention.flex_attention import create_block_mask, flex_attention


def branchy(x, w):
    return torch.cond(x.sum() > 0, lambda x, w: (x @ w).relu() + 1, lambda x, w: (x * 2).sin() @ w, (x, w)) * 3


@torch.compiler.nested_compile_region
def block(x, w, b):
    return torch.nn.functional.linear(x, w, b).relu()


def regions(x, w, b):
    return block(block(x, w, b), w, b).sum(1)


def loop(i, x):
    return while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, (x * 2).cos()), (i, x))


def bias(score, b, h, q, kv):
    return score + (q - kv)


torch.manual_seed(0)
x, w, b = torch.randn(8, 8), torch.randn(8, 8), torch.randn(8)
print("cond", torch.allclose(torch.compile(branchy)(x, w), branchy(x, w), atol=1e-5))
print("nested", torch.allclose(torch.compile(regions)(x[:4], w, b), regions(x[:4], w, b), atol=1e-5))
i0 = torch.tensor(0)
print("while_loop", all(torch.allclose(p, q) for p, q in zip(torch.compile(loop)(i0, x[0]), loop(i0, x[0]))))
q, k, v = (torch.randn(1, 1, 128, 16) for _ in range(3))
mask = create_block_mask(lambda b, h, q, kv: q >= kv, 1, 1, 128, 128, device="cpu")
out = torch.compile(flex_attention)(q, k, v, score_mod=bias, block_mask=mask)
print("flex", torch.allclose(out, flex_attention(q, k, v, score_mod=bias, block_mask=mask), atol=1e-4))
