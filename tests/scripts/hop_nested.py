"""torch.compiler.nested_compile_region: one region called twice, an invoke_subgraph subgraph."""
import torch


@torch.compiler.nested_compile_region
def block(x, w, b):
    return torch.nn.functional.linear(x, w, b).relu()


def f(x, w, b):
    return block(block(x, w, b), w, b).sum(1)


torch.manual_seed(0)
x, w, b = torch.randn(4, 8), torch.randn(8, 8), torch.randn(8)
print(torch.allclose(torch.compile(f)(x, w, b), f(x, w, b), atol=1e-5))
