"""Eager's side of the memory view on a real CPU compile (one small MLP training step, compiled once in this process for
the module): what eager autograd saves for the backward of Dynamo's graph (saved_tensors_hooks) is the hand count,
eager's and the compiled call's peaks come from the profiler's memory events and say so, and the pane's, the headless
line's and REPORT.md's text carry both figures with their sources."""

from __future__ import annotations

import os

import pytest

torch = pytest.importorskip("torch")

from inductor_step.tracer.timing import memory as tm  # noqa: E402

FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "memory_whatif.jsonl")


@pytest.fixture(scope="module")
def mlp():
    """Linear(64, 256) -> ReLU -> Linear(256, 32) on 16 rows, ``.square().mean()``: Dynamo's graph and its first-call
    inputs (tracer.adapter.install_dynamo_graph_hook, as the agent keeps them) and the compiled step."""
    import torch._inductor.compile_fx as cfx

    from inductor_step.tracer.adapter.dynamo_graph import install_dynamo_graph_hook

    orig, got = cfx.compile_fx, []
    try:
        assert install_dynamo_graph_hook(lambda gm, first: got.append((gm, first)))
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 32))
        x = torch.randn(16, 64)
        torch._dynamo.reset()
        step = torch.compile(lambda x: model(x).square().mean())
        step(x)
    finally:
        cfx.compile_fx = orig
    gm, first = got[0]
    yield {"gm": gm, "inputs": first()["inputs"], "mode": "forward", "grad_enabled": True}, step, model, x
    torch._dynamo.reset()


def test_eager_autograd_saves_the_hand_counted_bytes(mlp):
    dyn, _, model, _ = mlp
    got = tm.eager_saved(dyn)
    # by hand: the first addmm saves its mat1 (the batch x, a graph input, for W1's grad) and not W1.t() (the batch
    # needs no grad); relu saves its result (16x256 floats, what threshold_backward reads); the second addmm saves
    # that same result and W2.t() (a parameter); pow saves its input, the second Linear's output (16x32); mean saves
    # no tensor
    assert got["storage_bytes"] == 16 * 256 * 4 + 16 * 32 * 4 and got["storages"] == 2
    assert got["params_bytes"] == 32 * 256 * 4 and got["inputs_bytes"] == 16 * 64 * 4
    assert got["tensors"] == 5 and "saved_tensors_hooks" in got["how"]
    assert all(p.grad is None for p in model.parameters())


def test_eager_and_compiled_peaks_come_from_the_profiler_with_their_source(mlp):
    dyn, step, model, x = mlp
    fwd = tm.eager_peak(dyn, cuda=False)
    # by hand: addmm's 16x256 and relu's 16x256 live together (32 kB), then addmm's is freed (relu saves its result)
    # and the 16x32 outputs that follow stay under it
    assert fwd["peak_bytes"] == 2 * 16 * 256 * 4 and fwd["source"] == tm.PROFILER and "grad enabled" in fwd["how"]
    bwd = tm.eager_peak({**dyn, "mode": "backward"}, cuda=False)
    grads = sum(p.numel() * 4 for p in model.parameters())  # the .grad tensors the backward leaves allocated
    assert grads - (16 * 256 + 16 * 32) * 4 <= bwd["peak_bytes"] <= 2 * grads and "backward call" in bwd["how"]
    assert all(p.grad is None for p in model.parameters())  # the leaves keep the .grad they had
    comp = tm.measured_peak(lambda: step(x), cuda=False, dyn=dyn)
    # by hand, the compiled forward: addmm's 16x256 output, the ReLU written into it in place (saved), the second
    # addmm's 16x32 and the loss: Inductor's in-place ReLU is what eager's 32 kB peak lacks
    assert comp["source"] == tm.PROFILER and comp["peak_bytes"] == (16 * 256 + 16 * 32 + 1) * 4
    assert comp["eager"]["peak_bytes"] == fwd["peak_bytes"] and comp["eager_saved"]["storage_bytes"] == 18432
    assert tm.eager_peak({"missing": "no graph"}, False) == {"not_measured": "no graph"}
    mlp[0]["measured"] = comp  # for the text test below


def test_the_figures_show_in_the_pane_the_headless_line_and_the_report(mlp):
    """The measured figures of the compile above shown on a recorded session's training forward (the checked-in
    memory_whatif fixture): its saved-for-backward total beside eager autograd's, the compiled and eager peaks with
    where each came from."""
    from inductor_step import session
    from inductor_step.session.memory_text import graph_memory, measured_lines, report_section
    from inductor_step.tui.panes.memory import saved_text

    comp = mlp[0].get("measured") or tm.measured_peak(lambda: mlp[1](mlp[3]), cuda=False, dyn=mlp[0])
    s = session.load(FIX).store
    key = "[1/0] forward"
    s.runs.setdefault(key, {})["memory"] = comp
    line = graph_memory(s, key).summary()
    assert "(CPU profiler memory events, one call in the timing worker" in line
    assert "; eager 32.8 kB for the same graph (CPU profiler memory events)" in line
    assert "eager autograd saves 18.4 kB in 2 storages (parameters 32.8 kB, graph inputs " \
        "4.1 kB apart; saved_tensors_hooks on Dynamo's graph)" in line
    lines = measured_lines(comp)
    assert lines[0].startswith("measured (compiled): ") and tm.PROFILER in lines[0]
    assert lines[1].startswith("measured (eager, same graph): 32.8 kB (32768 bytes; ") and tm.PROFILER in lines[1]
    rep = report_section(s)
    assert f"- `{key}`: measured (compiled): " in rep and "eager autograd saves 18.4 kB" in rep
    sv = graph_memory(s, key).saved
    assert "# against eager: eager autograd saves 18.4 kB" in saved_text(sv, comp)
    s.runs[key]["memory"] = {"not_measured": "x"}
    assert "eager autograd's saved bytes not measured (this recording's timing predates them)" in \
        graph_memory(s, key).summary()
