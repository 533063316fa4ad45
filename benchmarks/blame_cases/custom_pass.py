"""A planted numerics bug: a custom post-grad pass that rewrites add into sub."""
import torch
import torch._inductor.config as ic
from torch._inductor.custom_graph_pass import CustomGraphPass


class AddToSub(CustomGraphPass):
    def __call__(self, graph):
        for n in graph.nodes:
            if n.op == "call_function" and n.target == torch.ops.aten.add.Tensor:
                n.target = torch.ops.aten.sub.Tensor

    def uuid(self):
        return "add-to-sub"


ic.post_grad_custom_post_pass = AddToSub()


def f(x, y):
    return (x * 2.0 + y).relu()


torch.manual_seed(0)
print(float(torch.compile(f)(torch.randn(64), torch.randn(64)).sum()))
