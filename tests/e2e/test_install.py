"""Installing inductor-step next to the other ``tracer`` and ``tui`` distributions on the package index
clobbers neither: our wheel puts only ``inductor_step`` into site-packages.

A fresh virtual environment gets PyPI's ``tracer`` and ``tui`` and then our wheel, all without
dependencies (no torch download: what is checked needs none).  Skipped, with the reason, when the
package index cannot be reached.  PyPI's ``tui`` (1.1.1, 2011) is Python 2 code, so no Python 3 can
import it; the test checks that its files are still the ones its own distribution installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMEOUT_S = 120


def _pip(*args: str, cwd: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=TIMEOUT_S)


CHECK = textwrap.dedent('''
    import importlib.metadata as md, importlib.util, os, subprocess, sys

    import tracer  # PyPI's tracer: a function-call tracing library
    print("TRACER", tracer.__file__, md.version("tracer"), hasattr(tracer, "HOOKS"))
    spec = importlib.util.find_spec("tui")  # PyPI's tui 1.1.1
    print("TUI", spec.origin, md.version("tui"))
    text = open(spec.origin).read()
    print("TUI_THEIRS", "docparser" in text and "inductor" not in text)
    installed = [str(f) for f in md.files("tui") if str(f).startswith("tui/")]
    print("TUI_FILES", sorted(installed))
    print("OURS_TOP", sorted({str(f).split("/")[0] for f in md.files("inductor-step")
                              if not str(f).startswith(("inductor_step-", "../"))}))

    import inductor_step.session.format as protocol
    import inductor_step.session.store, inductor_step.session.export, inductor_step.session.report, inductor_step.live.client
    print("OURS", protocol.FORMAT, inductor_step.session.store.__file__)
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--help"], capture_output=True, text=True)
    print("HELP", p.returncode, "usage: inductor-step" in p.stdout)
    print("TORCH_IMPORTED", "torch" in sys.modules)
''')


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    d = tmp_path_factory.mktemp("install")
    wheels = d / "wheels"
    p = _pip("download", "--no-deps", "--dest", str(wheels), "tracer", "tui")
    if p.returncode != 0:
        pytest.skip(f"the package index cannot be reached (pip download tracer tui: {p.stderr.strip()[-300:]})")
    had_build = os.path.exists(os.path.join(ROOT, "build"))
    p = _pip("wheel", "--no-deps", "--wheel-dir", str(wheels), ROOT)
    if not had_build:  # setuptools builds in the tree: leave it as it was
        shutil.rmtree(os.path.join(ROOT, "build"), ignore_errors=True)
    assert p.returncode == 0, p.stderr[-3000:]
    venv = d / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=TIMEOUT_S)
    py = str(venv / "bin" / "python")
    theirs = sorted(str(wheels / f) for f in os.listdir(wheels) if not f.startswith("inductor_step"))
    ours = [str(wheels / f) for f in os.listdir(wheels) if f.startswith("inductor_step")]
    assert len(ours) == 1, os.listdir(wheels)
    for group in (theirs, ours):  # theirs first: ours must not overwrite them
        p = _pip("--python", py, "install", "--no-deps", *group)
        assert p.returncode == 0, p.stderr[-3000:]
    p = subprocess.run([py, "-c", CHECK], capture_output=True, text=True, timeout=TIMEOUT_S, cwd=str(d),
                       env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout, str(venv)


def _line(out: str, key: str) -> str:
    return next(x for x in out.splitlines() if x.startswith(key + " "))


def test_other_tracer_and_tui_stay_theirs(fresh):
    out, venv = fresh
    tracer = _line(out, "TRACER").split()
    assert tracer[1] == os.path.join(venv, "lib", f"python{sys.version_info[0]}.{sys.version_info[1]}",
                                     "site-packages", "tracer", "__init__.py"), tracer
    assert tracer[3] == "True", tracer  # its own API (tracer.HOOKS), not our tracer/
    assert "TUI_THEIRS True" in out
    assert _line(out, "TUI").split()[1].startswith(venv)
    assert "'tui/__init__.py'" in _line(out, "TUI_FILES") and "'tui/formats.py'" in _line(out, "TUI_FILES")
    assert _line(out, "OURS_TOP") == "OURS_TOP ['inductor_step']"


def test_ours_imports_and_help_runs_without_torch(fresh):
    out, venv = fresh
    ours = _line(out, "OURS").split()
    assert ours[1].startswith("inductor-step/") and ours[2].startswith(venv)
    assert "HELP 0 True" in out
    assert "TORCH_IMPORTED False" in out
