"""The ledger: the roofline per kernel, wasted time by user line and missed fusions priced,
on a real timed CPU compile (tests/fixtures/ledger.jsonl: tests/scripts/ledger_small.py recorded with
``--headless --run``), through the keys a person presses, in REPORT.md and after ``--headless --run``.
No torch: the occupancy arithmetic, the roofs measured here and the ``gpu``-marked checks on real models are
tests/tracer/test_ledger_roofs.py.

The expectations come from outside the ledger: the script's own shapes (a 512x256 @ 256x256 float32
matmul: 2*512*256*256 FLOPs), the wrapper's call arguments (which buffers a kernel is passed), the
run's own kernel sum, and Inductor's fusion log as recorded.
"""

from __future__ import annotations

import asyncio
import threading
import os

import pytest

from inductor_step.session.format import read_session
from inductor_step.session import ledger
from inductor_step.session.store import Store

from conftest import wait_for

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE = os.path.join(HERE, "fixtures", "ledger.jsonl")
DEMO = os.path.join(HERE, "fixtures", "demo.jsonl")
GRAPH = "[0/0] inference"
REL = 1e-9


@pytest.fixture(scope="module")
def session() -> Store:
    return Store.of(list(read_session(FIXTURE)))


# ----------------------------------------------------------------------------- roofline per kernel

def test_every_kernel_is_priced_with_measured_roofs_and_wasted_plus_roofline_is_the_kernel_sum(session):
    run = session.runs[GRAPH]
    rows = ledger.roofline_rows(session)
    assert len(rows) == len(run["kernels"]) == 3
    for r in rows:
        assert r.roofline_ms is not None, r.missing
        assert r.bw_source.startswith("measured on this machine"), r.bw_source
        assert r.wasted_ms + r.roofline_ms == pytest.approx(r.measured_ms, rel=REL)
        assert r.roofline_ms == pytest.approx(max(t for t in (r.memory_ms, r.compute_ms) if t is not None))
        assert r.pct_of_roof == pytest.approx(100 * r.roofline_ms / r.measured_ms)
    total = sum(r.wasted_ms + r.roofline_ms for r in rows)
    assert total == pytest.approx(run["kernel_sum_ms"], rel=1e-9)
    # most wasted first
    assert [r.wasted_ms for r in rows] == sorted((r.wasted_ms for r in rows), reverse=True)


def test_the_matmul_has_its_flops_from_its_shapes_and_is_bound_by_the_measured_matmul_roof(session):
    mm = next(r for r in ledger.roofline_rows(session) if r.name.startswith("extern_kernels.mm"))
    assert mm.flops == 2 * 512 * 256 * 256  # (512 x 256) @ (256 x 256), the script's shapes
    roofs = session.runs[GRAPH]["roofs"]
    peak = roofs["compute_tflops"]["float32"]["measured"]["value"]
    # its 786 KB of operands fit the cache-resident copies: held to the fastest of them, not DRAM's
    ladder = roofs["memory_ladder"]
    assert mm.gb * 1e9 == pytest.approx((512 * 256 + 256 * 256 + 512 * 256) * 4)
    assert mm.gb * 1e9 <= ladder[-2]["bytes"]
    bw = max(e["value"] for e in ladder[:-1])
    assert mm.bw_gbps == bw and "cache-resident" in mm.bw_source
    assert mm.compute_ms == pytest.approx(mm.flops / (peak * 1e12) * 1e3)
    assert mm.memory_ms == pytest.approx(mm.gb / bw * 1e3)
    assert mm.intensity == pytest.approx(mm.flops / (mm.gb * 1e9))
    assert mm.bound == ("compute" if mm.compute_ms >= mm.memory_ms else "memory")
    # generated kernels: FLOPs counted from their LoopBodies, against the float32 roof. x.sum(1) and x / a:
    # one op per element of the 512x256 x each; relu(y) * a: two per element of y
    by = {r.name: r for r in ledger.roofline_rows(session)}
    assert by["cpp_fused_div_sum_0"].flops == 2 * 512 * 256
    assert by["cpp_fused_mul_relu_1"].flops == 2 * 512 * 256
    for name in ("cpp_fused_div_sum_0", "cpp_fused_mul_relu_1"):
        r = by[name]
        assert "LoopBodies" in r.flops_source and r.tflops_peak == peak and r.tflops_source.startswith("float32")
        assert r.bound == ("compute" if r.compute_ms >= r.memory_ms else "memory")


