"""Diff fixture (c): one script, two Inductor configs.  With DIFF_NO_FUSION=1 Inductor may fuse
no two scheduler nodes (``torch._inductor.config.max_fusion_size = 1``), so the same graph becomes
more kernels."""
import os

import torch

if os.environ.get("DIFF_NO_FUSION") == "1":
    torch._inductor.config.max_fusion_size = 1


@torch.compile
def block(x, w):
    h = torch.nn.functional.layer_norm(x, (x.shape[-1],))
    return torch.relu(h * w + 1.0).sum(dim=-1)


with torch.no_grad():
    block(torch.randn(16, 64), torch.randn(64))
