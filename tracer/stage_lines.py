"""Which Triton source line each line of a kernel's lower stages came from (TTIR/TTGIR ``loc``, LLIR
``!DILocation``, PTX ``.loc``, SASS ``//## File ..., line N``), and per Triton line a count of the
instructions it became by kind.  Standard library only: it reads the texts Triton and nvdisasm print."""

from __future__ import annotations

import os
import re
from typing import Any

#: the order in which the stages are cycled and shown
STAGES = ("ttir", "ttgir", "llir", "ptx", "sass")

_MLIR_DEF = re.compile(r"^(#loc\d*)\s*=\s*loc\((.*)\)\s*$")
_MLIR_FILE = re.compile(r'"([^"]+)":(\d+):(\d+)')
_MLIR_REF = re.compile(r"#loc\d*\b")


def _same_file(path: str, kernel_file: str) -> bool:
    return os.path.basename(path) == os.path.basename(kernel_file)


def _trailing_loc(line: str) -> str | None:
    """The text inside an op's own (last, balanced) ``loc(...)`` at the end of ``line``."""
    i = line.rfind(" loc(")
    if i < 0:
        i = line.rfind("loc(") - 1
        if i < -1 or (i >= 0 and line[i].isalnum()):
            return None
    start = line.find("(", i) + 1
    depth, j = 1, start
    while j < len(line) and depth:
        depth += {"(": 1, ")": -1}.get(line[j], 0)
        j += 1
    return line[start:j - 1] if depth == 0 else None


def mlir_lines(text: str, kernel_file: str) -> list[int | None]:
    """Per line of a TTIR/TTGIR module (MLIR with ``loc`` info, as in ``CompiledKernel.asm``), the
    1-based line of ``kernel_file`` it came from, or None (no location, or only in another file).
    ``#locN = loc(...)`` definitions are expanded; a ``callsite(callee at caller)`` resolves to the
    outermost call in the kernel's file (an inlined ``triton_helpers`` function maps to its call)."""
    defs: dict[str, str] = {}
    rows = text.split("\n")
    for row in rows:
        m = _MLIR_DEF.match(row.strip())
        if m:
            defs[m.group(1)] = m.group(2)
    memo: dict[str, str] = {}

    def expand(s: str, depth: int = 0) -> str:
        if depth > 50:
            return s
        return _MLIR_REF.sub(lambda m: "(" + expand_ref(m.group(0), depth + 1) + ")", s)

    def expand_ref(ref: str, depth: int) -> str:
        if ref not in memo:
            memo[ref] = ""  # cycle guard
            memo[ref] = expand(defs.get(ref, ""), depth)
        return memo[ref]

    out: list[int | None] = []
    for row in rows:
        loc = None if row.startswith("#loc") else _trailing_loc(row)
        line = None
        if loc:
            full = expand(loc)
            hits = [int(m.group(2)) for m in _MLIR_FILE.finditer(full) if _same_file(m.group(1), kernel_file)]
            if hits:
                line = hits[-1] if "callsite" in full else hits[0]
        out.append(line)
    return out


_DBG = re.compile(r"!dbg (!\d+)")
_DILOC = re.compile(r"^(!\d+) = (?:distinct )?!DILocation\((.*)\)\s*$")


def llir_lines(text: str, kernel_file: str) -> list[int | None]:
    """Per line of the LLVM IR, the kernel line of its ``!dbg`` location (``!DILocation(line: L, ...)``),
    following ``inlinedAt`` to the outermost call (the kernel's own line)."""
    locs: dict[str, tuple[int, str | None]] = {}
    rows = text.split("\n")
    for row in rows:
        m = _DILOC.match(row)
        if m:
            ln = re.search(r"\bline: (\d+)", m.group(2))
            at = re.search(r"inlinedAt: (!\d+)", m.group(2))
            locs[m.group(1)] = (int(ln.group(1)) if ln else 0, at.group(1) if at else None)

    def outer(ref: str) -> int | None:
        seen = 0
        while ref in locs and seen < 50:
            line, at = locs[ref]
            if at is None or at not in locs:
                return line or None
            ref, seen = at, seen + 1
        return None

    out: list[int | None] = []
    for row in rows:
        m = _DBG.search(row)
        out.append(outer(m.group(1)) if m and not row.startswith("!") else None)
    return out


