"""What if: recompile one captured graph with Inductor settings changed.

Real ``torch.compile`` runs, no mocks.  The CPU tests drive ``inductor-step --headless --what-if ...
--run`` (one run for the module) and the live app (keys a person presses, while the compile is
paused); the ``gpu`` test runs ``max_autotune`` on a matmul-heavy graph (skipped without CUDA; run it
on the device machine: ``python -m pytest -m gpu tests/tracer/test_whatif.py -rA``).
"""

from __future__ import annotations

import asyncio
import importlib.util
import os

import pytest

from inductor_step.session.format import STAGES, graph_key, read_session, validate

from test_tracer import Run, run_cli

from conftest import wait_for

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(HERE, "scripts", "whatif_fusion.py")
MATMUL = os.path.join(HERE, "scripts", "whatif_matmul.py")
ORIG = "[0/0] inference"
FUSION = f"{ORIG} · max_fusion_size=1"
BAD = f"{ORIG} · max_fusion_size='x'"
LATER = f"{ORIG} · realize_opcount_threshold=0"

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")


def stop(r: Run, key: str, stage: str) -> dict:
    found = [s for s in r.stops if graph_key(s) == key and s["stage"] == stage]
    assert len(found) == 1, f"{len(found)} {stage} stops of {key}; graphs: {sorted({graph_key(s) for s in r.stops})}"
    return found[0]


def my_problems(msgs: list[dict]) -> list[str]:
    """validate() problems of what this feature adds: what_if messages, and variant/numerics fields."""
    out = []
    for m in msgs:
        for p in validate(m):
            if m.get("type") == "what_if" or "variant" in p or "numerics" in p or "OutputError" in p:
                out.append(f"{m.get('type')}: {p}")
    return out


