"""A small inference graph (a layer norm, then pointwise ops): Inductor fuses its reductions and
pointwise nodes, so fusion settings (max_fusion_size=1) change its scheduler nodes and kernels."""
import torch


def f(x, w):
    y = torch.nn.functional.layer_norm(x, (x.shape[-1],)) * w
    return (y.sin() + 1).relu(), y.sum(dim=0)


x, w = torch.randn(64, 32), torch.randn(32)
fc = torch.compile(f)
with torch.no_grad():
    for _ in range(2):
        fc(x, w)
print("ok")
