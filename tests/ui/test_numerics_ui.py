"""Pane e: a person opens a recorded session, goes to the wrong-lowering graph, presses e, then
Enter, and the first divergent buffer is selected in every pane; no torch needed."""

from __future__ import annotations

import os


FIXTURE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "numerics.jsonl")


def _row(app, stage: str) -> tuple[str, ...]:
    t = app.query_one(f"#table-{stage}")
    return tuple(str(c) for c in t.get_row_at(t.cursor_row))


def test_e_then_enter_goes_to_the_first_divergence_in_every_pane(app_driver):
    seen: dict = {}

    async def steps(app, pilot):
        app.show_graph("[2/0] inference")
        await pilot.press("1")  # start away from the buffer: the dynamo pane, its first row
        await pilot.press("e")
        await pilot.pause()
        seen["stage"] = app.view.stage
        seen["rows"] = app.query_one("#table-numerics").row_count
        await pilot.press("home", "enter")
        await pilot.pause()
        seen["selected"] = app.view.selected
        seen["numerics_row"] = _row(app, "numerics")
        seen["code"] = app.query_one("#code-numerics").text
        await pilot.press("3")
        await pilot.pause()
        seen["lowering_row"] = _row(app, "lowering")
        await pilot.press("e", "enter")  # Enter on the first divergence: its kernel in pane 6
        await pilot.pause()
        seen["after"] = (app.view.stage, app.view.selected)

    app = app_driver(steps, size=(160, 50), path=FIXTURE)
    sus = app.session.numerics["[2/0] inference"]["first_suspect"]
    assert seen["stage"] == "numerics" and seen["rows"] == 2
    assert seen["selected"] == sus["buffer"] == "buf1"
    assert seen["numerics_row"][0] == ">" and seen["numerics_row"][1] == "buf1" and "SUSPECT" in seen["numerics_row"]
    assert seen["code"].startswith("inputs: real, the script's first call of this graph\nfirst suspect divergence: buf1")
    assert "tanh" in seen["code"]
    assert "buf1" in seen["lowering_row"]  # pane 3 follows the selection
    assert seen["after"] == ("codegen", "buf1")


def test_open_shows_numerics_without_torch():
    """``--open`` of the recording on a machine without torch: pane e lists the buffers, Enter selects the first
    divergence (torch imports blocked, as tests/e2e/test_open_without_torch.py does)."""
    import subprocess
    import sys
    import textwrap

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    program = textwrap.dedent('''
        import asyncio, sys

        class NoTorch:
            def find_spec(self, name, path=None, target=None):
                if name == "torch" or name.startswith("torch.") or name == "triton":
                    raise ImportError(f"{name} is not installed here (blocked by the test)")
                return None

        sys.meta_path.insert(0, NoTorch())
        from inductor_step.session.format import read_session
        from inductor_step.tui.app import StepApp

        async def main():
            path = sys.argv[1]
            app = StepApp(messages=list(read_session(path)), session_path=path, screenshots="/tmp")
            async with app.run_test(size=(120, 40)) as pilot:
                app.show_graph("[1/0] inference")
                await pilot.press("e", "enter")
                await pilot.pause()
                print("ROWS", app.query_one("#table-numerics").row_count, "SELECTED", app.view.selected)
            print("TORCH_IMPORTED", "torch" in sys.modules)

        asyncio.run(main())
    ''')
    env = dict(os.environ, PYTHONPATH=root + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else ""))
    p = subprocess.run([sys.executable, "-c", program, FIXTURE], capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "ROWS 3 SELECTED buf2" in p.stdout  # [1/0]: the NaN's buffer (no divergence there)
    assert "TORCH_IMPORTED False" in p.stdout
