"""The CPU side of CUDA graphs and user Triton kernels (issue 27 points 6-7), on code recorded on an
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
from inductor_step.tui.gpu_modes import cudagraph_lines, eager_note_lines, user_kernel_lines

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
    assert partitions_of("runner = Runner(partitions=[])\n") == {}  # no partitions: the whole call is one graph
    run = {"compiled_ms": 0.0304, "cudagraphs": {"enabled": True, "captured": True, "how": "captured by cudagraph trees",
                                                 "replay_ms": 0.0101, "launch_overhead_ms": 0.0203,
                                                 "script_call_ms": 0.0150, "script_calls": 10, **mixed}}
    assert cudagraph_lines(run) == [
        "CUDA graphs: captured by cudagraph trees",
        "  run outside the CUDA graphs: buf0.copy_(arg0_1, False)",
        "  plain launch 0.0304 ms, replayed as a CUDA graph 0.0101 ms: 0.0203 ms of launch overhead removed",
        "  the script's own calls 0.0150 ms (median of 10, CUDA events around each call: as the script runs it, "
        "through cudagraph trees)"]
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
    table is empty there: "Kernel index 0 not found in id_to_kernel")."""
    import subprocess
    import sys

    direct = _fixture()["user_kernels"][0]
    src = direct["source"][direct["source"].index("def add_kernel("):]
    code = (
        "from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table as t\n"
        "from inductor_step.tracer import adapter\n"
        f"note = adapter.restore_triton_side_table({{'kernels': {{7: {{'name': 'add_kernel', 'module': '__main__', "
        f"'qualname': 'add_kernel', 'src': {src!r}, 'wrapped': None}}}}, 'constant_args': {{3: {{'n': 8}}}}}})\n"
        "k = t.get_kernel(7)\n"
        "print(note, type(k).__name__, k.fn.__name__, t.get_constant_args(3))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=str(tmp_path))
    assert p.stdout.split() == ["None", "JITFunction", "add_kernel", "{'n':", "8}"], p.stderr[-2000:]