def test_a_session_without_roofs_says_why_each_kernel_has_no_roofline():
    """The demo fixture was recorded before roofs: no number is guessed."""
    rows = ledger.roofline_rows(Store.of(list(read_session(DEMO))))
    assert rows and all(r.roofline_ms is None and r.wasted_ms is None for r in rows)
    assert all("no bandwidth roof" in r.missing for r in rows)


def test_a_kernel_faster_than_its_roof_is_flagged_not_clamped():
    run = {"roofs": {"memory_gbps": {"measured": {"value": 10.0, "source": "measured"}}}}
    r = ledger.kernel_roofline(run, {"name": "k", "median_ms": 0.001, "gb": 1e-4, "gb_source": "tensors in full"})
    assert r.roofline_ms == pytest.approx(0.01) and r.wasted_ms == pytest.approx(-0.009)
    assert r.pct_of_roof == pytest.approx(1000.0) and "tensors in full" in r.over_roof


# ----------------------------------------------------------------------------- by user line

def test_wasted_time_by_line_adds_up_and_splits_a_kernel_over_its_nodes_lines(session):
    lines = ledger.line_rows(session)
    by = {r.line.rsplit("/", 1)[-1]: r for r in lines}
    # line 9 (x.sum), 10 ((x / a) @ w), 11 (relu(y) * a): the script's three lines
    assert set(by) == {"ledger_small.py:9", "ledger_small.py:10", "ledger_small.py:11"}
    rows = ledger.roofline_rows(session)
    assert sum(r.measured_ms for r in lines) == pytest.approx(sum(r.measured_ms for r in rows))
    assert sum(r.wasted_ms for r in lines) == pytest.approx(sum(r.wasted_ms for r in rows))
    # cpp_fused_div_sum_0 holds sum_1 (line 9) and div (line 10): half of it goes to each
    div_sum = next(r for r in rows if r.name == "cpp_fused_div_sum_0")
    links = session.links(GRAPH)
    nodes = links["kernels"]["cpp_fused_div_sum_0"]["post_grad_nodes"]
    assert sorted(links["fx_nodes"][n]["user_line"].rsplit(":", 1)[1] for n in nodes) == ["10", "9"]
    assert by["ledger_small.py:9"].measured_ms == pytest.approx(div_sum.measured_ms / 2)
    # eager: the post-grad nodes of each line, run alone (the run's eager_nodes_ms, by node order and target)
    run = session.runs[GRAPH]
    post = [n for n in session.stop_for(GRAPH, "aot")["post_grad"]["nodes"] if n["op"] == "call_function"]
    assert len(post) == len(run["eager_nodes_ms"]) == 5  # sum, div, mm, relu, mul
    eager = dict(zip((n["name"] for n in post), run["eager_nodes_ms"].values()))
    for r in lines:
        want = sum(ms for n, ms in eager.items() if links["fx_nodes"][n]["user_line"] == r.line)
        assert r.eager_ms == pytest.approx(want) and r.eager_missing is None
        assert r.slower_than_eager == (r.measured_ms > ledger.EAGER_MARGIN * r.eager_ms)


# ----------------------------------------------------------------------------- missed fusions

def test_missed_fusions_are_the_buffers_the_wrapper_passes_from_one_kernel_to_another(session):
    rows = ledger.fusion_rows(session)
    cg = session.stop_for(GRAPH, "codegen")
    # the wrapper's call arguments, and the buffers a kernel writes in place of another (buf3 = buf2; # reuse)
    args = {k["name"]: set(a.replace("out=", "").split("(")[-1].split(",")[0] for call in k["calls"] for a in call)
            | {old for new, old in (k.get("reuses") or {}).items() if any(new in a for call in k["calls"] for a in call)}
            for k in cg["kernels"]}
    for r in rows:  # the wrapper passes the buffer (or its storage) to the consumer, and the producer writes it
        assert r.buffer in args[r.consumer], (r.buffer, args[r.consumer])
        assert r.buffer in cg["links"]["kernels"][r.producer]["buffers"]
    pairs = {(r.buffer, r.producer, r.consumer) for r in rows}
    mm = next(k["name"] for k in cg["kernels"] if k["name"].startswith("extern_kernels.mm"))
    assert pairs == {("buf0", "cpp_fused_div_sum_0", "cpp_fused_mul_relu_1"),
                     ("buf1", "cpp_fused_div_sum_0", mm), ("buf2", mm, "cpp_fused_mul_relu_1")}
    # the fusion Inductor could have made first, then the library-call pairs (never fusable), costliest first
    assert [r.library for r in rows] == [False, True, True]
    lib = [r.cost_ms for r in rows if r.library]
    assert lib == sorted(lib, reverse=True)


