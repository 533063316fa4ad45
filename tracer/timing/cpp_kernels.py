"""Each kernel of a C++ wrapper (``cpp_wrapper=True``) timed on its own: the wrapper's own statements replayed in
Python, one call at a time.

The C++ wrapper runs its kernels inside compiled code, and its ``.so`` hides their symbols, so no call can be
hooked the way :func:`tracer.timing.harness.time_graph` hooks a Python wrapper's.  Instead the entry function
(``inductor_entry_impl``) is read statement by statement (tracer.codeparse_cpp) and replayed:

- inputs: ``auto arg0_1 = std::move(inputs[0]);`` -> the output module's ``get_args()``;
- buffers: ``aoti_torch_empty_strided(2, int_array_0, int_array_1, cached_torch_dtype_float32, ...)`` with
  ``static constexpr int64_t int_array_0[] = {4L, 16L};`` -> ``torch.empty_strided``; ``auto buf1 =
  std::move(buf0);  // reuse`` -> the same tensor;
- a C++ kernel: its source, as the wrapper has it, built on its own the way Inductor's Python wrapper builds a
  kernel (tracer.adapter.cpp_kernel_binding), called with the tensors and integers of the wrapper's call;
- a C shim call (``aoti_torch_cpu_addmm_out(buf0, arg1_1, ...)``, ``aoti_torch_cpu_convolution(..., &buf2_handle)``):
  the ATen op it wraps (``torch.ops.aten.addmm.out``, ``convolution.default``), its arguments named by the op's
  schema in the shim's order (an ``.out`` overload's ``out`` first; an array passed as pointer and length is one
  list; a tensor returned through a handle becomes that buffer); a call whose arguments do not fit is listed
  with the reason it is not timed.

Every call runs once in order (so each sees the values the graph gives it), then each is timed alone with
Inductor's CPU benchmarker, as the Python wrapper's kernels are.
"""

from __future__ import annotations

import re
import threading
from typing import Any, Callable

import torch

from inductor_step.tracer import adapter
from inductor_step.tracer.codeparse import _split_args
from inductor_step.tracer.codeparse_cpp import cpp_kernel_defs, entry_body, parse_cpp_wrapper

_ARRAY = re.compile(r"static constexpr int64_t (int_array_\d+)\[\] = \{([^}]*)\};")
_INPUT = re.compile(r"^\s*auto (\w+) = std::move\(inputs\[(\d+)\]\);")
_EMPTY = re.compile(r"aoti_torch_empty_strided\(\d+, (int_array_\d+), (int_array_\d+), cached_torch_dtype_(\w+), "
                    r"cached_torch_device_type_(\w+),[^,]*, &(buf\d+)_handle\)")
_MOVE = re.compile(r"^\s*auto (buf\d+) = std::move\((buf\d+)\);")
_REINTERPRET = re.compile(r"^reinterpret_tensor_wrapper\((\w+), \d+, (int_array_\d+), (int_array_\d+), (-?\d+)L?\)$")
_CAST_PTR = re.compile(r"^\((?:const\s+)?[\w:]+\s*\*\)\((\w+)\.data_ptr\(\)\)$")
_OUTPUT = re.compile(r"output_handles\[(\d+)\] = (buf\d+)\.release\(\);")
_STD_ARRAY = re.compile(r"^static_cast<const int64_t\*>\(std::array<int64_t, \d+>\{([^}]*)\}\.data\(\)\)$")
_HANDLE_ARG = re.compile(r"^&(buf\d+)_handle$")
_TEMP_REF = re.compile(r"^&temporary_reference\((\w+)\.get\(\)\)$")
_ALIAS = re.compile(r"^\s*auto (buf\d+) = (.*);\s*// alias")
_SHIM_PREFIX = re.compile(r"^aoti_torch_(?:cpu|cuda|xpu|mps)_")

HOW = ("each call replayed alone from the C++ wrapper's own statements: C++ kernels built on their own from the "
       "wrapper's source (as Inductor's Python wrapper builds them), aoti_torch_* shim calls run as the ATen op they "
       "wrap, on buffers of the wrapper's sizes")


def _ints(text: str) -> list[int]:
    return [int(x.strip().rstrip("L")) for x in text.split(",") if x.strip()]


