"""A torch.library.custom_op called inside a compiled function (issue 27: "one of two graphs untimed")."""
import torch


@torch.library.custom_op("istep::scale_add", mutates_args=())
def scale_add(x: torch.Tensor, s: float) -> torch.Tensor:
    return x * s + 1


@scale_add.register_fake
def _(x, s):
    return torch.empty_like(x)


def f(x):
    return scale_add(x.sin(), 2.0).cos()


fc = torch.compile(f)
x = torch.randn(8, 8, requires_grad=False)
for _ in range(2):
    y = fc(x)
print("ok", round(float(y.sum()), 3))
