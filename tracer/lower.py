"""``inductor-step lower SESSION [KERNEL...] --target sm_80``: a recorded session's Triton kernels compiled
again with the installed Triton (no GPU needed), one line each (registers, spills, global load/store widths),
their stages written as files, standalone repros written; run as ``python -m inductor_step.tracer.lower``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Iterator

from inductor_step.session import format as protocol
from inductor_step.tracer import cpp_repro, kernel_repro, triton_stages


def session_kernels(path: str, backends: tuple[str, ...] = ("triton",)) -> Iterator[dict[str, Any]]:
    """Each Triton kernel (each kernel of ``backends``: ``"cpp"`` too for repros) of a session file:
    ``{"graph", "kernel", "wrapper", "run", "cc", "torch"}``; ``run`` is
    the graph's run-stage entry for it (first call), ``cc`` the compute capability its source was generated for,
    ``torch`` the version that recorded it."""
    stops: dict[str, dict[str, Any]] = {}
    runs: dict[str, dict[str, dict[str, Any]]] = {}
    torch = None
    for msg in protocol.read_session(path):
        if msg.get("type") == "header":
            torch = msg.get("torch")
        elif msg.get("type") == "stop" and msg.get("stage") == "codegen":
            stops[protocol.graph_key(msg)] = msg
        elif msg.get("type") == "run":
            per: dict[str, dict[str, Any]] = {}
            for k in msg.get("kernels") or []:
                per.setdefault(k.get("name"), k)
            runs[protocol.graph_key(msg)] = per
    for key, stop in stops.items():
        for k in stop.get("kernels") or []:
            if k.get("backend") not in backends:
                continue
            cc = None
            try:
                if k.get("backend") != "triton":
                    raise ValueError("a C++ kernel has no CUDA target")
                dev = (triton_stages.kernel_meta(k.get("source") or "").get("triton_meta") or {}).get("device")
                cc = (dev or {}).get("cc") if isinstance(dev, dict) else None
            except ValueError:
                pass
            yield {"graph": key, "kernel": k, "wrapper": stop.get("wrapper") or "",
                   "run": (runs.get(key) or {}).get(k["name"]), "cc": cc, "torch": torch}


def _torch_version() -> str | None:
    try:
        from importlib.metadata import version  # noqa: PLC0415

        return version("torch")
    except Exception:  # noqa: BLE001
        return None


def summary_line(item: dict[str, Any], res: dict[str, Any]) -> str:
    """One line for a compiled kernel: target, registers, spills, shared memory, global load/store widths."""
    name = item["kernel"]["name"]
    if "error" in res:
        hint = ""
        rec, here = item.get("torch"), _torch_version()
        if "CompilationError" in res["error"] and rec and here and rec != here:
            hint = (f" (the kernel calls this torch's triton_helpers/libdevice: recorded with torch {rec}, "
                    f"this is torch {here})")
        return f"{item['graph']} {name}: {res['error']}{hint}"
    info = res.get("sass_info") or {}
    counts = (res.get("maps") or {}).get("counts", {}).get("sass") or {}
    kinds: dict[str, int] = {}
    for per in counts.values():
        for kd, n in per.items():
            if kd.startswith(("ld.global", "st.global", "local")):
                kinds[kd] = kinds.get(kd, 0) + n
    mem = ", ".join(f"{k} x{n}" for k, n in sorted(kinds.items())) or "no global loads/stores"
    cfg = " ".join(f"{k}={v}" for k, v in (res.get("config") or {}).items())
    spill = info.get("spill_store_bytes")
    return (f"{item['graph']} {name} {res['target']} (Triton {res['triton']}; {cfg}, from {res['config_source']}): "
            f"{info.get('n_regs', '?')} regs, {'?' if spill is None else spill} spill bytes, "
            f"{(res.get('metadata') or {}).get('shared', '?')} B shared; SASS {mem}")


def write_stages(res: dict[str, Any], name: str, out_dir: str) -> list[str]:
    """Write each stage as ``out_dir/<name>.<stage>`` (ttir, ttgir, llir, ptx, sass); returns the paths."""
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for st, text in (res.get("stages") or {}).items():
        p = os.path.join(out_dir, f"{name}.{st}")
        with open(p, "w") as f:
            f.write(text)
        paths.append(p)
    return paths


def main(argv: list[str] | None = None) -> int:
    """Command line; returns 0 when every chosen kernel compiled, 1 when one did not, 2 on a usage error."""
    p = argparse.ArgumentParser(prog="inductor-step lower", description=__doc__.split("\n")[0],
                                epilog="Compiling a kernel runs its recorded Python source (Triton needs the function): "
                                       "lower sessions you trust.")
    p.add_argument("session", help="a recorded session (.jsonl)")
    p.add_argument("kernels", nargs="*", help="kernel names (or parts of them); default: every Triton kernel")
    p.add_argument("--target", default=None, help="CUDA target(s): sm_80, sm_90, sm_100, or several: sm_80,sm_90 (default: the recorded one)")
    p.add_argument("--graph", default=None, help="only this graph ([0/0] forward)")
    p.add_argument("--pick", action="append", default=[], metavar="GRAPH|KERNEL",
                   help="exactly this kernel of this graph (repeatable; instead of KERNEL names and --graph)")
    p.add_argument("--stages-dir", default=None, help="write each kernel's TTIR/TTGIR/LLIR/PTX/SASS here")
    p.add_argument("--repro", default=None, metavar="DIR", help="write a standalone repro per kernel here")
    p.add_argument("--json", default=None, metavar="FILE", help="write the full results (stages, maps) as JSON")
    p.add_argument("--no-compile", action="store_true", help="only write repros (needs no Triton)")
    ns = p.parse_args(argv)
    if not os.path.isfile(ns.session):
        print(f"no such session file: {ns.session}", file=sys.stderr)
        return 2
    failed, results = 0, []
    seen = 0
    for item in session_kernels(ns.session, ("triton", "cpp") if ns.repro else ("triton",)):
        name = item["kernel"]["name"]
        if ns.pick and f"{item['graph']}|{name}" not in ns.pick:
            continue
        if ns.kernels and not any(k == name or k in name for k in ns.kernels):
            continue
        if ns.graph and item["graph"] != ns.graph:
            continue
        seen += 1
        if ns.repro:
            cpp = item["kernel"].get("backend") == "cpp"  # a C++ kernel: its repro only
            try:
                path, problems = (cpp_repro if cpp else kernel_repro).write_repro(item["kernel"], item["wrapper"],
                                                                                  ns.repro, item["run"], item["graph"])
                saved = os.path.join(ns.repro, f"{name}.inputs.pt")  # tracer.save_inputs wrote it there
                print(f"{item['graph']} {name}: repro {path}" + (f" (cannot run: {'; '.join(problems)})"
                                                                 if problems else "")
                      + (f"; it loads the real inputs saved in {name}.inputs.pt beside it" if os.path.exists(saved)
                         else "; inputs allocated at the recorded sizes (none saved)"))
            except (OSError, ValueError) as e:
                print(f"{item['graph']} {name}: no repro ({e})")
        if ns.no_compile or item["kernel"].get("backend") != "triton":
            continue
        targets = [t for t in (ns.target or "").split(",") if t.strip()] or \
            [f"sm_{item['cc']}" if item.get("cc") else "sm_90"]
        for target in targets:  # several: the same kernel compared across targets, one line each
            res = triton_stages.compile_kernel(item["kernel"].get("source") or "", name, target, item["run"])
            print(summary_line(item, res), flush=True)
            failed += "error" in res
            if ns.stages_dir and "error" not in res:
                write_stages(res, name if len(targets) == 1 else f"{name}.{res['target']}", ns.stages_dir)
            results.append({"graph": item["graph"], "kernel": name, **res})
    if not seen:
        print(f"no {'Triton or C++' if ns.repro else 'Triton'} kernel in this session matches" + (f" {' '.join(ns.kernels)}" if ns.kernels else ""))
        return 1
    if ns.json:
        with open(ns.json, "w") as f:
            json.dump(results, f)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
