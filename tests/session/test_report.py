"""``inductor-step report`` and ``export``: bundles and TORCH_TRACE logs from checked-in sessions (no torch:
the compile-error fixture and sessions written here).  The export is read back by ``tlparse`` when it is
installed (``pip install tlparse``).  The same on a real recording of the bundled demo:
tests/tracer/test_report_real.py."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile

import pytest

from inductor_step.cli.export import main_export
from inductor_step.cli.report import main_report
from inductor_step.session.export import compile_id_fields, export_trace
from inductor_step.session.report import PathScrubber, build_report

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ERROR_FIXTURE = os.path.join(REPO, "tests", "fixtures", "codegen_error.jsonl")


def _header(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.loads(f.readline())


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


# --------------------------------------------------------------------------- report

def test_report_on_compile_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = build_report(ERROR_FIXTURE, stood={"graph": "[0/0] inference", "stage": "codegen"})
    report = _read(os.path.join(out, "REPORT.md"))
    assert report.startswith("### torch.compile: InductorError: CppCompileError: C++ compile error in codegen of [0/0] inference")
    assert "- stage: **codegen**" in report
    assert "- compile id: **[0/0]**" in report
    assert "`InductorError: CppCompileError: C++ compile error`" in report
    assert "<details><summary>Traceback" in report and "</details>" in report
    assert "error: ‘compile’ was not declared in this scope" in report  # the compiler's own error line
    assert "**codegen (failed)**" in report
    assert len(report) < 65536  # GitHub's limit for an issue body
    assert "/tmp/torchinductor" not in report and "/work/venv" not in report
    assert "torch/_inductor/compile_fx.py" in report and "<site-packages>" not in report  # from the package down
    for name in os.listdir(out):
        if name.endswith(".py"):
            compile(_read(os.path.join(out, name)), name, "exec")


def test_report_without_runnable_writes_post_grad_graph(tmp_path, monkeypatch):
    """An older session (no fx_graph_runnable): the post-grad graph instead, labelled not runnable."""
    monkeypatch.chdir(tmp_path)
    old = tmp_path / "old.jsonl"
    with open(ERROR_FIXTURE, encoding="utf-8") as src, open(old, "w", encoding="utf-8") as dst:
        for line in src:
            if json.loads(line).get("type") != "artifact":
                dst.write(line)
    out = build_report(str(old))
    assert not [n for n in os.listdir(out) if n.startswith("repro_")]
    graph = _read(os.path.join(out, "graph_0-0_inference.txt"))
    assert graph.startswith("# NOT RUNNABLE")
    assert "def forward" in graph
    report = _read(os.path.join(out, "REPORT.md"))
    assert "holds no `fx_graph_runnable`" in report
    assert "`graph_0-0_inference.txt` (not runnable)" in report


def test_report_archive(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = build_report(ERROR_FIXTURE, "bundle", archive=True)
    assert path == "bundle.tar.gz" and os.path.isfile(path) and os.path.isdir("bundle")
    with tarfile.open(path) as tar:
        names = tar.getnames()
    assert "bundle/REPORT.md" in names and "bundle/codegen_error.jsonl" in names
    # building again replaces the earlier bundle; a directory holding other things is refused
    assert build_report(ERROR_FIXTURE, "bundle") == "bundle"
    os.makedirs("busy")
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError):
        build_report(ERROR_FIXTURE, "busy")


def test_main_report(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    shots = tmp_path / "shots"
    shots.mkdir()
    (shots / "codegen_error_0-0_inference_codegen_1.svg").write_text("<svg/>")
    (shots / "other-session_0-0_inference_codegen_1.svg").write_text("<svg/>")
    assert main_report([ERROR_FIXTURE, "--out", "rep", "--screenshots", str(shots), "--archive"]) == 0
    assert capsys.readouterr().out.strip() == "rep.tar.gz"
    assert os.listdir("rep/screenshots") == ["codegen_error_0-0_inference_codegen_1.svg"]

    assert main_report(["missing.jsonl"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("inductor-step: ") and err.count("\n") == 1 and "missing.jsonl" in err
    (tmp_path / "bad.jsonl").write_text('{"type": "stop"}\n')
    assert main_report(["bad.jsonl"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("inductor-step: ") and err.count("\n") == 1
    assert main_report([str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("inductor-step: ")


def test_path_scrubber(tmp_path):
    s = PathScrubber(str(tmp_path))
    assert s.text('File "/home/alice/proj/train.py", line 3') == 'File "<path>/train.py", line 3'
    assert s.text("g++ -I/usr/include/python3.11 x.cpp") == "g++ -I<path>/python3.11 x.cpp"
    assert s.text("/opt/venv/lib/python3.11/site-packages/torch/_inductor/graph.py") == "torch/_inductor/graph.py"
    assert s.text(f"{tmp_path}/train.py") == "train.py"
    for keep in ("[0/0] forward", "x / 2", "see https://github.com/pytorch/pytorch/issues/1", "a/b/c", "// comment",
                 "f32[32, 64]", "1/sqrt(x)"):
        assert s.text(keep) == keep
    assert PathScrubber(str(tmp_path), keep=True).text("/home/alice/x.py") == "/home/alice/x.py"


# --------------------------------------------------------------------------- export

_GLOG = re.compile(r"^V(\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{6}) (\d+) ([^:]+):(\d+)\] (\{.*\})$")


def _events(log: str) -> list[tuple[dict, str | None]]:
    """(metadata, payload) per event of a TORCH_TRACE log, checking the framing as tlparse does."""
    out: list[tuple[dict, list[str] | None]] = []
    with open(log, encoding="utf-8") as f:
        for line in f.read().split("\n"):
            if not line:
                continue
            if line.startswith("\t"):
                assert out and out[-1][1] is not None, f"payload line without has_payload: {line[:80]}"
                out[-1][1].append(line[1:])
                continue
            m = _GLOG.match(line)
            assert m, f"not a glog trace line: {line[:120]}"
            md = json.loads(m.group(10))
            out.append((md, [] if "has_payload" in md else None))
    events = [(md, "\n".join(p) if p is not None else None) for md, p in out]
    for md, payload in events:
        if payload is not None:
            assert hashlib.md5(payload.encode("utf-8")).hexdigest() == md["has_payload"]
    return events


def _tlparse() -> str | None:
    exe = shutil.which("tlparse")
    if exe:
        return exe
    cand = os.path.join(os.path.dirname(sys.executable), "tlparse")
    return cand if os.access(cand, os.X_OK) else None


def _run_tlparse(log: str, out: str) -> dict:
    exe = _tlparse()
    if exe is None:
        pytest.skip("tlparse is not installed (pip install tlparse): cannot check the export with it")
    proc = subprocess.run([exe, log, "-o", out, "--overwrite", "--no-browser", "--strict"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open(os.path.join(out, "compile_directory.json"), encoding="utf-8") as f:
        return json.load(f)


def _names(directory: dict, cid: str) -> set[str]:
    return {re.sub(r"(_[a-z0-9]{52})?_\d+\.\w+$", "", a["name"]) for a in directory[cid]["artifacts"]}


def test_compile_id_fields():
    assert compile_id_fields("[1/0]") == {"frame_id": 1, "frame_compile_id": 0, "attempt": 0}
    assert compile_id_fields("[0/2_1]") == {"frame_id": 0, "frame_compile_id": 2, "attempt": 1}
    assert compile_id_fields("[!0/3/1]") == {"compiled_autograd_id": 0, "frame_id": 3, "frame_compile_id": 1, "attempt": 0}
    assert compile_id_fields(None) == {} and compile_id_fields("[?]") == {}


def test_export_compile_error(tmp_path):
    log = export_trace(ERROR_FIXTURE, str(tmp_path / "trace"))
    events = _events(log)
    metrics = [md["compilation_metrics"] for md, _ in events if "compilation_metrics" in md]
    assert len(metrics) == 1
    assert metrics[0]["fail_type"] == "InductorError" and metrics[0]["fail_reason"] == "CppCompileError: C++ compile error"
    err = [p for md, p in events if md.get("artifact", {}).get("name") == "inductor_step_error"]
    assert len(err) == 1 and "CppCompileError" in err[0]

    tl = _run_tlparse(log, str(tmp_path / "tl"))
    assert "inductor_step_error" in _names(tl, "[0/0]")
    assert "status-error'>[0/0]" in _read(str(tmp_path / "tl" / "index.html"))
    assert "CppCompileError" in _read(str(tmp_path / "tl" / "failures_and_restarts.html"))


def test_main_export(tmp_path, capsys):
    assert main_export([ERROR_FIXTURE, str(tmp_path / "t")]) == 0
    assert os.path.isfile(capsys.readouterr().out.strip())
    assert main_export([str(tmp_path / "missing.jsonl"), str(tmp_path / "t")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("inductor-step: ") and err.count("\n") == 1
    (tmp_path / "file").write_text("x")
    assert main_export([ERROR_FIXTURE, str(tmp_path / "file")]) == 2
    assert capsys.readouterr().err.startswith("inductor-step: ")
