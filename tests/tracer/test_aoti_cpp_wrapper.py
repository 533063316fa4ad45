"""AOTInductor and cpp_wrapper on CPU: each script recorded once with ``--headless --run``,
checked the way a person checks it -- a codegen stop holding the C++ wrapper (what torch itself wrote), every
generated kernel linked to its buffers and back, no buffer wrongly said to have no kernel, the run stage timed
or saying why not in one line, the script's output unchanged.  Plus the C++ wrapper parser on the GPU forms
of the wrapper (Triton launches), which no CPU run produces."""

from __future__ import annotations

import importlib.util
import os
import textwrap

import pytest

from inductor_step.tracer.codeparse_cpp import cpp_kernel_spans, is_cpp_wrapper, parse_cpp_wrapper
from inductor_step.session.format import validate
from test_tracer import ROOT, Run, check_graph_links, headless

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")

SCRIPTS = os.path.join(ROOT, "tests", "scripts")
STAGES6 = ["dynamo", "aot", "lowering", "scheduling", "loopbody", "codegen"]
NO_KERNEL = "no kernel computes this buffer"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    """Both scripts recorded once, side by side (most of each run waits on g++)."""
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    with ThreadPoolExecutor(2) as pool:
        runs = {name: pool.submit(headless, tmp_path_factory, name, os.path.join(SCRIPTS, f"{name}_small.py"), run=True)
                for name in ("cpp_wrapper", "aoti")}
        return {name: f.result() for name, f in runs.items()}


@pytest.fixture(scope="module")
def cpp_wrapper(recorded: dict[str, Run]) -> Run:
    return recorded["cpp_wrapper"]


@pytest.fixture(scope="module")
def aoti(recorded: dict[str, Run]) -> Run:
    return recorded["aoti"]


def check_cpp_codegen(r: Run, key: str, entry: str) -> dict:
    """What a person checks on a C++ wrapper's codegen stop; returns the stop."""
    assert r.stages_of(key) == STAGES6, r.stages_of(key)
    cg = r.stop(key, "codegen")
    assert cg["wrapper_language"] == "cpp" and entry in cg["wrapper"]
    names = [k["name"] for k in cg["kernels"]]
    assert [n for n in names if n.startswith("cpp_fused_")], names
    assert [n for n in names if n.startswith("aoti_torch_cpu_addmm_out#")], names
    lines = cg["wrapper"].split("\n")
    for k in cg["kernels"]:
        assert k["calls"] and k["call_lines"], f"{k['name']} is never called"
        base = k["name"].split("#")[0]
        assert all(base in lines[n - 1] for n in k["call_lines"]), k["name"]
        span = cg["kernel_spans"][k["name"]]
        if k["backend"] == "cpp":
            assert lines[span["def"][0] - 1].startswith('extern "C"') and base in lines[span["def"][0] - 1]
            assert lines[span["def"][1] - 1] == "}"
            assert k["source"].split("\n")[0] == lines[span["def"][0] - 1]
    check_graph_links(r, key)  # the checks every graph gets (tests/tracer/test_tracer.py)
    links = cg["links"]
    assert "unavailable" not in links, links
    lowered = {b["name"] for b in r.stop(key, "lowering")["buffers"]}
    for name, e in links["kernels"].items():
        assert e["buffers"], f"{name} is linked to no buffer"
        for b in e["buffers"]:
            assert name in links["buffers"][b]["kernels"], f"{b} does not link back to {name}"
    computed = {b for e in links["kernels"].values() for b in e["buffers"]}
    assert computed == lowered, (computed, lowered)
    for b, d in links["buffers"].items():
        assert d["kernels"], f"{b}: {d['notes']}"
        assert not any(NO_KERNEL in n for n in d["notes"]), f"{b}: {d['notes']}"
        assert d["fx_nodes"], b
    for k in cg["kernels"]:  # Inductor's provenance reaches the C++ wrapper's // comments
        assert links["kernels"][k["name"]]["post_grad_nodes"], k["name"]
    return cg


