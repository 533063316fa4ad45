"""The roofs a kernel is held to (measured memory and compute) and its roofline: bytes, FLOPs, achieved."""

from __future__ import annotations

import math
import re
from typing import Any

from inductor_step.session.format.values import DTYPE_BYTES
from inductor_step.session.ledger.rows import RooflineRow


MEASURED = "median_ms: the kernel call alone, median of repeated calls (GPU: L2 flushed), as in pane 7"
SPLIT_RULE = ("a kernel's times are split evenly over its post-grad FX nodes; a line gets the share of the "
              "kernel's nodes whose stack trace ends on it")
EAGER_MISSING = ("eager time: not recorded in this session (recorded before the tracer timed each FX node eagerly); "
                 "the whole graph's eager time is in pane 7")
#: a line is "slower than eager" when its compiled kernels' time passes its eager time by more than 10%
#: (kernel times on a shared machine vary by a few percent run to run)
EAGER_MARGIN = 1.10
ITEMSIZE = DTYPE_BYTES  # bytes per element by dtype name (session.format.values)
_DEP = re.compile(r"(MemoryDep|StarDep)\(\s*(?:name=)?'(\w+)'")
_UNMET = re.compile(r"^(\w+)\.unmet_dependencies = (\[.*?\])\s*\n\1\.met_dependencies", re.S | re.M)
_USERS = re.compile(r"^\s*(\w+)\.users = \[(.*?)\]\s*$", re.S | re.M)
#: a post-grad node's target that is a collective (tracer.adapter.collectives.NAMESPACES)
_COLLECTIVE_KERNEL = re.compile(r"^torch\.ops\.(?:_c10d_functional|c10d_functional|_c10d_functional_autograd|_dtensor)\.")
_COLLECTIVE_TARGET = re.compile(r"^(?:torch\.ops\.)?(?:_c10d_functional|c10d_functional|_c10d_functional_autograd|_dtensor)\.")


# ----------------------------------------------------------------------------- roofs

def memory_roof(run: dict[str, Any], nbytes: float | None = None) -> tuple[float | None, str]:
    """(GB/s, source) the ledger divides bytes by: the measured roof (``run["roofs"]``), else the run's
    ``peak.bw_gbps`` (on GPU the measured copy, tracer.timing.roofs), else None with why.

    On a CPU (``roofs.memory_ladder``: copies from cache-resident to DRAM sizes) a kernel moving no more
    ``nbytes`` than the largest cache-resident copy is held to the fastest cache-resident copy: CPU timing
    repeats a call without flushing caches, so a small kernel's data stays in cache and DRAM's roof
    would be too low."""
    ladder = (run.get("roofs") or {}).get("memory_ladder") or []
    if len(ladder) > 1 and nbytes and nbytes <= ladder[-2]["bytes"]:
        best = max(ladder[:-1], key=lambda e: e["value"])  # a stalled copy only reads low: the best is the roof
        return float(best["value"]), (f"{best['source']}: the fastest cache-resident copy; the kernel moves "
                                      f"{nbytes:,.0f} B, no more than the {ladder[-2]['bytes']:,} B of the largest "
                                      "cache-resident copy, so its data stays in cache between the timed calls")
    m = ((run.get("roofs") or {}).get("memory_gbps") or {}).get("measured") or {}
    if m.get("value"):
        return float(m["value"]), m.get("source", "measured")
    peak = run.get("peak") or {}
    if peak.get("bw_gbps"):
        return float(peak["bw_gbps"]), peak.get("bw_source", "run peak")
    why = (run.get("roofs") or {}).get("missing") or m.get("source")
    return None, why or "no bandwidth roof in this session (recorded before roofs were measured)"


def compute_roof(run: dict[str, Any], k: dict[str, Any]) -> tuple[float | None, str]:
    """(TFLOP/s, source) for kernel ``k``: the measured GEMM of its dtype (``tf32`` where the run's
    compute peak for it was the TF32 one), else the run's per-kernel ``peak_tflops``, else None."""
    dt = k.get("dtype")
    if dt == "float32" and "tf32" in str(k.get("peak_tflops_which") or ""):
        dt = "tf32"
    m = (((run.get("roofs") or {}).get("compute_tflops") or {}).get(dt or "") or {}).get("measured") or {}
    if m.get("value"):
        return float(m["value"]), m.get("source", "measured")
    if k.get("peak_tflops"):
        return float(k["peak_tflops"]), f"{k.get('peak_tflops_which') or dt} (run peak: {(run.get('peak') or {}).get('tflops_source', '')})"
    return None, f"no compute roof for {dt or 'this dtype'} in this session"


#: LoopBody ``ops.*`` calls counted as one floating-point operation per iteration (a transcendental counts
#: one, as rooflines count operations, not cycles); ``fma`` counts two.  Loads, stores, index arithmetic,
#: constants, casts and selects count none.
FLOP_OPS = {"add": 1, "sub": 1, "mul": 1, "truediv": 1, "div": 1, "floordiv": 1, "neg": 1, "reciprocal": 1,
            "exp": 1, "exp2": 1, "expm1": 1, "log": 1, "log2": 1, "log1p": 1, "sqrt": 1, "rsqrt": 1, "tanh": 1,
            "erf": 1, "erfc": 1, "sigmoid": 1, "relu": 1, "maximum": 1, "minimum": 1, "pow": 1, "abs": 1,
            "sin": 1, "cos": 1, "tan": 1, "atan": 1, "square": 1, "fma": 2, "reduction": 1, "libdevice_exp": 1,
            "sign": 1, "floor": 1, "ceil": 1, "round": 1, "trunc": 1}
