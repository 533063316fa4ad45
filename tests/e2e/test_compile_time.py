"""Compile time on real compiles: where the compile's own time goes, with caches on.

One live session, driven by keys (it pauses at one stop for a known time), then the same script again
headless: the second run must hit Inductor's caches.  Both record tests/scripts/ctime_small.py once for the
module (a training step's forward and backward, then a recompile without grad); every test reads them.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import time
import uuid

import pytest

from inductor_step.session.format import graph_key, read_session, validate
from inductor_step.session import compile_time as ct
from inductor_step.tui.app import StepApp
from inductor_step.session.store import Store

from conftest import screen_settled, wait_for

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(HERE, "scripts", "ctime_small.py")
PAUSE_S = 1.0  # how long the live run sits at [0/0] forward's lowering stop


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two recordings with ``--caches on``: a live one paused PAUSE_S at one stop, then a headless one."""
    tmp = tmp_path_factory.mktemp("ctime")
    env = os.environ.copy()
    os.environ["INDUCTOR_STEP_CACHES"] = "on"  # what --caches on sets; the live app's agent inherits it
    os.environ["CTIME_SALT"] = uuid.uuid4().hex  # the first run misses the FX graph and AOTAutograd caches
    live_path = str(tmp / "live.jsonl")
    app = StepApp(script=SCRIPT, session_path=live_path, screenshots=str(tmp))
    seen: dict = {}

    async def main() -> None:
        async with app.run_test(size=(160, 50)) as pilot:
            try:
                await wait_for(pilot, lambda: app.view.paused is not None)
                t0 = time.monotonic()
                while app.session.done is None:
                    assert time.monotonic() - t0 < 240, [(graph_key(s), s["stage"]) for s in app.session.stops]
                    p = app.view.paused
                    if p is not None:
                        if graph_key(p) == "[0/0] forward" and p["stage"] in ("aot", "lowering"):
                            await pilot.press("8")  # the linked pane before codegen says how far the compile got
                            await wait_for(pilot, lambda: app.view.stage == "linked", timeout=10)
                            seen[f"8_at_{p['stage']}"] = app.pane("linked").code.text
                        if graph_key(p) == "[0/0] forward" and p["stage"] == "lowering" and "paused" not in seen:
                            seen["paused"] = time.monotonic()
                            await pilot.press("T")  # the person looks at the compile's time so far, then back
                            await wait_for(pilot, lambda: app.view.stage == "ctime" and app.pane("ctime").code.text,
                                           timeout=10)
                            seen["T_paused"] = app.pane("ctime").code.text
                            await pilot.press("3")
                            await asyncio.sleep(PAUSE_S)  # the person reads the pane; the compile waits
                            seen["paused"] = time.monotonic() - seen["paused"]
                        if graph_key(p) == "[0/0] forward" and p["stage"] == "codegen":
                            seen["bar"] = str(app.query_one("#stagebar").render())
                        await pilot.press("n")
                    # the next stop, or the end of the script
                    await wait_for(pilot, lambda p=p: (app.view.paused is not None and app.view.paused is not p)
                                   or app.session.done is not None, timeout=240)
                await screen_settled(pilot, app)
            finally:
                app.action_quit_app()

    salted = {**env, "CTIME_SALT": os.environ["CTIME_SALT"]}
    try:
        asyncio.run(main())
    finally:
        os.environ.clear()
        os.environ.update(env)
    headless_path = str(tmp / "again.jsonl")
    proc = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--caches", "on", "--record",
                           headless_path, SCRIPT], capture_output=True, text=True, timeout=300, cwd=str(tmp),
                          env=salted)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {"live": list(read_session(live_path)), "again": list(read_session(headless_path)),
            "again_stdout": proc.stdout, "seen": seen, "live_path": live_path, "again_path": headless_path}


def _times(msgs):
    return [m for m in msgs if m.get("type") == "compile_time"]


