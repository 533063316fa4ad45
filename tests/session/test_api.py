"""The public API (inductor_step.session: load, Session, Graph, the typed objects, diffs, jobs, Rich views) on every recorded fixture."""

from __future__ import annotations

import glob
import io
import os
import subprocess
import sys

import pytest

from inductor_step import session
from inductor_step.session.diff import GraphDiff, render
from inductor_step.session.ranks import RankComparison, text as ranks_text

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIX = os.path.join(ROOT, "tests", "fixtures")
FIXTURES = sorted(glob.glob(os.path.join(FIX, "*.jsonl")))


@pytest.fixture(scope="module")
def sessions() -> dict[str, session.Session]:
    return {os.path.basename(f): session.load(f) for f in FIXTURES}


def test_every_fixture_loads_with_its_graphs_and_stages(sessions):
    assert len(sessions) >= 24
    for name, s in sessions.items():
        assert s.label == name
        assert [g.key for g in s.graphs] == s.store.graphs and len(s) == len(s.graphs) > 0, name
        for g in s.graphs:
            assert g.stages and g.stages[0] == "dynamo", (name, g.key)
            assert s.graph(g.key) is g and s[g.key] is g
            assert g.kind in ("inference", "forward", "backward")
            assert g.compile_id.startswith("[") and g.key.startswith(g.compile_id)
            # each stage's data, typed, where the stage was reached
            assert bool(g.dynamo_nodes) == isinstance((g.stop("dynamo") or {}).get("graph"), dict)
            if "lowering" in g.stages and "buffers" not in g.stop("lowering"):
                continue  # a subgraph Inductor lowered inline into its parent (flex attention's mods): no IR of its own
            if "lowering" in g.stages:
                assert [b.name for b in g.buffers] == [b["name"] for b in g.stop("lowering")["buffers"]]
            if "codegen" in g.stages:
                assert [k.name for k in g.kernels] == [k["name"] for k in g.stop("codegen")["kernels"]]
                assert g.wrapper
            else:
                assert g.kernels == [] and g.wrapper == ""


def test_navigation_from_a_buffer_and_back_on_every_fixture(sessions):
    seen = {"kernel": 0, "fx": 0, "sched": 0, "call": 0, "lines": 0, "user": 0, "run": 0}
    for name, s in sessions.items():
        for g in s.graphs:
            for b in g.buffers:
                for k in b.kernels():
                    seen["kernel"] += 1
                    assert b.name in [x.name for x in k.buffers()], (name, g.key, b.name, k.name)
                for n in b.fx_nodes():
                    seen["fx"] += 1
                    assert n.stage == "post_grad" and b.name in [x.name for x in n.buffers()], (name, b.name, n.name)
                sn, fn = b.scheduler_node(), b.fused_node()
                if sn is not None:
                    seen["sched"] += 1
                    assert b.name in [x.name for x in sn.buffers()] and not sn.fused
                    if fn is not None:
                        assert fn.fused and sn.name in fn.members and sn.fused_node() == fn
                c = b.call()
                if c is not None and g.wrapper:
                    seen["call"] += 1
                    assert c.kernel() in b.kernels()
                    stem = c.name.split("#")[0].rsplit(".", 1)[-1]
                    assert c.line is not None and stem in g.wrapper.split("\n")[c.line - 1], (name, b.name, c)
                for kname, ranges in b.kernel_lines().items():
                    seen["lines"] += 1
                    k = g.kernel(kname)
                    n_lines = len(k.source.split("\n"))
                    assert all(1 <= a <= e <= n_lines for a, e in ranges)
                    assert all(k.buffer_at(a) is not None for a, _ in ranges)  # and back from a kernel line
                    assert set(k.lines_of(b.name)) == {i for a, e in ranges for i in range(a, e + 1)}
                    assert [ln for ln, _ in b.source_lines(kname)] == k.lines_of(b.name)
                for line in b.user_lines():
                    seen["user"] += 1
                    assert b in g.buffers_at_user_line(line)  # and back from a user line
            for k in g.kernels:
                for sn in k.scheduler_nodes():
                    assert k.name in [x.name for x in sn.kernels()], (name, k.name, sn.name)
            for n in g.post_grad_nodes:
                for d in n.dynamo_nodes():
                    assert d.stage == "dynamo" and n in d.post_grad_nodes(), (name, g.key, n.name, d.name)
            for r in g.kernel_runs():
                seen["run"] += 1
                assert r.kernel() is not None and r in r.kernel().runs(), (name, g.key, r.name)
                assert r.median_ms is None or r.median_ms >= 0
                assert (r.median_ms is None) == bool(r.not_timed) or r.median_ms is not None
    assert all(v > 20 for v in seen.values()), seen