_PTX_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s*,\s*\d+\s*,\s*\d+)?(?:\s+"([^"]*)")?')
_PTX_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)(.*)$")
_PTX_INLINED = re.compile(r"inlined_at\s+(\d+)\s+(\d+)\s+(\d+)")


def ptx_lines(text: str, kernel_file: str) -> list[int | None]:
    """Per line of the PTX, the kernel line of the ``.loc`` in force (``inlined_at`` to the kernel's own
    line).  ``.loc`` lines inside an inline-asm block are LLVM numbering the asm's own lines (the call's
    line plus 1, 2, ...), not source lines: the whole block keeps the ``.loc`` before it."""
    files: dict[str, str] = {}
    rows = text.split("\n")
    for row in rows:
        m = _PTX_FILE.match(row)
        if m:
            files[m.group(1)] = os.path.join(m.group(2), m.group(3)) if m.group(3) else m.group(2)
    out: list[int | None] = []
    cur: int | None = None
    in_asm = False
    for row in rows:
        s = row.strip()
        if s.startswith("// begin inline asm"):
            in_asm = True
        elif s.startswith("// end inline asm"):
            in_asm = False
        m = _PTX_LOC.match(row)
        if m and not in_asm:
            cur = None
            if _same_file(files.get(m.group(1), ""), kernel_file):
                cur = int(m.group(2))
            inl = _PTX_INLINED.findall(m.group(4))
            for f, ln, _c in inl:
                if _same_file(files.get(f, ""), kernel_file):
                    cur = int(ln)
        if s.startswith((".func", ".entry", ".visible", "}")):
            cur = None if s.startswith("}") else cur
        out.append(cur if s and not s.startswith(("//", ".loc", ".file")) else None)
    return out


_SASS_FILE = re.compile(r'//## File "([^"]+)", line (\d+)(.*)$')
_SASS_INLINED = re.compile(r'inlined at "([^"]+)", line (\d+)')


def sass_lines(text: str, kernel_file: str) -> list[int | None]:
    """Per line of ``nvdisasm -g -c`` output, the kernel line of the ``//## File "...", line N`` marker in
    force (``-gi``'s ``inlined at`` to the kernel's own line); markers and non-instruction lines get None."""
    out: list[int | None] = []
    cur: int | None = None
    for row in text.split("\n"):
        m = _SASS_FILE.search(row)
        if m:
            cur = int(m.group(2)) if _same_file(m.group(1), kernel_file) else None
            for f, ln in _SASS_INLINED.findall(m.group(3)):
                if _same_file(f, kernel_file):
                    cur = int(ln)
            out.append(None)
            continue
        out.append(cur if re.match(r"^\s*/\*[0-9a-f]{4,}\*/", row) else None)
    return out


# ----------------------------------------------------------------------------- instruction kinds

_PTX_VEC = re.compile(r"\.v(\d)")
_PTX_BITS = re.compile(r"\.[bfsu](\d+)\b")


def ptx_kind(row: str) -> str | None:
    """The kind of one PTX instruction line: ``ld.global x128`` (vector width in bits), ``st.global x32``,
    ``shared``, ``atomic``, ``math``, ``branch``, ``sync``, ``shuffle``, ``other``; None for a non-instruction."""
    s = row.strip()
    if not s or s.startswith(("//", ".", "$", "{", "}", ")", "(")) or s.endswith(":"):
        return None
    if s.startswith("@"):
        s = s.split(None, 1)[1] if " " in s else s
    op = s.split()[0].rstrip(";")
    if op.startswith(("ld.global", "st.global")):
        vec = _PTX_VEC.search(op)
        bits = _PTX_BITS.findall(op)
        width = (int(vec.group(1)) if vec else 1) * (int(bits[-1]) if bits else 32)
        return f"{op[:9]} x{width}"
    if ".shared" in op or op.startswith(("ldmatrix", "stmatrix", "cp.async")):
        return "shared"
    if op.startswith(("atom", "red.")):
        return "atomic"
    if op.startswith(("bra", "ret", "exit", "call")):
        return "branch"
    if op.startswith(("bar", "barrier", "fence", "membar")):
        return "sync"
    if op.startswith("shfl"):
        return "shuffle"
    if op.startswith(("add", "sub", "mul", "mad", "fma", "div", "rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin",
                      "cos", "max", "min", "neg", "abs", "tanh", "mma", "wgmma", "dot", "copysign")):
        return "math"
    if op.startswith(("mov", "cvt", "setp", "selp", "and", "or", "xor", "not", "shl", "shr", "ld.param")):
        return "other"
    return "other"


