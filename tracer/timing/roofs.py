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
        out["bw_datasheet_gbps"] = out["bw_gbps"]
        copy = copy_gbps()
        if copy:
            # the roof a kernel can reach: % of peak bandwidth is against the measured copy
            out["bw_gbps"], out["copy_gbps"] = copy, copy
            out["bw_source"] = (f"measured: a {COPY_BYTES >> 20} MiB device-to-device copy (y.copy_(x)), bytes read + "
                                f"written over its time (triton.testing.do_bench median, L2 flushed); the driver's "
                                f"figure (get_dram_gbps) is {out['bw_datasheet_gbps']:.0f} GB/s")
        props = driver.active.utils.get_device_properties(torch.cuda.current_device())
        clock = props.get("sm_clock_rate") or props.get("max_clock_rate") or props.get("clock_rate")  # kHz
        if clock:
            from triton.testing import get_max_simd_tflops  # noqa: PLC0415

            for name, dt in (("float16", torch.float16), ("bfloat16", torch.bfloat16)):
                try:
                    out["tflops"][name] = float(get_max_tensorcore_tflops(dt, clock))
                except Exception:  # noqa: BLE001
                    pass
            try:  # fp32 on tensor cores (TF32) and on CUDA cores: which applies depends on the op and the TF32 flags
                out["tflops"]["tf32"] = float(get_max_tensorcore_tflops(torch.float32, clock))
            except Exception:  # noqa: BLE001
                pass
            try:
                out["tflops"]["float32"] = float(get_max_simd_tflops(torch.float32, clock))
            except Exception:  # noqa: BLE001
                pass
            out["float32_mode"] = tf32_modes()
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


COPY_BYTES = 1 << 30
_COPY: dict[str, float] = {}


