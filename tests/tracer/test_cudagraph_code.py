"""Inductor's output code under CUDA graphs: torch 2.11 splits the graph into partition functions
(``def partition_0(args):``) that ``Runner.call`` calls, and the parser reads them as the graph's body, not as
higher-order ops' subgraphs.  The fixtures are real output code from an H100 (torch 2.11.0+cu130, Triton 3.6.0,
``.trial/mlp_modes.py``'s MLP through ``run_and_get_code``), each compared with the same model compiled without CUDA
graphs; one test compiles on CPU with ``graph_partition=True`` (``call`` becomes a method, ``partitions=[]``)."""

from __future__ import annotations

import importlib.util
import os
import re

import pytest

from inductor_step.tracer.codeparse import (graph_regions, kernel_spans, parse_wrapper, partition_functions,
                                            subgraph_functions)
from inductor_step.tracer.links import build_links
from inductor_step.tracer.subgraphs import drop_subgraph_kernels

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "..", "fixtures", "cudagraph_code")
#: (with CUDA graphs, the same model and dtype without them)
PAIRS = [("fp32_reduce-overhead", "fp32_default"), ("bf16_max-autotune", "bf16_max-autotune-no-cudagraphs")]
def _read(name: str) -> str:
    with open(os.path.join(FIX, name + ".py.txt"), encoding="utf-8") as f:
        return f.read()


@pytest.mark.parametrize("graphed,plain", PAIRS)
def test_partitions_are_the_graph_body(graphed: str, plain: str) -> None:
    """The kernels of a partitioned wrapper are exactly the calls in its partition functions, with the names and
    order of the same model's wrapper without CUDA graphs; no partition is taken for a subgraph."""
    w, p = _read(graphed), _read(plain)
    assert partition_functions(w) == ["partition_0"] and partition_functions(p) == []
    assert subgraph_functions(w) == {}
    ks = [k for k in parse_wrapper(w) if k["calls"]]
    plain_ks = [k for k in parse_wrapper(p) if k["calls"]]
    assert [k["name"] for k in ks] == [k["name"] for k in plain_ks]
    assert len(ks) >= 3
    assert [k["writes"] for k in ks] == [k["writes"] for k in plain_ks]
    # each call parsed is a line of the file that calls that kernel, and every such line is parsed
    lines = w.split("\n")
    for k in ks:
        for ln in k["call_lines"]:
            assert k["name"].split("#")[0] in lines[ln - 1]
    assert sorted(ln for k in ks for ln in k["call_lines"]) == \
        [i + 1 for i, t in enumerate(lines) if re.match(r"^\s*(\w+\.run\(|extern_kernels\.\w+\(|torch\.ops\.)", t)]
    # the codegen stop's kernels: none dropped as a subgraph's
    assert [k["name"] for k in drop_subgraph_kernels(parse_wrapper(w), w) if k["calls"]] == [k["name"] for k in ks]


