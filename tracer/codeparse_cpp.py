"""Read Inductor's C++ wrapper (``config.cpp_wrapper=True``, AOTInductor) as text; standard library only.

The same kernel dicts as :func:`tracer.codeparse.parse_wrapper`, from a C++ wrapper instead of a Python one.
What Inductor writes (torch/_inductor/codegen/cpp_wrapper_cpu.py, cpp_wrapper_gpu.py; checked on torch 2.14):

- the entry function: ``void inductor_entry_impl(...) { ... } // inductor_entry_impl`` inside the
  ``cpp_wrapper_src`` string of a JIT output module (``torch.compile`` with ``cpp_wrapper``), or
  ``void AOTInductorModel::run_impl(...) { ... } // AOTInductorModel::run_impl`` in AOTInductor's
  wrapper ``.cpp`` (the ``inductor_aot_wrapper_code`` trace event; its kernels come in
  ``inductor_aot_kernel_code``);
- a C++ kernel: defined as ``extern "C"  void  cpp_fused_relu_0(float* in_out_ptr0, ...) { ... }`` and
  called as ``cpp_fused_relu_0((float*)(buf1.data_ptr()), ...);`` (AOTInductor on a GPU: ``kernels.NAME(...)``);
- a Triton kernel (GPU): launched through a generated helper, ``call_triton_poi_fused_0(buf1, 64L, 0, stream0);``
  (AOTInductor adds ``kernels, this->cubin_dir_``); its source is a Python ``NAME = async_compile.triton(...)``
  definition in a JIT module, or a ``/* ... */`` comment inside the helper in AOTInductor's wrapper;
- an extern kernel or ATen fallback: a C shim call,
  ``AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_cpu_addmm_out(buf0, arg1_1, ...));`` (``_out``: the first
  argument is written), ``aoti_torch_cpu_convolution(..., &buf3_handle)`` (an output through a handle), or
  ``aoti_torch_proxy_executor_call_function(...)`` (a custom op);
- buffer reuse: ``auto buf1 = std::move(buf0);  // reuse``; multi-output children:
  ``RAIIAtenTensorHandle buf2(buf1_0);``; provenance: ``// [Provenance debug handles] NAME:N``.
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

from inductor_step.tracer.codeparse import _DEF, _line_of, _line_starts, _split_args

_ENTRY = re.compile(r"^[ \t]*void\s+(inductor_entry_impl|AOTInductorModel::run_impl)\s*\(", re.M)
# a C++ kernel's definition (a declaration ends in ';' and is skipped: the body's '{' must follow)
_CPP_KERNEL = re.compile(r'^extern "C"[ \t\w]*?\bvoid\s+(\w+)\s*\(([^)]*)\)\s*\{', re.M)
_CPP_CALL = re.compile(r"^\s*(?:kernels\.)?(\w+)\((.*)\);\s*$")
_TRITON_CALL = re.compile(r"^\s*call_(\w+)\((.*)\);\s*$")
_TRITON_HELPER = re.compile(r"^\s*static\s+(?:__attribute__\(\(noinline\)\)\s+|inline\s+)*void\s+call_(\w+)\s*\(", re.M)
_SHIM_CALL = re.compile(r"\b(aoti_torch_\w+)\(")
# C shim functions that are kernels (ATen ops run for the graph), not tensor bookkeeping
_SHIM_KERNEL = re.compile(r"^aoti_torch_(?:(?:cpu|cuda|xpu|mps)_\w+|proxy_executor_call_function|"
                          r"(?:mm|addmm|bmm|baddbmm)_out|convolution|_scaled_\w+|_fft_c2c|index_put\w*|"
                          r"scatter\w*|repeat_interleave\w*)$")
_REUSE = re.compile(r"^[ \t]*auto\s+(buf\d+)\s*=\s*std::move\((buf\d+)\);\s*//\s*reuse", re.M)
_MULTI = re.compile(r"^[ \t]*RAIIAtenTensorHandle\s+(buf\d+)\((buf\d+)_(\d+)\);", re.M)
_NAME_ARG = re.compile(r"\b((?:buf|arg|primals_|tangents_)\w*)\b")
_HANDLE_OUT = re.compile(r"&\s*(buf\d+)(?:_handle)?(?:_\d+)?\b")


def is_cpp_wrapper(text: str) -> bool:
    """Whether ``text`` (an output module or AOTInductor's wrapper) holds a C++ wrapper's entry function."""
    return bool(_ENTRY.search(text or ""))


def _block_end(text: str, open_at: int) -> int:
    """Offset just past the ``}`` closing the ``{`` at ``open_at`` (``//`` and ``/* */`` comments and
    string literals skipped); the text's end when unbalanced."""
    depth, i, n = 0, open_at, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
            continue
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def _paren_text(line: str, open_at: int) -> str:
    """The text inside the parentheses opening at ``line[open_at]`` (to the line's end when unbalanced)."""
    depth = 0
    for i in range(open_at, len(line)):
        if line[i] == "(":
            depth += 1
        elif line[i] == ")":
            depth -= 1
            if depth == 0:
                return line[open_at + 1:i]
    return line[open_at + 1:]


def entry_body(text: str) -> tuple[int, int] | None:
    """(start, end) offsets of the entry function's body (``inductor_entry_impl`` or
    ``AOTInductorModel::run_impl``), or None."""
    m = _ENTRY.search(text or "")
    if not m:
        return None
    brace = text.find("{", m.end())
    return (brace, _block_end(text, brace)) if brace >= 0 else None


def _cpp_outputs(params: str) -> list[bool]:
    """Which C++ kernel parameters are written: non-const pointers (as codeparse reads ``kernel(...)``)."""
    return [("*" in p and not p.strip().startswith("const")) for p in params.split(",") if p.strip()]


def _triton_outputs(params: list[str]) -> list[bool]:
    return [p.startswith(("out_ptr", "in_out_ptr")) for p in params]


_LAUNCHER_EXTRA = ("device_idx_", "stream_", "kernels_", "cubin_dir_")


def _triton_kernels(text: str) -> dict[str, dict[str, Any]]:
    """Triton kernel name -> ``{"source", "at", "params"}``.  ``params``: the kernel's parameters as its
    ``call_NAME`` launcher names them (``const CUdeviceptr in_out_ptr0``, ..., then ``device_idx_``,
    ``stream_``, ... which are left out); ``source`` and ``at`` (its offset in ``text``): the Triton source
    where the text has it (a JIT module's ``NAME = async_compile.triton(...)`` definition, or the
    ``/* ... */`` comment AOTInductor writes inside the launcher), else the launcher itself."""
    defs: dict[str, tuple[str, int]] = {}
    for m in _DEF.finditer(text):
        if m.group("kind") == "triton":
            raw = m.group("src")
            defs[m.group("name")] = (raw.strip("\n"), m.start("src") + (len(raw) - len(raw.lstrip("\n"))))
    out: dict[str, dict[str, Any]] = {}
    for m in _TRITON_HELPER.finditer(text):
        name = m.group(1)
        close = text.find("){", m.end())
        if close < 0:
            continue
        params = [re.split(r"[\s*&]+", p.split("=")[0].strip())[-1] for p in text[m.end():close].split(",") if p.strip()]
        params = [p for p in params if p and p not in _LAUNCHER_EXTRA]
        end = _block_end(text, close + 1)
        src, at = defs.get(name, ("", -1))
        c0 = text.find("/*", close, end)
        c1 = text.find("*/", c0, end) if c0 >= 0 else -1
        if not src and c0 >= 0 and c1 > c0:
            raw = text[c0 + 2:c1]  # indented with the launcher: dedented, so it reads as the Triton source it is
            src, at = textwrap.dedent(raw).strip("\n"), c0 + 2 + (len(raw) - len(raw.lstrip("\n")))
        if not src:
            start = text.rfind("\n", 0, m.start()) + 1
            src, at = text[start:end], start
        out[name] = {"source": src, "at": at, "params": params}
    return out


def cpp_kernel_defs(text: str) -> dict[str, dict[str, Any]]:
    """C++ kernel name -> ``{"source", "start", "end", "params"}``: each ``extern "C" void NAME(...) {...}``
    definition with a body (offsets into ``text``; ``source`` from the ``extern`` line to the closing brace)."""
    out: dict[str, dict[str, Any]] = {}
    for m in _CPP_KERNEL.finditer(text):
        end = _block_end(text, m.end() - 1)
        out[m.group(1)] = {"source": text[m.start():end], "start": m.start(), "end": end, "params": m.group(2)}
    return out


def _written_by_shim(fn: str, args: list[str]) -> list[str]:
    """Buffers a C shim call writes: an ``_out`` op's first argument, and every ``&bufN_handle`` output."""
    out = []
    if fn.endswith("_out") and args:
        out += _NAME_ARG.findall(args[0])[:1]
    for a in args:
        out += [m for m in _HANDLE_OUT.findall(a) if m not in out]
    return [b for b in out if b.startswith("buf")]


def parse_cpp_wrapper(text: str) -> list[dict[str, Any]]:
    """Kernels defined and called in a C++ wrapper, in call order, as :func:`tracer.codeparse.parse_wrapper`
    gives them for a Python one: ``name``, ``backend`` (``"cpp"``, ``"triton"``, ``"extern"``), ``source``
    (a C++ kernel's definition, a Triton kernel's Python source, an extern call's statement), ``calls`` (each
    call's arguments as text), ``call_lines`` (1-based lines in ``text``), ``writes`` (buffers written, resolved
    as written: ``// reuse`` aliases are in ``reuses``) and ``reuses``.  Extern calls are named ``SHIM#i`` (the
    i-th call of that C shim function, ``aoti_torch_cpu_addmm_out#0``), the spelling of the wrapper's
    ``// [Provenance debug handles] aoti_torch_cpu_addmm_out:1`` comments; a multi-output call's children
    (``RAIIAtenTensorHandle buf2(buf1_0);``) count as written by it.  An in-place shim call that writes
    no ``_out``/handle argument has no ``writes`` until :func:`bind_extern_calls`.  Returns [] where
    there is no entry function; never raises on unusual code: unknown parts are left out.
    """
    span = entry_body(text)
    if span is None:
        return []
    starts = _line_starts(text)
    cpp_defs = cpp_kernel_defs(text)
    triton = _triton_kernels(text)
    reuses = dict(_REUSE.findall(text))
    children: dict[str, list[str]] = {}
    for child, parent, _ in _MULTI.findall(text[span[0]:span[1]]):
        children.setdefault(parent, []).append(child)
    kernels: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    shim_i: dict[str, int] = {}
    pos = span[0]
    for line in text[span[0]:span[1]].split("\n"):
        here, pos = pos, pos + len(line) + 1
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue
        lineno = _line_of(starts, here)
        m = _TRITON_CALL.match(line)
        if m and m.group(1) in triton:
            name, args = m.group(1), _split_args(m.group(2))
            k = kernels.setdefault(name, {"name": name, "backend": "triton", "source": triton[name]["source"],
                                          "calls": [], "call_lines": [], "writes": []})
            flags = _triton_outputs(triton[name]["params"])
            written = [n for a, f in zip(args, flags) if f for n in _NAME_ARG.findall(a)[:1]]
        else:
            m = _CPP_CALL.match(line)
            if m and m.group(1) in cpp_defs:
                name, args = m.group(1), _split_args(m.group(2))
                d = cpp_defs[name]
                k = kernels.setdefault(name, {"name": name, "backend": "cpp", "source": d["source"],
                                              "calls": [], "call_lines": [], "writes": []})
                # the stream argument AOTInductor adds on a GPU is past the kernel's parameters: zip stops there
                written = [n for a, f in zip(args, _cpp_outputs(d["params"])) if f for n in _NAME_ARG.findall(a)[:1]]
            else:
                sm = _SHIM_CALL.search(line)
                if not sm or not _SHIM_KERNEL.match(sm.group(1)):
                    continue
                fn = sm.group(1)
                i = shim_i.get(fn, 0)
                shim_i[fn] = i + 1
                name, args = f"{fn}#{i}", _split_args(_paren_text(line, sm.end() - 1))
                written = _written_by_shim(fn, args)
                for w in list(written):
                    written += [c for c in children.get(w, []) if c not in written]
                k = kernels[name] = {"name": name, "backend": "extern", "source": stripped, "calls": [],
                                     "call_lines": [], "writes": []}
        k["calls"].append(args)
        k["call_lines"].append(lineno)
        k["writes"] = sorted(set(k["writes"]) | set(written), key=lambda s: (len(s), s))
        if name not in order:
            order.append(name)
    out = [kernels[n] for n in order]
    for k in out:
        k["reuses"] = {w: reuses[w] for w in k["writes"] if w in reuses}
    return out


def bind_extern_calls(kernels: list[dict[str, Any]], sched_nodes: list[dict[str, Any]]) -> None:
    """Give each extern call that names no written buffer (an in-place shim call, ``aoti_torch_cpu_index_put_``)
    the buffers of its scheduler node, in place (``writes``).  ``sched_nodes``: the scheduler's nodes in
    codegen order (the scheduling stop's ``after``).  Inductor writes one shim call per
    ``ExternKernelSchedulerNode`` in that order, so the i-th extern call is the i-th such node; the pairing
    is used only when the counts agree and every call that does name its buffers names its node's."""
    externs = [k for k in kernels if k.get("backend") == "extern"]
    nodes = [n for n in sched_nodes or [] if n.get("type") == "ExternKernelSchedulerNode"]
    if not externs or len(externs) != len(nodes):
        return
    if any(k.get("writes") and not set(k["writes"]) & set(n.get("buffers") or []) for k, n in zip(externs, nodes)):
        return
    for k, n in zip(externs, nodes):
        if not k.get("writes"):
            k["writes"] = list(n.get("buffers") or [])


def cpp_kernel_spans(text: str, kernels: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Where each kernel of :func:`parse_cpp_wrapper` sits in ``text`` (1-based lines), the shape of
    :func:`tracer.codeparse.kernel_spans`: ``{"def": [first, last], "body": line, "calls": [...]}`` for a C++
    kernel (its ``extern "C"`` definition) or a Triton kernel (its source), ``{"call": line, "calls": [line]}``
    for an extern call."""
    starts = _line_starts(text)
    cpp_defs = cpp_kernel_defs(text)
    triton = _triton_kernels(text)
    out: dict[str, dict[str, Any]] = {}
    for k in kernels:
        calls = list(k.get("call_lines") or [])
        if k.get("backend") == "extern":
            out[k["name"]] = {"call": calls[0] if calls else None, "calls": calls}
        elif k["name"] in cpp_defs:
            d = cpp_defs[k["name"]]
            first = _line_of(starts, d["start"])
            out[k["name"]] = {"def": [first, _line_of(starts, d["end"] - 1)], "body": first, "calls": calls}
        elif k["name"] in triton:
            src, at = triton[k["name"]]["source"], triton[k["name"]]["at"]
            first = _line_of(starts, at)
            out[k["name"]] = {"def": [first, _line_of(starts, at + max(len(src) - 1, 0))], "body": first, "calls": calls}
    return out
