"""A standalone, runnable Python repro of one recorded Inductor Triton kernel: its source rebuilt as a plain
``@triton.jit`` function, inputs of the recorded sizes, strides and dtypes (the kernel's real arguments when they
were saved beside it: tracer.save_inputs, tracer.repro_inputs), the recorded launch config and grid, and a timing
against the in-model time.  Writing one needs neither torch nor a GPU (standard library)."""

from __future__ import annotations

import ast
import json
import math
import re
from typing import Any

from inductor_step.tracer.repro_inputs import CODE as LOAD_CODE
from inductor_step.tracer.repro_inputs import make_input_code, report_code, save_repro
from inductor_step.tracer.triton_stages import kernel_meta, launch_config

_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64", "i64": "int64",
           "i32": "int32", "i16": "int16", "i8": "int8", "u8": "uint8", "i1": "bool", "u1": "bool",
           "fp8e4nv": "float8_e4m3fn", "fp8e5": "float8_e5m2"}


def _call_args(expr: str) -> tuple[str, list[Any]] | None:
    """``f((2, 16), (16, 1), torch.float32)`` -> ("f", [(2, 16), (16, 1), "torch.float32"]); None if not a call."""
    try:
        node = ast.parse(expr.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call):
        return None
    vals: list[Any] = []
    for a in node.args:
        try:
            vals.append(ast.literal_eval(a))
        except (ValueError, SyntaxError):
            vals.append(ast.unparse(a))
    return ast.unparse(node.func), vals


def arg_layout(arg: str, wrapper: str, before_line: int | None = None) -> dict[str, Any] | None:
    """Sizes, strides and storage offset of one call argument as the wrapper makes it: a literal
    ``reinterpret_tensor(buf, sizes, strides, offset)``, or a name the wrapper assigns from
    ``empty_strided_*`` / ``reinterpret_tensor`` or checks with ``assert_size_stride``; the last
    definition before ``before_line`` (1-based) wins.  None when the wrapper does not say."""
    if arg.startswith("reinterpret_tensor("):
        c = _call_args(arg)
        if c and len(c[1]) >= 4 and isinstance(c[1][1], tuple):
            return {"sizes": list(c[1][1]), "strides": list(c[1][2]), "offset": c[1][3]}
        return None
    rows = wrapper.split("\n")[: (before_line - 1) if before_line else None]
    found: dict[str, Any] | None = None
    pat = re.compile(r"^\s*(?:" + re.escape(arg) + r"\s*=\s*((?:empty_strided\w*|reinterpret_tensor)\(.*\))"
                     r"|(assert_size_stride\(" + re.escape(arg) + r",.*\)))\s*(?:;.*|#.*)?$")
    alias = re.compile(r"^\s*" + re.escape(arg) + r"\s*=\s*(\w+)\s*(?:;.*|#.*)?$")
    for row in rows:
        if row.lstrip().startswith("assert_size_stride_grouped(") and re.search(rf"\b{re.escape(arg)}\b", row):
            g = _call_args(row)  # torch >= 2.14: ((arg0_1, arg1_1), (sizes, ...), (strides, ...), 'input')
            try:
                at = [s.strip() for s in ast.unparse(ast.parse(row.strip()).body[0].value.args[0]).strip("()").split(",")]
                i = at.index(arg)
                found = {"sizes": list(g[1][1][i]), "strides": list(g[1][2][i]), "offset": 0}  # type: ignore[index]
            except (ValueError, IndexError, TypeError, AttributeError, SyntaxError):
                pass
            continue
        a = alias.match(row)
        if a and a.group(1) != arg:  # buf17 = buf16; del buf16  # reuse
            found = arg_layout(a.group(1), "\n".join(rows), None) or found
            continue
        m = pat.match(row)
        if not m:
            continue
        c = _call_args(m.group(1) or m.group(2))
        if not c:
            continue
        fn, vals = c
        first = 0 if fn.startswith("empty_strided") else 1  # empty_strided(sizes, strides, ...)
        if len(vals) < first + 2 or not isinstance(vals[first], tuple) or not isinstance(vals[first + 1], tuple):
            continue
        found = {"sizes": list(vals[first]), "strides": list(vals[first + 1]), "offset": 0}
        if fn.startswith("reinterpret_tensor") and len(vals) >= 4 and isinstance(vals[3], int):
            found["offset"] = vals[3]
        if fn.startswith("empty_strided") and len(vals) >= 3 and str(vals[-1]).startswith("torch."):
            found["dtype"] = str(vals[-1])[6:]
    return found


