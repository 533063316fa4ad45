"""A kernel's share of peak bandwidth over 100%: on CUDA the roof is a measured device copy, which a read-heavy
kernel can outrun (an H200 add of two tensors ran at 104% of ``copy_``, under the driver's peak); pane 7's summary
says which of the two it is, and blames the byte count only when the driver's peak is passed too."""

from __future__ import annotations

import copy
import os

from inductor_step.session.format import read_session
from inductor_step.session.run_summary_text import run_summary

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _gpu_run() -> dict:
    return next(m for m in read_session(os.path.join(ROOT, "tests", "fixtures", "gpu_stages.jsonl"))
                if m.get("type") == "run")


def _with_kernel_at(run: dict, gbps: float) -> dict:
    run = copy.deepcopy(run)
    k = run["kernels"][0]
    k["gbps"], k["pct_peak_bw"] = gbps, 100.0 * gbps / run["peak"]["bw_gbps"]
    return run


def test_over_the_copy_but_under_the_drivers_peak_is_said_as_such():
    run = _gpu_run()
    peak = run["peak"]
    assert peak["bw_gbps"] < peak["bw_datasheet_gbps"]  # the copy reaches less than the driver's figure
    between = (peak["bw_gbps"] + peak["bw_datasheet_gbps"]) / 2
    text = run_summary("[0/0] inference", _with_kernel_at(run, between))
    assert f"over 100% but under the driver's peak ({peak['bw_datasheet_gbps']:.0f} GB/s)" in text
    assert "upper bound" not in text


def test_over_the_drivers_peak_blames_the_byte_count():
    run = _gpu_run()
    text = run_summary("[0/0] inference", _with_kernel_at(run, 1.2 * run["peak"]["bw_datasheet_gbps"]))
    assert "over 100% and over the driver's peak: the byte count is an upper bound" in text
    assert "under the driver's peak" not in text


def test_under_the_roof_no_note():
    run = _gpu_run()
    text = run_summary("[0/0] inference", _with_kernel_at(run, 0.5 * run["peak"]["bw_gbps"]))
    assert "over 100%" not in text
