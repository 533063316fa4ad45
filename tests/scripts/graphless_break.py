import threading

import torch

lock = threading.Lock()


def inner(x):
    with lock:  # Dynamo: "Unsupported context manager": this frame gives no graph and runs eagerly
        y = x.sin()
    return y


@torch.compile
def f(x):
    return inner(x) * 2


print(f(torch.randn(8)).shape)


@torch.compile
def g(x):  # with "after": called after the last graph, its frame gives none either
    return inner(x)


if "after" in __import__("sys").argv[1:]:
    print(g(torch.randn(8)).shape)