def test_every_graph_has_its_stages_and_they_add_up(runs):
    msgs = runs["live"]
    assert all(validate(m) == [] for m in _times(msgs)), [validate(m) for m in _times(msgs)]
    times = ct.graph_times(Store.of(msgs))
    assert set(times) >= {"[0/0] forward", "[0/0] backward", "[0/1] inference"}, list(times)
    for key, g in times.items():
        assert g.total_ms > 0, key
        assert abs(sum(g.stages.values()) - g.total_ms) <= 0.1 * g.total_ms, (key, g.stages, g.total_ms)
        # torch's own wall time of the compile = stages + paused + our hooks (each measured on its own)
        assert abs(g.total_ms + g.paused_ms + g.ours_ms - g.wall_ms) <= 0.01 * g.wall_ms + 1, key
        assert g.named_share() >= 0.9 or g.stages.get("other"), (key, g.stages)
    fwd, bwd = times["[0/0] forward"], times["[0/0] backward"]
    for s in ("dynamo", "aot", "lowering", "scheduling", "codegen"):
        assert fwd.stages.get(s, 0) > 0, (s, fwd.stages)
    assert "dynamo" not in bwd.stages and bwd.stages.get("lowering", 0) > 0, bwd.stages  # a lazy backward: no Dynamo
    assert fwd.frame and fwd.frame["function"] == "f" and fwd.frame["tracing_ms"] > 0
    # per kernel: each C++ kernel named as generated, with its build time and the C++ cache's verdict
    built = [k for k in fwd.kernels if k["kind"] != "autotune"]
    names = {k["name"] for k in built}
    codegen = next(m for m in msgs if m.get("type") == "stop" and graph_key(m) == "[0/0] forward"
                   and m["stage"] == "codegen")
    assert names and names <= {k["name"] for k in codegen["kernels"]}, (names, codegen["kernels"])
    assert all(k["compile_ms"] is not None and k["cache"] in ("hit", "miss") for k in built)
    # the mm's select_algorithm (one choice on CPU: nothing to benchmark) is an autotuning entry of its own
    assert [k["name"] for k in fwd.kernels if k["kind"] == "autotune"] == ["mm"], fwd.kernels
    # per FX node: lowering time, rolled up to the script's line through the links
    linked = set(fwd.nodes) & set(codegen["links"]["fx_nodes"])
    assert {"mm", "erf"} <= linked and len(linked) >= len(fwd.nodes) / 2, (fwd.nodes, codegen["links"]["fx_nodes"])
    lines = ct.rankings(Store.of(msgs))["lines"]
    body = next(i for i, ln in enumerate(open(SCRIPT).read().splitlines(), 1) if "gelu(x @ w)" in ln)
    assert any(r.what == "line" and (r.line or "").endswith(f"ctime_small.py:{body}") for r in lines), lines
    assert any(r.what == "frame" and "tracing f" in r.label for r in lines)


def test_a_paused_stop_is_not_compile_time(runs):
    assert runs["seen"]["paused"] >= PAUSE_S
    # pane 8 before codegen, pressed at aot and again at lowering: each time it says where the compile is
    assert "(last stop: aot)" in runs["seen"]["8_at_aot"], runs["seen"]["8_at_aot"]
    at_lowering = runs["seen"]["8_at_lowering"]  # the buffers from lowering on, their kernel to come
    assert "# buf0: scheduler node op0" in at_lowering and "(recorded up to lowering;" in at_lowering, at_lowering
    # T while paused at lowering: the graph's own time so far, stage by stage, before its compile finished
    so_far = runs["seen"]["T_paused"]
    assert "[0/0] forward so far" in so_far and re.search(r"^  dynamo +[\d.]+m?s$", so_far, re.M), so_far
    assert re.search(r"^  aot +[\d.]+m?s$", so_far, re.M) and re.search(r"^  lowering +[\d.]+m?s$", so_far, re.M)
    fwd = ct.graph_times(Store.of(runs["live"]))["[0/0] forward"]
    assert fwd.paused_ms >= PAUSE_S * 1000 * 0.95, fwd.paused_ms
    assert fwd.wall_ms - fwd.total_ms >= PAUSE_S * 1000 * 0.95
    # the stop pauses inside one of our capture hooks: the pause counts once, as paused, not again as the
    # hooks' own time (pane T read "minus paused 97.27 s, minus capture hooks 97.35 s" before)
    assert fwd.ours_ms < PAUSE_S * 1000 / 2, (fwd.ours_ms, fwd.paused_ms)
    # paused inside the scheduler (the lowering stop is Inductor's pre-fusion pass): not in any stage
    assert max(fwd.stages.values()) < fwd.total_ms and fwd.stages["scheduling"] < PAUSE_S * 1000 / 2, fwd.stages
    # the stage bar showed the finished stages' times while the compile was paused at codegen
    assert re.search(r"✓lowering [\d.]+m?s ", runs["seen"]["bar"]), runs["seen"]["bar"]


