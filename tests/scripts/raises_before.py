"""A PyTorch script that fails on an import before it reaches torch.compile."""
import torch

import a_module_this_user_has_not_installed  # noqa: F401

torch.compile(lambda x: x + 1)(torch.ones(2))