def test_cpp_wrapper_codegen_is_parsed_into_linked_kernels(cpp_wrapper: Run) -> None:
    r = cpp_wrapper
    assert r.returncode == 0, r.stderr[-3000:]
    assert not [e for m in r.messages for e in validate(m)]
    assert any(line.startswith("match True") for line in r.user_output()), r.user_output()
    cg = check_cpp_codegen(r, "[0/0] inference", "inductor_entry_impl")
    # what torch wrote: the output module on disk is the wrapper shown
    with open(cg["output_path"], encoding="utf-8") as f:
        assert f.read() == cg["wrapper"]
    assert "codegen     3 kernels (1 cpp, 2 extern)" in r.stdout
    # the relu runs in place in the first addmm's buffer: a // reuse alias
    relu = next(k for k in cg["kernels"] if k["backend"] == "cpp")
    assert relu["reuses"] and set(relu["reuses"].values()) <= set(cg["links"]["buffers"])


def test_cpp_wrapper_run_times_every_kernel_call_by_replaying_the_wrapper(cpp_wrapper: Run) -> None:
    run = cpp_wrapper.of_type("run")
    assert len(run) == 1 and not run[0].get("error"), run
    m = run[0]
    assert m["compiled_ms"] > 0 and m["eager_ms"] > 0
    cg = cpp_wrapper.stop("[0/0] inference", "codegen")
    # one entry per call of every kernel the codegen stop lists, each timed
    assert [(k["name"], k["call"]) for k in m["kernels"]] == [(k["name"], 1) for k in cg["kernels"]]
    assert all(k["median_ms"] > 0 and k["p20_ms"] <= k["median_ms"] <= k["p80_ms"] for k in m["kernels"]), m["kernels"]
    assert m["kernel_sum_ms"] == pytest.approx(sum(k["median_ms"] for k in m["kernels"]))
    assert "\n" not in m["kernels_note"] and "equal the compiled graph's" in m["kernels_note"], m["kernels_note"]
    assert "[0/0] inference      run         compiled" in cpp_wrapper.stdout and "3 kernels, sum" in cpp_wrapper.stdout


def test_aoti_gets_a_codegen_stop_from_torch_aot_code(aoti: Run) -> None:
    r = aoti
    assert r.returncode == 0, r.stderr[-3000:]
    assert not [e for m in r.messages for e in validate(m)]
    assert any(line.startswith("match True") and "mlp.pt2" in line for line in r.user_output()), r.user_output()
    assert r.graphs() == ["[?] inference"]  # torch.export: no Dynamo compile id, as torch logs it
    assert "torch.export traced this graph" in r.stop("[?] inference", "dynamo")["note"]
    cg = check_cpp_codegen(r, "[?] inference", "AOTInductorModel::run_impl")
    a = cg["aoti"]
    assert a["api"] == "aoti_compile_and_package"
    assert cg["output_path"] == os.path.join(r.cwd, "mlp.pt2") and os.path.exists(cg["output_path"])
    # the text is torch's wrapper then its kernels (TORCH_COMPILE_DEBUG's output_code.cpp); torch adds the g++
    # command to each file on disk afterwards
    with open(a["wrapper_path"], encoding="utf-8") as f:
        wrapper = f.read().split("// Compile cmd")[0].rstrip("\n")
    with open(a["kernel_path"], encoding="utf-8") as f:
        kernels = f.read().split("// Compile cmd")[0].rstrip("\n")
    assert cg["wrapper"].startswith(wrapper) and kernels in cg["wrapper"][len(wrapper):]
    art = [m for m in r.of_type("artifact") if m["name"] == "aoti_package"]
    assert [m["payload"] for m in art] == [cg["output_path"]]


