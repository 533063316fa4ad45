"""torch.cond inside a compiled function: two branch subgraphs, true_graph_0 and false_graph_0."""
import torch


def f(x, w):
    def yes(x, w):
        return (x @ w).relu() + 1

    def no(x, w):
        return (x * 2).sin() @ w

    return torch.cond(x.sum() > 0, yes, no, (x, w)) * 3


torch.manual_seed(0)
x, w = torch.randn(8, 8), torch.randn(8, 8)
c = torch.compile(f)
print(torch.allclose(c(x, w), f(x, w), atol=1e-5), torch.allclose(c(-x.abs(), w), f(-x.abs(), w), atol=1e-5))