def test_a_recompile_costs_its_own_time(runs):
    times = ct.graph_times(Store.of(runs["live"]))
    re = times["[0/1] inference"]
    assert re.total_ms > 0 and re.stages.get("dynamo", 0) > 0 and re.stages.get("lowering", 0) > 0
    ranked = [r.label for r in ct.rankings(Store.of(runs["live"]))["graphs"]]
    assert "[0/1] inference" in ranked


def test_a_second_run_with_caches_on_hits(runs):
    first = ct.graph_times(Store.of(runs["live"]))
    again = ct.graph_times(Store.of(runs["again"]))
    assert first["[0/0] forward"].cache, "the caches' verdicts are recorded"
    verdicts = {k: v["status"] for g in again.values() for k, v in g.cache.items()}
    assert "hit" in verdicts.values(), verdicts
    fwd = again["[0/0] forward"]
    assert fwd.skipped() and set(fwd.skipped()) >= {"lowering", "scheduling", "codegen"}, (fwd.cache, fwd.stages)
    # (a hit need not be faster on a graph this small: the cache's keys and the load take their own time)
    assert not any(fwd.stages.get(s) for s in ("lowering", "scheduling", "codegen")), fwd.stages
    assert "compile time:" in runs["again_stdout"] and "taken out" in runs["again_stdout"]
    # the slowest kernel says what its time is: a build (with the cache's verdict) or an autotuning
    assert re.search(r"; kernel \S+ [\d.]+ m?s \((cpp · hit|cpp · miss|autotuning)\)", runs["again_stdout"]), \
        runs["again_stdout"]
    assert all(k["cache"] == "hit" for g in again.values() for k in g.kernels if k["kind"] == "cpp"), \
        [(k["name"], k.get("cache")) for g in again.values() for k in g.kernels]


def test_pane_T_ranks_and_enter_goes_to_the_kernel(runs):
    """--open: T shows the three rankings; down to the first kernel, Enter: pane 6 at that kernel."""
    app = StepApp(messages=runs["live"], session_path=runs["live_path"])
    seen: dict = {}

    async def main() -> None:
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.press("T")
            pane = app.pane("ctime")
            await wait_for(pilot, lambda: app.view.stage == "ctime" and pane.table.row_count > 0, timeout=10)
            seen["stage"] = app.view.stage
            seen["rows"] = [str(pane.table.get_row_at(i)[0]) for i in range(pane.table.row_count)]
            seen["detail"] = pane.code.text
            first = next(i for i, r in enumerate(seen["rows"]) if r.startswith("cpp_fused"))  # (autotunings too)
            for _ in range(first):
                await pilot.press("down")
            await wait_for(pilot, lambda: pane.table.cursor_row == first, timeout=10)
            seen["kernel"] = seen["rows"][pane.table.cursor_row]
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.view.stage != "ctime", timeout=10)
            seen["after"] = app.view.stage
            seen["code_row"] = str(app.pane("codegen").table.get_row_at(app.pane("codegen").table.cursor_row)[0])

    asyncio.run(main())
    assert seen["stage"] == "ctime"
    assert seen["rows"][0] == "GRAPHS" and "KERNELS" in seen["rows"] and "USER LINES" in seen["rows"]
    assert "[0/0] forward" in seen["rows"]
    assert "the compile's own time" in seen["detail"]
    assert seen["kernel"].startswith("cpp_fused")
    assert seen["after"] == "codegen" and seen["code_row"] == seen["kernel"]


