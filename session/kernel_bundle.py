"""The bug-report bundle's kernels: for the Triton kernels the user selected, else the top of the
run's time, a standalone repro each and its TTGIR, PTX and SASS beside it (``inductor-step lower`` in a child
process, so also on a machine without a GPU; where it cannot compile, the stages the session recorded live),
and the REPORT.md section listing them.  Standard library only."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from typing import Any

from inductor_step.session.format import graph_key
from inductor_step.session.saved_inputs import saved_inputs

TOP = 3  # kernels of the ledger's top taken when nothing is selected
DIR = "kernels"


def chosen_kernels(msgs: list[dict[str, Any]], stood: dict | None) -> list[tuple[str, str, str]]:
    """(graph, kernel, why) for the bundle: the Triton kernel(s) computing the selected buffer of the graph
    the user stood on; else the ``TOP`` Triton kernels with the largest time share over all timed graphs."""
    codegen = {graph_key(m): m for m in msgs if m.get("type") == "stop" and m.get("stage") == "codegen"}
    triton = {(g, k["name"]) for g, m in codegen.items() for k in m.get("kernels") or [] if k.get("backend") == "triton"}
    stood = stood or {}
    g, sel = stood.get("graph"), stood.get("selection")
    if g in codegen and sel:
        links = codegen[g].get("links") or {}
        ks = ((links.get("buffers") or {}).get(sel) or {}).get("kernels") or []
        picked = [(g, k, f"computes the selected {sel}") for k in ks if (g, k) in triton]
        if picked:
            return picked
    timed: list[tuple[float, str, str]] = []
    for m in msgs:
        if m.get("type") != "run":
            continue
        for k in m.get("kernels") or []:
            if (graph_key(m), k.get("name")) in triton and k.get("median_ms") is not None:
                timed.append((float(k["median_ms"]), graph_key(m), k["name"]))
    timed.sort(reverse=True)
    seen: list[tuple[str, str, str]] = []
    for ms, gk, name in timed:
        if (gk, name) not in [(a, b) for a, b, _ in seen]:
            seen.append((gk, name, f"top of the run's time ({ms * 1e3:.1f} us)"))
        if len(seen) == TOP:
            break
    return seen


def _has_triton() -> bool:
    try:
        return importlib.util.find_spec("triton") is not None
    except (ImportError, ValueError):
        return False


def _recorded_stages(msgs: list[dict[str, Any]], graph: str, kernel: str) -> dict[str, str]:
    for m in msgs:
        if m.get("type") == "run" and graph_key(m) == graph:
            for k in m.get("kernels") or []:
                st = k.get("stages") if k.get("name") == kernel else None
                if isinstance(st, dict) and st.get("stages"):
                    return st["stages"]
    return {}


def add_kernels(session_path: str, msgs: list[dict[str, Any]], out_dir: str, stood: dict | None) -> str:
    """Write ``kernels/<name>.py`` (repro) and ``kernels/<name>.{ttgir,ptx,sass}`` into the bundle
    ``out_dir``; returns REPORT.md's section for them ("" when the session has no Triton kernel)."""
    picked = chosen_kernels(msgs, stood)
    saved = saved_inputs(msgs, session_path)  # kernels whose real inputs were saved come along
    picked += [(g, k, "its real inputs were saved (X in pane 6 / --save-inputs)") for g, k in saved
               if (g, k) not in [(a, b) for a, b, _w in picked]]
    if not picked:
        return ""
    kdir = os.path.join(out_dir, DIR)
    os.makedirs(kdir, exist_ok=True)
    lines = ["#### Kernels: standalone repros and Triton's stages", ""]
    said: dict[str, str] = {}
    recorded = {(g, k): _recorded_stages(msgs, g, k) for g, k, _w in picked}
    for (g, k), st in recorded.items():  # what the run stage recorded of the binary that ran comes first
        for name, text in st.items():
            if name in ("ttgir", "ptx", "sass"):
                with open(os.path.join(kdir, f"{k}.{name}"), "w") as f:
                    f.write(text)
        if any(n in st for n in ("ttgir", "ptx", "sass")):
            said[k] = "stages as the run stage recorded them"
    triton = {(g, k["name"]) for m in msgs if m.get("type") == "stop" and m.get("stage") == "codegen"
              for g in [graph_key(m)] for k in m.get("kernels") or [] if k.get("backend") == "triton"}
    todo = [(g, k) for g, k, _w in picked if not recorded[(g, k)] and (g, k) in triton]
    # child processes (the UI never imports Triton): the repros (no compile), then the stages of the kernels the
    # session did not record, compiled where Triton can be found (found, not imported here)
    runs = [["--repro", kdir, "--no-compile", *[a for g, k, _w in picked for a in ("--pick", f"{g}|{k}")]]]
    if todo and _has_triton():
        runs.append(["--stages-dir", kdir, *[a for g, k in todo for a in ("--pick", f"{g}|{k}")]])
    elif todo:
        lines += ["Triton is not installed where this bundle was made: TTGIR/PTX/SASS only where the session "
                  "recorded them (the run stage on a GPU).", ""]
    out = ""
    for args in runs:
        try:
            out += subprocess.run([sys.executable, "-m", "inductor_step.tracer.lower", session_path, *args],
                                  capture_output=True, text=True, timeout=600).stdout
        except (OSError, subprocess.TimeoutExpired) as e:
            out += f"inductor-step lower did not run ({type(e).__name__})\n"
    for g, k in todo:
        for row in out.splitlines():
            if (row.startswith(f"{g} {k} ") or row.startswith(f"{g} {k}:")) and ": repro " not in row:
                said[k] = row[len(g) + 1:]
    for g, k, why in picked:
        for st in ("ttir", "llir"):  # the bundle keeps TTGIR, PTX and SASS
            p = os.path.join(kdir, f"{k}.{st}")
            if os.path.exists(p):
                os.remove(p)
        if (g, k) in saved:  # beside its repro, which loads it
            shutil.copyfile(saved[(g, k)], os.path.join(kdir, f"{k}.inputs.pt"))
        files = []
        for ext in ("py", "inputs.pt", "ttgir", "ptx", "sass"):
            if os.path.exists(os.path.join(kdir, f"{k}.{ext}")):
                size = os.path.getsize(os.path.join(kdir, f"{k}.{ext}")) if ext == "inputs.pt" else 0
                files.append(f"`{DIR}/{k}.{ext}`" + (f" ({size / 1e6:.3f} MB: the real inputs)" if size else ""))
        lines.append(f"- `{g}` `{k}` ({why}): {', '.join(files) or 'nothing written'}"
                     + (f"  \n  {said[k]}" if k in said else ""))
    lines += ["", f"Each `{DIR}/<kernel>.py` rebuilds the kernel from its source, loads its real inputs from "
              f"`{DIR}/<kernel>.inputs.pt` where they were saved (and compares its outputs with the in-model ones), "
              "else allocates inputs of the recorded sizes, strides and dtypes, and times it with the recorded launch config (`python kernels/<kernel>.py` on "
              "a CUDA GPU; elsewhere it says why not).", ""]
    return "\n".join(lines)
