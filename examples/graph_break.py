"""A compiled function with a graph break in the middle.

``normalize_then_scale`` computes a normalization, then branches in Python on a tensor value
(``.item()``), which Dynamo cannot trace into the graph: it breaks the graph there.  The code
before the break compiles as frame ``[0/0]``; the code after it (the resume function Dynamo
creates) compiles as ``[1/0]`` (and, if the other branch is taken later, more graphs).
"""

import torch


@torch.compile
def normalize_then_scale(x):
    y = (x - x.mean()) / (x.std() + 1e-5)
    if y.abs().max().item() > 2.0:  # data-dependent Python branch: graph break
        scale = 0.5
    else:
        scale = 2.0
    return torch.tanh(y * scale) + 1


def main() -> None:
    torch.manual_seed(0)
    x = torch.randn(64, 32)
    with torch.no_grad():
        out = normalize_then_scale(x)
    print(f"output mean {out.mean().item():.4f}")


if __name__ == "__main__":
    main()