def test_one_buffer_in_full_on_the_ledger_fixture(sessions):
    g = sessions["ledger.jsonl"].graph("[0/0]")  # a compile id alone names the one graph
    b = g.buffer("buf0")
    assert (b.ir_type, b.kind, b.operation) == ("ComputedBuffer", "Reduction", "op0")
    assert [n.name for n in b.fx_nodes()] == ["sum_1"] and [n.name for n in b.dynamo_nodes()] == ["a"]
    assert b.scheduler_node().name == "op0" and b.fused_node().name == "op0_op1"
    k = b.kernel()
    assert k.name == "cpp_fused_div_sum_0" and k.backend == "cpp"
    assert b.call().line == 145 and g.wrapper.split("\n")[144].lstrip().startswith("cpp_fused_div_sum_0(")
    assert b.kernel_lines() == {"cpp_fused_div_sum_0": [(29, 29), (37, 37)]}
    assert "out_ptr0" in dict(b.source_lines())[29]
    assert [u.rsplit("/", 1)[-1] for u in b.user_lines()] == ["ledger_small.py:9"]
    assert sorted(k.user_lines().values()) == [0.5, 0.5]
    # runs, roofline and ledger rows, each figure with where it came from
    (run,) = k.runs()
    assert run.call == 1 and 0 < run.median_ms < 1
    # this recording's rounds disagreed (a loaded 2-core box): every time of it says it cannot be trusted
    assert not run.reliable and "not reliable" in run.unreliable
    assert b.call().run() == run
    (roof,) = k.roofline()
    assert roof.measured_ms == run.median_ms and roof.bw_source and roof.graph == g.key
    rows = k.ledger_rows()
    assert rows and all((g.key, k.name) in [tuple(t) for t in r.targets] for r in rows)
    # pane 4's f, from the library: op0 and op1 were fused, the mm is a library call never fused
    assert g.scheduler_node("op0").fused_with("op1") and not g.scheduler_node("op0").fused_with("op2")
    answer = g.fusion_pair("op0_op1", "op2")
    assert answer.startswith("# op0_op1 and op2: not fused") and "op2 is a library call" in answer
    # LoopBodies and readable code
    (lb,) = [x for x in g.loop_bodies if x.name == "op0"]
    assert lb.scheduler_node().name == "op0" and [x.name for x in lb.buffers()] == ["buf0"] and lb.var_ranges
    assert "def forward" in g.code("dynamo") and "def forward" in g.code("post_grad") and g.code("codegen") == g.wrapper
    assert g.aot_graphs
    mm = g.kernel("extern_kernels.mm#0")
    assert mm.backend == "extern" and mm.roofline()[0].bound == "compute"


def test_a_lazily_read_session_is_the_same(sessions):
    lazy = session.load(os.path.join(FIX, "gpu_attention.jsonl"), lazy=True)  # large stops parsed when looked at
    full = sessions["gpu_attention.jsonl"]
    for a, b in zip(lazy.graphs, full.graphs, strict=True):
        assert a.key == b.key and [k.name for k in a.kernels] == [k.name for k in b.kernels]
        assert [x.name for x in a.buffers] == [x.name for x in b.buffers] and a.wrapper == b.wrapper


def test_subgraphs_parts_and_variants(sessions):
    s = sessions["subgraphs_cond.jsonl"]
    top = s.graph("[0/0] inference")
    assert [g.subgraph for g in top.subgraphs] == ["true_graph_0", "false_graph_0"]
    assert all(g.parent is top for g in top.subgraphs) and top.parent is None and top.parts == [top]
    w = sessions["whatif_dynamic.jsonl"]
    v = w.graph("[0/0] inference · aggressive_fusion=True")
    assert v.variant == "aggressive_fusion=True" and v.kind == "inference" and v.part is None
    r1 = sessions["ranks_r1.jsonl"]
    assert r1.graph("[2/1]").compile_id == "[2/1]"


