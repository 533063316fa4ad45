"""The CPU side of CUDA graphs and user Triton kernels, on code recorded on an
H100 (tests/fixtures/gpu_modes_codegen.json: torch 2.11's output modules for tests/scripts/gpu_user_triton.py
and gpu_cudagraphs.py): a user kernel's launch config and GPU name, the graph partitions CUDA graphs
capture, torch's own "skipping cudagraphs" message caught, and the lines a person reads."""

from __future__ import annotations

import json
import logging
import os

from inductor_step.tracer.cudagraph_record import partitions_of
from inductor_step.tracer.timing.ingraph import gpu_kernel_names
from inductor_step.tracer.user_kernels import is_user_kernel, user_kernel_launch
from inductor_step.session.gpu_modes import cudagraph_lines, eager_note_lines, user_kernel_lines

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "gpu_modes_codegen.json")


def _fixture() -> dict:
    with open(FIXTURE, encoding="utf-8") as f:
        return json.load(f)


def test_a_user_triton_kernel_has_its_launch_config_and_gpu_name():
    direct, via_op = _fixture()["user_kernels"]  # add_kernel launched directly (BLOCK 1024, 4 warps), and by triton_op
    assert is_user_kernel(direct["source"]) and direct["buffers"] == ["buf0"]
    ln = user_kernel_launch(direct["source"], direct["call"])
    assert ln["def_name"] == "add_kernel" and ln["grid"] == [1024, 1, 1] and ln["grid_type"] == "FixedGrid"
    assert ln["constants"] == {"BLOCK": 1024} and (ln["num_warps"], ln["num_stages"]) == (4, 3)
    ln = user_kernel_launch(via_op["source"], via_op["call"])
    assert ln["grid"] == [2048, 1, 1] and ln["constants"] == {"BLOCK": 512} and ln["num_warps"] == 2
    # torch.profiler knows the kernel by its def name, not the output module's add_kernel_0
    names = gpu_kernel_names({"add_kernel_0": direct["source"], "triton_poi_fused_mul_relu_0":
                              "def triton_poi_fused_mul_relu_0(in_ptr0, out_ptr0, xnumel, XBLOCK):"},
                             {"add_kernel_0": "triton", "triton_poi_fused_mul_relu_0": "triton"})
    assert names == {"add_kernel_0": "add_kernel"}
    assert user_kernel_launch("def triton_poi_fused_mul_relu_0(in_ptr0):", ["buf0"]) is None
    run = {"kernels": [{"name": "add_kernel_0", "user_kernel": True, "launch": ln, "median_ms": 0.0103,
                        "in_graph_ms": 0.0064, "in_graph_source": "cupti", "in_script_ms": 0.0028}]}
    assert user_kernel_lines(run) == ["user Triton kernel add_kernel_0 (def add_kernel): grid [2048, 1, 1], num_warps 2, "
                                      "num_stages 3, BLOCK=512; alone 0.0103 ms, in graph 0.0064 ms (cupti), in script "
                                      "0.0028 ms"]


def test_graph_partitions_say_what_runs_outside_the_cuda_graphs():
    w = {x["graph"]: x["wrapper"] for x in _fixture()["wrappers"]}
    mixed = partitions_of(w["[2/0] inference"])  # y * scale.to(y.device): the CPU scalar's copy stays outside
    assert mixed == {"partitions": ["partition_0"], "outside": ["buf0.copy_(arg0_1, False)"]}
    assert partitions_of(w["[1/0] inference"]) == {"partitions": ["partition_0"], "outside": []}  # all of it
    # a Runner with no partition: cudagraphify is not called (output_code.cudagraph_partition_post_compile)
    assert partitions_of("runner = Runner(partitions=[])\n") == {"partitions": [], "outside": []}
    assert partitions_of("def call(args):\n    pass\n") == {}  # no Runner: the whole call is one graph
    run = {"compiled_ms": 0.0304, "cudagraphs": {"enabled": True, "captured": True, "how": "captured by cudagraph trees",
                                                 "replay_ms": 0.0101, "launch_overhead_ms": 0.0203,
                                                 "script_call_ms": 0.0150, "script_calls": 10, **mixed}}
    assert cudagraph_lines(run) == [
        "CUDA graphs: captured by cudagraph trees",
        "  run outside the CUDA graphs: buf0.copy_(arg0_1, False)",
        "  plain launch 0.0304 ms, replayed as a CUDA graph 0.0101 ms: 0.0203 ms of launch overhead removed",
        "  the script's own calls 0.0150 ms (median of 10, CUDA events around each call: as the script runs it, "
        "through cudagraph trees; host work before the first launch counts, and these calls come after the profiled "
        "ones, so CUPTI's launch callbacks may still add to them)"]
    assert cudagraph_lines({"cudagraphs": {"enabled": False}}) == []
    assert eager_note_lines({"eager_ms": None, "eager_note": "eager not timed: x"}) == ["eager: eager not timed: x"]