def test_aoti_run_times_the_package_through_aoti_load_package(aoti: Run) -> None:
    run = aoti.of_type("run")
    assert len(run) == 1 and not run[0].get("error"), run
    m = run[0]
    assert m["compiled_ms"] > 0 and m["eager_ms"] > 0, m
    assert m["aoti"]["loaded_with"] == "torch._inductor.aoti_load_package"
    assert m["aoti"]["path"].endswith("mlp.pt2")
    # each call of the package's own wrapper source replayed and timed alone, checked against the package's output
    cg = aoti.stop("[?] inference", "codegen")
    assert [(k["name"], k["call"]) for k in m["kernels"]] == [(k["name"], 1) for k in cg["kernels"]]
    assert all(k["median_ms"] > 0 for k in m["kernels"]), m["kernels"]
    assert "\n" not in m["kernels_note"] and "equal the compiled graph's" in m["kernels_note"], m["kernels_note"]
    assert "constants from the exported program's state (3 of 3)" in m["kernels_note"]
    assert "[?] inference        run         compiled" in aoti.stdout and "3 kernels, sum" in aoti.stdout


# ----------------------------------------------------------------------------- the parser on GPU forms

AOT_GPU = textwrap.dedent('''\
    template <typename kernels_type_>
    static __attribute__((noinline)) void call_triton_poi_fused_relu_0(
        const CUdeviceptr in_out_ptr0,
        const CUdeviceptr in_ptr0,
        int64_t xnumel,
        int32_t device_idx_,
        cudaStream_t stream_,
        kernels_type_& kernels_,
        const std::optional<std::string>& cubin_dir_ = std::nullopt
    ){
        /*
        @triton.jit
        def triton_poi_fused_relu_0(in_out_ptr0, in_ptr0, xnumel, XBLOCK : tl.constexpr):
            xoffset = tl.program_id(0) * XBLOCK
            tmp0 = tl.load(in_out_ptr0 + (x2), xmask)
            tmp1 = tl.load(in_ptr0 + (x0), xmask)
            tl.store(in_out_ptr0 + (x2), tmp3, xmask)
        */
        uint32_t grid_0 = ((xnumel + (128 - 1)) / (128));
        launchKernel(kernels_.triton_poi_fused_relu_0, grid_0, 1, 1, 4, 0, kernel_args_, stream_);
    }
    void AOTInductorModel::run_impl(
        AtenTensorHandle*
            input_handles, // array of input AtenTensorHandle; handles
        DeviceStreamType stream,
        AOTIProxyExecutorHandle proxy_executor
    ) {
        auto arg2_1 = std::move(inputs[0]);
        AtenTensorHandle buf0_handle;
        AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_empty_strided(2, int_array_0, int_array_1, cached_torch_dtype_float32, cached_torch_device_type_cuda, this->device_idx_, &buf0_handle));
        RAIIAtenTensorHandle buf0(buf0_handle);
        // [Provenance debug handles] aoti_torch_cuda_mm_out:1
        AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_cuda_mm_out(buf0, arg2_1, wrap_with_raii_handle_if_needed(reinterpret_tensor_wrapper(constant_0, 2, int_array_2, int_array_3, 0L))));
        auto buf1 = std::move(buf0);  // reuse
        // [Provenance debug handles] triton_poi_fused_relu_0:2
        call_triton_poi_fused_relu_0(buf1, constant_1, 64L, this->device_idx_, stream, kernels, this->cubin_dir_);
        AtenTensorHandle buf2_handle;
        AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_cuda_convolution(buf1, constant_2, nullptr, int_array_4, 1, 0, &buf2_handle));
        RAIIAtenTensorHandle buf2(buf2_handle);
        output_handles[0] = buf2.release();
    } // AOTInductorModel::run_impl
    ''')


def test_parser_reads_aoti_gpu_launches_and_shim_calls() -> None:
    assert is_cpp_wrapper(AOT_GPU)
    ks = {k["name"]: k for k in parse_cpp_wrapper(AOT_GPU)}
    assert list(ks) == ["aoti_torch_cuda_mm_out#0", "triton_poi_fused_relu_0", "aoti_torch_cuda_convolution#0"]
    t = ks["triton_poi_fused_relu_0"]
    assert t["backend"] == "triton" and t["source"].startswith("@triton.jit\ndef triton_poi_fused_relu_0(")
    assert t["calls"][0][:3] == ["buf1", "constant_1", "64L"] and t["writes"] == ["buf1"]
    assert t["reuses"] == {"buf1": "buf0"}
    assert ks["aoti_torch_cuda_mm_out#0"]["writes"] == ["buf0"]
    assert ks["aoti_torch_cuda_convolution#0"]["writes"] == ["buf2"]  # through &buf2_handle
    lines = AOT_GPU.split("\n")
    spans = cpp_kernel_spans(AOT_GPU, list(ks.values()))
    assert lines[spans["triton_poi_fused_relu_0"]["body"] - 1].strip() == "@triton.jit"
    assert "call_triton_poi_fused_relu_0(buf1" in lines[spans["triton_poi_fused_relu_0"]["calls"][0] - 1]
    assert "aoti_torch_cuda_mm_out(buf0" in lines[spans["aoti_torch_cuda_mm_out#0"]["call"] - 1]


