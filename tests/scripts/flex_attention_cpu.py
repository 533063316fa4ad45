import torch
from torch.nn.attention.flex_attention import flex_attention, create_block_mask
torch.manual_seed(0)
B,H,S,D = 1,2,128,16
def causal(b,h,q,kv): return q >= kv
bm = create_block_mask(causal, B, H, S, S, device="cpu")
def score_mod(score, b, h, q, kv): return torch.where(q >= kv, score, -float("inf"))
class Block(torch.nn.Module):
    def __init__(s):
        super().__init__(); s.qkv = torch.nn.Linear(D*H, 3*D*H); s.o = torch.nn.Linear(D*H, D*H)
    def forward(s, x):
        q,k,v = s.qkv(x).view(B,S,3,H,D).permute(2,0,3,1,4)
        y = flex_attention(q,k,v, score_mod=score_mod, block_mask=bm)
        return s.o(y.transpose(1,2).reshape(B,S,H*D))
m = Block()
f = torch.compile(m)
x = torch.randn(B,S,H*D)

with torch.no_grad():
    y = f(x)
print("ok", y.shape)
