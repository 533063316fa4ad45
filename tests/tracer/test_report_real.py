"""``inductor-step report`` and ``export`` on a real session: the bundled demo recorded once for the test run
(``--headless --run``, tests/conftest.py ``demo_run``), read back as a person reads the bundle, and its TORCH_TRACE
export read by ``tlparse`` when it is installed.  The same commands on checked-in fixtures, without torch, are
tests/session/test_report.py."""

from __future__ import annotations

import os
import re

from inductor_step.session.export import ARTIFACTS, export_trace
from inductor_step.session.report import build_report

from conftest import DEMO_RUN_SECRET
from tests.session.test_report import REPO, _events, _header, _names, _read, _run_tlparse

SECRET_VAR, SECRET = DEMO_RUN_SECRET
STOOD = {"graph": "[0/0] forward", "stage": "lowering", "selection": "buf3"}
GRAPHS = ("[0/0] forward", "[0/0] backward", "[1/0] inference")


def test_report_on_real_session(demo_run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(SECRET_VAR, SECRET)
    shot = tmp_path / "train_step-test_0-0_forward_lowering_120000.png"
    shot.write_bytes(b"\x89PNG\r\n\x1a\nfake")
    out = build_report(demo_run, stood=STOOD, screenshots=[str(shot)])
    assert out == os.path.join("inductor-step-sessions", "report-train_step-test")
    report = _read(os.path.join(out, "REPORT.md"))
    h = _header(demo_run)

    # versions, device, command line
    for key in ("torch", "triton", "python"):
        # a CPU torch's Triton is said to be unused
        note = " (installed, unused: torch is a CPU build)" if key == "triton" and h[key] and not h.get("cuda") else ""
        value = h[key] if h[key] is not None else "not installed"  # a CPU torch without Triton
        assert f"| {key} | {value}{note} |" in report
    assert f"| device | {h['device']} |" in report
    assert "device_name" in report
    assert "python '<path>/train_step.py'" in report or "python <path>/train_step.py" in report
    # graphs and the stages each reached, where the user stood, timings
    for g in GRAPHS:
        assert f"| `{g}` | dynamo → aot → lowering → scheduling → loopbody → codegen → run |" in report
    assert "graph `[0/0] forward`, stage `lowering`, selection `buf3`" in report
    assert "#### Run timings" in report and "speedup" in report
    assert "None recorded" in report  # no error

    # one runnable repro per graph, each valid Python
    repros = sorted(n for n in os.listdir(out) if n.startswith("repro_"))
    assert repros == ["repro_0-0_backward.py", "repro_0-0_forward.py", "repro_1-0_inference.py"]
    for name in repros:
        src = _read(os.path.join(out, name))
        compile(src, name, "exec")
        assert "run_repro" in src
        assert f"`{name}`" in report
    assert not [n for n in os.listdir(out) if n.startswith("graph_")]

    # session copy and screenshots
    with open(demo_run, "rb") as a, open(os.path.join(out, os.path.basename(demo_run)), "rb") as b:
        assert a.read() == b.read()
    assert os.path.isfile(os.path.join(out, "screenshots", shot.name))
    assert f"`screenshots/{shot.name}`" in report

    # privacy: no environment values, no absolute paths outside the working directory
    assert SECRET not in report
    assert os.environ.get("PATH", "/nonexistent-path") not in report
    assert "/tmp/torchinductor" not in report and "torchinductor_" not in report
    assert REPO not in report
    assert not re.search(r"(?<![\w<>:/.])/(home|root|tmp|usr|work)/", report)
    assert "contain absolute paths" in report


def test_report_include_paths(demo_run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = build_report(demo_run, str(tmp_path / "r"), include_paths=True)
    report = _read(os.path.join(out, "REPORT.md"))
    assert _header(demo_run)["script"] in report
    assert "<path>/" not in report


def test_export_real_session(demo_run, tmp_path):
    log = export_trace(demo_run, str(tmp_path / "trace"))
    assert os.path.basename(log).startswith("dedicated_log_torch_trace_") and log.endswith(".log")
    events = _events(log)
    names = [next(iter(md)) for md, _ in events]
    starts = [(md["frame_id"], md["frame_compile_id"]) for md, _ in events if "dynamo_start" in md]
    assert starts == [(0, 0), (1, 0)]
    for md, _ in events:
        if "str" not in md:
            assert md.get("attempt") == 0 and "frame_id" in md, md
    arts = {md["artifact"]["name"] for md, _ in events if "artifact" in md}
    assert set(ARTIFACTS.values()) - {"inductor_step_error"} <= arts
    assert {"fx_graph_runnable", "inductor_post_grad_graph"} <= arts
    for event in ("dynamo_output_graph", "aot_joint_graph", "aot_forward_graph", "aot_backward_graph",
                  "aot_inference_graph", "inductor_output_code", "dynamo_cpp_guards_str", "compilation_metrics"):
        assert event in names, event
    assert names.count("inductor_output_code") == 3 and names.count("compilation_metrics") == 2

    tl = _run_tlparse(log, str(tmp_path / "tl"))
    assert {"[0/0]", "[1/0]"} <= set(tl)
    for cid in ("[0/0]", "[1/0]"):
        got = _names(tl, cid)
        for want in ("dynamo_output_graph", "inductor_post_grad_graph", "inductor_output_code", "fx_graph_runnable",
                     "dynamo_cpp_guards_str", "compilation_metrics", *[a for a in ARTIFACTS.values() if a != "inductor_step_error"]):
            assert want in got, (cid, want, got)
    assert {"aot_forward_graph", "aot_backward_graph", "bwd_compilation_metrics"} <= _names(tl, "[0/0]")
    assert "aot_inference_graph" in _names(tl, "[1/0]")
    index = _read(str(tmp_path / "tl" / "index.html"))
    assert "inductor_step_ir_buffers" in index and "status-ok'>[1/0]" in index
