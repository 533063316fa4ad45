"""The machine's roofs (memory bandwidth and compute peak, each with its source) and a Triton kernel's
resources (registers, spills, shared memory, occupancy, waves), for the ledger (pane 9).

Three roofs on a GPU, each a ``{"value": float | None, "source": str}`` (``value`` None with the reason
in ``source`` where it cannot be had):

- ``datasheet``: NVIDIA's published dense figures for the device, matched by its name (:data:`DATASHEET`);
- ``theoretical``: from ``torch.cuda.get_device_properties`` (memory clock x bus width x 2 for DRAM;
  SMs x SM clock x operations per SM per clock for compute);
- ``measured``: a 1 GiB device-to-device copy and a large GEMM per dtype, timed with
  ``triton.testing.do_bench``, measured once per device and kept in :func:`cache_path`.

On a CPU only ``measured`` (``copy_`` bandwidth from cache-resident to DRAM sizes and float32 matmuls at
torch's thread count, on this machine, under its load at the time); datasheet and theoretical say why
they are missing.
"""

from __future__ import annotations

import json
import math
import os
import platform
import time
from typing import Any

import torch

#: dense peak figures per device (GB/s; TFLOP/s by dtype) from NVIDIA's datasheets.  Matched in order:
#: the first whose every word is in the device name.
DATASHEET: list[tuple[tuple[str, ...], dict[str, Any]]] = [
    (("H200",), {"gbps": 4800.0, "tflops": {"float32": 67.0, "tf32": 494.7, "bfloat16": 989.4, "float16": 989.4},
                 "doc": "NVIDIA H200 datasheet (SXM, dense)"}),
    (("H100", "PCIe"), {"gbps": 2000.0, "tflops": {"float32": 51.2, "tf32": 378.0, "bfloat16": 756.0, "float16": 756.0},
                        "doc": "NVIDIA H100 datasheet (PCIe, dense)"}),
    (("H100",), {"gbps": 3350.0, "tflops": {"float32": 67.0, "tf32": 494.7, "bfloat16": 989.4, "float16": 989.4},
                 "doc": "NVIDIA H100 datasheet (SXM5, dense)"}),
    (("A100", "80GB", "PCIe"), {"gbps": 1935.0, "tflops": {"float32": 19.5, "tf32": 156.0, "bfloat16": 312.0,
                                                           "float16": 312.0}, "doc": "NVIDIA A100 datasheet (80GB PCIe)"}),
    (("A100", "80GB"), {"gbps": 2039.0, "tflops": {"float32": 19.5, "tf32": 156.0, "bfloat16": 312.0, "float16": 312.0},
                        "doc": "NVIDIA A100 datasheet (80GB SXM)"}),
    (("A100",), {"gbps": 1555.0, "tflops": {"float32": 19.5, "tf32": 156.0, "bfloat16": 312.0, "float16": 312.0},
                 "doc": "NVIDIA A100 datasheet (40GB)"}),
]

#: dense floating-point operations per SM per clock, by compute capability major.minor (a fused
#: multiply-add counts two): Ampere GA100 (8.0) and Hopper GH100 (9.0) whitepapers.
PER_SM_CLOCK: dict[tuple[int, int], dict[str, int]] = {
    (8, 0): {"float32": 128, "tf32": 1024, "bfloat16": 2048, "float16": 2048},
    (9, 0): {"float32": 256, "tf32": 2048, "bfloat16": 4096, "float16": 4096},
}