def test_a_missed_fusion_is_priced_from_the_ir_buffer_and_carries_inductors_reason(session):
    r = next(r for r in ledger.fusion_rows(session) if r.buffer == "buf0")
    buf = next(b for b in session.stop_for(GRAPH, "lowering")["buffers"] if b["name"] == "buf0")
    assert buf["size"] == ["512", "1"] and buf["dtype"] == "float32"  # a = x.sum(1, keepdim=True)
    assert r.bytes == 2 * 512 * 4
    assert r.cost_ms == pytest.approx(r.bytes / (r.bw_gbps * 1e9) * 1e3) and r.bw_source.startswith("measured")
    log = session.stop_for(GRAPH, "scheduling")["fusion_log"]
    assert r.log and all(line in [x.strip() for x in log] for line in r.log)
    assert "intermediate nodes" in r.verdict
    assert r.producer_lines[0].endswith("ledger_small.py:9") and r.consumer_lines[0].endswith("ledger_small.py:11")
    ext = next(r for r in ledger.fusion_rows(session) if r.buffer == "buf2")
    assert ext.verdict.startswith("never fusable") and "library call" in ext.verdict and not ext.log


# ----------------------------------------------------------------------------- ncu (no GPU needed)

def test_ncu_says_in_one_line_why_it_cannot_run_here():
    none = lambda _name: None  # noqa: E731
    found = lambda _name: "/usr/bin/ncu"  # noqa: E731
    assert "not installed" in ledger.ncu_command("triton_poi_fused_0", "cuda", "s.py", [], None, which=none)[1]
    assert "ran on cpu" in ledger.ncu_command("cpp_fused_0", "cpu", "s.py", [], None, which=found)[1]
    assert "library call" in ledger.ncu_command("extern_kernels.mm#0", "cuda", "s.py", [], None, which=found)[1]
    cmd, _ = ledger.ncu_command("triton_poi_fused_0", "cuda", "s.py", ["--x"], "py", which=found)
    assert cmd[:1] == ["/usr/bin/ncu"] and cmd[cmd.index("--kernel-name") + 1] == "triton_poi_fused_0"
    assert cmd[-3:] == ["py", "s.py", "--x"] and "SpeedOfLight" in cmd
    csv = ('"ID","Process ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"\n'
           '"0","1","triton_poi_fused_0","GPU Speed Of Light Throughput","DRAM Throughput","%","91.2"\n'
           '"0","1","triton_poi_fused_0","GPU Speed Of Light Throughput","Compute (SM) Throughput","%","12.5"\n')
    assert ledger.ncu_sol(csv) == {"DRAM Throughput": ("91.2", "%"), "Compute (SM) Throughput": ("12.5", "%")}


# ----------------------------------------------------------------------------- the pane, through keys

def _app(path: str = FIXTURE):
    from inductor_step.tui.app import StepApp

    return StepApp(messages=list(read_session(path)), session_path=path)


def _drive(app, steps, size=(120, 40)):
    async def main():
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await steps(app, pilot)
    asyncio.run(main())


def _row(app, stage):
    t = app.query_one(f"#table-{stage}")
    return [str(c) for c in t.get_row_at(t.cursor_row)]


