"""DDP in one process (gloo, a world of 1) with two buckets: DDPOptimizer splits the model's graph into two parts,
each a forward and a backward of its own under one compile id ([0/0] forward #1, #2), each part's own joint graph
at the partitioner.  The parts differ: the first bucket (DDP fills buckets from the last parameters) holds the
last Linear, the second the first Linear and its GELU, so each saves other tensors for its backward."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", rank=0, world_size=1, store=dist.HashStore())
torch.manual_seed(0)


class MLP(torch.nn.Module):  # a module of the script's own: Dynamo compiles its forward (torch.nn's frames it skips)
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = torch.nn.Linear(64, 512), torch.nn.Linear(512, 512), torch.nn.Linear(512, 16)

    def forward(self, x):
        return self.fc3(torch.nn.functional.gelu(self.fc2(torch.nn.functional.gelu(self.fc1(x)))))


model = MLP()
# 1 MB buckets (DDP's smallest: DDPOptimizer refuses a cap below its first bucket) against 1.2 MB of parameters
step = torch.compile(DDP(model, bucket_cap_mb=1))
for _ in range(2):
    step(torch.randn(32, 64)).square().mean().backward()
dist.destroy_process_group()
