"""while_loop inside a compiled function: its cond_fn and body_fn subgraphs.

(``torch._higher_order_ops.map`` is not here: Inductor on torch 2.14 fails to compile it, in its own
``decompose_map_to_while_loop`` pass: DataDependentOutputException.)"""
import torch
from torch._higher_order_ops.while_loop import while_loop


def loop(i, x):
    return while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, (x * 2).cos()), (i, x))


torch.manual_seed(0)
i, x = torch.tensor(0), torch.randn(8)
print(all(torch.allclose(a, b) for a, b in zip(torch.compile(loop)(i, x), loop(i, x))))
