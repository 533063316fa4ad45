"""Numerics' cheaper machinery on real torch, no compile: the side-by-side eager runs (their random
draws, the values they drop), the graph cut to a node's ancestors, and the chunked comparison's numbers."""

from __future__ import annotations

import importlib.util

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")


def _traced():
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    def f(x, w):
        noise = torch.rand(4, 3)  # a random op: both runs must draw what one run from the seed draws
        h = torch.tanh(x @ w) + noise
        unused = h * 3  # used by nothing but the output
        return h.sum(), unused

    return make_fx(f)(torch.randn(4, 8), torch.randn(8, 3))  # an ATen graph, as a post-grad graph is


def test_run_dual_draws_like_one_run_from_the_seed_and_gives_float64_values():
    import torch

    from inductor_step.tracer.adapter.numerics import run_dual

    gm = _traced()
    x, w = torch.randn(4, 8), torch.randn(8, 3)
    torch.manual_seed(0)
    want = gm(x, w)
    seen = {}
    torch.manual_seed(0)
    fell = run_dual(gm, [x, w], [x.clone(), w.clone()], lambda n, v, v64: seen.__setitem__(n.name, (v, v64)))
    assert fell == []
    v, v64 = seen["sum_1"]
    assert torch.equal(v, want[0]) and v64.dtype == torch.float64  # the dtype run is the plain run
    r, r64 = seen["rand"]
    assert torch.equal(r64, r.double())  # the float64 run drew the same numbers (its own copy of the state)
    assert torch.allclose(v64, want[0].double(), rtol=1e-5)
    assert "output" not in seen  # the output node is not run: the graph's outputs are dropped like the rest


def test_ancestors_graph_keeps_only_what_the_nodes_need():
    import torch

    from inductor_step.tracer.adapter.numerics import ancestors_graph, prunable

    gm = _traced()
    assert not prunable(gm)  # a random op: pruning would change the draws
    part = ancestors_graph(gm, ["tanh"])
    names = [n.name for n in part.graph.nodes]
    assert "tanh" in names and "rand" not in names and "mul" not in names
    x, w = torch.randn(4, 8), torch.randn(8, 3)
    out = part(x, w)
    assert torch.equal(out[0], torch.tanh(x @ w))


def test_chunked_comparison_gives_the_whole_tensors_numbers():
    import torch

    from inductor_step.tracer import numerics as N

    torch.manual_seed(0)
    c = torch.randn(3 * N.CHUNK + 17)
    r = c + torch.randn(c.numel()) * 1e-6
    s = N.stats(c, r)
    d = (c.double() - r.double()).abs()
    assert s["max_abs"] == float(d.max()) and s["nan"] == 0
    assert s["tol_ratio"] == float((d / (1e-5 + 1.3e-6 * r.double().abs())).max())
    c[N.CHUNK + 5] = float("nan")  # one chunk takes the masked path: the same numbers elsewhere, the NaN counted
    s2 = N.stats(c, r)
    assert s2["nonfinite_mismatch"] == 1 and s2["nan"] == 1 and s2["max_abs"] == float("inf")
    assert torch.get_num_threads() >= 1


def test_a_kernel_accumulating_into_zeros_is_compared_with_its_index_put():
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    from inductor_step.tracer.numerics import updater_node

    def f(idx, g):  # an embedding's gradient: zeros, then the rows' gradients added at the token ids
        z = torch.zeros(10, 4)
        return torch.ops.aten.index_put(z, [idx], g, True), z + 1

    gm = make_fx(f)(torch.tensor([1, 1, 3]), torch.randn(3, 4))
    full = next(n.name for n in gm.graph.nodes if "full" in str(n.target) or "zeros" in str(n.target))
    put = next(n.name for n in gm.graph.nodes if "index_put" in str(n.target))
    assert updater_node(gm, full, {"post_grad_nodes": [full, put]}) == put  # the kernel with the atomic adds
    assert updater_node(gm, full, {"post_grad_nodes": [full]}) is None  # the kernel that only fills
    assert updater_node(gm, put, {"post_grad_nodes": [full, put]}) is None  # already the update
