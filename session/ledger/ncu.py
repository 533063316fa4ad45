"""Nsight Compute for one kernel: the command that profiles it and its speed-of-light numbers read back."""

from __future__ import annotations

from typing import Any


# ----------------------------------------------------------------------------- ncu

#: speed-of-light metrics shown, in ncu's own names (section SpeedOfLight)
NCU_SOL = ("Duration", "Memory Throughput", "DRAM Throughput", "Compute (SM) Throughput", "L1/TEX Cache Throughput",
           "L2 Cache Throughput", "SM Frequency", "DRAM Frequency")


def ncu_command(kernel: str, device: str | None, script: str | None, argv: list[str], python: str | None,
                which: Any = None) -> tuple[list[str] | None, str]:
    """The ``ncu`` command profiling ``kernel``'s first launch in a fresh run of the script (section
    SpeedOfLight, CSV), or None and one line why it cannot run here."""
    import shutil  # noqa: PLC0415
    import sys  # noqa: PLC0415

    if not str(device or "").startswith("cuda"):
        return None, f"ncu profiles CUDA kernels; this session ran on {device or 'an unknown device'}"
    exe = (which or shutil.which)("ncu")
    if not exe:
        return None, "ncu (Nsight Compute) is not installed here: not on PATH"
    if kernel.startswith(("extern_kernels", "torch.ops")):
        return None, f"{kernel} is a library call: its CUDA kernel has another name (run ncu on a Triton kernel)"
    if not script:
        return None, "the session names no script to run under ncu"
    return [exe, "--target-processes", "all", "--kernel-name", kernel, "--launch-count", "1",
            "--section", "SpeedOfLight", "--csv", "--page", "details", python or sys.executable, script, *argv], ""


def ncu_sol(csv_text: str) -> dict[str, tuple[str, str]]:
    """ncu's ``--csv --page details`` output -> {metric name: (value, unit)} for the SpeedOfLight rows."""
    import csv  # noqa: PLC0415
    import io  # noqa: PLC0415

    rows = [r for r in csv.reader(io.StringIO(csv_text)) if r]
    head = next((r for r in rows if "Metric Name" in r), None)
    if head is None:
        return {}
    i_name, i_unit, i_val = head.index("Metric Name"), head.index("Metric Unit"), head.index("Metric Value")
    return {r[i_name]: (r[i_val], r[i_unit]) for r in rows[rows.index(head) + 1:] if len(r) > i_val}


def ncu_text(stdout: str, stderr: str, returncode: int, kernel: str) -> str:
    """What an ncu run (:func:`ncu_command`, run by :func:`inductor_step.live.children.run_ncu`) found, from its
    output and exit status: the speed-of-light table, the highest unit, or ncu's own reason it read no counters
    (``ERR_NVGPUCTRPERM``: no permission)."""
    out = stdout + stderr
    if "ERR_NVGPUCTRPERM" in out:
        return ("# ncu cannot read the GPU's performance counters here (ERR_NVGPUCTRPERM: profiling needs admin "
                "rights or NVreg_RestrictProfilingToAdminUsers=0)")
    sol = ncu_sol(stdout)
    if not sol:
        return f"# ncu found no {kernel} launch (exit {returncode}):\n" + "\n".join(out.splitlines()[-15:])
    lines = [f"# ncu: {kernel}, speed of light (SpeedOfLight section, first launch)"]
    for m in NCU_SOL:
        if m in sol:
            lines.append(f"  {m:28} {sol[m][0]:>10} {sol[m][1]}")
    units = {m: float(sol[m][0].replace(",", "")) for m in ("DRAM Throughput", "Compute (SM) Throughput",
                                                              "L1/TEX Cache Throughput", "L2 Cache Throughput")
             if m in sol and sol[m][1] == "%"}
    if units:
        lines.append(f"highest unit: {max(units, key=lambda k: units[k])}")
    return "\n".join(lines)
