"""Triton's own autotuning as a decision: every config ``CachingAutotuner.benchmark_all_configs``
benchmarked for a kernel, its time, and the winner, recorded per kernel name when the script's first call
autotunes it (torch/_inductor/runtime/triton_heuristics.py)."""

from __future__ import annotations

import threading
from typing import Any

from inductor_step.tracer.adapter.base import install_wrapper, wrapped_by_us
from inductor_step.tracer.adapter.output_module import triton_config_text

_lock = threading.Lock()
_tuned: dict[str, dict[str, Any]] = {}


def install_triton_autotune_hook() -> bool:
    """Wrap ``CachingAutotuner.benchmark_all_configs`` (returns ``{launcher: ms}``) to keep, per kernel name
    (``inductor_meta["kernel_name"]``), each candidate's config text and time and the fastest one.  A kernel
    with one config, or whose config came from Inductor's autotune cache, never calls it (the agent turns
    the local autotune cache off).  Returns False where this torch has no such method."""
    try:
        from torch._inductor.runtime.triton_heuristics import CachingAutotuner  # noqa: PLC0415
    except Exception:  # noqa: BLE001
        return False
    real = getattr(CachingAutotuner, "benchmark_all_configs", None)
    if real is None:
        return False
    if wrapped_by_us(real):
        return True

    def benchmark_all_configs(self: Any, *a: Any, **k: Any) -> Any:
        timings = real(self, *a, **k)
        try:
            name = (getattr(self, "inductor_meta", None) or {}).get("kernel_name") or getattr(
                getattr(self, "fn", None), "__name__", "?")
            cands = [{"config": triton_config_text(getattr(lz, "config", None)), "ms": float(t)}
                     for lz, t in dict(timings).items()]
            best = min(cands, key=lambda c: c["ms"]) if cands else None
            with _lock:
                _tuned[name] = {"candidates": cands, "winner": best["config"] if best else None,
                                "source": "CachingAutotuner.benchmark_all_configs (the script's first call)"}
        except Exception:  # noqa: BLE001 - never in the script's way
            pass
        return timings

    install_wrapper(CachingAutotuner, "benchmark_all_configs", benchmark_all_configs)
    return True


def triton_autotuned(name: str) -> dict[str, Any] | None:
    """The candidates, times (ms) and winner recorded for kernel ``name``, or None (not benchmarked)."""
    with _lock:
        got = _tuned.get(name)
        return dict(got) if got else None


def reset_triton_autotuned() -> None:
    """Forget what was recorded (before a graph's first call: kernel names repeat across graphs)."""
    with _lock:
        _tuned.clear()
