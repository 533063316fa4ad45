"""Every stage under CUDA graphs, marked ``gpu``; skipped without CUDA.  Run on the device machine::

    python -m pytest -m gpu tests/gpu/test_gpu_cudagraph_code.py -rA

tests/scripts/cudagraph_modes.py (an MLP) is recorded with ``--headless --run`` under ``mode="reduce-overhead"``
(training), ``mode="max-autotune"`` (bf16 inference) and ``options={"triton.cudagraphs": True}``.  Per graph: the
codegen stop's kernels are exactly the kernel calls of torch's own output module for that graph (the file at its
``output_path``, read with a regex of this test, and, without autotuning, the code ``run_and_get_code`` returns in a
separate process), its links reach every kernel, the run message has a CUDA-graph verdict with the recordings seen,
and the run stage timed the graph and the script's own calls.  The last test decides whether the training script
without ``zero_grad`` fails because of inductor-step: the same script under plain ``python`` must fail the same way.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from gpu_helpers import GPU_MARKS, SCRIPTS, headless_env, record_script

pytestmark = GPU_MARKS
SCRIPT = os.path.join(SCRIPTS, "cudagraph_modes.py")
# a kernel call in torch's output module: a Triton launch, an extern kernel, an ATen fallback (also in a partition)
_CALL = re.compile(r"^\s*(?:[\w, ()]+ = )?(?:(\w+)\.run\(|(extern_kernels\.\w+)\(|((?:torch\.ops|aten)\.[\w.]+)\()", re.M)
MODES = {"reduce-overhead": ["reduce-overhead", "fp32", "train"], "max-autotune": ["max-autotune", "bf16", "infer"],
         "option": ["option", "fp32", "infer"]}


def _run_order(code: str):
    """A position of ``code`` -> its place in the run order: a partition function's statements run where ``call``
    calls ``self.partitions[i](``; None for a position outside the graph's body (a kernel's definition)."""
    call_at = code.find("def call(")
    parts = re.search(r"^runner = Runner\(partitions=\[([^\]]*)\]\)", code, re.M)
    names = [n.strip() for n in parts.group(1).split(",") if n.strip()] if parts else []
    spans = []
    for i, n in enumerate(names):
        m = re.search(rf"^def {n}\(args\):\n(?:(?:[ \t]+[^\n]*)?\n)*", code, re.M)
        spans.append((code.find(f"self.partitions[{i}](", call_at), m.start(), m.end()))

    def key(pos: int):
        owner = next((anchor for anchor, a, e in spans if a <= pos < e), None)
        if owner is None and pos < call_at:
            return None
        return (owner if owner is not None else pos, pos)
    return key


def _torch_calls(code: str) -> list[str]:
    """The kernel calls of an output module in run order (partition functions' calls where ``call`` calls them):
    Triton kernels by name, extern/fallback calls by op, as this test reads the file (not tracer.codeparse)."""
    key = _run_order(code)
    found = []
    for m in _CALL.finditer(code):
        at = m.start(1) if m.group(1) else m.start(2) if m.group(2) else m.start(3)
        if key(at) is not None:
            found.append((key(at), m.group(1) or m.group(2) or m.group(3)))
    return [n for _, n in sorted(found)]


def _ours(stop: dict, code: str) -> list[str]:
    """The codegen stop's kernel calls (their ``call_lines``) in the same run order, named as _torch_calls names
    them (``extern_kernels.mm#0``: ``extern_kernels.mm``)."""
    key = _run_order(code)
    starts = [0] + [m.end() for m in re.finditer("\n", code)]
    calls = [(key(starts[ln - 1] + len(code.split("\n")[ln - 1]) // 2), k["name"].split("#")[0])
             for k in stop["kernels"] for ln in k.get("call_lines") or []]
    return [n for _, n in sorted(calls)]


@pytest.fixture(scope="module", params=list(MODES))
def recorded(request, tmp_path_factory):
    mode = request.param
    s = record_script(tmp_path_factory, "cudagraph_modes", MODES[mode])
    s["mode"] = mode
    return s


def test_codegen_kernels_are_torchs_kernel_calls_and_each_graph_has_a_verdict(recorded):
    s = recorded
    assert s["rc"] == 0, s["tail"]
    want = {"reduce-overhead": {"[0/0] forward", "[0/0] backward"}}.get(s["mode"], {"[0/0] inference"})
    assert set(s["code"]) >= want and set(s["runs"]) >= want, (sorted(s["code"]), s["tail"])
    for key in sorted(want):
        stop = s["code"][key]
        with open(stop["output_path"], encoding="utf-8") as f:
            module = f.read()
        assert "self.partitions[0](" in module, module[-3000:]  # torch 2.11+: CUDA graphs through partitions
        theirs = _torch_calls(module)
        assert theirs and _ours(stop, module) == theirs, (key, _ours(stop, module), theirs)
        links = stop["links"]
        for k in stop["kernels"]:
            if k.get("call_lines"):
                assert k["name"] in links["kernels"] and links["kernels"][k["name"]]["buffers"], (key, k["name"])
                assert stop["kernel_spans"][k["name"]]["calls"] == k["call_lines"]
        assert stop["cudagraphs"]["partitions"] == ["partition_0"], stop.get("cudagraphs")
        run = s["runs"][key]
        cg = run["cudagraphs"]
        assert cg["verdict"] in ("captured", "partitioned") and cg["captured"] is True, (key, cg)
        assert cg["recordings"] and cg["recordings"][0]["call"] >= 2, (key, cg)
        assert run["compiled_ms"] > 0 and len(run["kernels"]) == len(theirs), (key, run.get("error"), run["kernels"])
        assert cg["script_calls"] == 10 and cg["script_call_ms"] > 0 and cg["replay_ms"] > 0, (key, cg)
    assert "CUDA graphs: captured: the whole graph is captured" in s["stdout"] or \
        "CUDA graphs: partitioned:" in s["stdout"], s["stdout"][-3000:]
    assert "CUDA graphs on: 1 partition(s)" in s["stdout"], s["stdout"][-3000:]
    assert " 0 kernels" not in s["stdout"], s["stdout"][-3000:]


@pytest.mark.parametrize("mode", ["reduce-overhead", "option"])
def test_same_kernels_as_run_and_get_code_in_a_plain_process(mode, tmp_path_factory):
    """Without autotuning the kernel names are the compile's own: torch's run_and_get_code in a plain python
    process (no inductor-step) gives the same calls, graph by graph, as the recorded codegen stops."""
    s = record_script(tmp_path_factory, "cudagraph_modes", MODES[mode])
    assert s["rc"] == 0, s["tail"]
    out = tmp_path_factory.mktemp("code") / "codes.json"
    p = subprocess.run([sys.executable, SCRIPT, *MODES[mode], "--code-out", str(out)], env=headless_env(),
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    codes = json.loads(out.read_text())
    keys = sorted(s["code"], key=lambda k: ("backward" in k, k))
    assert [_torch_calls(c) for c in codes] == [_ours(s["code"][k], s["code"][k]["wrapper"]) for k in keys], keys


def test_gradient_accumulation_under_reduce_overhead_fails_in_plain_torch_too(tmp_path_factory):
    """.trial's reduce-overhead training run failed with "accessing tensor output of CUDAGraphs that has been
    overwritten by a subsequent run": the loop never clears .grad, so each backward accumulates into the previous
    backward's CUDA-graph output (pytorch/pytorch#169545).  Plain python fails the same way; inductor-step fails
    no differently, and with zero_grad both pass (the test above)."""
    args = [*MODES["reduce-overhead"], "--no-zero-grad", "--steps", "6"]
    plain = subprocess.run([sys.executable, SCRIPT, *args], env=headless_env(), capture_output=True, text=True,
                           timeout=600)
    ours = record_script(tmp_path_factory, "cudagraph_modes", args)
    msg = "overwritten by a subsequent run"
    assert plain.returncode != 0 and msg in plain.stderr, plain.stderr[-3000:]
    assert msg in ours["stdout"] + ours["tail"], ours["tail"]  # the script's error, as plain python raised it
