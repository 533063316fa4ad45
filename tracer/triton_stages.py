"""A recorded Inductor Triton kernel compiled again with the installed Triton for a named target (no GPU
needed), or a live compiled kernel read: its TTIR, TTGIR, LLIR, PTX, cubin and SASS, registers and spills,
and the line maps of tracer.stage_lines."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Any

from inductor_step.tracer import stage_lines

_DECO = re.compile(r"^@triton_heuristics\.(\w+)\(", re.M)
_TARGET = re.compile(r"^(?:sm_?)?(\d+)a?$")


class _Stub:
    """Stands for any name of Inductor's runtime a decorator's arguments mention (hints, enums)."""

    def __init__(self, *a: Any, **k: Any) -> None:
        self.a, self.k = a, k

    def __getattr__(self, name: str) -> "_Stub":
        return _Stub()

    def __call__(self, *a: Any, **k: Any) -> "_Stub":
        return _Stub(*a, **k)


class _Names(dict):
    def __missing__(self, key: str) -> Any:
        if key == "DeviceProperties":
            return lambda **k: dict(k)
        if key in ("set", "dict", "list", "tuple", "True", "False", "None"):
            raise KeyError(key)
        return _Stub()


def parse_target(target: str | int) -> int:
    """``"sm_90"``, ``"sm90a"``, ``"90"`` or 90 -> 90 (the compute capability as Triton's GPUTarget takes it).
    Raises ValueError for anything else."""
    m = _TARGET.match(str(target).strip().lower())
    if not m:
        raise ValueError(f"not a CUDA target: {target!r} (write sm_80, sm_90, sm_100)")
    return int(m.group(1))


def kernel_meta(source: str) -> dict[str, Any]:
    """What an Inductor Triton kernel's source says about its compile: ``heuristic`` (pointwise,
    persistent_reduction, reduction, template, user_autotune, ...), its ``triton_meta`` (signature,
    constants, divisibility ``configs``, device), ``inductor_meta``, ``size_hints`` and, for a template,
    ``num_warps``/``num_stages``; and ``plain``: the source with the ``@triton_heuristics`` decorator and
    ``set_driver_to_gpu()`` blanked out line for line (line numbers unchanged), so ``@triton.jit`` alone
    makes the function.  Raises ValueError when there is no ``@triton.jit`` function."""
    m = _DECO.search(source)
    j = source.find("@triton.jit")
    if j < 0:
        raise ValueError("no @triton.jit function in this source")
    out: dict[str, Any] = {"heuristic": m.group(1) if m else None}
    plain = source
    if m and m.start() < j:
        deco = source[m.start() + 1:j].strip()
        try:
            call = ast.parse(deco, mode="eval").body
        except SyntaxError as e:
            raise ValueError(f"cannot read the kernel's decorator ({e})") from e
        names = _Names()
        for kw in getattr(call, "keywords", []):
            if kw.arg in ("triton_meta", "inductor_meta", "size_hints", "num_warps", "num_stages", "configs"):
                try:
                    out[kw.arg] = eval(compile(ast.Expression(kw.value), "<decorator>", "eval"),  # noqa: S307
                                       {"__builtins__": {"set": set, "dict": dict, "list": list, "tuple": tuple}},
                                       names)
                except Exception as e:  # noqa: BLE001
                    out.setdefault("notes", []).append(f"{kw.arg} not read ({type(e).__name__}: {e})")
        block = source[m.start():j]
        plain = source[:m.start()] + re.sub(r"[^\n]", " ", block) + source[j:]
    out["plain"] = re.sub(r"^triton_helpers\.set_driver_to_gpu\(\)", lambda mm: " " * len(mm.group(0)),
                          plain, flags=re.M)
    return out


def parse_config(text: str | None) -> dict[str, int]:
    """``"XBLOCK=256, num_warps=4, num_stages=1"`` (a run kernel's ``config``) -> a dict of ints."""
    out: dict[str, int] = {}
    for part in (text or "").split(","):
        k, _, v = part.strip().partition("=")
        if k and v.strip().lstrip("-").isdigit():
            out[k.strip()] = int(v)
    return out


def launch_config(meta: dict[str, Any], run_kernel: dict[str, Any] | None) -> tuple[dict[str, int], str]:
    """The block sizes, ``num_warps`` and ``num_stages`` to compile with, and where they came from: the run
    stage's recorded config (what the script's run autotuned to), else a template's decorator, else a
    guess from ``size_hints`` (said so)."""
    rk = run_kernel or {}
    res = rk.get("resources") if isinstance(rk.get("resources"), dict) else {}
    if res.get("config") and res.get("num_warps"):
        cfg = {**res["config"], "num_warps": res["num_warps"], "num_stages": res.get("num_stages") or 1}
        return cfg, "the run stage's compiled launcher (resources)"
    if rk.get("config"):
        cfg = parse_config(rk["config"])
        if cfg:
            cfg.setdefault("num_warps", 4)
            cfg.setdefault("num_stages", 1)
            return cfg, "the run stage's config"
    consts = (meta.get("triton_meta") or {}).get("constants") or {}
    if meta.get("num_warps"):
        return {"num_warps": int(meta["num_warps"]), "num_stages": int(meta.get("num_stages") or 1)}, \
            "the template's decorator"
    hints = meta.get("size_hints") or {}
    sig = (meta.get("triton_meta") or {}).get("signature") or {}
    cfg = {"num_warps": 4, "num_stages": 1}
    persistent = meta.get("heuristic") == "persistent_reduction"
    for name in sig:
        if sig[name] != "constexpr" or name in consts:
            continue
        axis = name[:-5].lower() if name.endswith("BLOCK") else None
        hint = int(hints.get(axis, 1024)) if axis else 1
        if axis and axis.startswith("r"):
            cfg[name] = hint if persistent else min(hint, 512)
        elif axis:
            cfg[name] = 1 if any(k.startswith("r") for k in hints) else min(hint, 1024)
    return cfg, "guessed from size_hints (no launch config recorded)"


def _tool(name: str) -> str | None:
    """A CUDA binary Triton ships (``ptxas``, ``nvdisasm``, ``cuobjdump``), else one on PATH."""
    try:
        import triton  # noqa: PLC0415

        p = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", name)
        if os.path.isfile(p):
            return p
    except Exception:  # noqa: BLE001
        pass
    return shutil.which(name)


def _ptxas(arch: int) -> str | None:
    """The ptxas Triton assembles with for ``arch`` (its knobs: ``TRITON_PTXAS_PATH``, else the bundled one;
    ``ptxas-blackwell`` from sm_100), else one on PATH."""
    try:
        from triton.backends.nvidia.compiler import get_ptxas  # noqa: PLC0415

        path = get_ptxas(arch).path
        if path and os.path.isfile(path):
            return path
    except Exception:  # noqa: BLE001
        pass
    return (_tool("ptxas-blackwell") if arch >= 100 else None) or _tool("ptxas")


def _strip_asm_locs(ptx: str) -> str:
    """The PTX with the ``.loc`` lines inside inline-asm blocks removed (LLVM numbers the asm's own lines
    there, so ptxas would give the block's loads a line past the call's)."""
    out, in_asm = [], False
    for row in ptx.split("\n"):
        s = row.strip()
        if s.startswith("// begin inline asm"):
            in_asm = True
        elif s.startswith("// end inline asm"):
            in_asm = False
        if in_asm and s.startswith(".loc"):
            continue
        out.append(row)
    return "\n".join(out)


def _opcodes(sass: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"/\*[0-9a-f]{4,}\*/\s+([^;]*);", sass)]


