"""An embedding looked up with a buffer's slice, expanded over the batch (Hugging Face BERT's token_type_ids, gathered at the position ids): its
backward graph takes the expanded index as an input with a 0 stride (rand_strided((2, 32), (0, 1)))."""
import torch


class Emb(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(2, 8)
        self.register_buffer("token_type_ids", torch.zeros(1, 64, dtype=torch.long))
        self.register_buffer("position_ids", torch.arange(64).expand(1, -1))

    def forward(self, x):
        pos = self.position_ids[:, : x.shape[1]]
        ids = torch.gather(self.token_type_ids, 1, pos).expand(x.shape[0], x.shape[1])  # computed, then expanded
        return (self.emb(ids) * x).sum()


m = torch.compile(Emb())
for _ in range(2):
    m(torch.randn(2, 32, 8)).backward()
print("ok")
