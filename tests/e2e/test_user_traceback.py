"""Nothing of ours in a user's traceback: a C++ kernel that fails to build raises through the
compile-time hook around torch's ``_worker_compile_cpp``; the traceback the script's stderr and the session show
names torch's frames and the script's, never the agent's, and no temporary ``inductor-step-import-*`` folder."""

from __future__ import annotations

import os
import subprocess
import sys

from inductor_step.session.format import read_session

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "tests", "scripts", "cpp_compile_error.py")


def _our_frames(text: str) -> list[str]:
    ours = os.path.join(os.path.realpath(ROOT), "tracer")
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith('File "'):
            continue
        path = os.path.realpath(line.split('"')[1])
        if "inductor-step-import-" in line or path.startswith(ours + os.sep):
            out.append(line)
    return out


def test_a_cpp_build_error_shows_no_frame_of_ours(tmp_path):
    session = str(tmp_path / "s.jsonl")
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--record", session, SCRIPT],
                       cwd=str(tmp_path), capture_output=True, text=True, timeout=600)
    assert p.returncode == 1, p.stderr[-2000:]
    err = next(m for m in read_session(session) if m.get("type") == "error")
    tb = err["traceback"]
    assert "cpp_compile_error.py" in tb and "_worker_compile_cpp" in tb  # torch's frame stays
    assert "CppCompileError" in tb or "InductorError" in tb
    assert _our_frames(tb) == []
    assert _our_frames(p.stdout + p.stderr) == []


def test_no_temporary_import_folder_where_this_python_imports_the_clone(tmp_path):
    """A clone installed editable (``pip install -e .``: a finder maps ``inductor_step`` to the clone's root)
    gives the agent no PYTHONPATH folder of its own; only another interpreter (``--python``) needs one."""
    code = f"""
import importlib.abc, importlib.util, sys
ROOT = {ROOT!r}
class Finder(importlib.abc.MetaPathFinder):  # what setuptools' editable install puts on sys.meta_path
    def find_spec(self, name, path=None, target=None):
        if name == "inductor_step":
            return importlib.util.spec_from_file_location(name, ROOT + "/__init__.py",
                                                          submodule_search_locations=[ROOT])
sys.meta_path.insert(0, Finder())
from inductor_step.live import client
assert client.__file__.startswith(ROOT), client.__file__
print(client.import_root(), client.import_root(sys.executable), "PYTHONPATH" in client.agent_env()
      and "inductor-step-import-" in client.agent_env()["PYTHONPATH"])
other = client.import_root("/usr/bin/python3")
print("inductor-step-import-" in other)
"""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                       cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.split() == ["None", "None", "False", "True"]