@pytest.fixture(scope="module")
def whatif(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """One headless run: a fusion-changing variant, a variant whose compile fails, an unknown setting; timed."""
    cwd = tmp_path_factory.mktemp("whatif")
    record = str(cwd / "s.jsonl")
    r = run_cli(["--headless", "--run", "--what-if", "max_fusion_size=1", "--what-if", "max_fusion_size='x'",
                 "--what-if", "no_such_setting_here=1", "--record", record, SCRIPT], str(cwd), record)
    assert r.messages, f"no session (rc={r.returncode})\n{r.stdout}\n{r.stderr}"
    return r


def test_a_variant_is_recorded_stage_by_stage_and_its_fusion_changed(whatif: Run) -> None:
    r = whatif
    for stage in STAGES:
        s = stop(r, FUSION, stage)
        assert s["compile_id"] == "[0/0]" and s["graph_kind"] == "inference" and s["variant"] == "max_fusion_size=1"
        assert s["paused"] is False
    # max_fusion_size=1: Inductor may fuse no two nodes, so more scheduler nodes are left after fusion
    orig_after, var_after = stop(r, ORIG, "scheduling")["after"], stop(r, FUSION, "scheduling")["after"]
    assert len(var_after) > len(orig_after), (len(orig_after), len(var_after))
    assert all(len(n.get("members") or [n["name"]]) == 1 for n in var_after)
    assert any(len(n.get("members") or []) > 1 for n in orig_after)
    # the variant's buffers and kernels are its own, linked like any compile's
    assert stop(r, FUSION, "codegen")["kernels"]
    assert "buffers" in stop(r, FUSION, "codegen")["links"]
    assert [m["status"] for m in r.of_type("what_if") if m.get("variant") == "max_fusion_size=1"] == ["compiling", "done"]
    assert my_problems(r.messages) == []


def test_the_variant_is_timed_beside_the_original_with_numerics(whatif: Run) -> None:
    r = whatif
    runs = {graph_key(m): m for m in r.of_type("run")}
    assert ORIG in runs and FUSION in runs, sorted(runs)
    v = runs[FUSION]
    assert not v.get("error") and v["compiled_ms"] > 0 and v["kernels"]
    num = v["numerics"]
    assert [row["output"] for row in num["vs_original"]] == [0, 1]
    for row in num["vs_original"] + num["vs_eager"]:
        assert row["max_abs"] is not None and row["max_rel"] <= 1e-4, row
    assert "get_args()" in num["inputs"]
    # the variant, the original and eager timed round by round in one process, and judged
    il = v["interleaved"]
    assert il["rounds"] == 7 and all(len(il[f"{k}_rounds_ms"]) == 7 for k in ("variant", "original", "eager")), il
    assert il["variant_ms"] > 0 and il["original_ms"] > 0 and il["eager_ms"] > 0
    assert il["speedup_vs_original"] > 0 and isinstance(il["reliable"], bool) and 0 <= il["wait_share"] <= 1
    for m in (v, runs[ORIG]):  # every CPU figure carries a verdict
        assert set(m["verdicts"]) == {"compiled", "eager", "decomposed", "kernels"} and isinstance(m["reliable"], bool), m["verdicts"]
        assert m["reliable"] == all(x["reliable"] for x in m["verdicts"].values()) or \
            m["graph_rounds"]["rounds_stable"] is False
    # --headless prints the deltas: compiled ms original -> variant, kernels, worst numerics error
    line = next((ln for ln in r.stdout.splitlines() if ln.startswith(f"what if {FUSION}: ")), None)
    assert line is not None, r.stdout
    fused = (len(stop(r, ORIG, "scheduling")["after"]), len(stop(r, FUSION, "scheduling")["after"]))
    assert f"scheduler nodes after fusion {fused[0]} -> {fused[1]}" in line, line
    assert "; compiled " in line and "vs original: max abs" in line and "vs eager: max abs" in line
    assert any(ln.strip().startswith("timed round by round in one process (7 rounds)") for ln in r.stdout.splitlines())


def test_a_failing_variant_shows_its_failure_at_its_stage_and_the_original_is_whole(whatif: Run) -> None:
    r = whatif
    errors = [m for m in r.of_type("error") if m.get("variant") == "max_fusion_size='x'"]
    assert len(errors) == 1, r.of_type("error")
    e = errors[0]
    # max_fusion_size is read while fusing: the variant got its lowering stop, and failed at scheduling
    assert stop(r, BAD, "lowering")
    assert e["stage"] == "scheduling" and e["compile_id"] == "[0/0]" and e["graph_kind"] == "inference"
    assert "TypeError" in e["message"]
    assert [m["status"] for m in r.of_type("what_if") if m.get("variant") == "max_fusion_size='x'"] == ["compiling", "failed"]
    unknown = [m for m in r.of_type("what_if") if m.get("variant") == "no_such_setting_here=1"]
    assert [m["status"] for m in unknown] == ["failed"] and "has no setting 'no_such_setting_here'" in unknown[0]["message"]
    # the original: every stage once, the script's own output, and no error of its own
    assert [s["stage"] for s in r.stops if graph_key(s) == ORIG] == list(STAGES)
    assert not [m for m in r.of_type("error") if not m.get("variant")]
    assert "ok" in r.user_output()
    assert r.returncode == 1  # a compile failed (the variant's), as --headless reports any failed compile


def test_the_what_if_command_is_typed() -> None:
    from inductor_step.session.format import parse_settings, settings_label, validate_command

    cmd = {"cmd": "what_if", "compile_id": "[0/0]", "graph_kind": "forward", "run": True,
           "settings": parse_settings("max_autotune=True, triton.cudagraphs=False, mode='x', n=[1, 2]")}
    assert validate_command(cmd) == []
    assert cmd["settings"] == {"max_autotune": True, "triton.cudagraphs": False, "mode": "x", "n": [1, 2]}
    assert settings_label({"max_autotune": True}) == "max_autotune=True"


def test_a_bad_what_if_is_one_line_and_exit_2(tmp_path) -> None:
    r = run_cli(["--headless", "--what-if", "max_autotune", SCRIPT], str(tmp_path))
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0
    assert "--what-if: not a setting: 'max_autotune'" in r.stderr


def test_w_while_paused_recompiles_opens_the_diff_and_the_paused_compile_goes_on_unchanged(tmp_path, whatif) -> None:
    """In the live app, paused at the lowering stop: w, the free field, Enter.  The variant compiles,
    the diff view opens against the original (its scheduler nodes changed), and after n to the end
    the original's scheduling and kernels are what a run without the what-if recorded."""
    from inductor_step.tui.app import StepApp
    from inductor_step.tui.screens.diff import DiffScreen
    from inductor_step.tui.screens.whatif import WhatIfScreen


    app = StepApp(script=SCRIPT, session_path=str(tmp_path / "s.jsonl"), screenshots=str(tmp_path))
    seen: dict = {}

    async def main():
        async with app.run_test(size=(120, 40)) as pilot:
            try:
                await wait_for(pilot, lambda: app.view.paused is not None)
                await pilot.press("n")  # one stop per n, each seen
                await wait_for(pilot, lambda: app.view.paused is not None and app.view.paused["stage"] == "aot")
                await pilot.press("n")
                await wait_for(pilot, lambda: app.view.paused is not None and app.view.paused["stage"] == "lowering")
                await pilot.press("w")
                await wait_for(pilot, lambda: isinstance(app.screen, WhatIfScreen))
                seen["form"] = app.screen.query_one("#whatif-max_autotune").value
                for _ in range(9):
                    await pilot.press("tab")
                await pilot.press(*"max", "underscore", *"fusion", "underscore", *"size", "equals_sign", "1")
                seen["other"] = app.screen.query_one("#whatif-other").value
                await pilot.press("enter")
                await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen))
                d = app.screen.pair
                seen["pair"] = (d.key_a, d.key_b)
                seen["first"] = {lv.key: (lv.missing, lv.summary()) for lv in d.diff.levels}
                seen["paused_during"] = app.view.paused["stage"] if app.view.paused else None
                await pilot.press("escape")
                while app.session.done is None:  # n at each stop, to the end of the script
                    at = app.view.paused
                    if at is not None:
                        await pilot.press("n")
                    await wait_for(pilot, lambda at=at: (app.view.paused is not None and app.view.paused is not at)
                                   or app.session.done is not None)
                # the variant is timed (run=True); g, pick the variant, d: the diff, with times and numerics
                await wait_for(pilot, lambda: FUSION in app.session.runs and ORIG in app.session.runs)
                await pilot.press("g")
                for _ in range(4):
                    if app.view.graph == FUSION:
                        break
                    await pilot.press("down")
                await pilot.press("enter", "d")
                await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen))
                t = next(lv for lv in app.screen.pair.diff.levels if lv.key == "timing")
                seen["timing_notes"] = list(t.notes)
                seen["levels"] = {lv.key: lv.summary() for lv in app.screen.pair.diff.levels if lv.changes}
                # after the script ended (the agent serves): another what if, typed into the free field
                await pilot.press("escape", "w")
                await wait_for(pilot, lambda: isinstance(app.screen, WhatIfScreen))
                for _ in range(9):
                    await pilot.press("tab")
                await pilot.press(*"realize", "underscore", *"opcount", "underscore", *"threshold", "equals_sign", "0",
                                  "enter")
                await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.pair.key_b == LATER)
                await pilot.pause()  # mounted before q: a screen pushed in the same tick as quitting never composes
                seen["later"] = {lv.key: lv.summary() for lv in app.screen.pair.diff.levels if lv.changes}
            finally:
                app.action_quit_app()

    asyncio.run(main())
    assert seen["form"] == "False"  # the header's current value
    assert seen["other"] == "max_fusion_size=1"
    assert seen["pair"] == (ORIG, FUSION)
    # opened at once, the original paused at lowering: its scheduling is not there to compare yet
    assert seen["first"]["scheduling"][0], seen["first"]
    assert "scheduling" in seen["levels"], seen["levels"]
    assert seen["paused_during"] == "lowering"
    s = app.session
    assert s.stages_done(ORIG)[:6] == list(STAGES) and s.stages_done(FUSION)[:6] == list(STAGES)
    plain = {st: stop(whatif, ORIG, st) for st in ("scheduling", "codegen")}
    got_sched = s.stop_for(ORIG, "scheduling")
    assert [n["name"] for n in got_sched["after"]] == [n["name"] for n in plain["scheduling"]["after"]]
    assert [k["name"] for k in s.stop_for(ORIG, "codegen")["kernels"]] == [k["name"] for k in plain["codegen"]["kernels"]]
    assert any(n.startswith("numerics") for n in seen["timing_notes"]), seen["timing_notes"]
    # realize_opcount_threshold=0: Inductor realizes more buffers while lowering
    assert "buffers" in seen["later"], seen["later"]
    recorded = list(read_session(str(tmp_path / "s.jsonl")))
    done_at = next(i for i, m in enumerate(recorded) if m.get("type") == "done")
    assert min(i for i, m in enumerate(recorded) if m.get("type") == "stop" and graph_key(m) == LATER) > done_at


