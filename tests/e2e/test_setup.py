"""Set-up as README says it: no Triton among our dependencies, the app working where Triton is
missing, and README's set-up block still two commands that .ci/run runs, with the CPU-torch line inside it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "tests", "scripts")


def _readme() -> str:
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        return f.read()


def test_triton_is_not_a_dependency():
    import tomllib  # noqa: PLC0415

    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        deps = tomllib.load(f)["project"]["dependencies"]
    assert not [d for d in deps if re.match(r"\s*triton\b", d)], deps


def test_readmes_set_up_is_two_commands_that_ci_runs():
    text = _readme()
    block = text.split("## Set up", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = [ln for ln in block.strip().splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    assert len(commands) == 2, commands
    comments = [ln for ln in block.splitlines() if ln.lstrip().startswith("#")]
    assert any("pip install torch --index-url https://download.pytorch.org/whl/cpu" in c for c in comments), block
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as f:
        ci = f.read()
    test_command = "lint-imports && python -m pytest -n 3 --dist loadfile"  # three workers: the suite within 10 minutes
    assert "pip install -e '.[test]'" in ci and ci.count(test_command) == 2  # the newest torch and the oldest
    assert commands[1].split("#")[0].split() == f"pip install -e '.[test]' && {test_command}".split()
    setup = text.split("## Set up", 1)[1].split("## Use", 1)[0]
    assert "python -m pytest tests/ui tests/session" in setup and re.search(r"about \d+ minutes", setup)
    assert 'python -c "import torchvision"' in setup


def test_readme_names_functions_that_exist():
    from inductor_step.session.format import codec  # noqa: PLC0415

    text = _readme()
    assert "protocol.decode" not in text
    assert "inductor_step.session.format.codec.decode" in text and callable(codec.decode)


def test_a_compile_and_its_timing_work_where_triton_is_missing(tmp_path):
    """A CPU torch with no Triton (the agent's Python cannot import it): the script compiles, every stop comes,
    the run is timed, and the header says triton is missing."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(textwrap.dedent('''
        import sys
        class NoTriton:  # as if triton were not installed
            def find_spec(self, name, path=None, target=None):
                if name == "triton" or name.startswith("triton."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        sys.meta_path.insert(0, NoTriton())
    '''))
    session = str(tmp_path / "s.jsonl")
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--run", "--record", session,
                        os.path.join(SCRIPTS, "diff_recompile.py")], cwd=str(tmp_path), capture_output=True,
                       text=True, env=dict(os.environ, PYTHONPATH=path), timeout=600)
    assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]
    with open(session, encoding="utf-8") as f:
        msgs = [json.loads(x) for x in f if x.startswith('{"type":"header"') or '"type":"run"' in x[:40]]
    assert msgs[0]["type"] == "header" and msgs[0]["triton"] is None
    runs = [m for m in msgs if m["type"] == "run"]
    assert runs and all(not m.get("error") for m in runs), runs


def test_report_says_a_cpu_torchs_triton_is_unused(tmp_path):
    """REPORT.md listed Triton 3.9 beside a CPU torch 2.13 as if it compiled the kernels."""
    from inductor_step.session.report.bundle import build_report  # noqa: PLC0415

    src = os.path.join(ROOT, "tests", "fixtures", "demo.jsonl")
    with open(src, encoding="utf-8") as f:
        lines = f.readlines()
    head = json.loads(lines[0])
    head.update(torch="2.13.0+cpu", cuda=None, triton="3.9.0", device="cpu")
    path = tmp_path / "cpu.jsonl"
    path.write_text(json.dumps(head) + "\n" + "".join(lines[1:]))
    out = build_report(str(path), str(tmp_path / "bundle"))
    with open(os.path.join(out, "REPORT.md"), encoding="utf-8") as f:
        report = f.read()
    assert "| triton | 3.9.0 (installed, unused: torch is a CPU build) |" in report