def _value(text: str, env: dict[str, Any], arrays: dict[str, list[int]]) -> Any:
    """A wrapper argument's value: a tensor of ``env``, a view of one, a number or None; raises ValueError."""
    t = text.strip()
    while t.startswith("wrap_with_raii_handle_if_needed(") and t.endswith(")"):
        t = t[len("wrap_with_raii_handle_if_needed("):-1].strip()
    m = _CAST_PTR.match(t)
    if m:
        t = m.group(1)
    if t in env:
        return env[t]
    m = _REINTERPRET.match(t)
    if m and m.group(1) in env:
        return env[m.group(1)].as_strided(arrays[m.group(2)], arrays[m.group(3)], int(m.group(4)))
    if re.fullmatch(r"-?\d+L?", t):
        return int(t.rstrip("L"))
    if re.fullmatch(r"-?\d+\.\d*(?:e-?\d+)?f?", t):
        return float(t.rstrip("f"))
    if t in ("nullptr", "std::nullopt"):
        return None
    if t in ("true", "false"):
        return t == "true"
    raise ValueError(f"argument {t!r} is not a tensor or number the replay knows")


def _shim_args(texts: list[str], env: dict[str, Any], arrays: dict[str, list[int]]) -> tuple[list[Any], list[str]]:
    """A C shim call's arguments as the ATen op takes them, and the buffers it returns through handles
    (``&buf2_handle``).  An array comes as pointer and length (``static_cast<const int64_t*>(std::array<int64_t,
    2>{1L, 1L}.data()), 2`` or ``int_array_3, 2``): one list; an optional tensor as
    ``&temporary_reference(arg1_1.get())``."""
    vals: list[Any] = []
    outs: list[str] = []
    i = 0
    while i < len(texts):
        t = texts[i].strip()
        m = _STD_ARRAY.match(t)
        arr = _ints(m.group(1)) if m else arrays.get(t) if t.startswith("int_array_") else None
        if arr is not None:
            vals.append(arr)
            i += 2 if i + 1 < len(texts) and texts[i + 1].strip().rstrip("L") == str(len(arr)) else 1
            continue
        m = _HANDLE_ARG.match(t)
        if m:
            outs.append(m.group(1))
        else:
            m = _TEMP_REF.match(t)
            vals.append(_value(m.group(1) if m else t, env, arrays))
        i += 1
    return vals, outs


def _aten_op(stem: str) -> Any:
    """``torch.ops.aten`` overload a shim names: ``addmm_out`` -> ``addmm.out``, ``convolution`` ->
    ``convolution.default``, ``index_Tensor`` -> ``index.Tensor``."""
    aten = torch.ops.aten
    if stem.endswith("_out") and hasattr(aten, stem[:-4]):
        return getattr(getattr(aten, stem[:-4]), "out")
    if hasattr(aten, stem):
        return getattr(aten, stem).default
    head, _, overload = stem.rpartition("_")
    if head and hasattr(aten, head) and overload in getattr(aten, head).overloads():
        return getattr(getattr(aten, head), overload)
    raise ValueError(f"no ATen op for the shim {stem!r}")


def _shim_call(fn: str, texts: list[str], env: dict[str, Any], arrays: dict[str, list[int]]) -> Callable[[], Any]:
    """A C shim call (``aoti_torch_cpu_addmm_out(buf0, ...)``, ``aoti_torch_cpu_convolution(..., &buf2_handle)``) as
    a call of the ATen op it wraps, its arguments named by the op's schema in the shim's order (an ``.out``
    overload's ``out`` first); buffers it returns through handles are put in ``env`` when it runs.  Raises
    ValueError where the arguments do not fit the schema."""
    stem = _SHIM_PREFIX.sub("", fn)
    if stem == fn:
        raise ValueError(f"{fn} is not a device shim call")
    op = _aten_op(stem)
    vals, outs = _shim_args(texts, env, arrays)
    params = list(op._schema.arguments)
    out_names = [a.name for a in params if a.is_out]
    ins = [a.name for a in params if not a.is_out]
    if out_names:
        if len(out_names) != 1 or len(vals) != 1 + len(ins):
            raise ValueError(f"{fn}: {len(vals)} arguments do not fit {op._schema}")
        kwargs = dict(zip(ins, vals[1:]))
        kwargs[out_names[0]] = vals[0]
        return lambda: op(**kwargs)
    if len(vals) != len(ins):
        raise ValueError(f"{fn}: {len(vals)} arguments do not fit {op._schema}")
    kwargs = dict(zip(ins, vals))

    def call() -> Any:
        res = op(**kwargs)
        for name, r in zip(outs, res if isinstance(res, (list, tuple)) else [res]):
            env[name] = r
        return res

    return call