_SASS_INSTR = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")


def sass_kind(row: str) -> str | None:
    """The kind of one SASS instruction line (``nvdisasm -c`` text): ``ld.global x128`` (LDG.E.128),
    ``st.global x32``, ``local (spill)`` (LDL/STL), ``shared``, ``atomic``, ``math``, ``branch``, ``sync``,
    ``shuffle``, ``other``; None for a non-instruction line."""
    m = _SASS_INSTR.match(row)
    if not m:
        return None
    op = m.group(1)
    base = op.split(".")[0]
    if base in ("LDG", "STG"):
        widths = [int(p) for p in op.split(".")[1:] if p.isdigit()]
        width = widths[0] if widths else 32
        return f"{'ld' if base == 'LDG' else 'st'}.global x{width}"
    if base in ("LDL", "STL"):
        return "local (spill)"
    if base in ("LDS", "STS", "LDSM", "STSM", "LDGSTS", "ATOMS", "UTMALDG", "UTMASTG", "LDGDEPBAR", "SYNCS"):
        return "shared"
    if base in ("ATOM", "ATOMG", "RED", "REDG"):
        return "atomic"
    if base in ("BRA", "EXIT", "RET", "CALL", "BSSY", "BSYNC", "JMP", "BRX", "WARPSYNC"):
        return "branch"
    if base in ("BAR", "MEMBAR", "DEPBAR", "ERRBAR", "CCTL"):
        return "sync"
    if base in ("SHFL", "VOTE", "REDUX"):
        return "shuffle"
    if base in ("FADD", "FMUL", "FFMA", "FMNMX", "MUFU", "HADD2", "HMUL2", "HFMA2", "HMNMX2", "DADD", "DMUL",
                "DFMA", "IMAD", "IADD3", "IMUL", "HMMA", "IMMA", "HGMMA", "QGMMA", "DMMA", "FCHK", "FRND", "IMNMX",
                "VIMNMX", "FSEL", "FSETP", "F2F", "I2F", "F2I", "FMNMX3", "FADD2", "FMUL2", "FFMA2"):
        return "math"
    return "other"


def line_counts(rows: list[str], lines: list[int | None], kind_of: Any) -> dict[str, dict[str, int]]:
    """Per kernel line (as a string key, JSON-friendly), how many instructions of each kind the stage
    lines mapped to it hold: ``{"16": {"st.global x128": 2, "math": 1}}``."""
    out: dict[str, dict[str, int]] = {}
    for row, ln in zip(rows, lines):
        if ln is None:
            continue
        k = kind_of(row)
        if k is None:
            continue
        d = out.setdefault(str(ln), {})
        d[k] = d.get(k, 0) + 1
    return out


def stage_maps(stages: dict[str, str], kernel_file: str) -> dict[str, Any]:
    """For each stage text present: ``lines`` (per stage line, the kernel line or None) and, for PTX and
    SASS, ``counts`` (``line_counts``)."""
    fns = {"ttir": mlir_lines, "ttgir": mlir_lines, "llir": llir_lines, "ptx": ptx_lines, "sass": sass_lines}
    out: dict[str, Any] = {"lines": {}, "counts": {}}
    for st, fn in fns.items():
        text = stages.get(st)
        if not isinstance(text, str):
            continue
        lines = fn(text, kernel_file)
        out["lines"][st] = lines
        if st in ("ptx", "sass"):
            out["counts"][st] = line_counts(text.split("\n"), lines, ptx_kind if st == "ptx" else sass_kind)
    return out


def stage_rows_for(lines: list[int | None], wanted: set[int]) -> list[int]:
    """0-based stage lines whose kernel line is in ``wanted`` (1-based kernel lines): what a selected
    buffer's Triton lines became in that stage."""
    return [i for i, ln in enumerate(lines) if ln is not None and ln in wanted]