JIT_GPU = textwrap.dedent('''\
    cpp_wrapper_src = (
    r"""
    static __attribute__((noinline)) void call_triton_poi_fused_add_0(
        const CUdeviceptr in_ptr0,
        const CUdeviceptr out_ptr0,
        int64_t xnumel,
        int32_t device_idx_,
        cudaStream_t stream_,
        const std::optional<std::string>& cubin_dir_ = std::nullopt
    ){
        launchKernel(triton_poi_fused_add_0, grid_0, 1, 1, 4, 0, kernel_args_, stream_);
    }
    void inductor_entry_impl(
        AtenTensorHandle*
            input_handles,
        AtenTensorHandle*
            output_handles
    ) {
        RAIIAtenTensorHandle buf0(buf0_handle);
        call_triton_poi_fused_add_0(arg0_1, buf0, 16L, 0, stream0);
        output_handles[0] = buf0.release();
    } // inductor_entry_impl
    """
    )
    ''')


def test_parser_reads_jit_gpu_launches_without_triton_source() -> None:
    ks = parse_cpp_wrapper(JIT_GPU)
    assert [k["name"] for k in ks] == ["triton_poi_fused_add_0"]
    k = ks[0]
    # no Triton source in the module: the launcher the wrapper calls stands in for it, its parameters name the output
    assert k["backend"] == "triton" and "call_triton_poi_fused_add_0(" in k["source"]
    assert k["writes"] == ["buf0"] and k["calls"] == [["arg0_1", "buf0", "16L", "0", "stream0"]]


# ----------------------------------------------------------------------------- what a person sees in the app

def test_the_app_shows_aoti_kernels_in_pane_6_and_their_times_in_pane_7(aoti: Run) -> None:
    """Open the AOTInductor recording, step to its codegen stop (n x5), press 6 then 7: the kernels, linked
    and timed; a buffer selected in pane 3 moves pane 6 to the kernel computing it."""
    import asyncio  # noqa: PLC0415

    from inductor_step.tui.app import StepApp  # noqa: PLC0415

    cg = aoti.stop("[?] inference", "codegen")
    links = cg["links"]

    async def go() -> None:
        app = StepApp(messages=list(aoti.messages), session_path=aoti.record)
        async with app.run_test(size=(160, 50)) as pilot:
            for k in "nnnnn6":
                await pilot.press(k)
                await pilot.pause()
            table = app.query_one("#table-codegen")
            rows = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
            assert rows == [k["name"] for k in cg["kernels"]]
            assert "has not reached codegen" not in str(app.query_one("#status").content)
            await pilot.press("7")
            await pilot.pause()
            run = app.query_one("#table-run")
            assert sorted(str(run.get_row_at(i)[0]) for i in range(run.row_count)) == sorted(rows)
            await pilot.press("3")
            await pilot.pause()
            lowering = app.query_one("#table-lowering")
            buf = next(b for b, d in links["buffers"].items() if any(k.startswith("cpp_fused_") for k in d["kernels"]))
            while str(lowering.get_row_at(lowering.cursor_row)[0]) != buf:
                await pilot.press("down")
                await pilot.pause()
            await pilot.press("6")
            await pilot.pause()
            assert str(table.get_row_at(table.cursor_row)[0]) == links["buffers"][buf]["kernels"][0]

    asyncio.run(go())
