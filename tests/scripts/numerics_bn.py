"""A conv + batch norm in eval mode: its running variance is an input of the compiled graph.

Random inputs make that variance negative (sqrt of it: NaN in 38 of 41 buffers of the real case); the
script's own inputs hold none.
"""

import torch

torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU()).eval()
x = torch.randn(2, 3, 16, 16)
with torch.no_grad():
    print(torch.compile(m)(x).sum().item())
