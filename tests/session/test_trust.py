"""Trust in figures, on recorded sessions (no torch): a figure judged not reliable says so beside it in pane 7, the
ledger, the diff, the what-if lines, the headless line and REPORT.md; a variant is never its original; the
missed fusions Inductor could never make are listed apart, with the same reason as pane 4's ``f``.

Fixtures: ``ledger.jsonl`` (a CPU run whose rounds never agreed: 0.347 to 80 ms), ``demo.jsonl`` (14 library-call
pairs, settled runs), ``whatif_dynamic.jsonl`` (``tests/scripts/diff_recompile.py`` recorded with
``--headless --run --what-if aggressive_fusion=True`` on a busy 2-core box: ``[0/1]`` is dynamic, its variant
static, every run judged not reliable from its measured wait for a core, the variants timed round by round).
"""

from __future__ import annotations

import asyncio
import copy
import os

from inductor_step.session.format import read_session
from inductor_step.session import fusion_fix
from inductor_step.session import ledger
from inductor_step.session import trust
from inductor_step.session.store import Store

from conftest import wait_for

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEDGER = os.path.join(HERE, "fixtures", "ledger.jsonl")
DEMO = os.path.join(HERE, "fixtures", "demo.jsonl")
DYN = os.path.join(HERE, "fixtures", "whatif_dynamic.jsonl")
VAR = "[0/1] inference · aggressive_fusion=True"


def _session(path: str) -> Store:
    return Store.of(list(read_session(path)))


def _drive(path: str, steps, size=(120, 40)) -> None:
    from inductor_step.tui.app import StepApp

    app = StepApp(messages=list(read_session(path)), session_path=path)

    async def main():
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await steps(app, pilot)
    asyncio.run(main())


# ----------------------------------------------------------------------------- verdicts beside the figures

def test_pane_7_says_not_reliable_beside_each_figure_and_offers_to_time_again():
    seen = {}

    async def steps(app, pilot):
        await pilot.press("7")
        await wait_for(pilot, lambda: app.view.stage == "run", timeout=10)
        seen["text"] = app.query_one("#code-run").text

    _drive(LEDGER, steps)
    head = seen["text"].split("Enter on a kernel")[0]
    assert "! NOT RELIABLE:" in head and "press r to time again" in head
    assert "compiled graph   37.9932 ms  NOT RELIABLE (the rounds did not agree)" in head
    assert "speedup   1.58x  (from times not reliable)" in head


def test_pane_7_calls_the_speedup_reliable_when_only_the_kernel_times_were_not(tmp_path):
    """Llama's backward on a box where only the per-kernel timing met other processes: compiled and eager were
    judged reliable, so their ratio is too (it said "from times not reliable" of two reliable figures)."""
    import json

    msgs = list(read_session(DYN))
    for m in msgs:
        if m.get("type") == "run" and m.get("compile_id") == "[0/0]":
            for w in ("compiled", "eager"):
                m["verdicts"][w].update(reliable=True, wait_share=0.018)
            m["unreliable"] = "kernel times not reliable (other processes held the cores); press r to time again"
    path = tmp_path / "kernels_only.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in msgs))
    seen = {}

    async def steps(app, pilot):
        await pilot.press("7")
        await wait_for(pilot, lambda: app.view.stage == "run" and "speedup" in app.query_one("#code-run").text,
                       timeout=10)
        seen["text"] = app.query_one("#code-run").text

    _drive(str(path), steps)
    head = seen["text"].split("Enter on a kernel")[0]
    assert "! NOT RELIABLE: kernel times not reliable" in head
    assert "compiled graph   " in head and "(reliable: its threads waited for a core 1.8% of the time)" in head
    speedup = next(x for x in head.splitlines() if x.startswith("speedup"))
    assert "not reliable" not in speedup, speedup


def test_a_measured_verdict_names_the_wait_for_a_core_per_figure_and_per_round():
    s = _session(DYN)
    run = s.runs["[0/1] inference"]
    from inductor_step.session.text import run_summary

    text = run_summary("[0/1] inference", run)
    share = run["verdicts"]["compiled"]["wait_share"]
    assert f"NOT RELIABLE (its threads waited for a core {100 * share:.0f}% of the time)" in text
    assert "waiting for a core per round" in text and "schedstat" in text