def test_torchs_skip_message_reaches_the_hook():
    """torch's own log_cudagraph_skip_and_bump_counter (what cudagraph trees and output_code call)."""
    from torch._inductor.cudagraph_utils import log_cudagraph_skip_and_bump_counter

    from inductor_step.tracer import adapter

    seen: list[str] = []
    assert "installed" in adapter.install_cudagraph_log_hook(seen.append)
    log_cudagraph_skip_and_bump_counter("skipping cudagraphs due to mutated inputs (1 instances). Found from :\n"
                                        "   File \"x.py\", line 25, in bump")
    assert seen and seen[0].startswith("skipping cudagraphs due to mutated inputs")
    lg = logging.getLogger("torch._inductor.cudagraph_utils.__cudagraphs")
    for h in list(lg.handlers):
        if type(h).__name__ == "_Handler":
            lg.removeHandler(h)


def test_a_user_kernel_goes_back_into_a_fresh_side_table_from_its_source(tmp_path):
    """What the timing process does before running a graph with a user kernel eagerly (torch's side
    table is empty there: "Kernel index 0 not found in id_to_kernel").  The kernel comes as Dynamo
    leaves it for a launch with ``num_warps=4``: a one-config ``triton.autotune`` over the ``@triton.jit``
    function, defined in the script's ``__main__`` (so made again from its source, configs kept)."""
    import subprocess
    import sys

    import pytest

    pytest.importorskip("triton", reason="a user Triton kernel needs Triton (a CPU torch brings none)")

    direct = _fixture()["user_kernels"][0]
    src = direct["source"][direct["source"].index("@triton.jit"):]
    (tmp_path / "script.py").write_text(
        "import torch, triton, triton.language as tl\n" + src + "\n"
        "tuned = triton.autotune(configs=[triton.Config({}, num_warps=4, num_stages=3)], key=[])(add_kernel)\n"
        "from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table as t, triton_kernel_wrapper_mutation\n"
        "idx = t.add_kernel(tuned)\n"
        "cidx = t.add_constant_args({'n': 8, 'BLOCK': 1024})\n"
        "g = torch.fx.Graph()\n"
        "g.call_function(triton_kernel_wrapper_mutation, (), {'kernel_idx': idx, 'constant_args_idx': cidx,\n"
        "                'grid': [(1, 1, 1)], 'tma_descriptor_metadata': {}, 'kwargs': {}})\n"
        "from inductor_step.tracer import adapter\n"
        "entries = adapter.triton_side_table_entries(torch.fx.GraphModule(torch.nn.Module(), g))\n"
        "t.id_to_kernel.clear(); t.kernel_to_id.clear(); t.constant_args.clear()  # a fresh process's table\n"
        "note = adapter.restore_triton_side_table(entries)\n"
        "k = t.get_kernel(idx)\n"
        "print(note, type(k).__name__, type(k.fn).__name__, k.fn.fn.__name__, [(c.num_warps, c.num_stages) for c in k.configs],\n"
        "      t.get_constant_args(cidx))\n")
    p = subprocess.run([sys.executable, "script.py"], capture_output=True, text=True, timeout=120, cwd=str(tmp_path))
    assert p.stdout.strip() == "None Autotuner JITFunction add_kernel [(4, 3)] {'n': 8, 'BLOCK': 1024}", \
        p.stdout + p.stderr[-2000:]