def test_a_recorded_variant_is_a_graph_of_the_session_with_its_numerics_in_pane_7(whatif: Run) -> None:
    """--open on the recorded session: g lists the variant, pane 7 shows its numerics with its timing,
    d diffs it with its original, and w says a recording cannot recompile."""
    from inductor_step.tui.app import StepApp
    from inductor_step.tui.screens.diff import DiffScreen

    app = StepApp(messages=list(whatif.messages), session_path=whatif.record)
    seen: dict = {}

    async def main():
        async with app.run_test(size=(120, 40), notifications=True) as pilot:
            await pilot.pause()
            seen["graphs"] = list(app.session.graphs)
            await pilot.press("g")
            for _ in range(4):
                if app.view.graph == FUSION:
                    break
                await pilot.press("down")
            await pilot.press("enter", "7")
            await wait_for(pilot, lambda: app.view.stage == "run" and app.view.graph == FUSION, timeout=10,
                           seen=lambda: (app.view.graph, app.view.stage))
            seen["run"] = app.query_one("#code-run").text
            await pilot.press("w")
            await wait_for(pilot, lambda: app.screen.query("Toast"), timeout=10)
            seen["toasts"] = [str(t.render()) for t in app.screen.query("Toast")]
            await pilot.press("d")
            await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen), timeout=10, seen=lambda: app.screen)
            seen["pair"] = (app.screen.pair.key_a, app.screen.pair.key_b) if isinstance(app.screen, DiffScreen) else None

    asyncio.run(main())
    assert seen["graphs"][:2] == [ORIG, FUSION] and BAD in seen["graphs"]
    assert "vs original compiled  output 0" in seen["run"] and "vs eager" in seen["run"], seen["run"][:2000]
    assert any("recorded session cannot recompile" in t for t in seen["toasts"]), seen["toasts"]
    assert seen["pair"] == (ORIG, FUSION)


