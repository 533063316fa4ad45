"""Roofs of the `run` stage: the device's peak bandwidth and FLOP/s, and each kernel call's bytes and FLOPs."""

from __future__ import annotations

import re
from typing import Any

import torch

_NUM_GB = re.compile(r"'kernel_num_gb':\s*([0-9.eE+-]+)")
_MM_OPS = {"mm", "addmm", "bmm", "baddbmm", "_int_mm", "addmm_", "mm_out"}


def device_peaks(device: str) -> dict[str, Any]:
    """The device's peak memory bandwidth (GB/s) and matmul throughput (TFLOP/s by dtype), with
    where each figure comes from; on CPU, none (no reliable peak to quote).

    GPU bandwidth: ``triton.testing.get_dram_gbps()`` (memory clock x bus width x 2 from the driver's
    device properties); TFLOP/s: ``triton.testing.get_max_tensorcore_tflops`` (SM count x clock x
    tensor-core ops per sub-core) at the driver's maximum SM clock.
    """
    if not device.startswith("cuda"):
        return {"bw_gbps": None, "bw_source": "not quoted on CPU", "tflops": {}, "tflops_source": "not quoted on CPU"}
    out: dict[str, Any] = {"bw_gbps": None, "tflops": {}}
    try:
        from triton.runtime import driver  # noqa: PLC0415
        from triton.testing import get_dram_gbps, get_max_tensorcore_tflops  # noqa: PLC0415

        out["bw_gbps"] = float(get_dram_gbps())
        out["bw_source"] = "triton.testing.get_dram_gbps() (driver memory clock x bus width x 2)"
        props = driver.active.utils.get_device_properties(torch.cuda.current_device())
        clock = props.get("sm_clock_rate") or props.get("max_clock_rate") or props.get("clock_rate")  # kHz
        if clock:
            from triton.testing import get_max_simd_tflops  # noqa: PLC0415

            for name, dt in (("float16", torch.float16), ("bfloat16", torch.bfloat16)):
                try:
                    out["tflops"][name] = float(get_max_tensorcore_tflops(dt, clock))
                except Exception:  # noqa: BLE001
                    pass
            try:
                # fp32 matmuls run on tensor cores only when TF32 is allowed
                tf32 = torch.backends.cuda.matmul.allow_tf32
                out["tflops"]["float32"] = float((get_max_tensorcore_tflops if tf32 else get_max_simd_tflops)(torch.float32, clock))
                out["float32_mode"] = "tf32 tensor cores" if tf32 else "fp32 CUDA cores (TF32 off)"
            except Exception:  # noqa: BLE001
                pass
            major = torch.cuda.get_device_capability()[0]
            if major == 9:
                # Triton's per-sub-core constants are Ampere's; Hopper (sm_90) does twice the FP32 and
                # dense tensor-core operations per SM per clock
                out["tflops"] = {k: 2 * v for k, v in out["tflops"].items()}
            out["tflops_source"] = (f"triton.testing.get_max_tensorcore_tflops / get_max_simd_tflops at the SM clock "
                                    f"the driver reports ({clock / 1e3:.0f} MHz), dense"
                                    + (", x2 for Hopper (sm_90 doubles Ampere's per-SM rates)" if major == 9 else ""))
        else:
            out["tflops_source"] = "not available: the driver reports no SM clock"
    except Exception as e:  # noqa: BLE001
        out.setdefault("bw_source", f"not available ({type(e).__name__}: {e})")
        out.setdefault("tflops_source", "not available")
    return out


def _nbytes(t: Any) -> int:
    return t.numel() * t.element_size() if isinstance(t, torch.Tensor) else 0


def kernel_gb(name: str, backend: str, source: str, args: tuple, params: list[str],
              estimate: float | None = None) -> tuple[float | None, str]:
    """Bytes moved by one kernel call, in GB, and where the figure comes from.

    In order: ``inductor_meta['kernel_num_gb']`` in the kernel's source (present when the user
    compiled with ``config.benchmark_kernel``); ``estimate``, the same Inductor estimate
    (``estimate_kernel_num_bytes``) recorded at codegen by
    :func:`tracer.adapter.install_kernel_bytes_hook`; otherwise the tensors passed to it counted in
    full, once per read and once per write (``in_out_ptr`` twice): an upper bound, since a kernel
    that reads a slice of a tensor is charged for all of it, so % of peak can pass 100% there.
    """
    if backend == "triton":
        m = _NUM_GB.search(source or "")
        if m:
            return float(m.group(1)), "inductor kernel_num_gb"
        if estimate:
            return float(estimate), "inductor estimate_kernel_num_bytes (recorded at codegen)"
    total = 0
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    if not tensors:
        return None, "no tensor arguments"
    for i, a in enumerate(args):
        if not isinstance(a, torch.Tensor):
            continue
        p = params[i] if i < len(params) else ""
        total += _nbytes(a) * (2 if p.startswith("in_out_ptr") else 1)
    return total / 1e9, "tensor arguments in full (an upper bound: a kernel reading part of a tensor counts all of it)"


def mm_flops(name: str, args: tuple, kwargs: dict) -> tuple[float | None, str | None]:
    """FLOPs of an extern matmul call (``extern_kernels.mm/addmm/bmm/baddbmm``): 2*M*N*K per
    matrix; None for anything else.  Also returns the operands' dtype name."""
    op = name.split(".")[-1].split("#")[0]
    if op not in _MM_OPS:
        return None, None
    mats = [a for a in args if isinstance(a, torch.Tensor)]
    if op in ("addmm", "baddbmm") and len(mats) >= 3:
        mats = mats[1:]
    if len(mats) < 2:
        return None, None
    a, b = mats[0], mats[1]
    if a.dim() == 2 and b.dim() == 2:
        flops = 2.0 * a.shape[0] * a.shape[1] * b.shape[1]
    elif a.dim() == 3 and b.dim() == 3:
        flops = 2.0 * a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2]
    else:
        return None, None
    return flops, str(a.dtype).replace("torch.", "")
