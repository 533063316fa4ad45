"""A script whose compile succeeds and which then raises on its own."""
import torch

print(torch.compile(lambda x: x.relu())(torch.randn(4)))
raise ValueError("the user's own bug, after compiling")