GEMM_DTYPES = ("float32", "tf32", "bfloat16", "float16")
_DT = {"float32": torch.float32, "tf32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def cache_path() -> str:
    """Where measured roofs are kept: ``$INDUCTOR_STEP_CACHE/roofs.json``, default
    ``~/.cache/inductor-step/roofs.json``."""
    base = os.environ.get("INDUCTOR_STEP_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "inductor-step")
    return os.path.join(base, "roofs.json")


def _roof(value: float | None, source: str) -> dict[str, Any]:
    return {"value": value, "source": source}


def datasheet(name: str) -> dict[str, Any] | None:
    """The :data:`DATASHEET` entry for device ``name`` (``"NVIDIA H100 80GB HBM3"``), None if unknown."""
    for words, entry in DATASHEET:
        if all(w.lower() in name.lower() for w in words):
            return entry
    return None


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else ``platform.processor()``."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "cpu"


def _best_s(fn: Any, reps: int, min_s: float = 1e-3, rounds: int = 3, gap_s: float = 0.02) -> float:
    """Seconds per call of ``fn``: the best of ``rounds`` x ``reps`` loops, each of enough calls to last
    ``min_s``, the rounds ``gap_s`` apart (a roof is what the machine reaches at best; on a shared
    machine another process's burst only slows a loop, so the best loop is the one it left alone)."""
    fn()
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    once = max(min(times), 1e-7)
    inner = max(1, int(min_s / once))
    best = float("inf")
    for r in range(rounds):
        if r:
            time.sleep(gap_s)
        for _ in range(reps):
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            best = min(best, (time.perf_counter() - t0) / inner)
    return best


#: bytes copied for the CPU's bandwidth ladder: cache-resident sizes (L1/L2, L2, last-level cache), then DRAM
CPU_COPY_BYTES = (64 << 10, 1 << 20, 8 << 20, 64 << 20)


def _size(b: int) -> str:
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"


#: square float32 matmul sizes timed for the CPU's compute roof (the fastest counts: a large one spills the caches)
CPU_MATMUL_SIZES = (256, 512, 1024)


def measure_cpu(reps: int = 5) -> dict[str, Any]:
    """CPU roofs measured here, at torch's thread count: ``y.copy_(x)`` bandwidth (bytes read + written
    per second, best of ``reps``) for each size in :data:`CPU_COPY_BYTES` (``memory_ladder``; the largest
    is ``memory_gbps.measured``, DRAM), and float32 n x n matmuls (2 n^3 FLOPs, best of ``reps``, the fastest
    of :data:`CPU_MATMUL_SIZES`);
    with the 1-minute load average before, since other processes share the cores."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    threads = torch.get_num_threads()
    where = (f"measured on this machine ({cpu_name()}, {threads} threads"
             + (f", load average {load:.2f} on {os.cpu_count()} CPUs before" if load is not None else "") + ")")
    ladder = []
    x0, y0 = torch.empty(1), torch.empty(1)
    call = _best_s(lambda: y0.copy_(x0), reps)  # the per-call cost of copy_ itself, taken off below
    for nbytes in CPU_COPY_BYTES:
        x = torch.empty(nbytes // 4, dtype=torch.float32).uniform_()
        y = torch.empty_like(x)
        s = max(_best_s(lambda: y.copy_(x), reps) - call, 1e-9)
        ladder.append({"bytes": 2 * nbytes, "value": 2 * nbytes / s / 1e9,
                       "source": f"{where}: y.copy_(x) of {_size(nbytes)}, read + written bytes, best of 3 x {reps} loops, "
                                 f"less copy_'s own {call * 1e6:.2f} us per call"})
    rates = {}
    for size in CPU_MATMUL_SIZES:
        a = torch.randn(size, size)
        b = torch.randn(size, size)
        rates[size] = 2.0 * size ** 3 / _best_s(lambda: a @ b, reps) / 1e12
    n = max(rates, key=lambda k: rates[k])
    return {"memory_gbps": {"measured": _roof(ladder[-1]["value"], ladder[-1]["source"] + " (DRAM)")},
            "memory_ladder": ladder, "load": load, "cpus": os.cpu_count(),
            "compute_tflops": {"float32": {"measured": _roof(rates[n], (
                f"{where}: float32 n x n matmuls, 2n^3 FLOPs, best of 3 x {reps} loops, the fastest size (n={n}; "
                + ", ".join(f"n={k}: {v * 1e3:.0f} GFLOP/s" for k, v in rates.items()) + ")"))}}}


def _props_value(props: Any, tprops: dict[str, Any], *names: str) -> Any:
    for n in names:
        v = getattr(props, n, None)
        if v is None:
            v = tprops.get(n)
        if v:
            return v
    return None


def theoretical_gpu(device: int = 0) -> dict[str, Any]:
    """Roofs from the driver's device properties: DRAM GB/s = memory clock (kHz) x 1e3 x bus width
    (bits) / 8 x 2 (double data rate) / 1e9; TFLOP/s = SMs x SM clock x :data:`PER_SM_CLOCK`."""
    props = torch.cuda.get_device_properties(device)
    tprops: dict[str, Any] = {}
    try:  # torch builds without memory_clock_rate / clock_rate: Triton's driver has them
        from triton.runtime import driver  # noqa: PLC0415

        tprops = dict(driver.active.utils.get_device_properties(device))
    except Exception:  # noqa: BLE001
        pass
    mem_khz = _props_value(props, tprops, "memory_clock_rate", "mem_clock_rate")
    bus = _props_value(props, tprops, "memory_bus_width", "mem_bus_width")
    sm_khz = _props_value(props, tprops, "clock_rate", "sm_clock_rate", "max_clock_rate")
    sms = _props_value(props, tprops, "multi_processor_count", "multiprocessor_count")
    out: dict[str, Any] = {"memory_gbps": {}, "compute_tflops": {}}
    if mem_khz and bus:
        out["memory_gbps"]["theoretical"] = _roof(mem_khz * 1e3 * bus / 8 * 2 / 1e9,
                                                  f"get_device_properties: memory clock {mem_khz / 1e3:.0f} MHz x "
                                                  f"{bus}-bit bus x 2 (DDR)")
    else:
        out["memory_gbps"]["theoretical"] = _roof(None, "the driver reports no memory clock or bus width")
    per = PER_SM_CLOCK.get((props.major, props.minor))
    for dt in GEMM_DTYPES:
        if per is None:
            r = _roof(None, f"no per-SM rate table for compute capability {props.major}.{props.minor}")
        elif not (sm_khz and sms):
            r = _roof(None, "the driver reports no SM clock or SM count")
        else:
            r = _roof(sms * sm_khz * 1e3 * per[dt] / 1e12,
                      f"get_device_properties: {sms} SMs x {sm_khz / 1e3:.0f} MHz x {per[dt]} {dt} FLOP per SM per "
                      f"clock (sm_{props.major}{props.minor}, dense)")
        out["compute_tflops"][dt] = {"theoretical": r}
    return out


def measure_gpu(copy_bytes: int = 1 << 30, n: int = 8192) -> dict[str, Any]:
    """GPU roofs measured on the current device: ``y.copy_(x)`` of ``copy_bytes`` (read + written over
    ``triton.testing.do_bench``'s median) and an ``n`` x ``n`` GEMM per dtype (2 n^3 FLOPs over the median;
    ``tf32`` with ``torch.backends.cuda.matmul.allow_tf32`` on, ``float32`` with it off)."""
    from triton.testing import do_bench  # noqa: PLC0415

    out: dict[str, Any] = {"memory_gbps": {}, "compute_tflops": {}}
    try:
        x = torch.empty(copy_bytes // 4, dtype=torch.float32, device="cuda").uniform_()
        y = torch.empty_like(x)
        ms = do_bench(lambda: y.copy_(x), warmup=25, rep=100, return_mode="median")
        out["memory_gbps"]["measured"] = _roof(2 * copy_bytes / (ms / 1e3) / 1e9,
                                               f"measured: y.copy_(x) of {copy_bytes >> 20} MiB on the device, read + "
                                               "written bytes over triton.testing.do_bench's median")
        x = y = None  # free the 2 GiB before the GEMMs
    except Exception as e:  # noqa: BLE001
        out["memory_gbps"]["measured"] = _roof(None, f"copy not measured ({type(e).__name__}: {e})")
    saved = torch.backends.cuda.matmul.allow_tf32
    for dt in GEMM_DTYPES:
        try:
            torch.backends.cuda.matmul.allow_tf32 = dt == "tf32"
            m = n if dt != "float32" else n // 2
            a = torch.randn(m, m, device="cuda", dtype=_DT[dt])
            b = torch.randn(m, m, device="cuda", dtype=_DT[dt])
            ms = do_bench(lambda: a @ b, warmup=25, rep=100, return_mode="median")
            out["compute_tflops"][dt] = {"measured": _roof(2.0 * m ** 3 / (ms / 1e3) / 1e12,
                                                           f"measured: a {m}x{m} {dt} GEMM (torch.matmul), 2n^3 FLOPs "
                                                           "over triton.testing.do_bench's median")}
            a = b = None
        except Exception as e:  # noqa: BLE001
            out["compute_tflops"][dt] = {"measured": _roof(None, f"not measured ({type(e).__name__}: {e})")}
        finally:
            torch.backends.cuda.matmul.allow_tf32 = saved
    return out


def _kept(measured: dict[str, Any], when: str) -> dict[str, Any]:
    """A copy of measured roofs whose every ``source`` ends with ``when`` (how the figure was kept)."""
    if isinstance(measured, dict):
        return {k: (f"{v}; {when}" if k == "source" and isinstance(v, str) else _kept(v, when))
                for k, v in measured.items()}
    if isinstance(measured, list):
        return [_kept(v, when) for v in measured]
    return measured


def _merge(*parts: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"memory_gbps": {}, "compute_tflops": {}}
    for p in parts:
        out["memory_gbps"].update(p.get("memory_gbps") or {})
        if p.get("memory_ladder"):
            out["memory_ladder"] = p["memory_ladder"]
        for dt, roofs in (p.get("compute_tflops") or {}).items():
            out["compute_tflops"].setdefault(dt, {}).update(roofs)
    return out


_MEASURED: dict[str, Any] = {}


def device_roofs(device: str, measure: bool = True) -> dict[str, Any]:
    """The roofs of ``device`` (``"cpu"`` or ``"cuda"``): ``{"device": name, "memory_gbps": {kind: roof},
    "compute_tflops": {dtype: {kind: roof}}, "cache": path, "cached": bool}`` with kind ``datasheet``,
    ``theoretical``, ``measured``.  Measured roofs are read from :func:`cache_path` when that device
    (by name, with the thread count on CPU) was measured before, else measured now and stored (on a CPU
    only when its load average was under half its cores: a busy machine's roofs are too low).  On a CPU
    ``memory_ladder`` has the copy bandwidth by size (see :func:`measure_cpu`)."""
    cuda = device.startswith("cuda")
    if cuda:
        name = torch.cuda.get_device_name()
        key = f"cuda:{name}"
    else:
        name = cpu_name()
        key = f"cpu:{name}:{torch.get_num_threads()} threads"
    path = cache_path()
    cache: dict[str, Any] = {}
    try:
        with open(path, encoding="utf-8") as f:
            cache = json.load(f)
    except (OSError, ValueError):
        cache = {}
    measured, cached = cache.get(key) or _MEASURED.get(key), True
    if measured is not None:  # every source says the figure was not measured now (it read as if it was)
        measured = _kept(measured, f"measured by an earlier run, read back from {path}" if key in cache
                         else "measured earlier in this process")
    if measured is None and measure:
        cached = False
        measured = measure_gpu() if cuda else measure_cpu()
        _MEASURED[key] = measured  # once per process, whether or not the file keeps it
        busy = not cuda and (measured.get("load") or 0) > 0.5 * (measured.get("cpus") or 1)
        if not busy:  # a CPU measured while other processes held its cores is measured again next time
            cache[key] = measured
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.{os.getpid()}"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(cache, f, indent=1)
            os.replace(tmp, path)
        except OSError:
            pass
    parts = [measured or {}]
    if cuda:
        ds = datasheet(name)
        if ds:
            parts.append({"memory_gbps": {"datasheet": _roof(ds["gbps"], ds["doc"])},
                          "compute_tflops": {dt: {"datasheet": _roof(v, ds["doc"])} for dt, v in ds["tflops"].items()}})
        else:
            parts.append({"memory_gbps": {"datasheet": _roof(None, f"no datasheet entry for {name}")}})
        try:
            parts.append(theoretical_gpu(torch.cuda.current_device()))
        except Exception as e:  # noqa: BLE001
            parts.append({"memory_gbps": {"theoretical": _roof(None, f"device properties not read ({e})")}})
    else:
        parts.append({"memory_gbps": {"datasheet": _roof(None, "no datasheet figure for a CPU's memory system"),
                                      "theoretical": _roof(None, "torch reports no CPU memory clock or channels")}})
    out = _merge(*parts)
    out.update(device=name, cache=path, cached=cached)
    if not cuda and measured:
        out.update(load=measured.get("load"), cpus=measured.get("cpus"))
    return out


# ----------------------------------------------------------------------------- kernel resources (GPU)

#: resident blocks per SM at most, by compute capability major (CUDA programming guide, table 21)
MAX_BLOCKS_PER_SM = {7: 32, 8: 32, 9: 32}
_REG_ALLOC_UNIT = 256  # registers are allocated per warp in units of 256


def occupancy(num_warps: int, regs_per_thread: int, shared_bytes: int, limits: dict[str, int]) -> dict[str, Any]:
    """Theoretical occupancy of a kernel: resident blocks per SM and what limits them.

    ``limits``: ``max_threads_per_sm``, ``regs_per_sm``, ``shared_per_sm`` (bytes), ``max_blocks_per_sm``,
    ``warp_size``.  Registers are allocated per warp, rounded up to 256 (the CUDA occupancy calculator's
    rule).  Returns ``blocks_per_sm``, ``occupancy`` (resident warps / the SM's most warps, 0..1) and
    ``limiter`` (``"threads"``, ``"registers"``, ``"shared memory"``, ``"blocks"``), with each limit's block count."""
    ws = limits.get("warp_size", 32)
    max_warps = limits["max_threads_per_sm"] // ws
    by = {"threads": max_warps // max(num_warps, 1), "blocks": limits.get("max_blocks_per_sm", 32)}
    if regs_per_thread:
        per_warp = math.ceil(regs_per_thread * ws / _REG_ALLOC_UNIT) * _REG_ALLOC_UNIT
        by["registers"] = (limits["regs_per_sm"] // per_warp) // max(num_warps, 1)
    if shared_bytes and limits.get("shared_per_sm"):
        by["shared memory"] = limits["shared_per_sm"] // shared_bytes
    limiter = min(by, key=lambda k: by[k])
    blocks = by[limiter]
    return {"blocks_per_sm": blocks, "occupancy": blocks * num_warps / max_warps if max_warps else None,
            "limiter": limiter, "blocks_by": by}


def grid_blocks(params: list[str], args: tuple, block: dict[str, int]) -> tuple[int | None, list[int], str]:
    """Blocks a Triton kernel launches: ceil(xnumel / XBLOCK) x ceil(ynumel / YBLOCK) x ceil(znumel / ZBLOCK),
    the numels from the call's arguments matched to the kernel's parameter names, the block sizes from
    its launch config (Inductor's grid rule; a reduction loops over its r dimension inside a block)."""
    grid = []
    for d in "xyz":
        p = f"{d}numel"
        if p in params:
            i = params.index(p)
            n = args[i] if i < len(args) and isinstance(args[i], int) else None
            if n is None:
                return None, [], f"{p} not an integer argument"
            grid.append(math.ceil(n / block.get(f"{d.upper()}BLOCK", 1)))
    if not grid:
        return None, [], "no xnumel parameter"
    return math.prod(grid), grid, "ceil(numel / BLOCK) per dimension, from the call's numel arguments and the config"


def device_limits(device: int | None = None) -> dict[str, int]:
    """The SM limits :func:`occupancy` needs, from ``torch.cuda.get_device_properties`` (older torch
    builds lack some: then Triton's driver properties, else the sm_80/sm_90 figures, which both share:
    2,048 threads, 65,536 registers per SM)."""
    device = torch.cuda.current_device() if device is None else device
    p = torch.cuda.get_device_properties(device)
    t: dict[str, Any] = {}
    try:
        from triton.runtime import driver  # noqa: PLC0415

        t = dict(driver.active.utils.get_device_properties(device))
    except Exception:  # noqa: BLE001
        pass
    return {"sms": _props_value(p, t, "multi_processor_count", "multiprocessor_count"),
            "max_threads_per_sm": _props_value(p, t, "max_threads_per_multi_processor") or 2048,
            "regs_per_sm": _props_value(p, t, "regs_per_multiprocessor", "max_num_regs") or 65536,
            "shared_per_sm": _props_value(p, t, "shared_memory_per_multiprocessor", "max_shared_mem") or 0,
            "max_blocks_per_sm": MAX_BLOCKS_PER_SM.get(p.major, 32), "warp_size": getattr(p, "warp_size", 32) or 32}


def kernel_resources(info: dict[str, Any] | None, params: list[str], args: tuple,
                     limits: dict[str, int]) -> dict[str, Any]:
    """A Triton kernel call's resources: ``info`` from :func:`tracer.adapter.triton_binary_info`
    (launch config, registers per thread, spills, shared memory), the grid (:func:`grid_blocks`),
    occupancy and its limiter (:func:`occupancy`) and ``waves`` = blocks / (blocks per SM x SMs);
    ``{"missing": why}`` where the binary's metadata cannot be read."""
    if not info:
        return {"missing": "no single compiled launcher to read (the kernel autotuned to none, or is not Triton)"}
    out: dict[str, Any] = {k: v for k, v in info.items() if v is not None}
    out["source"] = "the compiled Triton binary's launcher (n_regs, n_spills, shared) and config; device limits from " \
                    "torch.cuda.get_device_properties"
    warps = int(info.get("num_warps") or 4)
    occ = occupancy(warps, int(info.get("n_regs") or 0), int(info.get("shared") or 0), limits)
    out.update(occ)
    blocks, grid, how = grid_blocks(params, args, info.get("config") or {})
    out["grid_source"] = how
    if blocks is not None:
        out["grid"] = grid
        out["blocks"] = blocks
        if occ["blocks_per_sm"]:
            out["waves"] = blocks / (occ["blocks_per_sm"] * limits["sms"])
    return out
