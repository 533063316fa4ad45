"""Source paths as a person reads them, the one place every pane, the headless output and
the report shorten them: relative to the script's folder for the user's own files, from the package
name down for installed code (``transformers/models/qwen2/modeling_qwen2.py:47``), as torch's stack
traces and tlparse show them."""

from __future__ import annotations

import os
import re
from typing import Any

#: folders whose contents are installed code: what follows is the package path
_INSTALLED = re.compile(r"[\\/](?:site-packages|dist-packages)[\\/]")
#: the standard library (``/usr/lib/python3.11/json/__init__.py``)
_STDLIB = re.compile(r"[\\/]lib[\\/]python3\.\d+[\\/]")
#: a path with its line in torch's texts: ``File "/a/b.py", line 3`` and ``# File: /a/b.py:3 in f``
_IN_TEXT = re.compile(r'(File ")([^"\n]+)(", line \d+)|(# File: |user code at |user code: | at )(/\S+?)(:\d+)')


def script_dir(header: dict[str, Any] | None) -> str | None:
    """The folder of the session's script (its header's ``script``, made absolute with its ``cwd``),
    None when the header names none."""
    h = header or {}
    script = h.get("script")
    if not script:
        return None
    if not os.path.isabs(script) and h.get("cwd"):
        script = os.path.join(h["cwd"], script)
    return os.path.dirname(os.path.normpath(script))


def split_line(where: str) -> tuple[str, str]:
    """``("/a/b.py", "47")`` for ``"/a/b.py:47"``; ``(where, "")`` without a line number."""
    path, sep, line = where.rpartition(":")
    return (path, line) if sep and line.isdigit() else (where, "")


def installed(path: str) -> bool:
    """Is ``path`` installed code (site-packages, dist-packages, the standard library)?"""
    return bool(_INSTALLED.search(path) or _STDLIB.search(path))


def short_path(where: str | None, script_dir: str | None) -> str | None:
    """``where`` (a path, or ``path:line``) as a person reads it: relative to ``script_dir`` when
    under it; from the package down for installed code (``torch/optim/adam.py:47``); else relative
    to nothing (kept whole).  The line number is never dropped."""
    if not where:
        return where
    path, line = split_line(where)
    base = (script_dir or "").rstrip("\\/")
    if base and path.startswith(base + os.sep):
        path = path[len(base) + 1:]
    else:
        m = _INSTALLED.search(path)
        if m is None and not (base and path.startswith(base)):
            m = _STDLIB.search(path)
        if m is not None:
            path = path[m.end():]
    return f"{path}:{line}" if line else path


def code_label(where: str | None, script_dir: str | None) -> str:
    """``your code: model.py:12`` for the user's own files, ``library code: torch/nn/functional.py:5``
    for installed ones."""
    short = short_path(where, script_dir) or "?"
    return f"{'library code' if where and installed(split_line(where)[0]) else 'your code'}: {short}"


def cut_words(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, cut after a whole word with ``…`` (never mid-word)."""
    text = " ".join(str(text).split())
    if len(text) <= width:
        return text
    head = text[:width - 1]
    return (head.rsplit(" ", 1)[0] if " " in head else head).rstrip(" ,;:") + "…"


def shorten_in_text(text: str, script_dir: str | None) -> str:
    """``text`` with the paths of torch's ``File "...", line N``, ``# File: ...:N`` and ``Graph break
    in user code at ...:N`` shortened
    (:func:`short_path`); line count unchanged."""
    if "File" not in text:
        return text

    def sub(m: re.Match[str]) -> str:
        if m.group(1):
            return m.group(1) + (short_path(m.group(2), script_dir) or "") + m.group(3)
        return m.group(4) + (short_path(m.group(5), script_dir) or "") + m.group(6)

    # only the lines that can hold a match (every alternative of _IN_TEXT has "File", " at " or "user code: ",
    # and none spans lines) go through the pattern: a large graph's guards are hundreds of KB of other lines
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if "File" in line or " at " in line or "user code: " in line:
            lines[i] = _IN_TEXT.sub(sub, line)
    return "\n".join(lines)