_OPS_CALL = re.compile(r"\bops\.(\w+)\(")


def loopbody_flops(session: Any, key: str) -> dict[str, tuple[float | None, str]]:
    """Scheduler node (``op3``) -> (FLOPs, how) from the LoopBody stop: the ``ops.*`` calls of
    :data:`FLOP_OPS` in its body x its iteration count (the product of ``var_ranges``); None with why
    where the ranges are symbolic or there is no body (an extern kernel)."""
    stop = session.stop_for(key, "loopbody")
    bodies = (stop or {}).get("bodies")

    def build() -> dict[str, tuple[float | None, str]]:
        out: dict[str, tuple[float | None, str]] = {}
        for b in bodies if isinstance(bodies, list) else []:
            if not isinstance(b, dict) or not b.get("body"):
                continue
            try:
                n = math.prod(int(v) for v in (b.get("var_ranges") or {}).values())
            except ValueError:
                out[b["node"]] = (None, "symbolic loop ranges")
                continue
            per = sum(FLOP_OPS.get(op, 0) for op in _OPS_CALL.findall(b["body"]))
            out[b["node"]] = (float(per * n), f"{per} op(s) per iteration x {n:,} iterations")
        return out
    return session.cache.get(("loopbody_flops", key), (stop,), build)


def kernel_roofline(run: dict[str, Any], k: dict[str, Any],
                    body_flops: tuple[float | None, str] | None = None) -> RooflineRow:
    """One kernel call's roofline (:class:`~inductor_step.session.ledger.rows.RooflineRow`, its ``graph`` and
    ``eager_*`` left for :func:`~inductor_step.session.ledger.roofline_rows`).  Fields: ``name``, ``call``, ``backend``, ``measured_ms``; ``gb`` and
    ``gb_source``; ``flops`` and ``flops_source``; ``intensity`` (FLOP/byte); ``bw_gbps``/``bw_source``,
    ``tflops_peak``/``tflops_source``; ``memory_ms`` (bytes / bandwidth), ``compute_ms`` (FLOPs / peak),
    ``roofline_ms`` (the larger), ``bound`` ("memory" | "compute" | None), ``pct_of_roof`` (roofline /
    measured x 100), ``wasted_ms`` (measured - roofline), ``over_roof`` (why a kernel shows faster than
    its roof: the count is wrong), ``missing`` (why there is no roofline).  A call with no time (a
    collective, ``median_ms`` None with ``not_timed``) has ``measured_ms`` None, no roofline and
    ``missing`` "collective, not timed: ..."."""
    if not isinstance(k.get("median_ms"), (int, float)):
        why = ("collective, not timed: " if k.get("collective") else "not timed: ") + str(k.get("not_timed") or
                                                                                        "no median_ms in the run")
        return RooflineRow(name=k["name"], call=k.get("call", 1), backend=k.get("backend"), gb_source="not timed",
                           flops_source="not timed", bw_source="not timed", tflops_source="not timed", missing=why,
                           not_timed=why)
    med = float(k["median_ms"])
    out: dict[str, Any] = {"name": k["name"], "call": k.get("call", 1), "backend": k.get("backend"),
                           "measured_ms": med, "gb": k.get("gb"), "gb_source": k.get("gb_source") or "no byte count",
                           "flops": k.get("flops"),
                           "flops_source": ("torch.utils.flop_counter (" + str(k.get("flops_op")) + ")") if k.get("flops")
                           else "not counted (pointwise and reduction kernels: memory is the roof that applies)"}
    bw, bw_src = memory_roof(run, k["gb"] * 1e9 if k.get("gb") else None)
    peak, peak_src = compute_roof(run, k) if k.get("flops") else (None, "no FLOPs counted")
    if not k.get("flops") and body_flops and body_flops[0]:
        # a generated kernel's arithmetic, counted from its LoopBodies; it runs on the vector / CUDA cores
        # in float32 (Inductor computes low-precision pointwise math in float32), so the float32 roof applies
        out["flops"], out["flops_source"] = body_flops[0], f"counted from its LoopBodies: {body_flops[1]}"
        peak, peak_src = compute_roof(run, {"dtype": "float32"})
        peak_src = "float32 (generated kernels compute in float32): " + peak_src
    out.update(bw_gbps=bw, bw_source=bw_src, tflops_peak=peak, tflops_source=peak_src)
    gb, flops = k.get("gb"), out["flops"]
    out["intensity"] = flops / (gb * 1e9) if flops and gb else None
    out["memory_ms"] = gb / bw * 1e3 if gb and bw else None
    out["compute_ms"] = flops / (peak * 1e12) * 1e3 if flops and peak else None
    times = [t for t in (out["memory_ms"], out["compute_ms"]) if t is not None]
    if not times or med <= 0:
        out.update(roofline_ms=None, bound=None, pct_of_roof=None, wasted_ms=None, over_roof=None,
                   missing=("no bandwidth roof: " + bw_src) if not bw else "neither bytes nor FLOPs counted")
        return RooflineRow(**out)
    roof = max(times)
    out["roofline_ms"] = roof
    out["bound"] = "compute" if out["compute_ms"] is not None and out["compute_ms"] >= (out["memory_ms"] or 0) \
        else "memory"
    out["pct_of_roof"] = 100.0 * roof / med
    out["wasted_ms"] = med - roof
    out["missing"] = None
    out["over_roof"] = None
    if roof > med:
        out["over_roof"] = ("faster than its roof: the count is too high (" + (out["gb_source"] if out["bound"] ==
                            "memory" else out["flops_source"]) + ") or the data stayed in cache")
    return RooflineRow(**out)
