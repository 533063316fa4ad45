"""The ``compile_record`` pytest fixture: a test run by pytest with the plugin records its real compiles and asserts on them.

One nested pytest run (pytester, a process of its own) of a small test file: one test that passes on a
real compile's counts (graphs, breaks, recompiles, kernels, fusions, a buffer's kernel), one with a graph
break that fails on purpose, whose report must carry the recording, and one after them that finds
torch's settings as they were before.
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import entry_points

import pytest

pytest_plugins = ["pytester"]

TESTS = '''
import logging

import torch
from torch._inductor import config as ic

BEFORE = (ic.fx_graph_cache, ic.pre_grad_custom_pass, ic._post_fusion_custom_pass,
          torch._functorch.config.enable_autograd_cache, ic.trace.provenance_tracking_level)


@torch.compile
def block(x, w):  # tests/scripts/diff_config.py's block: layer_norm, mul, add, relu, sum -> one fused C++ kernel
    h = torch.nn.functional.layer_norm(x, (x.shape[-1],))
    return torch.relu(h * w + 1.0).sum(dim=-1)


def breaks(x):
    y = x.sin()
    n = y.sum().item()  # a graph break: Tensor.item()
    return y * n


def test_block(compile_record):
    assert compile_record.graphs == []  # a fresh recording: nothing compiled yet
    with torch.no_grad():
        block(torch.randn(16, 64), torch.randn(64))
    rec = compile_record
    assert rec.graphs == ["[0/0] inference"]
    assert rec.graph_breaks == [] and rec.recompiles == {}
    assert rec.kernels == ["cpp_fused_add_mul_native_layer_norm_relu_sum_0"]
    # one fused group: op0..op3 on torch 2.14; op0, op1, op3 on 2.11 (layer_norm lowers differently there)
    (group,) = rec.fused
    assert len(group.members) >= 3 and group.name == "_".join(group.members)
    assert rec.fusions == len(group.members) - 1
    assert rec.graph("[0/0] inference").nodes_before >= len(group.members)
    last = "buf" + group.members[-1][2:]
    assert rec.kernel_of(last) == "cpp_fused_add_mul_native_layer_norm_relu_sum_0"


def test_break_then_fail(compile_record):
    torch.compile(breaks)(torch.randn(8))
    assert [b.reason for b in compile_record.graph_breaks] == [
        "Unsupported Tensor.item() call with capture_scalar_outputs=False"]
    assert compile_record.graph_breaks[0].where.endswith(f"test_record.py:{breaks.__code__.co_firstlineno + 2}")
    assert len(compile_record.graphs) == 2  # the frame before the break, the one after
    assert len(compile_record.kernels) == 99, "fails on purpose: the report shows the recording"


def test_torch_is_as_it_was():  # after both recordings: every setting they changed is back, no handler of ours
    from torch._inductor import config as ic

    assert (ic.fx_graph_cache, ic.pre_grad_custom_pass, ic._post_fusion_custom_pass,
            torch._functorch.config.enable_autograd_cache, ic.trace.provenance_tracking_level) == BEFORE
    for name in ("torch.__trace", "torch._inductor.scheduler.__fusion"):
        assert not [h for h in logging.getLogger(name).handlers if type(h).__module__.startswith("inductor_step")]
    assert logging.getLogger("torch._inductor.scheduler.__fusion").level == logging.NOTSET
'''


def test_the_fixture_records_a_tests_real_compiles_and_puts_torch_back(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_record=TESTS)
    # a process of its own: an in-process run would drop from sys.modules every torch module its compiles
    # imported first (pytester restores the module table), and the next test's torch would not import again
    # (pytest-textual-snapshot's session end is left out: it expects the outer run's snapshot folder)
    # -p names the module the pytest11 entry point names; where inductor-step is installed with that entry point,
    # pytest loads it by itself (naming it again would register it twice)
    installed = any(ep.value == "inductor_step.pytest_plugin" for ep in entry_points(group="pytest11"))
    result = pytester.runpytest_subprocess(*([] if installed else ["-p", "inductor_step.pytest_plugin"]),
                                           "-p", "no:cacheprovider", "-p", "no:textual-snapshot", "-q", timeout=300)
    out = result.stdout.str()
    result.assert_outcomes(passed=2, failed=1)
    assert "fails on purpose: the report shows the recording" in out
    # the failed test's report: its counts and the session file to open
    section = out[out.index("inductor-step compiles"):]
    assert "[0/0] inference: 1 kernel(s)" in section and "[1/0] inference: 1 kernel(s)" in section
    assert "2 graph(s), 1 graph break(s), 0 recompile(s), 2 kernel(s)" in section
    assert "graph break: [0/0] Unsupported Tensor.item() call with capture_scalar_outputs=False at " in section
    path = section.split("session: ", 1)[1].split()[0]
    assert path.endswith("compiles.jsonl") and os.path.isfile(path)


def test_the_plugin_is_the_pytest11_entry_point() -> None:
    tomllib = pytest.importorskip("tomllib") if sys.version_info >= (3, 11) else pytest.skip("tomllib: 3.11+")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    assert project["entry-points"]["pytest11"] == {"inductor_step": "inductor_step.pytest_plugin"}
    import inductor_step.pytest_plugin as plugin

    assert callable(plugin.compile_record) and "torch" not in plugin.__dict__
