"""A script that compiles one graph and then crashes the interpreter (SIGSEGV)."""
import ctypes

import torch

print(torch.compile(lambda x: x + 1)(torch.ones(4)))
ctypes.string_at(0)
