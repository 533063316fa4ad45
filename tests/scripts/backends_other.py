"""Compiles with backends other than Inductor: "aot_eager", "eager" and a custom backend (issue 27 point 10),
then once more after torch._dynamo.reset() with Inductor."""
import torch


def f(x):
    return (x.sin() + 1).relu().sum(dim=0)


def my_backend(gm, example_inputs):
    return gm.forward


x = torch.randn(8, 4)
torch.compile(f, backend="aot_eager")(x)
torch.compile(lambda x: f(x) * 2, backend="eager")(x)
torch.compile(lambda x: f(x) * 3, backend=my_backend)(x)
torch._dynamo.reset()
y = torch.compile(f)(x)
print("ok", round(float(y.sum()), 3))