def _grid(meta: dict[str, Any], cfg: dict[str, int], args: dict[str, int], rk: dict[str, Any]) -> tuple[list[int], str]:
    res = rk.get("resources") if isinstance(rk.get("resources"), dict) else {}
    if res.get("grid"):
        return list(res["grid"]), "recorded (the run stage's resources.grid)"
    grid = []
    for axis in ("x", "y", "z"):
        n = args.get(f"{axis}numel")
        if n is None:
            break
        grid.append(max(1, math.ceil(n / cfg.get(f"{axis.upper()}BLOCK", 1))))
    return grid or [1], "ceil(numel / BLOCK) per axis (no grid recorded)"


def repro_text(kernel: dict[str, Any], wrapper: str, run_kernel: dict[str, Any] | None = None,
               where: str = "") -> tuple[str, list[str]]:
    """The repro file's text for ``kernel`` (a codegen stop's kernel entry, Triton), sized from the
    ``wrapper`` (the codegen stop's output module source) and launched with ``run_kernel``'s config and
    grid (the run stage's entry, if recorded); and the problems found (an argument whose layout the
    wrapper does not give, a symbolic size): each also written into the file, which then stops with it.
    Raises ValueError for a kernel that is not a Triton kernel with a ``@triton.jit`` function."""
    if kernel.get("backend") != "triton":
        raise ValueError(f"{kernel.get('name')}: not a Triton kernel ({kernel.get('backend')})")
    name = kernel["name"]
    meta = kernel_meta(kernel.get("source") or "")
    rk = run_kernel or {}
    cfg, cfg_source = launch_config(meta, rk)
    sig = (meta.get("triton_meta") or {}).get("signature") or {}
    params = [p for p, t in sig.items() if t != "constexpr"]
    call = (kernel.get("calls") or [[]])[0]
    line = (kernel.get("call_lines") or [None])[0]
    setup, problems, ints, names = _arg_setup(params, sig, call, wrapper, line)
    grid, grid_source = _grid(meta, cfg, ints, rk)
    consts = ", ".join(f"{k}={v}" for k, v in cfg.items() if k not in ("num_warps", "num_stages"))
    launch = f"{name}[GRID]({', '.join(names)}{', ' + consts if consts else ''}, " \
             f"num_warps={cfg.get('num_warps', 4)}, num_stages={cfg.get('num_stages', 1)})"
    recorded = {k: rk.get(k) for k in ("median_ms", "in_graph_ms", "in_graph_source", "config") if rk.get(k) is not None}
    info = {"kernel": name, "where": where, "config": cfg, "config_source": cfg_source, "grid": grid,
            "grid_source": grid_source, "recorded": recorded, "fused_nodes": kernel.get("fused_nodes"),
            "buffers": kernel.get("buffers")}
    return _text(name, where, info, meta, grid, problems, setup, names, launch), problems


