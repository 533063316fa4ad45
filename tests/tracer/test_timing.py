"""The `run` stage's failure handling and figures, on CPU.

* A graph that calls an op the script registered (the timing worker does not have it) is timed in
  the agent's own process and says so (it used to fail and make ``--headless`` exit
  non-zero); the other graphs are timed by the worker (one real ``--headless --run`` of four graphs).
* A max-pool's backward graph takes the forward's int8 window offsets, which Inductor's kernel
  bounds-checks (``TORCH_CHECK ... index out of bounds``): it is timed on the script's own offsets,
  since random ones fail (found on ResNet-18, examples/real/torchvision_resnet.py; the same kernel here).
* A crash while timing (SIGSEGV) costs only that graph: :class:`tracer.timing.isolate.TimingWorker` says
  which kernel and step, and the next graph is timed by a fresh worker.
* Byte counts never charge overlapping reads more than once; FLOPs and the roof that binds come from
  torch's own formulas; the script's traceback starts at the script.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from inductor_step.session.format import read_session

torch = pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TIMED_SCRIPT = textwrap.dedent('''
    import torch

    @torch.library.custom_op("istest::twice", mutates_args=())
    def twice(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @twice.register_fake
    def _(x):
        return torch.empty_like(x)

    @torch.compile
    def plain(x):
        return torch.relu(x) + 1

    @torch.compile
    def custom(x):
        return twice(torch.sin(x)) + 1

    x = torch.randn(64)
    print(plain(x).sum().item(), custom(x).sum().item())

    # a backward through a max-pool (ResNet's stem): [2/0] backward takes the pool's int8 window offsets
    @torch.compile
    def pool(x):
        return torch.nn.functional.max_pool2d(x, 3, 2, 1).sum()

    pool(torch.randn(2, 3, 8, 8, requires_grad=True)).backward()
''')


def _headless(tmp_path, script_text: str, *, run: bool) -> tuple[subprocess.CompletedProcess, list[dict]]:
    script = tmp_path / "script.py"
    script.write_text(script_text)
    record = tmp_path / "s.jsonl"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), ROOT) if p))
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", *(["--run"] if run else []), "--record",
                        str(record), str(script)], cwd=str(tmp_path), env=env, capture_output=True, text=True,
                       timeout=600)
    # read_session: a run message over 2 KB is packed (the roofs and eager node times make most so)
    msgs = list(read_session(str(record))) if record.exists() else []
    return p, msgs


@pytest.fixture(scope="module")
def timed(tmp_path_factory) -> tuple[subprocess.CompletedProcess, list[dict]]:
    """TIMED_SCRIPT recorded once with ``--run``: its plain, custom-op and max-pool training graphs, timed."""
    return _headless(tmp_path_factory.mktemp("timed"), TIMED_SCRIPT, run=True)


GRAPHS = {"[0/0] inference", "[1/0] inference", "[2/0] forward", "[2/0] backward"}


def test_a_graph_with_a_script_defined_op_is_timed_here_and_the_others_in_a_worker(timed):
    p, msgs = timed
    runs = {f"{m['compile_id']} {m['graph_kind']}": m for m in msgs if m.get("type") == "run"}
    assert set(runs) == GRAPHS, p.stderr[-2000:]
    custom = runs["[1/0] inference"]
    for key in GRAPHS - {"[1/0] inference"}:
        ok = runs[key]
        assert not ok.get("error") and ok["compiled_ms"] > 0 and ok["kernels"], (key, ok.get("error"))
        assert "a process of its own" in ok["isolated"] and not ok.get("in_process"), key
    assert not custom.get("error") and custom["compiled_ms"] > 0 and custom["eager_ms"] > 0, custom.get("error")
    assert "istest::twice" in custom["in_process"], custom
    # each C++ kernel's compiled function, disassembled, its vector instructions on the kernel's lines
    ok = runs["[0/0] inference"]
    cpp = [k for k in ok["kernels"] if k["backend"] == "cpp"]
    assert cpp and all(set(k["stages"]) >= {"stages", "maps"} for k in cpp), [k.get("stages") for k in cpp]
    src = next(k["source"] for m in msgs if m.get("stage") == "codegen" and m["compile_id"] == "[0/0]"
               for k in m["kernels"] if k["name"] == cpp[0]["name"]).split("\n")
    st = cpp[0]["stages"]
    assert "kernel" in st["stages"]["asm"]
    if not st["line_info"]:  # torch 2.11 builds kernels without -g: the asm is there, and one line says why unlinked
        assert "no line table" in st["note"], st.get("note")
    else:
        lines = st["maps"]["lines"]["asm"]
        assert any(ln is not None and "store" in src[ln - 1] for ln in lines), st.get("note")
        assert any("vector" in kd for per in st["maps"]["counts"]["asm"].values() for kd in per)
    done = [m for m in msgs if m.get("type") == "run_status" and m.get("done")]
    assert done[-1]["timed"] == 4 and done[-1]["failed"] == [] and done[-1]["of"] == 4, done[-1]
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
    assert "could not be timed" not in p.stderr
    # the agent itself finished normally
    assert [m["returncode"] for m in msgs if m.get("type") == "agent_exit"] == [0]


def test_a_max_pool_backward_is_timed_on_the_scripts_own_window_offsets(timed):
    """`--run` times the backward on the script's own inputs: its max-pool window offsets (int8, in
    0..8 for a 3x3 window) are checked by the kernel, and random ones (``rand_strided`` int8) fail it
    (on ResNet-18 the timing of [0/1] backward failed in scatter_reduce_ before script inputs)."""
    p, msgs = timed
    back = [m for m in msgs if m.get("type") == "run" and (m["compile_id"], m["graph_kind"]) == ("[2/0]", "backward")]
    assert back, p.stderr[-2000:]
    codegen = [m for m in msgs if m.get("type") == "stop" and m["stage"] == "codegen"
               and (m["compile_id"], m["graph_kind"]) == ("[2/0]", "backward")]
    assert "max_pool2d_with_indices_backward" in codegen[0]["wrapper"]  # the kernel that checks the offsets
    assert not back[0].get("error"), back[0].get("error")
    assert back[0]["compiled_ms"] > 0 and back[0]["kernels"]
    assert "the script's own inputs from its first call" in back[0]["inputs"], back[0]["inputs"]


CRASHING_MODULE = textwrap.dedent('''
    import ctypes
    import torch

    def cpp_fused_crash_0(x):
        ctypes.string_at(0)  # reads address 0: SIGSEGV

    def get_args():
        return [torch.ones(8)]

    def call(args):
        x, = args
        args.clear()
        cpp_fused_crash_0(x)
        return (x,)
''')

GOOD_MODULE = textwrap.dedent('''
    import torch

    def get_args():
        return [torch.ones(8)]

    def call(args):
        x, = args
        args.clear()
        return (x + 1,)
''')


def test_a_crash_while_timing_costs_only_that_graph(tmp_path):
    from inductor_step.tracer.timing.isolate import TimingFailed, TimingWorker

    crash, good = tmp_path / "crash_out.py", tmp_path / "good_out.py"
    crash.write_text(CRASHING_MODULE)
    good.write_text(GOOD_MODULE)
    worker = TimingWorker()
    steps: list[str] = []
    try:
        with pytest.raises(TimingFailed) as e:
            worker.time(str(crash), None, "cpu", progress=steps.append)
        assert e.value.crashed and e.value.signal == "SIGSEGV", e.value.reason
        line = CRASHING_MODULE.splitlines().index("    cpp_fused_crash_0(x)") + 1
        assert e.value.reason == (f"crashed: SIGSEGV in cpp_fused_crash_0 (output code line {line}, "
                                  "while recording the kernels' calls (one call of the graph))"), e.value.reason
        assert "Segmentation fault" in e.value.detail
        result = worker.time(str(good), None, "cpu")  # a fresh worker
        assert result["compiled_ms"] > 0 and result["kernels"] == []
    finally:
        worker.close()


def test_script_traceback_starts_at_the_script(tmp_path):
    p, msgs = _headless(tmp_path, "def f():\n    raise ValueError('boom')\n\n\nf()\n", run=False)
    assert p.returncode == 1
    tb = p.stderr[p.stderr.index("Traceback"):]
    frames = [line for line in tb.splitlines() if line.startswith("  File ")]
    assert frames and all("script.py" in f for f in frames), tb
    err = [m for m in msgs if m.get("type") == "error"][0]
    assert "agent.py" not in err["traceback"] and "runpy" not in err["traceback"], err["traceback"]


def test_overlapping_reads_are_not_charged_per_window():
    """A 3x3 max-pool's input is read in nine overlapping windows; Inductor's estimate charges each
    (about 9/4 of the input), DRAM serves it once: the tensors in full are the count."""
    from inductor_step.tracer.timing.roofs import kernel_gb

    x, out = torch.empty(32, 64, 112, 112), torch.empty(32, 64, 56, 56)
    full = (x.nbytes + out.nbytes) / 1e9
    estimate = (9 * out.nbytes + out.nbytes) / 1e9
    gb, source = kernel_gb("triton_poi_fused_max_pool2d_0", "triton", "", (x, out), ["in_ptr0", "out_ptr0"], estimate)
    assert gb == pytest.approx(full) and "below Inductor's estimate" in source
    # a kernel that reads a slice keeps Inductor's (smaller) estimate
    gb, source = kernel_gb("triton_poi_fused_slice_0", "triton", "", (x, out), ["in_ptr0", "out_ptr0"], full / 10)
    assert gb == pytest.approx(full / 10) and source.startswith("inductor estimate_kernel_num_bytes")


def test_attention_and_convolution_get_flops_and_a_bound():
    from inductor_step.tracer.timing.roofs import op_flops, roofline

    q = k = v = torch.randn(2, 4, 128, 32)
    flops, dtype, op = op_flops(torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default, (q, k, v), {})
    assert flops == 4 * 2 * 4 * 128 * 128 * 32 and dtype == "float32" and "attention" in op
    x, w = torch.randn(8, 16, 32, 32), torch.randn(32, 16, 3, 3)
    cflops, _, cop = op_flops(torch.ops.aten.convolution.default,
                              (x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1), {})
    assert cflops == 2 * 8 * 32 * 32 * 32 * 16 * 9 and cop == "convolution"
    peak = {"bw_gbps": 3000.0, "tflops": {"float32": 67.0, "tf32": 535.0},
            "float32_mode": {"matmul_tf32": False, "conv_tf32": True}}
    # ResNet's 128-channel 3x3 convolution at batch 32, 28x28: 7.4 GFLOP over 26 MB (input + output),
    # 288 FLOP/byte against TF32's ridge of 535e12 / 3000e9 = 178
    big_flops, big_gb = 2.0 * 32 * 28 * 28 * 128 * 128 * 9, 2 * 32 * 128 * 28 * 28 * 4 / 1e9
    conv = {"median_ms": 0.1, "gb": big_gb}
    roofline(conv, peak, big_flops, "float32", cop)
    assert conv["bound"] == "compute" and conv["peak_tflops"] == 535.0 and "TF32 on" in conv["peak_tflops_which"]
    attn = {"median_ms": 0.05, "gb": 4 * q.nbytes / 1e9}
    roofline(attn, peak, flops, "float32", op)
    assert attn["peak_tflops"] == 67.0 and attn["pct_peak_tflops"] == pytest.approx(
        100 * flops / 0.05e-3 / 1e12 / 67.0)
    copy = {"median_ms": 0.01, "gb": 0.02}
    roofline(copy, peak, None, None, None)
    assert copy["bound"] == "memory" and "only roof" in copy["bound_source"]