def test_the_ledger_marks_every_ranking_from_an_unreliable_run_and_the_headless_summary_says_so():
    s = _session(LEDGER)
    lines = ledger.line_rows(s)
    assert lines and all(r.unreliable and "[0/0] inference" in r.unreliable for r in lines)
    text = ledger.summary(s)
    assert "times NOT RELIABLE for 1 of 1 timed graph(s)" in text.split("\n")[1]
    user = text.split("most wasted user lines")[1].split("missed fusions")[0]
    assert all("[timing NOT RELIABLE]" in ln for ln in user.strip().splitlines()[1:])
    # a settled session carries no such mark
    demo = _session(DEMO)
    assert not any(r.unreliable for r in ledger.line_rows(demo)) and "NOT RELIABLE" not in ledger.summary(demo)


def test_report_md_has_a_verdict_column_and_keeps_each_variant_apart_with_its_own_repro(tmp_path):
    from inductor_step.session.report import build_report

    out = build_report(DYN, str(tmp_path / "bundle"))
    text = open(os.path.join(out, "REPORT.md"), encoding="utf-8").read()
    graphs = text.split("#### Graphs compiled")[1].split("####")[0]
    # the original's row, with its recompile reason counted, and the variant's own row, named as one
    assert "| `[0/1] inference` | dynamo → aot → lowering → scheduling → loopbody → codegen → run | 1 | 0 | 1 |" in graphs
    assert f"| `{VAR}` (what-if variant of `[0/1] inference`" in graphs
    assert "- recompile `[0/1]`: 0/0: tensor 'x' size mismatch at index 0. expected 8, actual 16" in text
    timings = text.split("#### Run timings")[1].split("#### Minimal repro")[0]
    assert "| verdict |" in timings and timings.count("**NOT RELIABLE**") == 4
    assert f"| `{VAR}` (what-if variant) |" in timings
    assert "Times judged **not reliable**" in timings and "waited for a core" in timings
    assert f"`{VAR}` against `[0/1] inference`:" in timings and "round by round in one process (7 rounds)" in timings
    repros = sorted(f for f in os.listdir(out) if f.startswith("repro_"))
    assert repros == ["repro_0-0_inference.py", "repro_0-0_inference_whatif_aggressive_fusion-True.py",
                      "repro_0-1_inference.py", "repro_0-1_inference_whatif_aggressive_fusion-True.py"]
    assert f"for `{VAR}`: `python repro_0-1_inference_whatif_aggressive_fusion-True.py`" in text
    assert "times NOT RELIABLE" in text.split("#### Where the time goes")[1]


# ----------------------------------------------------------------------------- comparisons

def test_the_diff_of_a_static_variant_says_so_at_the_top_with_each_sides_verdict():
    from inductor_step.session.diff import DiffSide, diff_graphs, render

    s = _session(DYN)
    d = diff_graphs(DiffSide.from_session(s, "[0/1] inference"), DiffSide.from_session(s, VAR))
    text = render(d, diffs=False)
    top = text.split("\n==")[0]
    assert "B is a what-if variant compiled STATIC at A's size hints (s77=16), while A is dynamic" in top
    assert "A timing NOT RELIABLE" in top and "B timing NOT RELIABLE" in top
    timing = text.split("== timings")[1]
    assert "compiled graph: " in timing and "[A NOT RELIABLE" in timing.split("\n")[1]
    assert "timed round by round in one process (7 rounds)" in timing
    # the original against its own recompile is no variant: nothing said about static compiles
    d0 = diff_graphs(DiffSide.from_session(s, "[0/0] inference"), DiffSide.from_session(s, "[0/1] inference"))
    assert not any("STATIC" in n for n in d0.notes)


def test_when_eager_moved_as_much_as_the_compiled_time_the_machine_moved_not_the_setting():
    """A reported case's numbers: aggressive_fusion=True, then d: compiled 41.9999 -> 0.0219 ms, eager 7.9964 -> 0.0534 ms."""
    from inductor_step.session.diff import DiffSide, diff_graphs
    from inductor_step.session.whatif import what_if_deltas

    msgs = list(read_session(DYN))
    for m in msgs:
        if m.get("type") == "run" and m.get("compile_id") == "[0/1]":
            m["compiled_ms"], m["eager_ms"] = (0.0219, 0.0534) if m.get("variant") else (41.9999, 7.9964)
    s = Store.of(msgs)
    moved = trust.machine_moved(s.runs["[0/1] inference"], s.runs[VAR])
    assert moved and moved.startswith("the machine moved, not the setting") and "7.9964 -> 0.0534 ms" in moved
    d = diff_graphs(DiffSide.from_session(s, "[0/1] inference"), DiffSide.from_session(s, VAR))
    assert any(n.startswith("the machine moved, not the setting") for n in d.notes)
    lines = what_if_deltas(s.runs)
    i = next(i for i, ln in enumerate(lines) if ln.startswith(f"what if {VAR}:"))
    assert any(ln.strip().startswith("the machine moved") for ln in lines[i + 1:])
    # eager held still: no such claim
    quiet = copy.deepcopy(s.runs[VAR])
    quiet["eager_ms"] = 7.9
    assert trust.machine_moved(s.runs["[0/1] inference"], quiet) is None


