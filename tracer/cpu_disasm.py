"""A C++ kernel's compiled function disassembled: ``objdump -d -l`` of the module's ``.so`` that
Inductor built for it, each instruction linked to the kernel's source line where the compile kept line info,
and per source line a count of its vector instructions by register width.  Standard library (and objdump)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Any

MAX_CHARS = 200_000  # a kernel's disassembly kept in the session at most (the rest cut, said so)

_LOC = re.compile(r"^(inlined by )?(/\S+?):(\d+)(?: \(discriminator \d+\))?(?: \(.*\))?\s*$")
_INSN = re.compile(r"^\s+[0-9a-f]+:\t(\S+)\s*(.*)$")


def kernel_so(fn: Any) -> str | None:
    """The shared object a compiled C++ kernel's Python callable lives in (the pybinding's module
    ``__file__``: ``/tmp/torchinductor_<user>/xx/<hash>.main.so``), or None."""
    path = getattr(getattr(fn, "__self__", None), "__file__", None)
    return path if isinstance(path, str) and path.endswith(".so") and os.path.isfile(path) else None


def _symbol(so: str, objdump: str) -> str | None:
    """The kernel's own function in the .so: the exported ``kernel`` (Inductor's ``extern "C" void kernel``)."""
    nm = shutil.which("nm")
    if nm is None:
        return "kernel"
    p = subprocess.run([nm, "-D", "--defined-only", so], capture_output=True, text=True, timeout=60)
    names = [ln.split()[-1] for ln in p.stdout.splitlines() if " T " in ln]
    return "kernel" if "kernel" in names else next((n for n in names if not n.startswith("PyInit")), None)


def _width(insn: str, args: str) -> str | None:
    if "zmm" in args:
        return "512-bit vector"
    if "ymm" in args:
        return "256-bit vector"
    if "xmm" in args and insn.startswith("v") and not insn.endswith(("ss", "sd")):
        return "128-bit vector"
    if insn.startswith("call"):
        return "call"
    return None


def disassemble(so: str, source: str) -> dict[str, Any]:
    """``objdump -d -l --inlines -C`` of the kernel function in ``so`` (an inlined intrinsic's instructions go to
    the kernel line that inlined it); ``asm`` (the text), ``lines`` (per asm line, the
    1-based line of the recorded ``source`` it came from, or None: lines of headers such as ATen's
    ``Vectorized`` or the compiler's intrinsics stay None), ``counts`` (per source line, vector
    instructions by register width and calls), ``line_info`` (whether the .so had any).  ``{"missing": why}``
    when objdump is missing, the function is not found, or the disassembly fails."""
    objdump = shutil.which("objdump")
    if objdump is None:
        return {"missing": "no objdump on this machine (binutils)"}
    sym = _symbol(so, objdump)
    if not sym:
        return {"missing": f"no kernel function exported by {os.path.basename(so)}"}
    cmd = [objdump, "-d", "-l", "--inlines", "-C", "--no-show-raw-insn", "-j", ".text", so]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if p.returncode != 0 and "inlines" in p.stderr:  # binutils before 2.36
        p = subprocess.run([c for c in cmd if c != "--inlines"], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return {"missing": f"objdump failed: {(p.stderr.strip().splitlines() or ['?'])[-1]}"}
    # the kernel function and what the compiler split out of it (OpenMP's kernel._omp_fn.0, .cold parts)
    blocks = re.split(r"\n(?=[0-9a-f]+ <[^>]+>:\n)", p.stdout)
    keep = [b for b in blocks if re.match(r"[0-9a-f]+ <" + re.escape(sym) + r"(?:[._][^>]*)?>:", b)
            and not re.match(r"[0-9a-f]+ <" + re.escape(sym) + r"_py", b)]
    text = "\n".join(keep) if keep else ""
    if not text:
        return {"missing": f"{sym} not found in objdump's output for {os.path.basename(so)}"}
    # the recorded source sits inside <hash>.main.cpp (after Inductor's header include): find its offset
    main_cpp = re.sub(r"\.so$", ".cpp", so)
    offset = None
    if os.path.isfile(main_cpp):
        main = open(main_cpp, errors="replace").read().split("\n")
        src = source.split("\n")
        anchor = next((i for i, ln in enumerate(src) if 'extern "C"' in ln), None)
        if anchor is not None:
            hit = next((j for j, ln in enumerate(main) if ln.strip() == src[anchor].strip()), None)
            if hit is not None:
                offset = hit - anchor
    lines: list[int | None] = []
    counts: dict[str, dict[str, int]] = {}
    cur: int | None = None
    any_info = False
    for row in text.split("\n"):
        m = _LOC.match(row)
        if m:  # a location; with --inlines, "inlined by" lines follow out to the kernel's own line
            any_info = True
            if not m.group(1):
                cur = None
            if os.path.basename(m.group(2)) == os.path.basename(main_cpp) and offset is not None:
                n = int(m.group(3)) - offset
                cur = n if n >= 1 else None
            lines.append(None)
            continue
        ins = _INSN.match(row)
        lines.append(cur if ins else None)
        if ins and cur is not None:
            w = _width(ins.group(1), ins.group(2))
            if w:
                d = counts.setdefault(str(cur), {})
                d[w] = d.get(w, 0) + 1
    out: dict[str, Any] = {"asm": text[:MAX_CHARS], "lines": lines[: text[:MAX_CHARS].count("\n") + 1],
                           "counts": counts, "so": so, "symbol": sym, "line_info": any_info,
                           "source": "objdump -d -l of the .so Inductor built for this kernel"}
    if len(text) > MAX_CHARS:
        out["note"] = f"cut at {MAX_CHARS} characters of {len(text)}"
    if not any_info:
        out["note"] = "the .so has no line table (compiled without -g): instructions are not linked to source lines"
    elif offset is None:
        out["note"] = "the kernel's source was not found in the .so's main.cpp: line markers left as objdump wrote them"
    return out


def live_cpu_asm(fn: Any, source: str) -> dict[str, Any]:
    """``disassemble`` for a C++ kernel's callable, shaped as the run stage records a kernel's stages
    (``{"stages": {"asm": text}, "maps": {"lines": {"asm": [...]}, "counts": {"asm": {...}}}, "source", "note"}``),
    or ``{"missing": why}``; never raises."""
    try:
        so = kernel_so(fn)
        if so is None:
            return {"missing": "the kernel's shared object is not known (not a C++ pybinding kernel)"}
        d = disassemble(so, source)
        if "missing" in d:
            return d
        out = {"stages": {"asm": d["asm"]}, "maps": {"lines": {"asm": d["lines"]}, "counts": {"asm": d["counts"]}},
               "source": d["source"], "so": os.path.basename(so), "line_info": d["line_info"]}
        if d.get("note"):
            out["note"] = d["note"]
        return out
    except Exception as e:  # noqa: BLE001 - never fail the timing for this
        return {"missing": f"not disassembled ({type(e).__name__}: {e})"}
