"""Compile time's tests: a tiny training step (forward and a lazy backward), then the same function without grad
at another shape, so Dynamo recompiles it as [0/1].

CTIME_SALT (from the test) goes into Inductor's cache key through a joint-graph pass that does nothing: the
first run of a test session misses the FX graph and AOTAutograd caches, a second run with the same salt hits,
and the C++ kernels (the same code) stay in Inductor's on-disk C++ cache."""

import os

import torch
from torch._inductor.custom_graph_pass import CustomGraphPass


class Salt(CustomGraphPass):
    def __call__(self, graph):
        return None

    def uuid(self):
        return os.environ.get("CTIME_SALT", "none")


torch._inductor.config.joint_custom_post_pass = Salt()  # a pass inductor-step does not hook


@torch.compile
def f(x, w):
    return torch.nn.functional.gelu(x @ w).sum(dim=-1)


w = torch.randn(16, 16, requires_grad=True)
f(torch.randn(8, 16), w).sum().backward()
with torch.no_grad():
    print("out", f(torch.randn(4, 16), w).shape)
