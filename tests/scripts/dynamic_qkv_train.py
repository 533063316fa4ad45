# A causal attention block compiled with dynamic=True, two training steps: the backward graph takes q, k and v as
# views into the qkv Linear's output (stride 3*C per token), which get_args() of the output code makes contiguous
import torch
import torch.nn.functional as F


class Attn(torch.nn.Module):
    def __init__(self, c: int = 64, heads: int = 4) -> None:
        super().__init__()
        self.qkv, self.heads = torch.nn.Linear(c, 3 * c), heads

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in self.qkv(x).split(c, dim=2))
        return F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, c).sum()


torch.manual_seed(0)
m = torch.compile(Attn(), dynamic=True)
for _ in range(2):
    m(torch.randn(2, 16, 64)).backward()
print("done")
