"""Which CUDA device a thread or process that runs a rank's graph makes current.

On 2 H100s rank 1's timing thread ran on cuda:0 (every new thread's and process's current device)
while the graph's tensors and stream were on cuda:1: "CUDA driver error: invalid argument" for every
graph.  The device to set is read from what the agent recorded for the graph (the ``run`` message's
``"device": "cuda:1"``); the 2-GPU check is tests/gpu/test_jobs_gpu.py.
"""

from __future__ import annotations

import os

import pytest
import torch

from inductor_step.tracer.graph_device import cuda_index, make_current, on_graph_device


@pytest.mark.parametrize("device, want", [
    ("cuda:1", 1), ("cuda:0", 0), ("cuda:12", 12), (" cuda:3 ", 3), (torch.device("cuda", 2), 2),
    ("cuda", None), ("cpu", None), (None, None), ("", None), ("xpu:1", None), ("cuda:x", None), ("mps", None),
])
def test_which_device_a_graphs_thread_sets(device, want):
    assert cuda_index(device) == want


def test_on_a_machine_without_that_gpu_nothing_is_set():
    if torch.cuda.is_available() and torch.cuda.device_count() > 1:
        pytest.skip("a machine with a second GPU: tests/gpu/test_jobs_gpu.py checks it")
    for dev in ("cpu", "cuda:1", "cuda:99", None):
        with on_graph_device(dev) as idx:
            assert idx is None
        assert make_current(dev) is None


def test_every_thread_and_process_that_runs_a_graph_sets_its_device():
    """The code path, where a person reads it: each entry point that runs a recorded graph on a thread or
    process of its own enters the graph's device."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for path, call in (("tracer/timing/inprocess.py", "on_graph_device(device)"),
                       ("tracer/timing/worker.py", 'make_current(spec.get("device"))'),
                       ("tracer/numerics_run.py", 'on_graph_device(g.get("device"))'),
                       ("tracer/save_inputs.py", 'on_graph_device(g.get("device"))'),
                       ("tracer/whatif.py", 'on_graph_device((g or {}).get("device"))')):
        with open(os.path.join(root, path), encoding="utf-8") as f:
            assert call in f.read(), path
