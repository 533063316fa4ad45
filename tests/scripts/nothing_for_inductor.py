"""torch.compile on functions that give Inductor no graph: every frame breaks before any tensor op
(the session must say nothing reached Inductor, and why)."""
import torch


@torch.compile
def f(x):
    print("side effect", x.shape)
    torch._dynamo.graph_break()
    return x


for _ in range(2):
    f(torch.randn(4))
print("ok")
