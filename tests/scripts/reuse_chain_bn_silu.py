"""Storage shared inside one kernel call, two real compiles (tests/tracer/test_reuse_chain.py): an EfficientNet-like
block in training mode (Inductor computes a batch norm and its SiLU in one loop, the SiLU stored in place over the
batch norm's buffer: ``buf7 = buf6; del buf6  # reuse``), then a buffer and its mutation in one call (a zero fill
then ``as_strided_scatter`` into it: ``buf1.mutations = ['buf0']``, both stored through one pointer, loop after loop,
as in a Swin backward)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, c: int = 8, e: int = 16) -> None:
        super().__init__()
        self.exp = nn.Conv2d(c, e, 1, bias=False)
        self.bn0 = nn.BatchNorm2d(e)
        self.dw = nn.Conv2d(e, e, 3, padding=1, groups=e, bias=False)
        self.bn1 = nn.BatchNorm2d(e)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.silu(self.bn0(self.exp(x)))
        return F.silu(self.bn1(self.dw(y))) * 2


def scatter_into_zeros(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    z = torch.as_strided_scatter(torch.zeros(64), y, (64,), (1,))
    return (z * x).sum(), z.mean()


print(float(torch.compile(Block())(torch.randn(2, 8, 16, 16)).sum()))
print([float(t) for t in torch.compile(scatter_into_zeros)(torch.randn(64), torch.randn(64))])