def sass_of(cubin: bytes, ptx: str | None, enable_fp_fusion: bool = True) -> dict[str, Any]:
    """SASS of a cubin with kernel-line markers: ``nvdisasm -c`` of the cubin as compiled; the line
    markers (``-g``) come from the PTX assembled again with inline-asm line numbers fixed, used when its
    instructions equal the compiled cubin's (``lines_from`` says which), plus ``ptxas -v``'s registers and
    spill bytes.  ``{"error": ...}`` when nvdisasm is missing or fails."""
    nvdisasm = _tool("nvdisasm")
    if nvdisasm is None:
        return {"error": "nvdisasm not found (Triton's backends/nvidia/bin nor PATH)"}
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="istep_sass_") as d:
        cb = os.path.join(d, "k.cubin")
        with open(cb, "wb") as f:
            f.write(cubin)
        r = subprocess.run([nvdisasm, "-c", "-g", cb], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            return {"error": f"nvdisasm failed: {r.stderr.strip().splitlines()[-1:] or r.returncode}"}
        plain = r.stdout
        out["sass"], out["lines_from"] = plain, "the compiled cubin's line table"
        tgt = re.search(r"^\.target\s+(\w+)", ptx or "", re.M)
        num = re.search(r"\d+", tgt.group(1)) if tgt else None
        ptxas = _ptxas(int(num.group(0)) if num else 90)
        if ptx and ptxas and tgt:
            fixed = os.path.join(d, "fixed.ptx")
            with open(fixed, "w") as f:
                f.write(_strip_asm_locs(ptx))
            cmd = [ptxas, "-lineinfo", "-v", *([] if enable_fp_fusion else ["--fmad=false"]),
                   f"--gpu-name={tgt.group(1)}", fixed, "-o", os.path.join(d, "fixed.cubin")]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            if p.returncode != 0 and "regAllocOptLevel" not in " ".join(cmd):
                p = subprocess.run(cmd[:1] + ["--regAllocOptLevel=2"] + cmd[1:], capture_output=True, text=True,
                                   timeout=120)
            log = p.stdout + p.stderr
            m = re.search(r"Used (\d+) registers", log)
            if m:
                out["n_regs"] = int(m.group(1))
            m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
            if m:
                out["spill_store_bytes"], out["spill_load_bytes"] = int(m.group(1)), int(m.group(2))
            out["ptxas_v"] = "\n".join(x for x in log.splitlines() if "Compiling entry" not in x).strip()
            if p.returncode == 0:
                r2 = subprocess.run([nvdisasm, "-c", "-g", os.path.join(d, "fixed.cubin")], capture_output=True,
                                    text=True, timeout=120)
                if r2.returncode == 0 and _opcodes(r2.stdout) == _opcodes(plain):
                    out["sass"] = r2.stdout
                    out["lines_from"] = ("the PTX assembled again with inline-asm line numbers fixed "
                                         "(same instructions as the compiled cubin)")
                elif r2.returncode == 0:
                    out["lines_note"] = ("the PTX assembled again differs from the compiled cubin: "
                                         "lines from the cubin's own table (inline-asm loads may show a later line)")
    return out


def _triton_api() -> tuple[Any, Any, Any]:
    import triton  # noqa: PLC0415
    from triton.compiler import ASTSource  # noqa: PLC0415

    try:
        from triton.backends.compiler import GPUTarget  # noqa: PLC0415
    except ImportError:  # older Triton
        from triton.compiler.compiler import GPUTarget  # noqa: PLC0415
    return triton, ASTSource, GPUTarget


def _load_fn(plain: str, name: str, workdir: str) -> Any:
    import importlib.util  # noqa: PLC0415

    path = os.path.join(workdir, f"{name}.py")
    with open(path, "w") as f:
        f.write(plain)
    spec = importlib.util.spec_from_file_location(f"istep_kernel_{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def from_asm(asm: dict[str, Any], kernel_name: str, enable_fp_fusion: bool = True) -> dict[str, Any]:
    """The stages of a compiled kernel's ``asm`` dict (``CompiledKernel.asm``: ttir, ttgir, llir, ptx, cubin):
    their texts, SASS (``sass_of``), and ``maps`` (``stage_lines.stage_maps`` against ``{kernel_name}.py``).
    """
    stages = {k: asm[k] for k in ("ttir", "ttgir", "llir", "ptx") if isinstance(asm.get(k), str)}
    out: dict[str, Any] = {"stages": stages}
    cubin = asm.get("cubin")
    if isinstance(cubin, (bytes, bytearray)):
        s = sass_of(bytes(cubin), stages.get("ptx"), enable_fp_fusion)
        if "sass" in s:
            stages["sass"] = s.pop("sass")
        out["sass_info"] = s
    out["kernel_file"] = _kernel_file(stages.get("ptx", "")) or f"{kernel_name}.py"
    out["maps"] = stage_lines.stage_maps(stages, out["kernel_file"])
    return out


def _kernel_file(ptx: str) -> str | None:
    """The kernel's own file in PTX debug info: the file of the first ``.loc`` (the function's start)."""
    files = {m.group(1): os.path.basename(m.group(3) or m.group(2)) for m in
             re.finditer(r'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s*,\s*\d+\s*,\s*\d+)?(?:\s+"([^"]*)")?', ptx, re.M)}
    m = re.search(r"^\s*\.loc\s+(\d+)\s", ptx, re.M)
    return files.get(m.group(1)) if m else None


def shift_to_source(out: dict[str, Any], source: str) -> None:
    """Make a live kernel's line maps count lines of the recorded ``source`` (Inductor's kernel file may
    start with blank lines the recording strips): the PTX's first ``.loc`` is the ``def`` line; the shift
    between the two is taken off every map (``line_shift`` says by how much), in place."""
    rows = source.split("\n")
    def_line = next((i + 1 for i, r in enumerate(rows) if r.startswith("def ")), None)
    m = re.search(r"^\s*\.loc\s+\d+\s+(\d+)\s", out.get("stages", {}).get("ptx", ""), re.M)
    if def_line is None or m is None:
        return
    shift = int(m.group(1)) - def_line
    out["line_shift"] = shift
    if shift == 0:
        return
    maps = out.get("maps") or {}
    for st, lines in (maps.get("lines") or {}).items():
        maps["lines"][st] = [None if v is None or v - shift < 1 else v - shift for v in lines]
    for st, per in (maps.get("counts") or {}).items():
        maps["counts"][st] = {str(int(k) - shift): v for k, v in per.items() if int(k) - shift >= 1}


def compile_kernel(source: str, name: str, target: str | int = "sm_90",
                   run_kernel: dict[str, Any] | None = None) -> dict[str, Any]:
    """Compile a recorded Inductor Triton kernel's ``source`` with the installed Triton for ``target``
    (a CUDA compute capability; no GPU or driver needed: Triton's own ptxas makes the cubin) the way
    Inductor's ``CachingAutotuner._precompile_config`` does (signature, constants and divisibility from the
    source's ``triton_meta``; block sizes, num_warps, num_stages from ``launch_config``).  Returns
    ``{"target", "triton", "config", "config_source", "stages", "sass_info", "metadata", "maps"}``, or
    ``{"error": one line}`` when the installed Triton cannot compile it."""
    try:
        cc = parse_target(target)
        triton, ASTSource, GPUTarget = _triton_api()
    except (ValueError, ImportError) as e:
        return {"error": f"{type(e).__name__}: {e}"}
    try:
        meta = kernel_meta(source)
    except ValueError as e:
        return {"error": str(e)}
    tm = meta.get("triton_meta") or {}
    cfg, cfg_source = launch_config(meta, run_kernel)
    try:  # the ptxas Inductor uses (torch's own, where its wheel ships one), as Inductor's compile would
        from inductor_step.tracer import adapter  # noqa: PLC0415

        ptxas_path = adapter.use_inductor_ptxas()
    except Exception:  # noqa: BLE001
        ptxas_path = None
    with tempfile.TemporaryDirectory(prefix="istep_lower_") as d:
        try:
            fn = _load_fn(meta["plain"], name, d)
            consts = dict(tm.get("constants") or {})
            consts.update({k: v for k, v in cfg.items() if k in fn.arg_names})
            sig = dict(tm.get("signature") or {})
            attrs = (tm.get("configs") or [{}])[0]
            opts = {"num_warps": cfg.get("num_warps", 4), "num_stages": cfg.get("num_stages", 1), "debug": False,
                    "sanitize_overflow": False, "launch_pdl": bool(tm.get("launch_pdl", False))}
            if "enable_fp_fusion" in tm:
                opts["enable_fp_fusion"] = tm["enable_fp_fusion"]
            binary = triton.compile(ASTSource(fn, sig, consts, attrs), target=GPUTarget("cuda", cc, 32),
                                    options=opts)
        except Exception as e:  # noqa: BLE001 - one line saying why, never a traceback
            msg = str(e).strip().splitlines()
            return {"error": f"Triton {triton.__version__} cannot compile {name} for sm_{cc}: "
                             f"{type(e).__name__}: {msg[-1] if msg else ''}"[:400]}
    out = from_asm(binary.asm, name, bool(tm.get("enable_fp_fusion", True)))
    md = binary.metadata
    out.update(target=f"sm_{cc}", triton=triton.__version__, config=cfg, config_source=cfg_source,
               ptxas=ptxas_path or "Triton's bundled ptxas",
               metadata={"shared": getattr(md, "shared", None), "num_warps": getattr(md, "num_warps", None),
                         "num_stages": getattr(md, "num_stages", None), "name": getattr(md, "name", name)})
    return out


def stages_max() -> int:
    """How many Triton kernels of a graph the run stage compiles again when their launcher kept no asm
    (the slowest first; ``INDUCTOR_STEP_TRITON_STAGES_MAX``, default 12: ~0.5-2 s each)."""
    try:
        return max(0, int(os.environ.get("INDUCTOR_STEP_TRITON_STAGES_MAX", "12")))
    except ValueError:
        return 12


def live_stages(run: Any, name: str, source: str = "", compile_again: bool = True) -> dict[str, Any]:
    """The stages of the binary a kernel's ``.run`` launched (``tracer.adapter.triton_asm``) as the run
    stage records them (``from_asm``, with ``source: "live"`` and the target it was built for); where the
    launcher kept no asm and ``compile_again``, the same source compiled again here with the launcher's config
    for the kernel's target (said so in ``source``); else ``{"missing": why, "compile_again": True}``.
    ``INDUCTOR_STEP_TRITON_STAGES=0`` turns the recording off."""
    if os.environ.get("INDUCTOR_STEP_TRITON_STAGES", "1") == "0":
        return {"missing": "not recorded (INDUCTOR_STEP_TRITON_STAGES=0)"}
    from inductor_step.tracer import adapter  # noqa: PLC0415

    try:
        got = adapter.triton_asm(run)
        if got is not None:
            out = from_asm(got["asm"], name, got["enable_fp_fusion"])
            out["source"] = f"live: the compiled kernel's asm ({got['where']})"
        else:
            # Inductor keeps no asm once the launcher is made: compile the same source with the same
            # Triton, config and target here, in the run's process, and say so
            if not compile_again:
                return {"missing": "the launcher keeps no asm; not compiled again in the run (only the slowest "
                                   f"kernels are, INDUCTOR_STEP_TRITON_STAGES_MAX={stages_max()}): t in pane 6 "
                                   "compiles it", "compile_again": True}
            info = adapter.triton_binary_info(run) or {}
            dev = ((kernel_meta(source).get("triton_meta") or {}).get("device") or {}) if source else {}
            if not source or not isinstance(dev, dict) or not dev.get("cc"):
                return {"missing": "no asm kept by the launcher and no source/target to compile it again"}
            out = compile_kernel(source, name, dev["cc"], {"resources": info})
            if "error" in out:
                return {"missing": f"no asm kept by the launcher; compiling it again failed: {out['error']}"}
            out["source"] = ("compiled again in the run's process (same source, Triton, config and target: "
                             "Inductor's launcher keeps no asm unless triton.store_cubin)")
            regs = info.get("n_regs")
            if regs is not None:
                out["launcher_n_regs"] = regs  # the binary that ran: its registers, to compare
        tgt = re.search(r"^\.target\s+(\w+)", out["stages"].get("ptx", ""), re.M)
        out["target"] = tgt.group(1) if tgt else out.get("target")
        if source and got is not None:
            shift_to_source(out, source)
        return out
    except Exception as e:  # noqa: BLE001 - never fail the timing for this
        return {"missing": f"not read ({type(e).__name__}: {e})"}
