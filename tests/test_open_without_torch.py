"""A session recorded on the GPU box (H200, torch 2.11, Triton kernels) opens on a machine without
torch or a GPU: every pane renders, Triton kernels and GPU timings included."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = textwrap.dedent('''
    import asyncio, sys

    class NoTorch:
        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith("torch.") or name == "triton":
                raise ImportError(f"{name} is not installed here (blocked by the test)")
            return None

    sys.meta_path.insert(0, NoTorch())
    from inductor_step.tracer.protocol import read_session
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
            run = app.session.runs.get(app.view_graph) or {}
            print("RUN", run.get("method"), len(run.get("kernels") or []))
        print("TORCH_IMPORTED", "torch" in sys.modules)

    asyncio.run(main())
''')


def test_gpu_session_opens_without_torch():
    p = subprocess.run([sys.executable, "-c", PROGRAM], cwd=ROOT, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert p.returncode == 0, p.stderr[-3000:]
    out = p.stdout
    assert "HEADER cuda NVIDIA H200 2.11" in out
    for pane in ("dynamo", "aot", "lowering", "scheduling", "loopbody", "codegen", "run", "linked"):
        line = next(x for x in out.splitlines() if x.startswith(f"PANE {pane} "))
        assert int(line.split()[-1]) > 0, line
    assert "TRITON True True" in out
    assert "RUN triton.testing.do_bench" in out
    assert "TORCH_IMPORTED False" in out
