"""Numerics that cried wolf: ``inductor-step --headless --numerics`` over
tests/scripts/numerics_wolf.py, whose compiled outputs all equal eager's, recorded once for the module.

* [0/0] ``x.mean(dim=-1, keepdim=True) * 2.0 + x`` on CPU: buf0 holds Inductor's sum (its LoopBody stores the
  reduction, the division is in the consumer); it read "SUSPECT 2.12e+06x the tolerance" against FX node mean;
* [1/0] a causal mask ``torch.full(..., -inf).triu(1)``: -inf on purpose, in eager and float64 too; it read
  "first NaN/Inf: ... FX node where of ... full_default";
* [2/0] a training step with dropout: Inductor's own random prims; "2 of 7 buffers compared";
* [3/0] ``torch.var_mean``: its buffer holds Welford's sum of squared deviations ("not compared: none of
  var_mean's outputs of this size is this buffer"; 8 such in GPT-2's training forward).
"""

from __future__ import annotations

import importlib.util
import os

import pytest

from tests.tracer.test_numerics import numerics  # one numerics message of a graph, as that file reads it
from tests.tracer.test_tracer import ROOT, line_of, run_cli, split_user_line

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
SCRIPT = os.path.join(ROOT, "tests", "scripts", "numerics_wolf.py")


@pytest.fixture(scope="module")
def rec(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("wolf")
    record = str(cwd / "wolf.jsonl")
    r = run_cli(["--headless", "--numerics", "--record", record, SCRIPT], str(cwd), record)
    assert r.returncode == 0, r.stderr[-3000:]
    return r


def answer(n: dict) -> list[str]:
    from inductor_step.session.numerics import answer_lines

    return answer_lines(n)


def test_a_means_buffer_is_compared_with_the_sum_it_holds(rec):
    from inductor_step.session.format import validate

    n = numerics(rec, "[0/0] inference")
    assert validate(n) == []
    buf = n["rows"][0]
    assert buf["fx_node"] == "mean" and buf["kernel"].startswith("cpp_fused_add_mean_mul")
    assert buf["status"] == "ok", buf
    assert buf["holds"].startswith("the sum of mean (mean × 64)")
    assert buf["verdict"].startswith("holds the sum of mean")
    assert "first_suspect" not in n and "first_divergence" not in n
    assert n["summary"] == {**n["summary"], "compared": 2, "diverging": 0, "suspect": 0}
    head = [line for line in rec.stdout.splitlines() if line.startswith("[0/0] inference") and " numerics " in line]
    assert head and "no divergence" in head[0] and "SUSPECT" not in rec.stdout.split("[1/0] inference      numerics")[0]


def test_a_var_means_buffer_is_compared_with_the_welford_sum_it_holds(rec):
    n = numerics(rec, "[3/0] inference")
    buf = next(r for r in n["rows"] if r["fx_node"] == "var_mean")
    assert buf["status"] == "ok" and buf["holds"].startswith("the sum of squared deviations of var_mean "
                                                              "(its variance × 63)"), buf
    assert n["summary"]["compared"] == n["summary"]["buffers"] and n["summary"]["diverging"] == 0


def test_a_causal_masks_inf_that_eager_holds_too_is_no_first_nan(rec):
    n = numerics(rec, "[1/0] inference")
    assert "first_nonfinite" not in n and "localized_nonfinite" not in n
    same = n["nonfinite_as_eager"]
    assert same["float64_too"] is True and len(same["buffers"]) == 1
    first = same["first"]
    assert first["inf"] > 0 and first["nan"] == 0 and "full_default" in first["fx_nodes"]
    assert any(split_user_line(u, rec.cwd)[1] == line_of(SCRIPT, "MASK_LINE") for u in first["user_lines"])
    assert n["summary"]["nonfinite"] == 0 and n["summary"]["nonfinite_as_eager"] == 1
    text = "\n".join(answer(n))
    assert "first NaN/Inf" not in text
    assert "NaN/Inf as eager (not added by the compile): 1 buffer(s) hold NaN/Inf at the same elements as eager " \
           "and float64" in text


def test_dropouts_buffers_are_compared_with_inductors_random_numbers_replayed(rec):
    fwd = numerics(rec, "[2/0] forward")
    s = fwd["summary"]
    assert s["buffers"] == 7 and s["compared"] == 7 and s["diverging"] == 0, s
    drop = [r for r in fwd["rows"] if "dropout" in r["kernel"]]
    assert drop and all(r["status"] == "ok" for r in drop)
    assert "compared: the eager runs drew the compiled graph's seeds and Inductor's own random numbers" in fwd["random"]
    assert "5 buffer(s) computed from Inductor's random ops" in fwd["random"]
    bwd = numerics(rec, "[2/0] backward")
    assert bwd["summary"]["compared"] == bwd["summary"]["buffers"] and bwd["summary"]["diverging"] == 0


def test_a_nan_the_compiled_graph_adds_is_still_the_first_nan():
    """The rule behind "as eager": only a buffer whose NaN/Inf eager holds at the same elements."""
    from inductor_step.tracer.numerics import eager_holds_nonfinite

    same = {"status": "ok", "nan": 0, "inf": 56, "vs_eager": {"nonfinite_mismatch": 0, "ref_inf": 56}}
    added = {"status": "suspect", "nan": 3, "inf": 0, "vs_eager": {"nonfinite_mismatch": 3}}
    unknown = {"status": "not_compared", "nan": 3, "inf": 0}
    assert eager_holds_nonfinite(same) and not eager_holds_nonfinite(added) and not eager_holds_nonfinite(unknown)


def test_random_inputs_give_a_batch_norm_a_valid_running_variance():
    """Where the script's own inputs are missing (it never called the graph), the random running
    variance of a batch norm is made non-negative; a real input is left as the script gave it."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    from inductor_step.tracer.numerics_inputs import valid_random_inputs

    def f(x, w, b, rm, rv):
        return torch.nn.functional.batch_norm(x, rm, rv, w, b, training=False)

    args = [torch.randn(4, 3, 5), torch.randn(3), torch.randn(3), torch.randn(3), -torch.rand(3) - 0.5]
    gm = make_fx(f)(*args)
    rv = args[4].clone()
    assert valid_random_inputs(gm, args, real={4}) == [] and torch.equal(args[4], rv)  # the script's own: kept
    said = valid_random_inputs(gm, args, real=set())
    assert len(said) == 1 and "running variance" in said[0] and ">= 0" in said[0]
    assert bool((args[4] >= 0).all()) and torch.equal(args[4], rv.abs())
    assert bool(torch.isfinite(gm(*args)).all())
