"""Eager's figures beside the plan in the diff and the gate, through the CLI a person runs, on two recorded runs of one
script (tests/fixtures/memory_measured_{a,b}.jsonl: tests/scripts/memory_measured.py with --run on CPU, b with
``inplace_buffers=False`` and ``activation_memory_budget=0.5``): the timing worker measured each graph's compiled and
eager peaks (the profiler's memory events) and eager autograd's saved bytes.  No torch."""

from __future__ import annotations

import os

from inductor_step.cli.main import main
from inductor_step.session import format as protocol
from inductor_step.session.format import read_session

FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")
A, B = os.path.join(FIX, "memory_measured_a.jsonl"), os.path.join(FIX, "memory_measured_b.jsonl")


def _cli(capsys, *argv: str) -> tuple[int, list[str]]:
    try:
        rc = main(list(argv))
    except SystemExit as e:
        rc = e.code
    return rc, capsys.readouterr().out.splitlines()


def _line(lines: list[str], head: str) -> str:
    return next(ln for ln in lines if ln[14:].startswith(head))


def test_the_diff_shows_eager_beside_the_planned_and_measured_peaks_and_saved_bytes(capsys):
    rc, lines = _cli(capsys, "diff", "--headless", "--no-source", A, B)
    mem = [ln for ln in lines if ln.startswith("~ memory: ")]
    assert rc == 0 and len(mem) == 3  # inference, forward, backward: each moved
    inf, fwd, _bwd = mem
    # inplace_buffers=False: the chain's compiled peak grows to eager's, which did not move
    assert inf.startswith("~ memory: planned peak 262.1 kB -> 393.2 kB (+50%) (planned from the wrappers' "
                          "allocations); measured peak 262.1 kB -> 393.2 kB (+50%), eager's 393.2 kB in both "
                          "(CPU profiler memory events, one call each in the timing worker); what changed: ")
    assert inf.endswith("; compiled peak against eager's x0.67 -> x1.00")
    # activation_memory_budget=0.5: the forward saves less than eager autograd now, eager autograd the same
    assert "; saved for backward 2.2 MB -> 1.0 MB (planned from the wrappers' allocations); measured peak " in fwd
    assert "eager's 2.4 MB in both; eager autograd saves 2.2 MB in both (CPU profiler" in fwd
    assert fwd.endswith("; saved for backward against eager autograd's x1.00 -> x0.47")


def test_the_gate_fails_on_the_measured_peak_and_says_which_figure_it_used(capsys, tmp_path):
    rc, lines = _cli(capsys, "gate", A, B, "--max-memory-growth", "1.2")
    assert rc == 1
    assert _line(lines, "memory [0/0] inference:") == (
        "FAIL          memory [0/0] inference: measured peak 262.1 kB -> 393.2 kB (x1.50; allowed: x1.2 option); "
        "eager's peak 393.2 kB in both  [measured by the timing worker (CPU profiler memory events), one call each]")
    assert _line(lines, "memory [1/0] forward:").startswith("ok            memory [1/0] forward: measured peak ")
    assert "; saved for backward 2.2 MB -> 1.0 MB (eager autograd's 2.2 MB in both)" in \
        _line(lines, "memory [1/0] forward:")
    # the same baseline without its timing's memory: the planned peak, and why
    base = tmp_path / "base.jsonl"
    with open(base, "wb") as out:
        for m in read_session(A):
            out.write(protocol.encode({k: v for k, v in m.items() if k != "memory"}))
    rc, lines = _cli(capsys, "gate", str(base), B, "--max-memory-growth", "1.2")
    assert rc == 1 and _line(lines, "memory [0/0] inference:") == (
        "FAIL          memory [0/0] inference: planned peak 262.1 kB -> 393.2 kB (x1.50; allowed: x1.2 option); the "
        "baseline was not measured; eager's peak ? -> 393.2 kB  [planned from the wrappers' allocations "
        "(session.memory)]")