# ----------------------------------------------------------------------------- missed fusions

def test_library_call_pairs_are_listed_apart_and_the_fusable_ones_get_a_setting_or_why_not():
    rows = ledger.fusion_rows(_session(DEMO))
    assert len(rows) == 14 and all(r.library for r in rows)  # 14 of 14 as reported: none fusable
    text = ledger.summary(_session(DEMO))
    assert "missed fusions: 0 buffers" in text and f"never fusable as compiled: 14 more such buffers" in text
    assert text.count(fusion_fix.LIBRARY_CALL) == 1
    rows = ledger.fusion_rows(_session(LEDGER))
    assert [(r.buffer, r.library) for r in rows] == [("buf0", False), ("buf1", True), ("buf2", True)]
    assert rows[0].fix is None and "cycle" in fusion_fix.fix_text(rows[0])
    assert fusion_fix.setting_for("Inductor: cannot fuse op1 with op2: exceeds max fusion")[0] == "max_fusion_size=128"
    assert fusion_fix.setting_for("cannot fuse op1 with op4: no shared data")[0] == "aggressive_fusion=True"
    assert fusion_fix.setting_for("cannot fuse: no shared data due to indexing mismatch")[0] is None


def test_f_on_a_library_call_gives_the_ledgers_reason_and_pane_9_lists_it_apart():
    seen = {}

    async def steps(app, pilot):
        await pilot.press("4")
        await pilot.pause()
        t = app.query_one("#table-scheduling")
        for name in ("op2", "op3"):
            t.move_cursor(row=next(i for i in range(t.row_count) if str(t.get_row_at(i)[0]) == name))
            await pilot.pause()
            await pilot.press("f")
            await pilot.pause()
        seen["f"] = app.query_one("#code-scheduling").text
        await pilot.press("9")
        await pilot.pause()
        t = app.query_one("#table-ledger")
        seen["rows"] = [str(t.get_row_at(i)[0]) for i in range(t.row_count)]
        seen["why"] = [str(t.get_row_at(i)[-1]) for i in range(t.row_count)]

    _drive(LEDGER, steps)
    assert seen["f"].startswith("# op2 and op3: not fused")
    flat = " ".join(ln.lstrip("# ").strip() for ln in seen["f"].splitlines())  # (f's answer wraps to the pane)
    assert "op2 is a library call: " + fusion_fix.LIBRARY_CALL in flat
    assert "only tries pairs that share data" not in flat
    rows = seen["rows"]
    assert rows[0] == "! TIMES NOT RELIABLE"
    kernels = range(rows.index("ROOFLINE PER KERNEL") + 1, rows.index("WASTED BY USER LINE"))
    assert all(seen["why"][i].startswith("NOT RELIABLE · ") for i in kernels) and len(kernels) == 3
    missed, never = rows.index("MISSED FUSIONS"), rows.index("NEVER FUSABLE AS COMPILED")
    assert rows[missed + 1].startswith("buf0:") and never == missed + 2
    assert all(seen["why"][i].startswith("library call: extern_kernels.mm") for i in (never + 1, never + 2))


def test_the_run_text_names_the_eager_baseline_it_was_timed_with():
    """A run recorded since the eager baseline became Dynamo's graph says so (the tmux trial read
    'eager (post-grad ATen graph, op by op)' beside a figure that was Dynamo's graph); an older run keeps its label."""
    from inductor_step.session.text import run_summary

    new = {"compile_id": "[0/0]", "graph_kind": "backward", "device": "cpu", "method": "m", "compiled_ms": 1.0,
           "eager_ms": 2.0, "eager_how": "autograd's backward of Dynamo's graph", "decomposed_ms": 3.0}
    text = run_summary("[0/0] backward", new)
    text = text if isinstance(text, str) else "\n".join(text)
    assert "eager (autograd's backward of Dynamo's graph)   2.0000 ms" in text
    assert "post-grad ATen graph, op by op" not in text.split("decomposed")[0]
    old = dict(new, graph_kind="forward")
    old.pop("eager_how"), old.pop("decomposed_ms")
    text = run_summary("[0/0] forward", old)
    text = text if isinstance(text, str) else "\n".join(text)
    assert "eager (post-grad ATen graph, op by op)   2.0000 ms" in text