def test_a_large_session_read_lazily_keeps_each_variant_stop_under_its_variant(whatif: Run) -> None:
    from inductor_step.session.store import Store

    lazy = Store.of(list(read_session(whatif.record, lazy_over=1)))
    assert any("_raw" in s for s in lazy.stops if s.get("variant"))  # some variant stops were left unparsed
    assert lazy.stages_done(FUSION)[:6] == list(STAGES) and lazy.stages_done(ORIG)[:6] == list(STAGES)
    assert lazy.stop_for(FUSION, "scheduling")["after"] == stop(whatif, FUSION, "scheduling")["after"]


def test_the_tlparse_export_holds_the_scripts_compiles_only(whatif: Run, tmp_path) -> None:
    from inductor_step.session.export import export_trace

    with open(export_trace(whatif.record, str(tmp_path)), encoding="utf-8") as f:
        log = f.read()
    assert log.count('"inductor_output_code"') == 1  # the original's; the variants are not the script's compiles


# ----------------------------------------------------------------------------- GPU (device machine)

def _has_cuda() -> bool:
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.mark.gpu
@pytest.mark.skipif(not _has_cuda(), reason="needs a CUDA GPU (torch.cuda.is_available() is False)")
def test_max_autotune_on_a_matmul_heavy_graph_changes_its_kernels_and_both_are_timed(tmp_path) -> None:
    """Two variants of a two-matmul MLP: ``max_autotune=True`` (Inductor benchmarks Triton templates
    against cuBLAS and may keep cuBLAS), and the same with Triton templates only, whose kernels must
    differ from the original's (a ``triton_tem_`` template kernel in place of ``extern_kernels.mm``)."""
    record = str(tmp_path / "s.jsonl")
    tuned = f"{ORIG} · max_autotune=True"
    triton = f"{ORIG} · max_autotune=True,max_autotune_gemm_backends='TRITON'"
    r = run_cli(["--headless", "--run", "--what-if", "max_autotune=True",
                 "--what-if", "max_autotune=True,max_autotune_gemm_backends='TRITON'",
                 "--record", record, MATMUL, "--device", "cuda"], str(tmp_path), record)
    assert r.returncode == 0, r.stderr[-3000:]
    ko = {k["name"] for k in stop(r, ORIG, "codegen")["kernels"]}
    kt = {k["name"] for k in stop(r, triton, "codegen")["kernels"]}
    assert any(n.startswith("extern_kernels.mm") for n in ko), sorted(ko)
    assert any(n.startswith("triton_tem_") for n in kt) and kt != ko, (sorted(ko), sorted(kt))
    assert stop(r, tuned, "codegen")["kernels"]
    runs = {graph_key(m): m for m in r.of_type("run")}
    for key in (ORIG, tuned, triton):
        assert not runs[key].get("error") and runs[key]["compiled_ms"] > 0, runs[key].get("error")
        assert runs[key]["device"].startswith("cuda") and runs[key]["kernels"]
    assert {k["name"] for k in runs[triton]["kernels"]} & {n for n in kt if n.startswith("triton_tem_")}
    for key in (tuned, triton):
        for row in runs[key]["numerics"]["vs_original"] + runs[key]["numerics"]["vs_eager"]:
            assert row["max_rel"] is not None and row["max_rel"] < 2e-2, (key, row)  # fp16, another algorithm
        assert any(ln.startswith(f"what if {key}: ") and "; compiled " in ln for ln in r.stdout.splitlines()), r.stdout
