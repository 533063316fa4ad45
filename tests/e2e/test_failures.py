"""Bad days: compiles that fail in a stage, scripts that crash or exit early, scripts that never
compile.  Each one runs for real (torch.compile on CPU) through ``--headless``; the session file is
then opened in the UI the way ``--open`` does."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from dataclasses import dataclass

import pytest

from inductor_step.session.format import read_session
from inductor_step.tui.app import StepApp
from inductor_step.tui.codeview import CodeView

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "tests", "scripts")


@dataclass
class Result:
    rc: int
    stdout: str
    stderr: str
    session: str
    cwd: str

    def messages(self):
        return list(read_session(self.session))


def run(tmp_path, name: str) -> Result:
    session = str(tmp_path / f"{name}.jsonl")
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--record", session,
                        os.path.join(SCRIPTS, f"{name}.py")], cwd=str(tmp_path), capture_output=True,
                       text=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), ROOT) if p)), timeout=600)
    return Result(p.returncode, p.stdout, p.stderr, session, str(tmp_path))


#: the script each test runs (the parametrized test names it in ``name``)
SCRIPT_OF = {
    "test_os_exit_keeps_the_session_and_its_exit_status": "os_exit",
    "test_segfault_is_reported_by_signal_name_and_the_session_survives": "segfault",
    "test_script_that_never_compiles_says_so": "no_compile",
    "test_script_that_fails_before_compiling_names_its_error_not_a_missing_compile": "raises_before",
    "test_users_own_exception_after_compiling_is_theirs": "raises_after",
    "test_scripts_atexit_handlers_run_as_under_plain_python": "atexit_writer",
}


@pytest.fixture(scope="module")
def runs(request, tmp_path_factory):
    """The scripts of the selected tests, each run once in a folder of its own, two side by side (each
    run is one small compile, mostly one Python thread): {script name: future of its :class:`Result`}."""
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    wanted: list[str] = []
    for item in request.session.items:
        if item.module is not request.module:
            continue
        callspec = getattr(item, "callspec", None)
        name = callspec.params.get("name") if callspec else SCRIPT_OF.get(item.originalname)
        if name and name not in wanted:
            wanted.append(name)
    with ThreadPoolExecutor(2) as pool:
        yield {name: pool.submit(run, tmp_path_factory.mktemp(name), name) for name in wanted}


def stages(msgs):
    return [m["stage"] for m in msgs if m.get("type") == "stop"]


def errors(msgs):
    return [m for m in msgs if m.get("type") == "error"]


@pytest.mark.parametrize("name, stage, reached", [
    ("lowering_error", "lowering", ["dynamo", "aot"]),
    ("scheduling_error", "scheduling", ["dynamo", "aot", "lowering"]),
    ("cpp_compile_error", "codegen", ["dynamo", "aot", "lowering", "scheduling", "loopbody", "codegen"]),
])
def test_compile_failure_is_shown_in_its_stage_with_everything_before_it(runs, name, stage, reached):
    r = runs[name].result()
    assert r.rc != 0
    msgs = r.messages()
    assert stages(msgs) == reached
    (err,) = errors(msgs)
    assert err["stage"] == stage and err["compile_id"] == "[0/0]"
    assert f"error in [0/0] inference {stage}:" in r.stderr
    # the UI opens the recorded session on the failing stage's pane, with the error in it
    app = StepApp(messages=msgs, session_path=r.session)
    seen = {}

    async def main():
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await pilot.press(str(["dynamo", "aot", "lowering", "scheduling", "loopbody", "codegen"].index(stage) + 1))
            await pilot.pause()
            seen["status"] = str(app.query_one("#status").render())
            seen["bar"] = str(app.query_one("#stagebar").render())
            seen["code"] = app.query_one(f"#code-{stage}", CodeView).text

    asyncio.run(main())
    assert f"error in [0/0] inference {stage}" in seen["status"]
    assert f"✗{stage}" in seen["bar"]
    if stage != "codegen":
        assert f"{stage} failed" in seen["code"] and "injected" in seen["code"]


def test_os_exit_keeps_the_session_and_its_exit_status(runs):
    r = runs["os_exit"].result()
    assert r.rc == 7
    assert "exited with status 7 before it finished" in r.stderr
    msgs = r.messages()
    assert stages(msgs)[-1] == "codegen"
    assert msgs[-1]["type"] == "agent_exit" and msgs[-1]["returncode"] == 7, msgs[-1]


def test_segfault_is_reported_by_signal_name_and_the_session_survives(runs):
    r = runs["segfault"].result()
    assert r.rc == 128 + 11
    assert "was killed by SIGSEGV" in r.stderr
    assert "Traceback" not in r.stderr.split("inductor-step:")[-1]
    assert stages(r.messages())[-1] == "codegen"


def test_script_that_never_compiles_says_so(runs):
    r = runs["no_compile"].result()
    assert r.rc == 0
    assert "never compiled a graph with torch.compile" in r.stderr
    assert stages(r.messages()) == []


def test_script_that_fails_before_compiling_names_its_error_not_a_missing_compile(runs):
    r = runs["raises_before"].result()
    assert r.rc == 1
    (err,) = errors(r.messages())
    assert err["stage"] == "script"
    done = [m for m in r.messages() if m.get("type") == "done"][-1]
    assert "ModuleNotFoundError: No module named 'a_module_this_user_has_not_installed'" in done["message"]
    assert "never compiled" not in done["message"]
    assert "raises_before.py" in r.stderr


def test_users_own_exception_after_compiling_is_theirs(runs):
    r = runs["raises_after"].result()
    assert r.rc == 1
    (err,) = errors(r.messages())
    assert err["stage"] == "script" and err["compile_id"] is None
    assert "ValueError: the user's own bug" in err["message"]
    assert "raises_after.py" in err["traceback"]


def test_python_without_torch_gets_one_clear_line(tmp_path):
    """--python pointing at an interpreter without torch: one line, exit 2, a valid session."""
    base = os.path.join(sys.base_prefix, "bin", "python3")
    probe = subprocess.run([base, "-c", "import torch"], capture_output=True)
    if probe.returncode == 0:
        pytest.skip(f"{base} has torch installed; no torch-less interpreter to try")
    session = str(tmp_path / "s.jsonl")
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--python", base, "--record", session,
                        os.path.join(SCRIPTS, "no_compile.py")], cwd=str(tmp_path), capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), ROOT) if p)), timeout=120)
    assert p.returncode == 2
    lines = [x for x in p.stderr.splitlines() if x.startswith(("error", "inductor-step"))]
    assert any("torch is not installed for" in x for x in lines)
    assert "Traceback" not in p.stderr
    assert [m["type"] for m in read_session(session)][:2] == ["header", "error"]


def test_scripts_atexit_handlers_run_as_under_plain_python(runs):
    """The agent ends with os._exit; the script's atexit functions must still run, once."""
    r = runs["atexit_writer"].result()
    assert r.rc == 0
    with open(os.path.join(r.cwd, "results.txt"), encoding="utf-8") as f:
        assert f.read() == "written at exit\n"
    assert r.stdout.count("atexit handler ran") == 1
