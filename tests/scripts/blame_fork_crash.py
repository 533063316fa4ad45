"""A script whose blame steps fail when forked, as CUDA fails in a process forked after the driver started.

Torch's relu fault injection makes its one graph diverge; a step forked from blame's warm parent raises CUDA's
fork error (or ``BLAME_FORK_ERROR``) (read from /proc/self/cmdline: the warm parent runs with --zygote), a step in its own interpreter runs."""
import os

import torch
import torch._inductor.config as ic

ic.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"
with open("/proc/self/cmdline", "rb") as f:
    if b"--zygote" in f.read():
        raise RuntimeError(os.environ.get("BLAME_FORK_ERROR") or "Cannot re-initialize CUDA in forked subprocess. To "
                           "use CUDA with multiprocessing, you must use the 'spawn' start method")


def f(x):
    return torch.relu(x * 2.0) + x.sin()


torch.manual_seed(0)
print(float(torch.compile(f)(torch.randn(256)).sum()))
