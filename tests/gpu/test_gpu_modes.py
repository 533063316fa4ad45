"""CUDA graphs, user Triton kernels, Triton templates and flex attention on a CUDA GPU, marked ``gpu``; skipped without CUDA.  Run on the device machine::

    python -m pytest -m gpu tests/gpu/test_gpu_modes.py -rA

Each script of tests/scripts/gpu_*.py is recorded once (``--headless --run --record``); the tests read
the session as the run pane does.  ``INDUCTOR_STEP_KEEP_SESSIONS=DIR`` keeps a copy of each session.
"""

from __future__ import annotations

import pytest

from gpu_helpers import GPU_MARKS, record_script as _record  # (tests/gpu/ is on sys.path: pytest's prepend import mode)

pytestmark = GPU_MARKS


@pytest.fixture(scope="module")
def cudagraphs(tmp_path_factory):
    return _record(tmp_path_factory, "gpu_cudagraphs", ["--steps", "25"])


@pytest.fixture(scope="module")
def user_triton(tmp_path_factory):
    return _record(tmp_path_factory, "gpu_user_triton")


@pytest.fixture(scope="module")
def templates(tmp_path_factory):
    return _record(tmp_path_factory, "gpu_templates")


@pytest.fixture(scope="module")
def flex(tmp_path_factory):
    return _record(tmp_path_factory, "gpu_flex")


def test_cuda_graphs_captured_or_torchs_reason_and_the_launch_overhead_removed(cudagraphs):
    s = cudagraphs
    assert s["rc"] == 0, s["tail"]
    runs = s["runs"]
    assert set(runs) >= {"[0/0] forward", "[0/0] backward", "[1/0] inference", "[2/0] inference"}, s["tail"]
    for key in ("[0/0] forward", "[0/0] backward"):
        cg = runs[key]["cudagraphs"]
        assert cg["enabled"] and cg["captured"] is True and not cg["skipped"], (key, cg)
        assert cg["replay_ms"] > 0 and cg["launch_overhead_ms"] > 0, (key, cg, runs[key]["compiled_ms"])
        assert cg["script_calls"] == 10 and cg["script_call_ms"] > 0, (key, cg)
    bump = runs["[1/0] inference"]["cudagraphs"]  # acc.add_(y): an input mutated in place
    assert bump["captured"] is False and "skipping cudagraphs due to mutated inputs" in bump["skipped"], bump
    assert "gpu_cudagraphs.py" in bump["skipped"]  # torch's "Found from" names the line
    mixed = runs["[2/0] inference"]["cudagraphs"]  # a CPU scalar copied to the GPU: outside the partition
    assert mixed["partitions"] and any("copy_" in x for x in mixed["outside"]), mixed
    # the host copy stops a whole-call capture; the partitions are replayed as cudagraph trees do
    replay = runs["[2/0] inference"].get("cudagraph_replay") or {}
    assert replay.get("replay_ms") and "partition(s) captured" in replay.get("how", ""), replay
    assert (mixed["verdict"] == "skipped") if mixed.get("skipped") else \
        (mixed["verdict"] == "partitioned" and "buf0.copy_" in mixed["how"]), mixed
    assert "CUDA graphs: skipped: torch skipped CUDA graphs for this graph: skipping cudagraphs due to mutated inputs" \
        in s["stdout"]
    assert "of launch overhead removed" in s["stdout"]


def test_user_triton_kernels_are_kernels_with_source_links_times_and_launch_config(user_triton):
    s = user_triton
    assert s["rc"] == 0, s["tail"]
    for key, grid, warps in (("[0/0] inference", [1024, 1, 1], 4), ("[1/0] inference", [2048, 1, 1], 2)):
        k = next(k for k in s["code"][key]["kernels"] if k["name"] == "add_kernel_0")
        assert "def add_kernel(" in k["source"] and k["buffers"] == ["buf0"] and k["fused_nodes"], k
        run = s["runs"][key]
        t = next(k for k in run["kernels"] if k["name"] == "add_kernel_0")
        assert t["user_kernel"] and t["launch"]["grid"] == grid and t["launch"]["num_warps"] == warps, t
        assert t["median_ms"] > 0 and t["in_graph_source"] == "cupti", (t, run.get("in_graph_cupti"))
        assert t.get("in_script_ms") and t["in_script_calls"] == 10, (t, run.get("in_script"))
        assert run["eager_ms"] is not None, (run.get("eager_note"), run.get("eager_user_kernels"), run.get("eager_nodes"))
    assert "user Triton kernel add_kernel_0 (def add_kernel): grid [1024, 1, 1], num_warps 4" in s["stdout"]


def test_triton_templates_get_the_flops_of_their_op(templates):
    s = templates
    assert s["rc"] == 0, s["tail"]
    tems = [(key, k) for key, r in s["runs"].items() for k in r["kernels"] if k["name"].startswith("triton_tem_")]
    assert len(tems) == 2, s["tail"]
    by = {k["name"]: k for _, k in tems}
    # the GELU epilogue is fused or not as autotuning's benchmarks decide: triton_tem_fused_addmm_gelu_t_0 in one
    # H100 run, triton_tem_fused_addmm_t_0 plus triton_poi_fused_gelu_1 in the next
    mm = next(k for n, k in by.items() if n.startswith("triton_tem_fused_addmm"))
    assert mm["flops"] == 2 * 2048 * 1024 * 1024 and mm["flops_op"] == "mm" and mm["bound_source"] == "roofline", mm
    assert 0 < mm["pct_peak_tflops"] <= 100, mm
    bmm = by["triton_tem_fused_bmm_mul_transpose_0"]
    assert bmm["flops"] == 2 * 16 * 512 * 512 * 64 and 0 < bmm["pct_peak_tflops"] <= 100, bmm


def test_flex_attention_forward_and_backward_are_timed_with_flops(flex):
    s = flex
    assert s["rc"] == 0, s["tail"]
    fwd, bwd = s["runs"]["[0/0] forward"], s["runs"]["[0/0] backward"]
    assert not bwd.get("error") and bwd["compiled_ms"] > 0, s["tail"]
    for run in (fwd, bwd):
        assert run["eager_ms"] is not None or run.get("eager_note"), run.get("eager_nodes")
        tem = [k for k in run["kernels"] if k["name"].startswith("triton_tem_")]
        assert tem and all(k.get("flops") and 0 < k["pct_peak_tflops"] <= 100 for k in tem), tem
        assert "block mask computes" in tem[0]["flops_source"], tem[0]["flops_source"]