def replay_calls(source: str, args: list[Any], known: dict[str, Any] | None = None
                 ) -> tuple[list[tuple[str, int, Callable[[], Any] | None, str]], list[Any]]:
    """The C++ wrapper's kernel calls, in order, as ``(name, call, fn, why)``: ``fn`` runs that one call
    (None with ``why`` where it cannot be replayed); ``call`` counts a kernel's calls from 1.  Each call that can
    be replayed runs once here, in order.  ``args``: the graph's inputs (``get_args()``); ``known``: other names the
    wrapper uses (AOTInductor's ``constant_0_weight``).  Also returns the replay's outputs
    (``output_handles[i] = bufN.release();``; None where unknown)."""
    span = entry_body(source)
    if span is None:
        return [], []
    kernels = parse_cpp_wrapper(source)
    defs = cpp_kernel_defs(source)
    by_line = {ln: (k, i) for k in kernels for i, ln in enumerate(k.get("call_lines") or [])}
    body = source[span[0]:span[1]]
    first_line = source.count("\n", 0, span[0]) + 1
    env: dict[str, Any] = dict(known or {})
    arrays: dict[str, list[int]] = {}
    built: dict[str, Callable] = {}
    out: list[tuple[str, int, Callable[[], Any] | None, str]] = []
    for offset, line in enumerate(body.split("\n")):
        for name, vals in _ARRAY.findall(line):
            arrays[name] = _ints(vals)
        m = _INPUT.match(line)
        if m:
            env[m.group(1)] = args[int(m.group(2))] if int(m.group(2)) < len(args) else None
            continue
        m = _EMPTY.search(line)
        if m:
            size, stride, dtype, device, buf = m.groups()
            t = torch.empty_strided(arrays[size], arrays[stride], dtype=getattr(torch, dtype), device=device)
            env[buf] = t.normal_() if t.is_floating_point() else t.zero_()
            continue
        m = _MOVE.match(line)
        if m and m.group(2) in env:
            env[m.group(1)] = env[m.group(2)]
            continue
        m = _ALIAS.match(line)  # a view of a buffer (a concatenation's part): auto buf10 = ...reinterpret...;  // alias
        if m:
            try:
                env[m.group(1)] = _value(m.group(2), env, arrays)
            except (ValueError, KeyError, RuntimeError):
                pass
            continue
        hit = by_line.get(first_line + offset)
        if hit is None:
            continue
        k, i = hit
        try:
            if k["backend"] == "cpp":
                vals = [_value(a, env, arrays) for a in k["calls"][i]]
                d = defs[k["name"]]
                params = [p.strip() for p in d["params"].split(",") if p.strip()]
                types = [re.sub(r"\s*\b\w+$", "", p).strip() for p in params]
                if k["name"] not in built:
                    src = re.sub(r"\bvoid\s+" + re.escape(k["name"]) + r"\s*\(", "void kernel(", d["source"], count=1)
                    built[k["name"]] = adapter.cpp_kernel_binding(types, "#include <torch/csrc/inductor/cpp_prefix.h>\n" + src)
                fn, a = built[k["name"]], vals[:len(params)]
                call: Callable[[], Any] = lambda fn=fn, a=a: fn(*a)  # noqa: E731
            elif k["backend"] == "extern":
                call = _shim_call(k["name"].split("#")[0], k["calls"][i], env, arrays)
            else:
                raise ValueError(f"a {k['backend']} kernel is not replayed on the CPU")
            call()
            out.append((k["name"], i + 1, call, ""))
        except Exception as e:  # noqa: BLE001 - this call is listed with why; later ones may depend on it
            why = f"not replayed ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
            out.append((k["name"], i + 1, None, why))
    outputs = [env.get(b) for _, b in sorted((int(i), b) for i, b in _OUTPUT.findall(body))]
    return out, outputs


