"""Diff two compiles level by level, on sessions recorded from real compiles
(tests/make_fixtures.py):

- diff_recompile.jsonl: rms_norm called with 8 then 16 rows: [0/1] recompiles with a symbolic row count
  (timed with --run);
- diff_dtype.jsonl: the same function called with float32 then float64 inputs;
- diff_config_a.jsonl / diff_config_b.jsonl: one script, the second with ``torch._inductor.config.max_fusion_size
  = 1`` (no two scheduler nodes may fuse), both timed.

The tests assert what the diff reports (the failed guard and the user line that installed it, a size
that became symbolic, the buffers and kernels that changed, a fused group split), read from the
sessions themselves where the compile decides the names (the symbolic size, the kernel names).
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys

import pytest

from inductor_step.session.format import read_session
from inductor_step.session import diff
from inductor_step.tui.app import StepApp
from inductor_step.cli.main import main
from inductor_step.tui.screens.diff import DiffScreen
from inductor_step.session.store import load_session

from conftest import wait_for

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(HERE)
FIX = os.path.join(HERE, "fixtures")
RECOMPILE = os.path.join(FIX, "diff_recompile.jsonl")
DTYPE = os.path.join(FIX, "diff_dtype.jsonl")
CONFIG_A = os.path.join(FIX, "diff_config_a.jsonl")
CONFIG_B = os.path.join(FIX, "diff_config_b.jsonl")


def session(path: str):
    return diff.session_of(load_session(path))


def recompile_diff(path: str) -> tuple[diff.GraphDiff, object]:
    s = session(path)
    assert s.graphs == ["[0/0] inference", "[0/1] inference"]
    assert diff.default_partner(s.graphs, "[0/1] inference") == "[0/0] inference"
    return diff.diff_graphs(diff.DiffSide.from_session(s, "[0/0] inference"),
                            diff.DiffSide.from_session(s, "[0/1] inference")), s


@pytest.fixture(scope="module")
def recompile():
    return recompile_diff(RECOMPILE)


@pytest.fixture(scope="module")
def dtype():
    return recompile_diff(DTYPE)


@pytest.fixture(scope="module")
def config():
    return diff.diff_sessions(session(CONFIG_A), session(CONFIG_B), "a", "b")


# ---------------------------------------------------------------- (a) a dynamic-shape recompile

def test_recompile_names_the_failed_guard_and_the_user_line_that_installed_it(recompile):
    d, s = recompile
    why = d.level("why")
    assert why.changed
    (c,) = why.changes
    assert "guard of [0/0] failed" in c.what and "size mismatch at index 0. expected 8, actual 16" in c.what
    # the guard is [0/0]'s TENSOR_MATCH on x (its check pins size=[8, 64]) and Dynamo's provenance names the line
    assert "TENSOR_MATCH check_tensor(L['x']" in c.text and "size=[8, 64]" in c.text
    assert re.search(r"installed by: \S*diff_recompile\.py:8 in rms_norm: return x \* torch\.rsqrt", c.text)


def test_recompile_reports_the_size_that_became_symbolic(recompile):
    d, s = recompile
    sym = next(n["value"] for n in s.stop_for("[0/1] inference", "dynamo")["graph"]["nodes"]
               if n.get("dtype") == "SymInt")
    assert f"a size became symbolic: L_x_.size()[0] was 8, now {sym}" in d.level("why").notes
    dyn = d.level("dynamo")
    assert [(c.kind, c.b) for c in dyn.changes if c.kind != "changed"] == [("added", sym)]
    x = next(c for c in dyn.changes if c.b == "l_x_")
    assert x.what == f"shape [8, 64] -> [{sym}, 64]"


def test_recompile_aligns_post_grad_nodes_by_structure_not_by_name(recompile):
    """The recompile adds a SymInt input arg0_1, so the tensor input is renamed arg0_1 -> arg1_1: aligned
    by (op, target) it is the same input with a new shape, and the SymInt is the one node added."""
    d, _s = recompile
    pg = d.level("post_grad")
    added = [c for c in pg.changes if c.kind == "added"]
    assert [(c.b, c.what.split()[-1]) for c in added] == [("arg0_1", "SymInt")]
    assert not [c for c in pg.changes if c.kind == "removed"]
    renamed = next(c for c in pg.changes if c.a == "arg0_1" and c.kind == "changed")
    assert renamed.b == "arg1_1" and "shape [8, 64] ->" in renamed.what
    # the AOT graph's text, node numbering ignored: the new SymInt input and the shapes
    aot = next(c for c in pg.changes if c.b == "AOT inference graph")
    assert re.search(r'^\+\s+arg0_1: "Sym\(s\d+\)"', aot.text, re.M)
    assert re.search(r'^-\s+pow_#: "f32\[8, 64\]', aot.text, re.M)


def test_recompile_buffers_scheduler_and_kernel_changes(recompile):
    d, s = recompile
    buffers = {c.b: c.what for c in d.level("buffers").changes}
    assert set(buffers) == {b["name"] for b in s.stop_for("[0/1] inference", "lowering")["buffers"]}
    assert all("ranges [8" in w for w in buffers.values())
    sched = d.level("scheduling").changes
    assert len(sched) == 1 and "loop group" in sched[0].what and "((8,), (64,))" in sched[0].what
    (k,) = d.level("kernels").changes
    name_b = s.stop_for("[0/1] inference", "codegen")["kernels"][0]["name"]
    assert k.kind == "changed" and k.b == name_b
    # the unified diff shows the loop bound that became a kernel argument
    assert k.text.startswith(f"--- A {k.a}\n+++ B {k.b}")
    assert re.search(r"^-.*x0<static_cast<int64_t>\(8L\)", k.text, re.M)
    assert re.search(r"^\+.*const int64_t ks0", k.text, re.M)


def test_recompile_timings_per_graph_and_per_kernel_with_deltas(recompile):
    d, s = recompile
    t = d.level("timing")
    assert not t.missing
    ra, rb = s.runs["[0/0] inference"], s.runs["[0/1] inference"]
    note = next(n for n in t.notes if n.startswith("compiled graph"))
    assert f"{ra['compiled_ms']:.4f} -> {rb['compiled_ms']:.4f} ms" in note
    (k,) = t.changes
    assert k.a == ra["kernels"][0]["name"] and f"{rb['kernels'][0]['median_ms'] - ra['kernels'][0]['median_ms']:+.4f} ms" in k.what


# ---------------------------------------------------------------- (b) a dtype change

def test_dtype_change_is_named_at_every_level_and_the_scheduler_did_not_change(dtype):
    d, _s = dtype
    (c,) = d.level("why").changes
    assert "dtype mismatch. expected Float, actual Double" in c.what
    assert "installed by:" in c.text and "diff_dtype.py:8 in gelu_norm" in c.text
    assert "a dtype changed: L_x_ was float32, now float64" in d.level("why").notes
    assert all(ch.what == "dtype float32 -> float64" for ch in d.level("dynamo").changes)
    assert {ch.b for ch in d.level("buffers").changes} == {"buf0", "buf1"}
    assert all("dtype float32 -> float64" in ch.what for ch in d.level("buffers").changes)
    assert not d.level("scheduling").changed
    (k,) = d.level("kernels").changes
    assert re.search(r"^\+.*double", k.text, re.M)
    assert d.level("timing").missing.startswith("A was not timed")
    text = diff.render(d)
    assert "no change: scheduler nodes" in text


# ---------------------------------------------------------------- (c) a config change between two sessions

def test_config_change_pairs_the_graphs_and_reports_the_fused_group_split(config):
    (ka, kb, how, d), = config
    assert (ka, kb, how) == ("[0/0] inference", "[0/0] inference", "same compile id and kind")
    assert d is not None
    for lv in ("dynamo", "post_grad", "buffers"):
        assert not d.level(lv).changed, lv
    (split,) = d.level("scheduling").changes
    after_b = [n["name"] for n in session(CONFIG_B).stop_for(kb, "scheduling")["after"]]
    assert split.what.startswith(f"fused group split: {split.a} (OuterLoopFusedSchedulerNode) is now {len(after_b)} nodes")
    assert split.b == ", ".join(after_b)
    assert d.level("kernels").changed and d.level("timing").notes


def test_diff_headless_prints_the_summary(capsys):
    assert main(["diff", "--headless", CONFIG_A, CONFIG_B]) == 0
    out = capsys.readouterr().out
    assert "[0/0] inference        <-> [0/0] inference        same compile id and kind" in out
    assert "== scheduler nodes: 1 changed ==" in out and "fused group split" in out
    assert "no change: why they differ, Dynamo graph, AOT/post-grad graphs, IR buffers" in out
    # one session given twice: its recompiles against their default partners
    assert main(["diff", "--headless", "--no-source", RECOMPILE, RECOMPILE]) == 0
    out = capsys.readouterr().out
    assert out.startswith("diff  A: [0/0] inference  ->  B: [0/1] inference")
    assert "a size became symbolic" in out and "@@" not in out


def test_diff_bad_input_is_one_line_and_status_2(capsys, tmp_path):
    assert main(["diff", "--headless", str(tmp_path / "nope.jsonl"), CONFIG_B]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"inductor-step: no such session file: {tmp_path / 'nope.jsonl'}"


def test_report_includes_the_diff(tmp_path):
    from inductor_step.cli.report import main_report

    out = tmp_path / "bundle"
    assert main_report([CONFIG_B, "--out", str(out), "--diff", CONFIG_A]) == 0
    report = (out / "REPORT.md").read_text()
    assert "## Diff against diff_config_a.jsonl" in report and "fused group split" in report
    assert "@@" not in report  # the source diffs are in DIFF.txt
    assert "@@" in (out / "DIFF.txt").read_text()


# ---------------------------------------------------------------- pairing, normalization, alignment

def test_pairing_by_content_when_compile_ids_differ():
    msgs = load_session(CONFIG_B)
    for m in msgs:
        if m.get("compile_id") == "[0/0]":
            m["compile_id"] = "[3/0]"
    pairs = diff.pair_graphs(session(CONFIG_A), diff.session_of(msgs))
    assert pairs == [("[0/0] inference", "[3/0] inference", "by content (100% of the Dynamo graph alike)")]


def test_renumbered_kernels_and_nodes_are_no_change():
    s = session(RECOMPILE)
    g = diff.DiffSide.from_session(s, "[0/0] inference")
    d = diff.diff_graphs(g, g)
    assert [lv.key for lv in d.levels if lv.changed] == []
    k = s.stop_for("[0/0] inference", "codegen")["kernels"][0]
    src = k["source"]
    renamed = dict(k, name=k["name"][:-1] + "7", source=src.replace(k["name"], k["name"][:-1] + "7"))
    assert diff.normalize_kernel(renamed) == diff.normalize_kernel(k)
    triton = {"name": "triton_poi_fused_add_0", "source": "def triton_poi_fused_add_0(in_ptr0, out_ptr0):\n"
              "    # buf3 = arg1_1 + 1\n    tl.store(out_ptr0, tl.load(in_ptr0) + 1)\n"}
    other = {"name": "triton_poi_fused_add_4", "source": triton["source"].replace("_0(", "_4(")
             .replace("buf3", "buf11").replace("arg1_1", "arg0_1")}
    assert diff.normalize_kernel(triton) == diff.normalize_kernel(other)


def test_an_inserted_node_does_not_shift_the_rest():
    nodes = session(DTYPE).stop_for("[0/0] inference", "aot")["post_grad"]["nodes"]
    extra = dict(nodes[3], name="clone", target="aten.clone.default")
    changes = diff.diff_nodes(nodes, nodes[:3] + [extra] + nodes[3:], named_inputs=False)
    assert [(c.kind, c.b) for c in changes] == [("added", "clone")]


def test_guard_list_marks_the_guard_that_failed_later():
    s = session(RECOMPILE)
    later = [s.stop_for("[0/1] inference", "dynamo")]
    text = diff.guard_list("[0/0]", s.guards["[0/0]"], later)
    lines = text.split("\n")
    assert lines[0].startswith(f"# ---- {len(diff.parse_guards(s.guards['[0/0]']))} guards of [0/0]")
    assert lines[1].startswith("# FAILED in [0/1]: TENSOR_MATCH check_tensor(L['x']")
    assert lines[2] == "#     why: tensor 'x' size mismatch at index 0. expected 8, actual 16"
    assert "diff_recompile.py:8 in rms_norm" in lines[3]
    assert sum("FAILED" in ln for ln in lines) == 1
    # the weight's guard did not fail: listed with its user line
    assert any("TENSOR_MATCH check_tensor(L['weight']" in ln and "<- " in ln and "diff_recompile.py:8" in ln
               for ln in lines)
    # a huge guard text lists the failed guards only
    big = diff.guard_list("[0/0]", s.guards["[0/0]"], later, max_chars=100)
    assert big.split("\n")[0].startswith("# ---- 1 failed guards of [0/0]")


# ---------------------------------------------------------------- the app: keys a person presses

def run_app(path, steps, size=(120, 40), **kw):
    app = StepApp(messages=list(read_session(path)), session_path=path, **kw)

    async def go():
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await steps(app, pilot)

    asyncio.run(go())
    return app


def test_d_in_the_graph_list_diffs_the_recompile_with_its_partner_and_enter_opens_the_buffer():
    seen = {}

    async def steps(app, pilot):
        await pilot.press("g", "down")  # the graph list, on [0/1]
        await pilot.pause()
        assert app.view.graph == "[0/1] inference"
        await pilot.press("d")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        seen["title"] = str(screen.query_one("#diff-title").content)
        seen["levels"] = [o.id for o in screen.query_one("#diff-levels").options]
        await pilot.press("6")
        await pilot.pause()
        seen["kernel code"] = screen.code.text
        await pilot.press("4")  # the scheduler level
        await pilot.pause()
        assert screen.level_key == "scheduling"
        await pilot.press("3", "down")  # IR buffers, the second change
        await pilot.pause()
        row = [str(c) for c in screen.table.get_row_at(screen.table.cursor_row)]
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause()
        seen["row"] = row
        seen["after"] = (type(app.screen).__name__, app.view.graph, app.view.stage, app.view.selected)
        t = app.query_one("#table-lowering")
        seen["lowering row"] = str(t.get_row_at(t.cursor_row)[0])

    run_app(RECOMPILE, steps)
    assert "A [0/0] inference  ->  B [0/1] inference" in seen["title"]
    assert seen["levels"] == ["why", "dynamo", "post_grad", "buffers", "scheduling", "kernels", "timing"]
    assert "+++ B cpp_fused" in seen["kernel code"] and "ks0" in seen["kernel code"]
    assert seen["row"][:2] == ["~", "buf1"]
    assert seen["after"] == ("MainScreen", "[0/1] inference", "lowering", "buf1")
    assert seen["lowering row"] == "buf1"


def test_unchanged_levels_are_hidden_and_their_key_says_no_change():
    seen = {}

    async def steps(app, pilot):
        await pilot.press("d")  # shown: [0/0]; its partner is the recompile [0/1]
        await pilot.pause()
        screen = app.screen
        seen["levels"] = [o.id for o in screen.query_one("#diff-levels").options]
        await pilot.press("4")
        await pilot.pause()
        seen["status"] = str(screen.query_one("#diff-status").content)
        await pilot.press("n")
        await pilot.pause()
        seen["after n"] = screen.level_key
        await pilot.press("1", "down", "enter")
        await pilot.pause()
        await pilot.pause()
        seen["open"] = (app.view.graph, app.view.stage)
        t = app.query_one("#table-dynamo")
        seen["dynamo row"] = [str(c) for c in t.get_row_at(t.cursor_row)][:2]
        await pilot.press("d", "escape")
        await pilot.pause()
        seen["back"] = type(app.screen).__name__

    run_app(DTYPE, steps)
    assert seen["levels"] == ["why", "dynamo", "post_grad", "buffers", "kernels", "timing", "_same"]
    assert seen["status"] == "4 scheduler nodes: no change"
    assert seen["after n"] == "dynamo"
    assert seen["open"] == ("[0/1] inference", "dynamo")
    assert seen["dynamo row"] == ["mean", "call_method"]
    assert seen["back"] == "MainScreen"


def test_ctrl_p_diff_with_picks_the_other_graph():
    seen = {}

    async def steps(app, pilot):
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Diff with")
        await wait_for(pilot, lambda: any("Diff with" in str(o.prompt) for q in app.screen.query("CommandList")
                                          for o in q.options), timeout=10)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen), timeout=10, seen=lambda: app.screen)
        seen["screen"] = type(app.screen).__name__
        seen["title"] = str(app.screen.query_one("#diff-title").content) if isinstance(app.screen, DiffScreen) else ""

    run_app(RECOMPILE, steps)
    assert seen["screen"] == "DiffScreen"
    assert "A [0/0] inference  ->  B [0/1] inference" in seen["title"]


def test_two_sessions_open_on_the_diff_and_enter_opens_b():
    seen = {}

    async def steps(app, pilot):
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        seen["title"] = str(screen.query_one("#diff-title").content)
        seen["levels"] = [o.id for o in screen.query_one("#diff-levels").options]
        await pilot.press("4", "enter")
        await pilot.pause()
        await pilot.pause()
        seen["open"] = (type(app.screen).__name__, app.view.graph, app.view.stage)
        t = app.query_one("#table-scheduling")
        seen["row"] = str(t.get_row_at(t.cursor_row)[0])

    run_app(CONFIG_B, steps, diff_against=(CONFIG_A, list(read_session(CONFIG_A))))
    assert "A diff_config_a.jsonl [0/0] inference  ->  B diff_config_b.jsonl [0/0] inference" in seen["title"]
    assert seen["levels"][:2] == ["scheduling", "kernels"]
    assert seen["open"] == ("MainScreen", "[0/0] inference", "scheduling")
    assert seen["row"] == "op0"


def test_dynamo_pane_lists_guards_with_their_line_and_the_one_that_failed():
    seen = {}

    async def steps(app, pilot):
        seen["00"] = app.query_one("#code-dynamo").text
        await pilot.press("g", "down", "enter")
        await pilot.pause()
        seen["01"] = app.query_one("#code-dynamo").text

    run_app(RECOMPILE, steps)
    assert "# FAILED in [0/1]: TENSOR_MATCH check_tensor(L['x']" in seen["00"]
    assert "#     why: tensor 'x' size mismatch at index 0. expected 8, actual 16" in seen["00"]
    assert "# ---- the guard tree ----" in seen["00"]
    assert "none failed in a later recompile" in seen["01"]
    assert "LAMBDA_GUARD 2 <= L['x'].size()[0]  <- " in seen["01"]


def test_diff_headless_works_without_torch():
    prog = ("import sys\n"
            "class NoTorch:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'torch' or name.startswith('torch.') or name == 'triton':\n"
            "            raise ImportError(name + ' blocked by the test')\n"
            "sys.meta_path.insert(0, NoTorch())\n"
            "from inductor_step.cli.main import main\n"
            f"rc = main(['diff', '--headless', {CONFIG_A!r}, {CONFIG_B!r}])\n"
            "print('TORCH_IMPORTED', 'torch' in sys.modules, rc)\n")
    p = subprocess.run([sys.executable, "-c", prog], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "fused group split" in p.stdout and "TORCH_IMPORTED False 0" in p.stdout


# ---------------------------------------------------------------- snapshots (pytest-textual-snapshot)

@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
@pytest.mark.parametrize("keys", [["d"], ["d", "6"]], ids=["why", "kernels"])
def test_snapshot(snap_compare, size, keys, monkeypatch):
    monkeypatch.chdir(ROOT)
    path = os.path.relpath(RECOMPILE, ROOT)
    app = StepApp(messages=list(read_session(path)), session_path=path)
    assert snap_compare(app, press=keys, terminal_size=size)