def copy_gbps() -> float | None:
    """GB/s of a large device-to-device copy on the current CUDA device (``y.copy_(x)`` of
    :data:`COPY_BYTES`, counting bytes read plus written; ``triton.testing.do_bench`` median), measured
    once per process; None where it cannot be measured (too little free memory)."""
    if "gbps" in _COPY:
        return _COPY["gbps"]
    try:
        from triton.testing import do_bench  # noqa: PLC0415

        x = torch.empty(COPY_BYTES // 4, dtype=torch.float32, device="cuda").uniform_()
        y = torch.empty_like(x)
        ms = do_bench(lambda: y.copy_(x), warmup=25, rep=100, return_mode="median")
        _COPY["gbps"] = 2 * COPY_BYTES / (ms / 1e3) / 1e9
    except Exception:  # noqa: BLE001
        _COPY["gbps"] = None  # type: ignore[assignment]
    return _COPY["gbps"]


def tf32_modes() -> dict[str, bool]:
    """Whether fp32 matmuls (``torch.backends.cuda.matmul.allow_tf32``, i.e. float32 matmul precision
    "high"/"medium") and fp32 convolutions (``torch.backends.cudnn.allow_tf32``) may use TF32 tensor cores."""
    return {"matmul_tf32": bool(torch.backends.cuda.matmul.allow_tf32), "conv_tf32": bool(torch.backends.cudnn.allow_tf32)}


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
    Inductor's estimate gives way to the tensors in full where those are fewer bytes: the estimate
    counts a buffer larger than the kernel's output once per distinct index it is read at (a 3x3
    max-pool's overlapping windows: 149% of peak bandwidth on an H100), which DRAM serves once.
    """
    full, full_source = _args_in_full(args, params)
    if backend == "triton":
        m = _NUM_GB.search(source or "")
        est, src = ((float(m.group(1)), "inductor kernel_num_gb") if m else
                    (float(estimate), "inductor estimate_kernel_num_bytes (recorded at codegen)") if estimate else (None, ""))
        if est:
            if full is not None and full < est:
                # Inductor counts a buffer bigger than the output once per distinct index it is read at
                # (a 3x3 max-pool: 9 windows, each a quarter of the input): DRAM sees each byte once
                return full, ("tensor arguments in full, each read or written once (below Inductor's "
                              f"estimate_kernel_num_bytes, {est:.4g} GB, which counts overlapping reads once per index)")
            return est, src
    return full, full_source


def _args_in_full(args: tuple, params: list[str]) -> tuple[float | None, str]:
    total = 0
    if not any(isinstance(a, torch.Tensor) for a in args):
        return None, "no tensor arguments"
    for i, a in enumerate(args):
        if not isinstance(a, torch.Tensor):
            continue
        p = params[i] if i < len(params) else ""
        total += _storage_bytes(a) * (2 if p.startswith("in_out_ptr") else 1)
    return total / 1e9, "tensor arguments in full (an upper bound: a kernel reading part of a tensor counts all of it)"


def _storage_bytes(t: Any) -> int:
    """Bytes a tensor's elements span (an expanded tensor's stride-0 dimensions count once)."""
    if t.numel() == 0:
        return 0
    span = 1 + sum((n - 1) * abs(st) for n, st in zip(t.shape, t.stride()))
    return min(span, t.numel()) * t.element_size()


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


_MATMUL = ("mm", "addmm", "bmm", "baddbmm", "_int_mm", "_scaled_mm", "matmul", "linear")
_CONV = ("convolution", "_convolution", "cudnn_convolution", "convolution_backward", "_slow_conv2d_forward")


def _missing_formulas() -> dict[Any, Any]:
    """FLOP formulas for ops torch's ``flop_counter`` registry lacks on this torch, keyed by op packet
    (``FlopCounterMode(custom_mapping=...)``): CPU attention, ``aten._scaled_dot_product_flash_attention_for_cpu``
    and its backward (Inductor's CPU fallback for ``F.scaled_dot_product_attention``), counted with torch's
    own ``sdpa_flop_count``/``sdpa_backward_flop_count`` formulas, as the CUDA variants are.  Empty
    where torch already has them or lacks those formulas."""
    try:
        from torch.utils.flop_counter import flop_registry, sdpa_backward_flop_count, sdpa_flop_count  # noqa: PLC0415
    except ImportError:
        return {}
    aten = torch.ops.aten

    def fwd(query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs):  # noqa: ANN
        return sdpa_flop_count(query_shape, key_shape, value_shape)

    def bwd(grad_out_shape, query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs):  # noqa: ANN
        return sdpa_backward_flop_count(grad_out_shape, query_shape, key_shape, value_shape)

    out: dict[Any, Any] = {}
    for name, formula in (("_scaled_dot_product_flash_attention_for_cpu", fwd),
                          ("_scaled_dot_product_flash_attention_for_cpu_backward", bwd)):
        packet = getattr(aten, name, None)
        if packet is not None and packet not in flop_registry:
            out[packet] = formula
    return out


def op_flops(fn: Any, args: tuple, kwargs: dict) -> tuple[float | None, str | None, str | None]:
    """``(FLOPs, dtype name, op)`` of one library call (``extern_kernels.mm(...)``, a convolution,
    ``aten._scaled_dot_product_efficient_attention(_backward)``...), counted by running it once under
    ``torch.utils.flop_counter.FlopCounterMode`` (CPU attention through :func:`_missing_formulas`;
    torch's standard formulas from the shapes: 2*M*N*K
    per matmul, 2 x output x input channels x kernel size per convolution, 4*B*H*Lq*Lk*D for
    attention forward and 2.5 times that backward); ``(None, None, None)`` where it counts none."""
    from torch.utils.flop_counter import FlopCounterMode  # noqa: PLC0415

    try:
        with FlopCounterMode(display=False, custom_mapping=_missing_formulas()) as mode:
            fn(*args, **kwargs)
        counts = mode.get_flop_counts().get("Global", {})
    except Exception:  # noqa: BLE001
        return None, None, None
    total = sum(counts.values())
    if not total:
        return None, None, None
    op = max(counts, key=lambda k: counts[k])
    op_name = str(getattr(op, "__name__", op)).split(".")[-1]
    dt = next((a.dtype for a in args if isinstance(a, torch.Tensor) and a.is_floating_point()), None)
    return float(total), (str(dt).replace("torch.", "") if dt is not None else None), op_name


def compute_peak(peak: dict[str, Any], dtype: str | None, op: str | None) -> tuple[float | None, str | None]:
    """``(TFLOP/s, which)``: the compute roof for an op of ``dtype``: the tensor-core rate of
    fp16/bf16; for fp32, TF32 tensor cores where the op may use them (matmuls with
    ``allow_tf32``/float32 matmul precision "high", convolutions with ``cudnn.allow_tf32``, as
    ``peak["float32_mode"]`` recorded), else the CUDA-core fp32 rate (attention in fp32 too)."""
    rates = peak.get("tflops") or {}
    if dtype in ("float16", "bfloat16"):
        return rates.get(dtype), f"{dtype} tensor cores"
    if dtype != "float32":
        return None, None
    modes = peak.get("float32_mode") or {}
    base = (op or "").split(".")[0]
    tf32 = (base in _MATMUL and modes.get("matmul_tf32")) or (base in _CONV and modes.get("conv_tf32"))
    if tf32:
        return rates.get("tf32"), "tf32 tensor cores (TF32 on)"
    return rates.get("float32"), ("fp32 CUDA cores" + (" (TF32 off)" if base in _MATMUL + _CONV else ""))


def roofline(entry: dict[str, Any], peak: dict[str, Any], flops: float | None, dtype: str | None,
             op: str | None) -> None:
    """Add FLOP figures and ``bound`` to a kernel ``entry`` (which has ``median_ms`` and maybe ``gb``).

    ``flops``, ``tflops`` (at ``median_ms``), ``dtype``, ``peak_tflops`` with ``peak_tflops_which``
    (:func:`compute_peak`) and ``pct_peak_tflops``; ``bound``: ``"compute"`` where FLOPs over the
    compute roof take longer than bytes over the bandwidth roof, else ``"memory"``; ``bound_source``
    says how (``"roofline"``, or why there is one roof only); None with the reason where neither roof
    is known (CPU)."""
    med = entry.get("median_ms") or 0
    rate, which = compute_peak(peak, dtype, op) if flops else (None, None)
    if flops and med > 0:
        entry.update(flops=flops, tflops=flops / (med / 1e3) / 1e12, dtype=dtype, flops_op=op)
        if rate:
            entry.update(peak_tflops=rate, peak_tflops_which=which, pct_peak_tflops=100.0 * entry["tflops"] / rate)
    bw = peak.get("bw_gbps")
    t_mem = entry["gb"] / bw if entry.get("gb") and bw else None  # s
    t_cmp = flops / (rate * 1e12) if flops and rate else None  # s
    if t_mem is not None and t_cmp is not None:
        entry["bound"], entry["bound_source"] = ("compute" if t_cmp >= t_mem else "memory"), "roofline"
    elif t_mem is not None:
        entry["bound"] = "memory"
        entry["bound_source"] = ("no FLOPs counted (a Triton kernel: pointwise or reduction work, or an op with no "
                                 "flop_counter formula): bandwidth is the only roof")
    elif t_cmp is not None:
        entry["bound"], entry["bound_source"] = "compute", "no byte count: compute is the only roof"
    else:
        entry["bound"] = None
        entry["bound_source"] = "no peak figures on this device (CPU)" if not bw else "neither bytes nor FLOPs counted"
