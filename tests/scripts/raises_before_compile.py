"""A script that fails before its first torch.compile (a shape bug in its own code)."""
import torch

x = torch.ones(3) @ torch.ones(4)
torch.compile(lambda t: t * 2)(x)