def _arg_setup(params: list[str], sig: dict[str, Any], call: list[str], wrapper: str,
               line: Any) -> tuple[list[str], list[str], dict[str, int], list[str]]:
    """The repro's lines that make each argument of the recorded ``call`` (an int, or an input of the sizes and
    strides the ``wrapper`` gives at ``line``): ``(setup, problems, the int arguments' values, the names)``."""
    problems: list[str] = []
    setup: list[str] = []
    ints: dict[str, int] = {}
    names: list[str] = []
    for i, arg in enumerate(call[: len(params)] if params else call):
        p = params[i] if i < len(params) else f"arg{i}"
        ty = sig.get(p, "")
        names.append(p)
        if not str(ty).startswith("*"):
            try:
                ints[p] = int(ast.literal_eval(arg))
                setup.append(f"{p} = {ints[p]}")
            except (ValueError, SyntaxError):
                problems.append(f"{p} = {arg}: not a number in the recording (a symbolic size?)")
                setup.append(f"{p} = None  # {arg}: set it")
            continue
        lay = arg_layout(arg, wrapper, line)
        dtype = _DTYPES.get(str(ty)[1:], (lay or {}).get("dtype") or "float32")
        if lay is None or not all(isinstance(v, int) for v in lay["sizes"] + lay["strides"] + [lay["offset"]]):
            problems.append(f"{p} ({arg}): the wrapper gives no sizes/strides for it")
            setup.append(f"{p} = None  # {arg}: allocate it")
            continue
        setup.append(f"{p} = make_input({lay['sizes']}, {lay['strides']}, {lay['offset']}, torch.{dtype})"
                     f"  # {arg}")
    return setup, problems, ints, names


def _text(name: str, where: str, info: dict[str, Any], meta: dict[str, Any], grid: Any, problems: list[str],
          setup: list[str], names: list[str], launch: str) -> str:
    """The repro file's text (see repro_text): a docstring, the kernel as a plain ``@triton.jit`` function, its
    arguments made, one checked launch and its timing."""
    head = (f'"""Standalone repro of Inductor\'s Triton kernel {name} (written by inductor-step from a recorded '
            f"session{', ' + where if where else ''}).\n\n"
            "Run it on a CUDA GPU: python THIS_FILE.py  (needs torch and triton; prints the median time and the\n"
            "in-model time recorded for this kernel).  Inputs: the kernel's real arguments when\n"
            f"{name}.inputs.pt is beside this file (saved at its launch: X in pane 6, or --save-inputs), checked\n"
            "against the recorded sizes, strides and dtypes, and its outputs compared with the in-model ones; else\n"
            "random (integers are 0) with the recorded sizes, strides and dtypes.  The launch config and grid are\n"
            "the recorded ones.\n"
            f'"""\n# {json.dumps(info, default=str)}\n')
    body = (meta["plain"].replace("import triton\n", "import triton\nimport torch\n", 1)
            if "import triton\n" in meta["plain"] else "import torch\nimport triton\n" + meta["plain"])
    problem_lines = "".join(f"#   {p}\n" for p in problems)
    main = f'''

INFO = {json.dumps(info, default=str)!r}
GRID = tuple({grid!r})
PROBLEMS = {problems!r}
{('# problems:' + chr(10) + problem_lines) if problems else ''}
{make_input_code("cuda")}
{LOAD_CODE}

def main():
    import json, sys
    info = json.loads(INFO)
    if PROBLEMS:
        print("cannot run: " + "; ".join(PROBLEMS))
        return 2
    if not torch.cuda.is_available():
        print(f"no CUDA GPU here (torch {{torch.__version__}}): this repro launches {{info['kernel']}} on one; "
              "run it on a GPU machine")
        return 2
    {chr(10).join('    ' + s for s in setup).lstrip()}
    names = {names!r}
    args, said, saved = load_inputs(info["kernel"], names, [{', '.join(names)}], "cuda")
    print(said)
    {', '.join(names)}{',' if len(names) == 1 else ''} = args

    def launch():
        {launch}

    launch()
    torch.cuda.synchronize()
    same = check_outputs(names, [{', '.join(names)}], saved)
    from triton.testing import do_bench
    ms = do_bench(launch, warmup=25, rep=200, return_mode="median")
''' + report_code("triton.testing.do_bench, L2 flushed")
    return head + body + main


def write_repro(kernel: dict[str, Any], wrapper: str, out_dir: str, run_kernel: dict[str, Any] | None = None,
                where: str = "") -> tuple[str, list[str]]:
    """Write ``repro_text`` to ``out_dir/<kernel name>.py``; returns its path and the problems found.
    Raises OSError when the file cannot be written, ValueError as ``repro_text``."""
    text, problems = repro_text(kernel, wrapper, run_kernel, where)
    return save_repro(kernel["name"], text, out_dir), problems
