"""A standalone, runnable Python repro of one recorded Inductor C++ kernel (on CPU): its source built the
way Inductor's own output code builds it (``AsyncCompile().cpp_pybinding(argtypes, source)``), the kernel's real
arguments loaded when they were saved (else inputs of the recorded sizes, strides and dtypes), its outputs compared
with the in-model ones, and a timing against the in-model time.  Writing one needs neither torch nor a compiler."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from inductor_step.tracer.kernel_repro import arg_layout
from inductor_step.tracer.repro_inputs import CODE as LOAD_CODE
from inductor_step.tracer.repro_inputs import make_input_code, report_code, save_repro

#: C++ element types of Inductor's pointer arguments -> torch dtypes
_CTYPES = {"float": "float32", "double": "float64", "c10::BFloat16": "bfloat16", "bfloat16": "bfloat16",
           "c10::Half": "float16", "half": "float16", "int64_t": "int64", "int32_t": "int32", "int16_t": "int16",
           "int8_t": "int8", "uint8_t": "uint8", "bool": "bool", "c10::Float8_e4m3fn": "float8_e4m3fn",
           "c10::Float8_e5m2": "float8_e5m2"}


def argtypes(name: str, wrapper: str) -> list[str] | None:
    """The argument types Inductor compiled kernel ``name`` with (``NAME = async_compile.cpp_pybinding(
    ['const float*', 'float*'], ...``) in the output code ``wrapper``; None when it does not say."""
    m = re.search(r"^" + re.escape(name) + r"\s*=\s*async_compile\.cpp_pybinding\((\[[^\]]*\])", wrapper, re.M)
    if not m:
        return None
    try:
        v = ast.literal_eval(m.group(1))
    except (ValueError, SyntaxError):
        return None
    return [str(x) for x in v] if isinstance(v, list) else None


def _params(source: str) -> list[str]:
    m = re.search(r'extern\s+"C"[^(]*\bkernel\s*\(([^)]*)\)', source)
    if not m:
        return []
    return [re.split(r"[\s*&]+", p.strip())[-1] for p in m.group(1).split(",") if p.strip()]


def repro_text(kernel: dict[str, Any], wrapper: str, run_kernel: dict[str, Any] | None = None,
               where: str = "") -> tuple[str, list[str]]:
    """The repro file's text for C++ ``kernel`` (a codegen stop's kernel entry) with its argument types and
    sizes from ``wrapper`` (the output module source) and ``run_kernel``'s recorded time; and the problems
    found (each also written into the file, which then stops with it).  Raises ValueError for a kernel that
    is not a C++ kernel Inductor built with ``cpp_pybinding``."""
    name = kernel.get("name")
    if kernel.get("backend") != "cpp":
        raise ValueError(f"{name}: not a C++ kernel ({kernel.get('backend')})")
    types = argtypes(str(name), wrapper)
    source = kernel.get("source") or ""
    if types is None or not source:
        raise ValueError(f"{name}: the output code has no async_compile.cpp_pybinding([...], ...) for it")
    params = _params(source) or [f"arg{i}" for i in range(len(types))]
    call = (kernel.get("calls") or [[]])[0]
    line = (kernel.get("call_lines") or [None])[0]
    setup, problems = _arg_setup(params, types, call, wrapper, line)
    rk = run_kernel or {}
    recorded = {k: rk.get(k) for k in ("median_ms", "p20_ms", "p80_ms") if rk.get(k) is not None}
    info = {"kernel": name, "where": where, "argtypes": types, "recorded": recorded,
            "fused_nodes": kernel.get("fused_nodes"), "buffers": kernel.get("buffers")}
    src = f"r'''\n{source}\n'''" if "'''" not in source else repr(source)
    return _text(str(name), where, info, types, problems, src, setup, params), problems


def _arg_setup(params: list[str], types: list[str], call: list[str], wrapper: str,
               line: Any) -> tuple[list[str], list[str]]:
    """The repro's lines that make each argument of the recorded ``call`` (an int, or an input of the sizes and
    strides the ``wrapper`` gives at ``line``), and the problems found: ``(setup, problems)``."""
    problems: list[str] = []
    setup: list[str] = []
    for i, (p, ty) in enumerate(zip(params, types)):
        arg = call[i] if i < len(call) else "?"
        if not ty.endswith("*"):
            try:
                setup.append(f"{p} = {int(ast.literal_eval(arg))}")
            except (ValueError, SyntaxError):
                problems.append(f"{p} = {arg}: not a number in the recording (a symbolic size?)")
                setup.append(f"{p} = None  # {arg}: set it")
            continue
        elem = ty.replace("const", "").replace("*", "").strip()
        lay = arg_layout(arg, wrapper, line)
        dtype = _CTYPES.get(elem, (lay or {}).get("dtype") or "float32")
        if lay is None or not all(isinstance(v, int) for v in lay["sizes"] + lay["strides"] + [lay["offset"]]):
            problems.append(f"{p} ({arg}): the wrapper gives no sizes/strides for it")
            setup.append(f"{p} = None  # {arg}: allocate it")
            continue
        setup.append(f"{p} = make_input({lay['sizes']}, {lay['strides']}, {lay['offset']}, torch.{dtype})  # {arg}")
    return setup, problems


def _text(name: str, where: str, info: dict[str, Any], types: list[str], problems: list[str], src: str,
          setup: list[str], params: list[str]) -> str:
    """The repro file's text (see repro_text): a docstring, the kernel's source, its arguments made, its build, one
    checked run and its timing."""
    names = ", ".join(params)
    text = f'''"""Standalone repro of Inductor's C++ kernel {name} (written by inductor-step from a recorded session{', ' + where if where else ''}).

