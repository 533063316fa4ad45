"""An input that requires grad feeds only a detached computation: the agent guesses "forward" at the
dynamo stop (an input requires grad); AOTAutograd compiles an inference graph."""
import torch
@torch.compile
def f(x):
    return (x.detach() * 2).sin()
x = torch.randn(8, requires_grad=True)
print(f(x).sum())
