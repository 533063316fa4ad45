"""``inductor-step report`` and ``export``: bundles and TORCH_TRACE logs from real sessions.

One real session of the bundled demo is recorded per module (``--headless --run``, ~10 s); the
compile-error session is the checked-in fixture.  The export is read back by ``tlparse`` when it is
installed (``pip install tlparse``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile

import pytest

from inductor_step.session.export import ARTIFACTS, compile_id_fields, export_trace, main_export
from inductor_step.session.report import PathScrubber, build_report, main_report

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ERROR_FIXTURE = os.path.join(REPO, "tests", "fixtures", "codegen_error.jsonl")
SECRET_VAR = "INDUCTOR_STEP_TEST_SECRET"
SECRET = "s3cr3t-value-8d1f"
STOOD = {"graph": "[0/0] forward", "stage": "lowering", "selection": "buf3"}
GRAPHS = ("[0/0] forward", "[0/0] backward", "[1/0] inference")


@pytest.fixture(scope="module")
def demo_session(tmp_path_factory) -> str:
    """A fresh session of the bundled demo, with run timings and fx_graph_runnable artifacts."""
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed: cannot record a real session")
    d = tmp_path_factory.mktemp("session")
    path = str(d / "train_step-test.jsonl")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), REPO) if p), **{SECRET_VAR: SECRET})
    proc = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--run", "--record", path],
                          cwd=str(d), env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return path


def _header(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.loads(f.readline())


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


# --------------------------------------------------------------------------- report

def test_report_on_real_session(demo_session, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(SECRET_VAR, SECRET)
    shot = tmp_path / "train_step-test_0-0_forward_lowering_120000.png"
    shot.write_bytes(b"\x89PNG\r\n\x1a\nfake")
    out = build_report(demo_session, stood=STOOD, screenshots=[str(shot)])
    assert out == os.path.join("inductor-step-sessions", "report-train_step-test")
    report = _read(os.path.join(out, "REPORT.md"))
    h = _header(demo_session)

    # versions, device, command line
    for key in ("torch", "triton", "python"):
        # a CPU torch's Triton is said to be unused
        note = " (installed, unused: torch is a CPU build)" if key == "triton" and h[key] and not h.get("cuda") else ""
        assert f"| {key} | {h[key]}{note} |" in report
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
    with open(demo_session, "rb") as a, open(os.path.join(out, os.path.basename(demo_session)), "rb") as b:
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


def test_report_include_paths(demo_session, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = build_report(demo_session, str(tmp_path / "r"), include_paths=True)
    report = _read(os.path.join(out, "REPORT.md"))
    assert _header(demo_session)["script"] in report
    assert "<path>/" not in report


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


def test_export_real_session(demo_session, tmp_path):
    log = export_trace(demo_session, str(tmp_path / "trace"))
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
