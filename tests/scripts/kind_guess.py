"""Two graphs whose inputs require grad and which AOTAutograd compiles as inference graphs.
``f`` returns a view of its input beside a detached computation: the agent guesses "forward" at the
dynamo stop (an output requires grad) and corrects it, since AOTAutograd regenerates such a view at
run time.  ``g`` (examples/ddp_train.py's ``global_mean`` in small) returns only detached values: guessed
"inference" from the start, so a stepped run pauses at no stop under a wrong key."""
import torch
@torch.compile
def f(x):
    return x.view(-1), (x.detach() * 2).sin()
@torch.compile
def g(x):
    return x.detach().clone() / 2
x = torch.randn(8, requires_grad=True)
print(f(x)[1].sum(), g(x).sum())
