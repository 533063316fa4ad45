"""Numerics on real divergences: ``inductor-step --headless --numerics`` over three tiny graphs
(tests/scripts/numerics_small.py), recorded once for the module.

* [0/0] a bf16 chain: Inductor keeps ``(b + 256) - 256`` in float32 and rounds once, eager rounds each op;
* [1/0] a NaN from the script's data: ``log`` of values the data made negative;
* [2/0] a deliberately wrong lowering registered in the script: ``aten.tanh`` lowered as sigmoid.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

from tests.tracer.test_tracer import ROOT, line_of, run_cli, split_user_line

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
SCRIPT = os.path.join(ROOT, "tests", "scripts", "numerics_small.py")


@pytest.fixture(scope="module")
def rec(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("numerics")
    record = str(cwd / "numerics.jsonl")
    r = run_cli(["--headless", "--numerics", "--record", record, SCRIPT], str(cwd), record)
    assert r.returncode == 0, r.stderr[-3000:]
    return r


def numerics(r, key: str) -> dict:
    from inductor_step.session.format import graph_key

    found = [m for m in r.of_type("numerics") if graph_key(m) == key]
    assert len(found) == 1, [graph_key(m) for m in r.of_type("numerics")]
    return found[0]


def test_bf16_chain_first_divergence_is_the_fused_chain_and_reads_closer_to_float64(rec):
    from inductor_step.session.format import validate

    n = numerics(rec, "[0/0] inference")
    assert validate(n) == []
    rows = n["rows"]
    assert [r["status"] for r in rows[:-1]] == ["ok"] * (len(rows) - 1)  # x * 2 and the mm: equal to eager
    first = n["first_divergence"]
    assert first["buffer"] == rows[-1]["buffer"] and first["fx_node"] == "mul_1"
    assert first["status"] == "closer" and "closer to float64 than eager" in first["verdict"]
    assert "first_suspect" not in n  # eager's per-op rounding, not a bug
    assert rows[-1]["compiled_vs_f64"]["tol_ratio"] < 1 < rows[-1]["eager_vs_f64"]["tol_ratio"]
    assert rows[-1]["dtype"] == "bfloat16"
    path, line = split_user_line(first["user_lines"][0], rec.cwd)
    assert line == line_of(SCRIPT, "BF16_CHAIN") and os.path.samefile(path, SCRIPT)
    assert [t["buffer"] for t in first["table"]] == [r["buffer"] for r in rows]
    loc = n["localized"]  # inside the fused kernel: sub is the first node whose value differs
    assert loc["first"] == "sub" and "recompiled the graph" in loc["how"]
    assert [x["status"] for x in loc["nodes"] if x["node"] == "add"] == ["ok"]
    assert "first NaN" not in " ".join(_lines(n))


def test_nan_from_data_names_the_kernel_the_node_and_the_user_line(rec):
    n = numerics(rec, "[1/0] inference")
    # eager and float64 make the same NaNs at the same elements: said as such, not as the first
    # NaN/Inf (which is the first one the compiled graph adds), and not localized
    assert "first_nonfinite" not in n and "localized_nonfinite" not in n
    same = n["nonfinite_as_eager"]
    nf = same["first"]
    assert nf["kernel"].startswith("cpp_fused_log") and nf["nan"] > 0 and same["float64_too"] is True
    assert all(not (r.get("nan") or r.get("inf")) for r in n["rows"][:nf["index"]])  # the mm before it is clean
    assert "first_divergence" not in n  # eager makes the same NaNs
    assert split_user_line(nf["user_lines"][0], rec.cwd)[1] == line_of(SCRIPT, "NAN_LINE")
    assert any(line.startswith("NaN/Inf as eager (not added by the compile)") for line in _lines(n))
    assert n["inputs"].startswith("the script's own inputs")


def test_wrong_lowering_is_the_first_suspect_and_nothing_before_it(rec):
    n = numerics(rec, "[2/0] inference")
    sus = n["first_suspect"]
    assert sus["kernel"].startswith("cpp_fused") and "tanh" in sus["kernel"]
    before = n["rows"][:sus["index"]]
    assert before and all(r["status"] == "ok" for r in before)  # the mm: equal
    assert sus["index"] == n["first_divergence"]["index"]
    assert split_user_line(sus["user_lines"][0], rec.cwd)[1] == line_of(SCRIPT, "WRONG_LINE")
    assert n["localized"]["first"] == "tanh"
    assert n["summary"]["suspect"] == 1


def test_training_step_backward_and_an_in_place_update_are_compared(rec):
    fwd, bwd = numerics(rec, "[3/0] forward"), numerics(rec, "[3/0] backward")
    for n in (fwd, bwd):
        assert n["summary"]["compared"] >= 1 and n["summary"]["diverging"] == 0 and "first_nonfinite" not in n
    upd = numerics(rec, "[4/0] inference")
    inplace = [r for r in upd["rows"] if r["buffer"].startswith("arg")]  # the kernel wrote the script's tensor
    assert inplace and all(r["status"] == "ok" and r["fx_node"] for r in inplace)


def test_headless_prints_the_answer_first(rec):
    out = [line for line in rec.stdout.splitlines() if line.startswith("[2/0] inference") and " numerics " in line]
    assert out and out[0].split("numerics", 1)[1].strip().startswith("first suspect divergence: buf1")
    assert "localized inside" in out[1] and "tanh" in out[1]


def test_report_carries_the_first_divergence_with_its_kernel_excerpt(rec, tmp_path):
    from inductor_step.session.report import build_report

    out = build_report(rec.record, out_dir=str(tmp_path / "bundle"))
    text = open(os.path.join(out, "REPORT.md"), encoding="utf-8").read()
    section = text[text.index("## Numerics"):]
    assert "### [2/0] inference" in section and "first suspect divergence: buf1" in section
    assert "cpp_fused_add_mul_tanh_0, lines" in section and "SUSPECT" in section


def _lines(n: dict) -> list[str]:
    from inductor_step.session.numerics import answer_lines

    return answer_lines(n)
