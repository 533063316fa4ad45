"""The tree keeps its shape: private torch access only in the torch-access module, the UI
free of torch, and the app a router of modest size.  Static checks over the source, no imports."""

from __future__ import annotations

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRACER = os.path.join(ROOT, "tracer")
#: where ``torch._...`` may be touched (tracer/adapter/__init__.py says why: one place breaks on a new torch)
TORCH_ACCESS = os.path.join(TRACER, "adapter") + os.sep


def _py_files(folder: str) -> list[str]:
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs if f.endswith(".py"))


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def test_private_torch_is_touched_only_in_the_torch_access_module():
    """No ``torch._x`` attribute, ``import torch._x`` or ``from torch._x import`` in the tracer outside
    tracer/adapter/ (mentions in strings and comments are fine)."""
    found = []
    for path in _py_files(TRACER):
        if path.startswith(TORCH_ACCESS):
            continue
        tree = ast.parse(open(path, encoding="utf-8").read(), path)
        for node in ast.walk(tree):
            name = None
            if isinstance(node, ast.Attribute):
                name = _dotted(node)
            elif isinstance(node, ast.Import):
                name = next((a.name for a in node.names if a.name.startswith("torch._")), None)
            elif isinstance(node, ast.ImportFrom):
                name = node.module if (node.module or "").startswith("torch._") else None
            if name and name.startswith("torch._"):
                found.append(f"{os.path.relpath(path, ROOT)}:{node.lineno}: {name}")
    assert not found, "private torch outside tracer/adapter/:\n" + "\n".join(sorted(set(found)))


def test_the_app_routes_and_holds_global_keys_only():
    """tui/app.py stays a router (under about 500 lines, no per-stage switch)."""
    src = open(os.path.join(ROOT, "tui", "app.py"), encoding="utf-8").read()
    assert len(src.splitlines()) <= 520
    assert "if stage ==" not in src and "stage == \"" not in src


def test_every_package_folder_is_installed():
    """Each folder of tracer/, session/, live/, tui/ and cli/ with an __init__.py is listed in pyproject.toml's packages (a
    wheel built without one lacks its modules; the editable install would hide that)."""
    import tomllib

    listed = set(tomllib.load(open(os.path.join(ROOT, "pyproject.toml"), "rb"))["tool"]["setuptools"]["packages"])
    missing = []
    for top in ("tracer", "session", "live", "tui", "cli"):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            if "__init__.py" in files and "__pycache__" not in d:
                name = "inductor_step." + os.path.relpath(d, ROOT).replace(os.sep, ".")
                if name not in listed:
                    missing.append(name)
    assert not missing, f"not in pyproject.toml's packages: {missing}"


def test_the_command_line_imports_textual_only_inside_the_functions_that_start_the_ui():
    """No module of cli/ imports Textual or tui/ at module level: ``inductor-step --headless``, ``report``,
    ``export`` and ``gate`` load no Textual.  (import-linter sees imports inside functions too, so the
    contract in pyproject.toml names the one edge ``cli.main -> tui.app``; this test says where it may stand.)"""
    found = []
    for path in _py_files(os.path.join(ROOT, "cli")):
        tree = ast.parse(open(path, encoding="utf-8").read(), path)
        for node in tree.body:  # module level only
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{os.path.relpath(path, ROOT)}:{node.lineno}: {n}" for n in names
                      if n.split(".")[0] == "textual" or n.startswith("inductor_step.tui")]
    assert not found, "module-level Textual / tui imports in cli/:\n" + "\n".join(found)
    assert os.path.isfile(os.path.join(ROOT, "cli", "main.py"))
