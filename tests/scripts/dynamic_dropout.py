"""Dynamo's shape events under dynamic=True: dropout's float p made symbolic, constrained (>= 0, <= 1, == 0) and
specialized to 0.0, a size constrained by a branch, and a restart of the frame's analysis that records them again."""
import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)
        self.drop = torch.nn.Dropout(0.0)

    def forward(self, x):
        if x.size(1) > 8:  # a size constrained (> 8), left symbolic
            x = x * 2
        return self.drop(self.lin(x)).sum()  # x's last size specialized to 16 by the Linear


m = torch.compile(Block(), dynamic=True)
print(m(torch.randn(4, 32, 16)).item() != 0)