def _check(replayed: list[Any], compiled: Any) -> str:
    """Whether the replay's outputs equal the compiled graph's on the same inputs (one clause)."""
    compiled = list(compiled) if isinstance(compiled, (list, tuple)) else [compiled]
    if not replayed or len(replayed) != len(compiled) or any(r is None for r in replayed):
        return "the replay's outputs could not be compared with the compiled graph's"
    same = all(isinstance(c, torch.Tensor) and r.shape == c.shape and torch.allclose(r, c, rtol=1e-4, atol=1e-5)
               for r, c in zip(replayed, compiled))
    return ("the replay's outputs equal the compiled graph's on the same inputs" if same else
            "the replay's outputs DIFFER from the compiled graph's: its kernel times may not be the graph's")


def time_cpp_wrapper_kernels(output_path: str, result: dict[str, Any], cancel: threading.Event | None = None,
                             progress: Callable[[str], None] | None = None,
                             script: dict[str, Any] | None = None) -> dict[str, Any]:
    """``result`` (time_graph's, for the C++-wrapper output module at ``output_path``, with no kernel timed) with
    ``kernels`` timed by :func:`replay_calls` (one entry per call: ``name``, ``call``, ``backend``, ``median_ms``,
    ``p20_ms``, ``p80_ms``, ``share``; ``median_ms`` None with ``missing`` where a call was not replayed),
    ``kernel_sum_ms`` (over the timed calls), ``kernels_note`` (how, one line) and the verdict recomputed.  On
    any failure the result keeps ``kernels`` empty and says why in ``kernels_note``.  Inputs: ``get_args()``, with
    the script's own values where ``script["inputs"]`` kept them (integer indices above all: random ones can send
    a C++ gather out of bounds), as time_graph does."""

    with open(output_path, encoding="utf-8") as f:
        source = f.read()
    if progress is not None:
        progress("replaying the C++ wrapper's calls one by one (its C++ kernels built on their own)")
    mod = adapter.load_output_module(output_path)
    args = list(mod.get_args())
    from inductor_step.tracer.timing.harness import _use_script_inputs  # noqa: PLC0415

    _use_script_inputs(args, (script or {}).get("inputs") or (script or {}).get("int_inputs") or {})
    with torch.no_grad():
        calls, outputs = replay_calls(source, [a.clone() if isinstance(a, torch.Tensor) else a for a in args])
        check = _check(outputs, mod.call(list(args)))
    return with_kernel_times(result, source, calls, check, cancel)


def with_kernel_times(result: dict[str, Any], source: str, calls: list, check: str,
                      cancel: threading.Event | None = None) -> dict[str, Any]:
    """``result`` with each replayed call of ``calls`` (:func:`replay_calls`) timed alone on the CPU (Inductor's
    benchmarker, median and 20-80% spread): ``kernels``, ``kernel_sum_ms``, ``kernels_note`` (how, and
    ``check``: whether the replay's outputs equal the compiled graph's) and the verdict recomputed."""
    from inductor_step.tracer.timing.harness import settled  # noqa: PLC0415
    from inductor_step.tracer.timing.rounds import cpu_quantiles  # noqa: PLC0415

    backends = {k["name"]: k["backend"] for k in parse_cpp_wrapper(source)}
    b = adapter.benchmarker()
    kernels: list[dict[str, Any]] = []
    with torch.no_grad():
        for name, call, fn, why in calls:
            if cancel is not None and cancel.is_set():
                result["cancelled"] = True
                break
            entry: dict[str, Any] = {"name": name, "call": call, "backend": backends.get(name, "?"),
                                     "median_ms": None, "p20_ms": None, "p80_ms": None}
            if fn is None:
                entry["missing"] = why
            else:
                entry["median_ms"], entry["p20_ms"], entry["p80_ms"] = cpu_quantiles(b, fn, warmup_ms=5)
            kernels.append(entry)
    timed = [k for k in kernels if k["median_ms"] is not None]
    total = sum(k["median_ms"] for k in timed)
    for k in kernels:
        k["share"] = (k["median_ms"] / total if total else 0.0) if k["median_ms"] is not None else None
    result["kernels"] = kernels
    result["kernel_sum_ms"] = total if timed else None
    missing = len(kernels) - len(timed)
    result["kernels_note"] = HOW + f"; {check}" + (f"; {missing} of {len(kernels)} calls not replayed (each says why)"
                                                   if missing else "")
    result.update(settled(result.get("graph_rounds") or {}, result.get("compiled_ms") or 0.0, total, False))
    return result
