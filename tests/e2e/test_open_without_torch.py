"""A session recorded on the GPU box (H200, torch 2.11, Triton kernels) opens on a machine without
torch or a GPU: every pane renders, Triton kernels and GPU timings included; ``report`` and ``export``
of it work there too, and so does a session packed by the recorder (``inductor-step/2``)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PROGRAM = textwrap.dedent('''
    import asyncio, sys

    class NoTorch:
        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith("torch.") or name == "triton":
                raise ImportError(f"{name} is not installed here (blocked by the test)")
            return None

    sys.meta_path.insert(0, NoTorch())
    from inductor_step.session.format import read_session
    from inductor_step.tui.app import StepApp
    from inductor_step.tui.codeview import CodeView
    from inductor_step.tui.table import Table

    async def main():
        app = StepApp(messages=list(read_session("tests/fixtures/gpu_attention.jsonl")),
                      session_path="tests/fixtures/gpu_attention.jsonl", screenshots="/tmp")
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause()
            print("HEADER", app.session.header["device"], app.session.header.get("device_name"), app.session.header["torch"])
            for key, pane in zip("12345678", ["dynamo", "aot", "lowering", "scheduling", "loopbody", "codegen", "run", "linked"]):
                await pilot.press(key)
                await pilot.pause()
                table = app.query_one(f"#table-{pane}", Table)
                print("PANE", pane, table.row_count)
            await pilot.press("6")
            await pilot.pause()
            code = app.query_one("#code-codegen", CodeView).text
            print("TRITON", "@triton.jit" in code, "triton_" in code)
            run = app.session.runs.get(app.view.graph) or {}
            print("RUN", run.get("method"), len(run.get("kernels") or []))
        print("TORCH_IMPORTED", "torch" in sys.modules)

    asyncio.run(main())
''')


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def test_gpu_session_opens_without_torch():
    p = subprocess.run([sys.executable, "-c", PROGRAM], cwd=ROOT, capture_output=True, text=True, timeout=300,
                       env=_env())
    assert p.returncode == 0, p.stderr[-3000:]
    out = p.stdout
    assert "HEADER cuda NVIDIA H200 2.11" in out
    for pane in ("dynamo", "aot", "lowering", "scheduling", "loopbody", "codegen", "run", "linked"):
        line = next(x for x in out.splitlines() if x.startswith(f"PANE {pane} "))
        assert int(line.split()[-1]) > 0, line
    assert "TRITON True True" in out
    assert "RUN triton.testing.do_bench" in out
    assert "TORCH_IMPORTED False" in out


# the command line (python -m inductor_step ARGS) with torch and triton blocked
CLI = textwrap.dedent('''
    import runpy, sys

    class NoTorch:
        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith(("torch.", "triton")):
                raise ImportError(f"{name} is not installed here (blocked by the test)")
            return None

    sys.meta_path.insert(0, NoTorch())
    sys.argv = ["inductor-step", *sys.argv[1:]]
    try:
        runpy.run_module("inductor_step", run_name="__main__")
    finally:
        print("TORCH_IMPORTED", "torch" in sys.modules or "triton" in sys.modules)
''')


def _cli(*args: str, cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env=_env())


def _packed_copy(tmp_path) -> str:
    """tests/fixtures/gpu_attention.jsonl as the recorder writes sessions now (packed, inductor-step/2)."""
    from inductor_step.session import format as protocol
    from inductor_step.live.client import SessionWriter

    out = str(tmp_path / "gpu_attention_packed.jsonl")
    w = SessionWriter(out)
    for m in protocol.read_session(os.path.join(ROOT, "tests", "fixtures", "gpu_attention.jsonl")):
        if m["type"] == "header":
            m = {**m, "format": protocol.FORMAT}
        w.write(m)
    w.close()
    return out


def test_report_and_export_work_without_torch(tmp_path):
    """A bug-report bundle and a TORCH_TRACE-style log, from both the /1 fixture and a packed copy."""
    for name, session in (("plain", os.path.join(ROOT, "tests", "fixtures", "gpu_attention.jsonl")),
                          ("packed", _packed_copy(tmp_path))):
        cwd = tmp_path / name
        cwd.mkdir()
        p = _cli("report", session, "--out", str(cwd / "bundle"), cwd=str(cwd))
        assert p.returncode == 0, p.stderr[-3000:]
        assert "TORCH_IMPORTED False" in p.stdout
        report = (cwd / "bundle" / "REPORT.md").read_text()
        assert "| device_name | NVIDIA H200 |" in report and "| triton | 3.6.0 |" in report
        assert (cwd / "bundle" / "repro_0-0_forward.py").exists()
        p = _cli("export", session, str(cwd / "trace"), cwd=str(cwd))
        assert p.returncode == 0, p.stderr[-3000:]
        assert "TORCH_IMPORTED False" in p.stdout
        logs = [f for f in os.listdir(cwd / "trace") if f.endswith(".log")]
        assert logs, os.listdir(cwd / "trace")
        text = (cwd / "trace" / logs[0]).read_text()
        assert "inductor_output_code" in text and "@triton.jit" in text