def test_errors_say_what_is_wrong(sessions, tmp_path):
    s = sessions["demo.jsonl"]
    with pytest.raises(KeyError, match=r"no graph '\[9/9\] forward' in demo.jsonl: \[0/0\] forward"):
        s.graph("[9/9] forward")
    assert s.graph("[9/9] forward", None) is None
    with pytest.raises(ValueError, match="unknown stage 'ir'"):
        s.graphs[0].stop("ir")
    with pytest.raises(FileNotFoundError):
        session.load(str(tmp_path / "missing.jsonl"))
    with pytest.raises(IsADirectoryError):
        session.load(str(tmp_path))
    (tmp_path / "x.jsonl").write_text('{"type": "nothing"}\n')
    with pytest.raises(ValueError):
        session.load(str(tmp_path / "x.jsonl"))
    # a graph whose rank died after lowering: no kernels, buffers with no kernel, nothing raised
    e = sessions["ranks_r1_died.jsonl"].graph("[0/0] backward")
    assert e.stages == ["dynamo", "aot", "lowering"] and e.kernels == [] and len(e.buffers) == 7
    assert all(b.kernel() is None and b.call() is None for b in e.buffers)


def test_diffs_of_graphs_and_sessions(sessions):
    rec = sessions["diff_recompile.jsonl"]
    (d,) = rec.recompiles()
    assert isinstance(d, GraphDiff) and d.level("why").changed and d.level("dynamo").changed
    assert "[0/1]" in render(d)
    assert session.diff_graphs(rec.graph("[0/0]"), rec.graph("[0/1]")).level("why").changed
    pairs = sessions["diff_config_a.jsonl"].diff(sessions["diff_config_b.jsonl"])
    assert [(a, b) for a, b, _, _ in pairs] == [("[0/0] inference", "[0/0] inference")]
    assert pairs[0][3].changed_levels  # the configs differ, so does the compile


def test_a_job_and_its_ranks_compared():
    j = session.load_job(os.path.join(FIX, "ranks_ddp.job.json"))
    assert sorted(j.ranks) == [0, 1] and all(isinstance(s, session.Session) for s in j.ranks.values())
    assert [g.key for g in j.ranks[1].graphs][-1] == "[0/1] backward"
    c = j.compare()
    assert isinstance(c, RankComparison) and "rank" in ranks_text(c)
    with pytest.raises((OSError, ValueError)):
        session.load_job(os.path.join(FIX, "demo.jsonl"))


def test_rich_renders_graphs_buffers_kernels_and_diffs(sessions):
    from rich.console import Console

    con = Console(file=io.StringIO(), width=140, force_terminal=False, color_system=None)
    g = sessions["ledger.jsonl"].graphs[0]
    con.print(g.session, g, g.buffer("buf0"), g.kernel("cpp_fused_div_sum_0"), g.fx_node("sum_1"))
    con.print(*sessions["diff_recompile.jsonl"].recompiles())
    out = con.file.getvalue()
    assert "[0/0] inference" in out and "cpp_fused_div_sum_0" in out and "extern_kernels.mm#0" in out
    marked = [ln for ln in out.split("\n") if "❱" in ln]
    assert any("❱ 29 " in ln and "out_ptr0" in ln for ln in marked) and any("❱ 37 " in ln for ln in marked)
    assert "[s77, 64]" in out  # a symbolic shape, shown as text, not taken for Rich markup
    assert "op0_op1" in out and "call 1, wrapper line 145" in out


def test_the_api_needs_neither_textual_nor_torch():
    code = ("import sys\nfor m in ('torch', 'textual', 'triton'): sys.modules[m] = None\n"
            "from inductor_step import session\n"
            "s = session.load('tests/fixtures/gpu_attention.jsonl')\n"
            "k = s.graphs[0].kernels[0]\n"
            "print(len(s.graphs), k.backend, len(k.runs()), len(s.roofline_rows()) > 0)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["3", "triton", "1", "True"]