def test_pane_9_lists_the_three_ledgers_and_enter_opens_the_kernel_in_pane_6(session):
    app = _app()
    seen = {}

    async def steps(app, pilot):
        await pilot.press("9")
        await pilot.pause()
        t = app.query_one("#table-ledger")
        seen["first"] = [str(t.get_row_at(i)[0]) for i in range(t.row_count)]
        await pilot.press("down", "down")  # past the NOT RELIABLE head: the most wasted kernel
        await pilot.pause()
        seen["detail"] = app.query_one("#code-ledger").text
        seen["kernel"] = _row(app, "ledger")[0]
        await pilot.press("enter")
        await pilot.pause()
        seen["stage"], seen["codegen"] = app.view.stage, _row(app, "codegen")[0]

    _drive(app, steps)
    heads = [x for x in seen["first"] if x.startswith(("ROOFLINE", "WASTED", "MISSED", "NEVER", "! TIMES"))]
    # the run's verdict above every ranking; the library-call pairs apart from the fusable one
    assert heads == ["! TIMES NOT RELIABLE", "ROOFLINE PER KERNEL", "WASTED BY USER LINE", "MISSED FUSIONS",
                     "NEVER FUSABLE AS COMPILED"]
    top = ledger.roofline_rows(session)[0]
    assert seen["kernel"] == top.name
    assert f"wasted            {top.wasted_ms:.4f} ms" in seen["detail"] and "measured on this machine" in seen["detail"]
    assert seen["stage"] == "codegen" and seen["codegen"] == top.name


def test_enter_on_a_missed_fusion_opens_the_pairs_why_not_fused_view_in_pane_4():
    app = _app()
    seen = {}

    async def steps(app, pilot):
        await pilot.press("9")
        await pilot.pause()
        t = app.query_one("#table-ledger")
        row = next(i for i in range(t.row_count) if str(t.get_row_at(i)[0]).startswith("buf0:"))
        t.move_cursor(row=row)
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause()
        seen["stage"], seen["code"] = app.view.stage, app.query_one("#code-scheduling").text

    _drive(app, steps)
    assert seen["stage"] == "scheduling"
    assert seen["code"].startswith("# op0_op1 and op3: not fused")
    assert "cannot fuse op0_op1 with op3: intermediate nodes between node1 & node2" in seen["code"]


def test_u_says_why_ncu_cannot_run_and_a_session_without_timing_says_how_to_get_one():
    seen = {}

    async def steps(app, pilot):
        await pilot.press("9")
        await pilot.pause()
        await pilot.press("down", "down", "u")
        await pilot.pause()
        seen["status"] = str(app.query_one("#status").content)

    _drive(_app(), steps)
    assert "ncu:" in seen["status"] and ("not installed" in seen["status"] or "ran on cpu" in seen["status"])

    async def empty(app, pilot):
        await pilot.press("9")
        await pilot.pause()
        seen["empty"] = app.query_one("#code-ledger").text

    _drive(_app(os.path.join(HERE, "fixtures", "graph_breaks.jsonl")), empty)
    assert "no timing" in seen["empty"] and "--run" in seen["empty"]


# ----------------------------------------------------------------------------- report and headless

def test_report_md_has_the_top_of_each_ledger(tmp_path):
    from inductor_step.session.report import build_report

    out = build_report(FIXTURE, str(tmp_path / "bundle"))
    text = open(os.path.join(out, "REPORT.md"), encoding="utf-8").read()
    for head in ("Where the time goes", "Roofline per kernel", "Wasted time by user line", "Missed fusions Inductor could have made, priced",
                 "Never fusable as compiled (2)", "times NOT RELIABLE"):
        assert head in text
    assert "intermediate nodes between node1 & node2" in text and "`cpp_fused_div_sum_0`" in text


def test_headless_summary_is_printed_from_the_recorded_session(session, capsys):
    from inductor_step.cli.headless import _print_ledger

    _print_ledger(FIXTURE)
    out = capsys.readouterr().out
    assert out.startswith("ledger: 3 kernel calls") and "most wasted user lines" in out
    assert "buf0: cpp_fused_div_sum_0 -> cpp_fused_mul_relu_1" in out