@pytest.mark.parametrize("graphed,plain", PAIRS)
def test_spans_and_links_in_partitions(graphed: str, plain: str) -> None:
    """Pane 6's spans point at the calls inside ``partition_0``, and each buffer a kernel writes links to it."""
    w = _read(graphed)
    ks = parse_wrapper(w)
    spans = kernel_spans(w, ks)
    start, end, anchor = next(r for r in graph_regions(w) if r[2] is not None)
    first, last = w.count("\n", 0, start) + 1, w.count("\n", 0, end) + 1
    assert anchor == w.find("self.partitions[0](")
    called = [k for k in ks if k["calls"]]
    assert len(called) >= 3
    for k in called:
        calls = spans[k["name"]]["calls"]
        assert calls and all(first <= c <= last for c in calls), (k["name"], calls, first, last)
    for k in called:
        k["buffers"] = list(k.pop("writes"))
    buffers = [{"name": b, "origins": []} for k in called for b in k["buffers"]]
    links = build_links(dynamo_nodes=[], post_grad_nodes=[], buffers=buffers, fused_nodes=[], kernels=called,
                        wrapper=w)
    for k in called:
        assert links["kernels"][k["name"]]["buffers"] == k["buffers"]
        for b in k["buffers"]:
            assert links["buffers"][b]["kernels"] == [k["name"]]


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
def test_cpu_graph_partition_wrapper_keeps_every_kernel(tmp_path) -> None:
    """On CPU with ``graph_partition=True`` the wrapper's ``call`` is ``Runner.call`` (``partitions=[]``): every
    kernel call of the module torch wrote (TORCH_COMPILE_DEBUG's ``output_code.py``) is parsed, in order."""
    import torch
    from torch._inductor.utils import run_and_get_code

    def f(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        y = torch.relu(x @ w) + 1
        return (y.sin() * 2).sum(1)

    torch._dynamo.reset()
    with torch._inductor.config.patch(graph_partition=True, fx_graph_cache=False):
        _, codes = run_and_get_code(torch.compile(f), torch.randn(8, 16), torch.randn(16, 8))
    w = codes[0]
    assert "    def call(self, args):" in w and "runner = Runner(partitions=[])" in w
    ks = [k for k in parse_wrapper(w) if k["calls"]]
    text_calls = [ln for ln, t in enumerate(w.split("\n"), 1)
                  if re.match(r"^\s*(cpp_fused_\w+\(|extern_kernels\.\w+\()", t)]
    assert sorted(ln for k in ks for ln in k["call_lines"]) == text_calls and len(text_calls) >= 2
    assert [k["name"] for k in ks][0] == "extern_kernels.mm#0"
    assert all(k["writes"] for k in ks)


def test_verdicts_and_rerecordings_as_a_person_reads_them() -> None:
    """Per graph: captured, partitioned (with what runs outside), skipped (torch's reason), and each re-recording
    after the first with its cause, in the run pane's and --headless's CUDA-graph lines; the codegen note."""
    from inductor_step.session.gpu_modes import cudagraph_lines, partition_note
    from inductor_step.tracer.cudagraph_record import partitions_of, verdict

    w = _read("fp32_reduce-overhead")
    parts = partitions_of(w)
    assert parts == {"partitions": ["partition_0"], "outside": []}
    assert partition_note({"enabled": True, **parts}) == "CUDA graphs on: 1 partition(s), 0 statement(s) run outside them"
    # torch 2.11 writes a Runner without CUDA graphs too (graph_partition is on by default): no partition
    plain = partitions_of(_read("fp32_default"))
    assert plain["partitions"] == [] and len(plain["outside"]) == 6
    assert partition_note({"enabled": False}) == ""
    assert partition_note({"enabled": True, "partitions": [], "outside": []}) == \
        "CUDA graphs on, but no graph partition: nothing of it is captured"
    assert partition_note({"enabled": True}) == "CUDA graphs on: the whole call is one graph"  # older torch: no Runner
    from inductor_step.session.modes import codegen_head

    assert codegen_head({"kernels": [], "cudagraphs": {"enabled": True, **parts}}) == \
        "# CUDA graphs on: 1 partition(s), 0 statement(s) run outside them\n\n"  # pane 6, above the wrapper
    recs = [{"call": 2, "cause": None}, {"call": 5, "cause": "static input data pointer changed: arg3_1"}]
    info = {"enabled": True, "skipped": None, "captured": True, "recordings": recs, **parts}
    assert verdict(info) == ("captured", "the whole graph is captured (2 recording(s), replayed after)")
    mixed = dict(info, outside=["buf0.copy_(arg0_1, False)"])
    assert verdict(mixed)[0] == "partitioned" and "buf0.copy_(arg0_1, False)" in verdict(mixed)[1]
    assert verdict(dict(info, skipped="skipping cudagraphs due to mutated inputs (1 instances)")) == \
        ("skipped", "torch skipped CUDA graphs for this graph: skipping cudagraphs due to mutated inputs (1 instances)")
    assert verdict(dict(info, partitions=[]))[0] == "not captured"
    v, how = verdict(info)
    lines = cudagraph_lines({"cudagraphs": dict(info, verdict=v, how=how, rerecordings=recs[1:])})
    assert lines == ["CUDA graphs: captured: the whole graph is captured (2 recording(s), replayed after)",
                     "  re-recorded 1 time(s) after its first recording:",
                     "    script call 5: static input data pointer changed: arg3_1"]
    part = cudagraph_lines({"compiled_ms": 0.05, "cudagraphs": dict(mixed, verdict="partitioned", how="x", replay_ms=0.02,
                                                                     launch_overhead_ms=0.03, replay_how=(
                                                                         "each of 1 partition(s) captured in its own "
                                                                         "torch.cuda.CUDAGraph"))})
    assert "  plain launch 0.0500 ms, replayed as CUDA graphs partition by partition, the rest as written 0.0200 ms: " \
        "0.0300 ms of launch overhead removed" in part
    few = cudagraph_lines({"cudagraphs": dict(info, verdict=v, how=how, calls=6)})
    assert few[-1] == ("  the script's own calls not timed: it called this graph 6 time(s); calls 12-21 are timed with "
                       "CUDA events (calls 2-11 run under the profiler)")


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
def test_recording_hook_reads_torchs_own_invariant_status() -> None:
    """torch's CheckInvariantStatus and its reason callable become the re-recording's cause; the hook installs
    on this torch's cudagraph trees (once)."""
    from torch._inductor.cudagraph_utils import CheckInvariantStatus

    from inductor_step.tracer import adapter
    from inductor_step.tracer.adapter.cudagraphs import _status_text

    assert _status_text((CheckInvariantStatus.SUCCESS, lambda: "")) is None
    assert _status_text((CheckInvariantStatus.StaticInputIdxMismatch, lambda: "arg3_1 moved")) == \
        "static input data pointer changed: arg3_1 moved"
    assert _status_text(False) and _status_text(True) is None
    first = adapter.install_recording_hook(lambda cause: None)
    assert "installed" in first, first
    assert "installed" in adapter.install_recording_hook(lambda cause: None)


def test_two_partitions_and_a_statement_between_them_in_run_order() -> None:
    """The shape torch gives a graph with a cudagraph-unsafe op in the middle (a hand-written miniature: the real
    H100 fixtures above have one partition): the kernels come in the order ``call`` runs them, the fallback
    between the partitions second, though partition_1 is written before ``call``."""
    src = "'''\ndef {0}(in_out_ptr0, xnumel, XBLOCK : tl.constexpr):\n    tl.store(in_out_ptr0, 1.0)\n''', device_str='cuda')"
    w = "\n".join([
        "triton_poi_fused_a_0 = async_compile.triton('triton_poi_fused_a_0', " + src.format("triton_poi_fused_a_0"),
        "triton_poi_fused_c_1 = async_compile.triton('triton_poi_fused_c_1', " + src.format("triton_poi_fused_c_1"),
        "def partition_0(args):", "    arg0_1, = args", "    args.clear()",
        "    triton_poi_fused_a_0.run(arg0_1, 8, stream=stream0)", "    return (arg0_1, )", "",
        "def partition_1(args):", "    buf1, = args", "    args.clear()",
        "    triton_poi_fused_c_1.run(buf1, 8, stream=stream0)", "    return (buf1, )", "",
        "class Runner:", "    def call(self, args):", "        arg0_1, = args",
        "        (buf0,) = self.partitions[0]([arg0_1])",
        "        buf1 = torch.ops.aten.nonzero.default(buf0)",
        "        (buf2,) = self.partitions[1]([buf1])", "        return (buf2, )", "",
        "runner = Runner(partitions=[partition_0, partition_1,])", "call = runner.call", ""])
    assert partition_functions(w) == ["partition_0", "partition_1"] and subgraph_functions(w) == {}
    ks = [k for k in parse_wrapper(w) if k["calls"]]
    assert [k["name"] for k in ks] == ["triton_poi_fused_a_0", "torch.ops.aten.nonzero.default#0", "triton_poi_fused_c_1"]
    assert ks[1]["writes"] == ["buf1"] and ks[2]["writes"] == ["buf1"]


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
def test_recorded_cpu_graph_partition_session_has_every_kernel_of_torchs_output_code(tmp_path_factory) -> None:
    """tests/scripts/graph_partition_cpu.py recorded with TORCH_COMPILE_DEBUG=1 for the agent: each graph's codegen
    stop calls exactly the kernels torch's own output_code.py calls (``Runner.call``), in order, each linked."""
    import glob

    from test_tracer import ROOT, run_cli

    cwd = tmp_path_factory.mktemp("graph_partition")
    record = str(cwd / "gp.jsonl")
    r = run_cli(["--headless", "--record", record, os.path.join(ROOT, "tests", "scripts", "graph_partition_cpu.py")],
                str(cwd), record, env_extra={"TORCH_COMPILE_DEBUG": "1"})
    stops = [m for m in r.messages if m.get("type") == "stop" and m.get("stage") == "codegen"]
    assert len(stops) == 2, r.stderr[-2000:]
    call = re.compile(r"^\s*(?:\w+ = )?(cpp_fused_\w+|extern_kernels\.\w+|torch\.ops\.[\w.]+)\(", re.M)
    seen = 0
    for path in glob.glob(str(cwd / "torch_compile_debug" / "**" / "output_code.py"), recursive=True):
        code = open(path, encoding="utf-8").read()
        assert "    def call(self, args):" in code
        theirs = [m.group(1) for m in call.finditer(code, code.find("def call("))]
        stop = next(s for s in stops if s["wrapper"].strip() == code.strip())
        ours = sorted((ln, k["name"].split("#")[0]) for k in stop["kernels"] for ln in k.get("call_lines") or [])
        assert [n for _, n in ours] == theirs and len(theirs) >= 3, (path, ours, theirs)
        assert all(k["name"] in stop["links"]["kernels"] for k in stop["kernels"] if k.get("call_lines"))
        seen += 1
    assert seen == 2
