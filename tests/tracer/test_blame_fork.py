"""A blame step that fails because it was forked from the warm parent (CUDA after a fork) runs again in its own
interpreter, and a step whose script raised before any graph was compared is a crash, not "did not diverge"."""

from __future__ import annotations

import os

from inductor_step.tracer.blame import Bisect

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts", "blame_fork_crash.py")


def _baseline(monkeypatch, message: str | None):
    if message:
        monkeypatch.setenv("BLAME_FORK_ERROR", message)
    sent: list = []
    b = Bisect(SCRIPT, [], sent.append, step_limit_s=240)
    try:
        rec = b.step("the script as it compiles (Inductor)", "backend", b.env("inductor"))
    finally:
        if b.warm is not None:
            b.warm.close()
    return b, rec, sent


def test_a_step_the_fork_broke_runs_again_cold_and_sees_the_divergence(monkeypatch):
    b, rec, sent = _baseline(monkeypatch, None)
    assert rec["outcome"] == "bad", rec
    assert b.cold and "forked step could not use the GPU" in b.cold
    assert [m["step"]["outcome"] for m in sent if m.get("event") == "step"] == ["bad"]  # the forked try is not a step


def test_a_step_whose_script_raised_before_any_compare_is_a_crash(monkeypatch):
    b, rec, _ = _baseline(monkeypatch, "RuntimeError: the data file is missing")
    assert rec["outcome"] == "crash", rec
    assert "the data file is missing" in rec["error"]
    assert b.cold is None