def test_eager_node_times_match_the_post_grad_nodes_through_a_retraced_graph():
    """The timing process gets the post-grad graph re-traced (torch.save renames ``mm`` to ``mm_default``,
    ``getitem`` stays ``getitem``): matched by order and target, and refused when they disagree."""
    post = {"nodes": [{"name": "x", "op": "placeholder"},
                      {"name": "var_mean", "op": "call_function", "target": "aten.var_mean.correction"},
                      {"name": "getitem_1", "op": "call_function", "target": "_operator.getitem"},
                      {"name": "mm", "op": "call_function", "target": "aten.mm.default"}]}

    class S:
        def stop_for(self, key, stage):
            return {"post_grad": post} if stage == "aot" else None

    run = {"eager_nodes_ms": {"var_mean_correction": 0.3, "getitem": 0.01, "mm_default": 0.2}, "eager_nodes": "how"}
    got, how = ledger.eager_by_node(S(), "[0/0] forward", run)
    assert got == {"var_mean": 0.3, "getitem_1": 0.01, "mm": 0.2} and "by order and target" in how
    # a node the timed graph does not have (Inductor's last passes changed it): the others keep their times
    bad = {"eager_nodes_ms": {"var_mean_correction": 0.3, "getitem": 0.01, "addmm_default": 0.2}}
    got, how = ledger.eager_by_node(S(), "[0/0] forward", bad)
    assert got == {"var_mean": 0.3, "getitem_1": 0.01} and "2 of 3 post-grad call nodes matched" in how
    worse = {"eager_nodes_ms": {"sum_dim": 0.3, "addmm_default": 0.2}}
    assert ledger.eager_by_node(S(), "[0/0] forward", worse)[0] is None
    assert ledger.eager_by_node(S(), "[0/0] forward", {"eager_nodes": "not measured: why"}) == (None, "not measured: why")


def test_ctrl_p_goes_to_the_ledger():
    seen = {}

    async def steps(app, pilot):
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Go to stage: 9 Ledger")
        await wait_for(pilot, lambda: any("9 Ledger" in str(o.prompt) for q in app.screen.query("CommandList")
                                          for o in q.options), timeout=10)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.view.stage == "ledger", timeout=10)
        seen["stage"] = app.view.stage
        seen["rows"] = app.query_one("#table-ledger").row_count

    _drive(_app(), steps)
    # five heads (NOT RELIABLE, the three ledgers, never fusable), 3 kernels, 3 lines, 3 fusions
    assert seen["stage"] == "ledger" and seen["rows"] == 5 + 3 + 3 + 3


def test_a_large_timing_is_priced_in_a_thread_and_the_pane_fills_when_done(monkeypatch):
    from inductor_step.tui.panes.ledger import LedgerPane

    monkeypatch.setattr(LedgerPane, "SYNC_MAX_KERNELS", 0)
    real = LedgerPane._compute

    release = threading.Event()

    def slow(self):  # as a 7,796-buffer graph's ledgers take about a second: done once the test has looked
        release.wait(10)
        return real(self)
    monkeypatch.setattr(LedgerPane, "_compute", slow)
    seen = {}

    async def steps(app, pilot):
        await pilot.press("9")
        seen["first"] = app.query_one("#code-ledger").text
        release.set()
        await wait_for(pilot, lambda: app.query_one("#table-ledger").row_count, timeout=10)
        seen["rows"] = app.query_one("#table-ledger").row_count

    _drive(_app(), steps)
    assert seen["first"].startswith("# computing the ledgers") and seen["rows"] == 14


def test_eager_times_by_line_on_a_session_recorded_on_the_gpu_box():
    """A nanoGPT training session recorded on an H100 (torch 2.11): the timing process ran the graph
    re-traced (nodes named add_tensor_1, not add_1) and before Inductor's last passes (3 and 8 nodes
    fewer), so names and counts differ; every user line of the ledger still gets its eager time."""
    from inductor_step.session.format import read_session
    from inductor_step.session import ledger
    from inductor_step.session.store import Store

    path = os.path.join(HERE, "fixtures", "gpu_nanogpt.jsonl")
    s = Store.of(list(read_session(path)))
    for key, run in s.runs.items():
        eager, how = ledger.eager_by_node(s, key, run)
        assert eager is not None and len(eager) >= 0.95 * len(run["eager_nodes_ms"]), (key, how)
    text = ledger.summary(s).split("most wasted user lines")[1].split("missed fusions")[0]
    assert "eager -" not in text and "ms eager" in text, text
