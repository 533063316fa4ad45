"""`r` pressed at the codegen stop, the first moment a graph can be timed, inside its compile: the run pane shows
eager beside compiled, from the inputs Dynamo handed torch.compile (the script has not called the graph yet)."""

from __future__ import annotations

import os
import re

from test_live import SCRIPTS, live, n_until

from conftest import wait_for


def test_r_at_the_codegen_stop_times_eager_too(tmp_path):
    seen: dict = {}

    async def steps(app, pilot):
        await n_until(pilot, app, "codegen")
        await pilot.press("7", "r")
        text = lambda: app.query_one("#code-run").text  # noqa: E731
        await wait_for(pilot, lambda: re.search(r"^compiled graph\s+[\d.]+ ms", text(), re.M), timeout=180, seen=text)
        seen["text"] = text()
        seen["paused"] = dict(app.view.paused or {})

    live(os.path.join(SCRIPTS, "run_at_codegen.py"), steps, tmp_path)
    assert seen["paused"].get("stage") == "codegen"  # still inside the compile
    eager = next(ln for ln in seen["text"].splitlines() if ln.startswith("eager"))
    assert re.match(r"eager( \(.*\))?\s+[\d.]+ ms", eager), eager
    assert "example inputs Dynamo handed" in seen["text"], seen["text"]
    # the whole call cannot be repeated from inside its own paused compile: pane 7 says when it can
    call = next(ln for ln in seen["text"].splitlines() if ln.startswith("script's call"))
    assert "not timed: taken once the script has returned" in call, call
    # while the kernels were timed the status line followed them, but the app heard (and redrew for) a kernel's
    # window at most every quarter second: one per window (~14 ms each) took the timing threads' cores on 2 cores
    from inductor_step.session.format import read_session  # noqa: PLC0415

    kernel_steps = [m["t"] for m in read_session(str(tmp_path / "s.jsonl"))
                    if m.get("type") == "run_status" and ": kernel " in (m.get("message") or "")]
    assert kernel_steps, "no kernel's progress reached the status line"
    gaps = [b - a for a, b in zip(kernel_steps, kernel_steps[1:])]
    assert all(g >= 0.2 for g in gaps), gaps


def test_r_after_the_script_times_its_call_on_the_scripts_main_thread(tmp_path):
    """After the script: `r` comes in on the agent's control thread, yet the script's call is repeated on the
    script's main thread (tracer.main_thread), where its CPU kernels ran: from another thread they ran 1.8-2.5x
    slower, and pane 7's whole-call figure read that."""
    seen: dict = {}

    async def steps(app, pilot):
        await wait_for(pilot, lambda: app.view.paused is not None, timeout=120)
        while app.session.done is None:
            before = len(app.session.stops)
            await pilot.press("n")
            await wait_for(pilot, lambda: len(app.session.stops) > before or app.session.done is not None, timeout=120)
        await pilot.press("7", "r")
        text = lambda: app.query_one("#code-run").text  # noqa: E731
        await wait_for(pilot, lambda: re.search(r"^script's call .*whole: compiled [\d.]+ ms", text(), re.M),
                       timeout=180, seen=text)
        seen["text"] = text()

    live(os.path.join(SCRIPTS, "run_at_codegen.py"), steps, tmp_path)
    how = next(ln for ln in seen["text"].splitlines() if ln.strip().startswith("script's call: the script's latest"))
    assert how.rstrip().endswith("on the script's main thread, as the script called it"), how