Run it on a CPU with torch and a C++ compiler: python THIS_FILE.py.  It builds the kernel the way Inductor's output
code does (torch._inductor.async_compile.AsyncCompile().cpp_pybinding, a private torch API: the torch that recorded
the session is the one to use), runs it once, compares its outputs with the in-model ones when they were saved, and
prints its median time and the in-model time recorded for it.  Inputs: the kernel's real arguments when
{name}.inputs.pt is beside this file (saved at its launch: X in pane 6, or --save-inputs), checked against the
recorded sizes, strides and dtypes; else random (integers are 0) with the recorded sizes, strides and dtypes.
"""
# {json.dumps(info, default=str)}
import json
import time

import torch

INFO = {json.dumps(info, default=str)!r}
ARGTYPES = {types!r}
PROBLEMS = {problems!r}
SOURCE = {src}
{make_input_code("cpu")}
{LOAD_CODE}

def main():
    info = json.loads(INFO)
    if PROBLEMS:
        print("cannot run: " + "; ".join(PROBLEMS))
        return 2
    from torch._inductor.async_compile import AsyncCompile

    kernel = AsyncCompile().cpp_pybinding(ARGTYPES, SOURCE)
    kernel = kernel.result() if hasattr(kernel, "result") else kernel  # a future when compiling in parallel
    {chr(10).join('    ' + s for s in setup).lstrip()}
    names = {params!r}
    args, said, saved = load_inputs(info["kernel"], names, [{names}], "cpu")
    print(said)
    kernel(*args)
    same = check_outputs(names, args, saved)
    times = []
    end = time.perf_counter() + 0.5
    while time.perf_counter() < end or len(times) < 5:
        t0 = time.perf_counter()
        kernel(*args)
        times.append((time.perf_counter() - t0) * 1e3)
    ms = sorted(times)[len(times) // 2]
''' + report_code("{len(times)} calls, time.perf_counter")
    return text


def write_repro(kernel: dict[str, Any], wrapper: str, out_dir: str, run_kernel: dict[str, Any] | None = None,
                where: str = "") -> tuple[str, list[str]]:
    """Write ``repro_text`` to ``out_dir/<kernel name>.py``; returns its path and the problems found.
    Raises OSError when the file cannot be written, ValueError as ``repro_text``."""
    text, problems = repro_text(kernel, wrapper, run_kernel, where)
    return save_repro(kernel["name"], text, out_dir), problems
