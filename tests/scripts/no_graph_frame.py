"""Two graph breaks: the last resume frame holds no tensor op, so Dynamo traces it and makes no Inductor graph."""
import torch


def f(x):
    x = x.sin()
    print("a graph break")
    x = x + 1
    print("another")
    return x


g = torch.compile(f)
g(torch.randn(8))
