"""The loops of a generated C++ kernel, read from its source alone (no inductor-step code): test_fidelity's checks."""

from __future__ import annotations

import re


def innermost_loops(lines: list[str]) -> list[int]:
    """Per line of a C++ kernel (0-based), the 1-based line of the innermost ``for`` holding it (0: none)."""
    out, stack, pending = [], [], 0
    for i, line in enumerate(lines):
        if re.match(r"^\s*for\s*\(", line):
            pending = i + 1
        for ch in line:
            if ch == "{":
                stack.append(pending)
                pending = 0
            elif ch == "}" and stack:
                stack.pop()
        out.append(next((x for x in reversed(stack) if x), 0))
    return out


def store_loops(lines: list[str], ptr: str) -> dict[int, list[int]]:
    """Innermost loop -> the lines in it that store through ``ptr`` (C++)."""
    loops = innermost_loops(lines)
    out: dict[int, list[int]] = {}
    for i, t in enumerate(lines):
        if re.search(rf"\.store\({ptr}\b|\b{ptr}\[[^\]]*\]\s*=[^=]", t):
            out.setdefault(loops[i], []).append(i + 1)
    return out


__all__ = ["innermost_loops", "store_loops"]