def test_diff_of_the_two_runs_compares_compile_time_per_stage(runs):
    """`inductor-step diff live.jsonl again.jsonl`: the first run (every cache missed) against the
    second (the caches hit).  On the diff screen a person presses T: the compile-time level lists the whole
    compile and each stage, A -> B with the change, the stages the cache hit skipped reading "cache hit", and
    the caches' verdicts that changed; p goes to the backward's pair (B has no compile of its own: the AOTAutograd
    cache hit loaded it with the forward, and the level says so); Enter opens pane T on B's graph."""
    from inductor_step.tui.screens.diff import DiffScreen  # noqa: PLC0415

    app = StepApp(messages=runs["again"], session_path=runs["again_path"],
                  diff_against=(runs["live_path"], runs["live"]))
    seen: dict = {}

    def table(screen) -> list[str]:
        t = screen.table
        return [" ".join(str(c) for c in t.get_row_at(i)) for i in range(t.row_count)]

    async def main() -> None:
        async with app.run_test(size=(160, 50)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen), timeout=10, seen=lambda: app.screen)
            screen = app.screen
            assert isinstance(screen, DiffScreen), type(screen)
            while screen.pair.key_b != "[0/0] forward":
                await pilot.press("p")
            seen["levels"] = [str(o.prompt) for o in screen.query_one("#diff-levels").options]
            await pilot.press("T")
            await wait_for(pilot, lambda: str(screen.query_one("#diff-status").content).startswith("T compile time"),
                           timeout=10, seen=lambda: str(screen.query_one("#diff-status").content))
            seen["status"] = str(screen.query_one("#diff-status").content)
            seen["rows"] = table(screen)
            seen["code"] = screen.code.text
            await pilot.press("p")
            await wait_for(pilot, lambda: screen.pair.key_b != "[0/0] forward", timeout=10)
            seen["pair2"] = screen.pair.key_b
            await pilot.press("T")
            await screen_settled(pilot, app)
            seen["rows2"] = table(screen)
            seen["code2"] = screen.code.text
            await pilot.press("p", "p", "T")  # back to the forward's pair (p wraps around)
            await wait_for(pilot, lambda: screen.pair.key_b == "[0/0] forward", timeout=10)
            await screen_settled(pilot, app)
            await pilot.press("enter")
            pane = app.pane("ctime")
            await wait_for(pilot, lambda: pane.table.row_count > 0, timeout=10,
                           seen=lambda: (type(app.screen).__name__, app.view.stage))
            seen["after"] = (type(app.screen).__name__, app.view.stage, app.view.graph)
            seen["cursor"] = str(pane.table.get_row_at(pane.table.cursor_row)[0])

    asyncio.run(main())
    assert any(lv.startswith("T compile time") for lv in seen["levels"]), seen["levels"]
    assert seen["status"].startswith("T compile time:"), seen["status"]
    rows = {r.split()[1]: r for r in seen["rows"]}
    assert re.search(r"total [\d.]+ m?s -> [\d.]+ m?s \([+-]\d+%\) · whole compile", rows["total"]), rows["total"]
    for stage in ("lowering", "scheduling", "codegen"):  # ran in A, skipped by B's cache hit
        assert re.search(rf"{stage} [\d.]+ m?s -> cache hit", rows[stage]), rows[stage]
    assert re.search(r"dynamo [\d.]+ m?s -> [\d.]+ m?s \([+-]\d+%\)", rows["dynamo"]), rows["dynamo"]
    assert any(re.search(r"cache miss -> hit", r) for r in seen["rows"]), seen["rows"]
    assert "the compile's own time" in seen["code"] and "taken out" in seen["code"]
    # B's backward came with its forward from the AOTAutograd cache: no compile of its own, said so
    assert seen["pair2"] == "[0/0] backward" and any(re.search(r"total [\d.]+ m?s -> - ", r) for r in seen["rows2"])
    assert "B has no compile of its own of this graph" in seen["code2"], seen["code2"]
    assert seen["after"] == ("MainScreen", "ctime", "[0/0] forward") and seen["cursor"] == "[0/0] forward"
