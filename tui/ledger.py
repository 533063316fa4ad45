"""Where the time goes and what to change (issue 20): three ledgers over a recorded session, no torch.

- :func:`roofline_rows`: per timed kernel call, its bytes and FLOPs (library calls: the run's
  ``torch.utils.flop_counter`` count; generated kernels: :func:`loopbody_flops`), arithmetic intensity, the roof that
  binds, the roofline time max(bytes / bandwidth, FLOPs / peak), % of roof and **wasted ms** = measured -
  roofline (so wasted + roofline sums to the run's kernel sum exactly);
- :func:`line_rows`: wasted ms rolled up to the user's ``file:line`` through the session's links
  (kernel -> its post-grad FX nodes -> their user lines), each kernel's times split **evenly over its
  post-grad nodes** (a line gets the share of the kernel's nodes that come from it);
- :func:`fusion_rows`: every buffer one kernel writes and another kernel reads back (the scheduling
  stop's ``unmet_dependencies``), the bytes round-tripped (written once and read back once: 2 x the IR
  buffer's numel x itemsize), their cost at the measured bandwidth, the user lines on both sides and
  Inductor's own reason (the fusion log's lines naming both nodes, or "not considered" and why).

Every number carries where it came from; what cannot be had is None with the reason.
Inputs: the ``run`` messages (``kernels[].median_ms``, ``gb``/``gb_source``, ``flops``, ``peak``, and
``roofs`` from tracer.timing.machine), the codegen stop's ``links``, the lowering stop's IR buffers and
the scheduling stop's nodes and ``fusion_log``.
"""

from __future__ import annotations

import math
import os
import re
from typing import Any

from inductor_step.tui.paths import cut_words, short_path
from inductor_step.tui.fusion_fix import LIBRARY_CALL, classify, fix_text, is_library
from inductor_step.tui.trust import not_reliable_lines, unreliable_runs

#: how the measured time is taken, said in every view
MEASURED = "median_ms: the kernel call alone, median of repeated calls (GPU: L2 flushed), as in pane 7"
SPLIT_RULE = ("a kernel's times are split evenly over its post-grad FX nodes; a line gets the share of the "
              "kernel's nodes whose stack trace ends on it")
EAGER_MISSING = ("eager time: not recorded in this session (recorded before the tracer timed each FX node eagerly); "
                 "the whole graph's eager time is in pane 7")
#: a line is "slower than eager" when its compiled kernels' time passes its eager time by more than 10%
#: (kernel times on a shared machine vary by a few percent run to run)
EAGER_MARGIN = 1.10
ITEMSIZE = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4, "int16": 2, "int8": 1,
            "uint8": 1, "bool": 1, "complex64": 8, "complex128": 16, "float8_e4m3fn": 1, "float8_e5m2": 1}
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
                    body_flops: tuple[float | None, str] | None = None) -> dict[str, Any]:
    """One kernel call's roofline.  Keys: ``name``, ``call``, ``backend``, ``measured_ms``; ``gb`` and
    ``gb_source``; ``flops`` and ``flops_source``; ``intensity`` (FLOP/byte); ``bw_gbps``/``bw_source``,
    ``tflops_peak``/``tflops_source``; ``memory_ms`` (bytes / bandwidth), ``compute_ms`` (FLOPs / peak),
    ``roofline_ms`` (the larger), ``bound`` ("memory" | "compute" | None), ``pct_of_roof`` (roofline /
    measured x 100), ``wasted_ms`` (measured - roofline), ``over_roof`` (why a kernel shows faster than
    its roof: the count is wrong), ``missing`` (why there is no roofline).  A call with no time (a
    collective, issue 23: ``median_ms`` None with ``not_timed``) has ``measured_ms`` None, no roofline and
    ``missing`` "collective, not timed: ..."."""
    if not isinstance(k.get("median_ms"), (int, float)):
        why = ("collective, not timed: " if k.get("collective") else "not timed: ") + str(k.get("not_timed") or
                                                                                        "no median_ms in the run")
        return {"name": k["name"], "call": k.get("call", 1), "backend": k.get("backend"), "measured_ms": None,
                "gb": None, "gb_source": "not timed", "flops": None, "flops_source": "not timed", "intensity": None,
                "bw_gbps": None, "bw_source": "not timed", "tflops_peak": None, "tflops_source": "not timed",
                "memory_ms": None, "compute_ms": None, "roofline_ms": None, "bound": None, "pct_of_roof": None,
                "wasted_ms": None, "over_roof": None, "missing": why, "not_timed": why}
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
        return out
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
    return out


# ----------------------------------------------------------------------------- the session's joins

def _timed(session: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(key, run) for key, run in session.runs.items() if not run.get("error") and run.get("kernels")]


_CALL_OPS = ("call_function", "call_method", "call_module")


def _norm(name: str) -> str:
    name = re.sub(r"_\d+$", "", name)
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _op_name(target: str) -> str:
    """``aten.sum.dim_IntList`` -> ``sum``, ``_operator.getitem`` -> ``getitem`` (normalized)."""
    parts = target.split(".")
    return _norm(parts[1] if len(parts) >= 3 else parts[-1])


def eager_by_node(session: Any, key: str, run: dict[str, Any]) -> tuple[dict[str, float] | None, str]:
    """The run's ``eager_nodes_ms`` keyed by the post-grad graph's node names (pane 2's, the links'):
    directly where the names agree; else by position, the timing process having received the graph
    re-traced (``torch.save`` of a GraphModule renames nodes after their targets: ``mm`` ->
    ``mm_default``), checked node by node against the targets.  None with why where they cannot be matched."""
    eager = run.get("eager_nodes_ms")
    if not eager:
        return None, run.get("eager_nodes") or EAGER_MISSING
    post = ((session.stop_for(key, "aot") or {}).get("post_grad") or {}).get("nodes") or []
    calls = [n for n in post if isinstance(n, dict) and n.get("op") in _CALL_OPS]
    names = {n["name"] for n in calls}
    if set(eager) <= names:
        return dict(eager), run.get("eager_nodes", "")
    items = list(eager.items())
    if len(items) == len(calls) and all(_norm(e).startswith(_op_name(str(n.get("target", ""))))
                                        for (e, _ms), n in zip(items, calls)):
        return {n["name"]: ms for (_e, ms), n in zip(items, calls)}, \
            run.get("eager_nodes", "") + " (matched to the post-grad nodes by order and target)"
    # the graph timed eagerly is the one before Inductor's last post-grad passes, re-traced in the timing
    # process (names after targets: add_tensor_1); the one shown is the one lowered (tracer.capture). Align
    # the two sequences of ops (difflib, by op name): the nodes those passes changed have no eager time.
    import difflib  # noqa: PLC0415

    def full(target: str) -> str:  # aten.add.Tensor -> "addtensor", as a re-traced node is named (add_tensor_1)
        parts = target.split(".")
        return _norm(parts[1] + "_" + parts[2]) if len(parts) >= 3 and parts[0] in ("aten", "prims") else _op_name(target)

    ops = [full(str(n.get("target", ""))) for n in calls]
    sm = difflib.SequenceMatcher(None, ops, [_norm(e) for e, _ms in items], autojunk=False)
    matched = {}
    for i, j, size in sm.get_matching_blocks():
        for k in range(size):
            matched[calls[i + k]["name"]] = items[j + k][1]
    if calls and len(matched) < len(calls) // 2:
        matched = {name: ms for name, ms in eager.items() if name in names}
    if calls and len(matched) >= len(calls) // 2:
        return matched, (run.get("eager_nodes", "") + f" ({len(matched)} of {len(calls)} post-grad call nodes matched "
                         "by their op sequence; the rest were changed by Inductor's last post-grad passes and have "
                         "no eager time)")
    return None, (f"eager node times not matched to the post-grad graph ({len(items)} timed nodes, "
                  f"{len(calls)} post-grad call nodes)")


def roofline_rows(session: Any) -> list[dict[str, Any]]:
    """:func:`kernel_roofline` of every timed kernel call of every graph (with ``graph``), most wasted first
    (rows with no roofline last)."""
    rows = []
    for key, run in _timed(session):
        eager, eager_how = eager_by_node(session, key, run)
        bodies = loopbody_flops(session, key)
        links = session.links(key)
        for k in run["kernels"]:
            snodes = ((links.get("kernels") or {}).get(k["name"]) or {}).get("scheduler_nodes") or []
            counted = [bodies.get(n) for n in snodes]
            body = None
            if snodes and all(c is not None and c[0] is not None for c in counted) and k.get("backend") != "extern":
                body = (sum(c[0] for c in counted), "; ".join(f"{n}: {c[1]}" for n, c in zip(snodes, counted)))
            r = kernel_roofline(run, k, body)
            r["graph"] = key
            nodes = ((session.links(key).get("kernels") or {}).get(k["name"]) or {}).get("post_grad_nodes") or []
            r["eager_ms"] = sum(eager.get(n, 0.0) for n in nodes) if eager and nodes else None
            r["eager_source"] = (f"its post-grad FX nodes' eager times summed: {eager_how}" if r["eager_ms"] is not None
                                 else eager_how if not eager else "the kernel has no post-grad nodes in the links")
            if r["measured_ms"] is None:  # a collective: its nodes ran as stand-ins, no eager time either
                r["eager_ms"], r["eager_source"] = None, r["missing"]
            rows.append(r)
    rows.sort(key=lambda r: (r["wasted_ms"] is None, -(r["wasted_ms"] or 0.0)))
    return rows


def kernel_lines(links: dict[str, Any], kernel: str) -> tuple[dict[str, float], str]:
    """``{user line: weight}`` (weights sum to 1) for ``kernel``: its post-grad FX nodes' user lines,
    each node weighing the same (:data:`SPLIT_RULE`); nodes with no user line go to "(no user line)".
    Also says where the nodes came from."""
    lk = (links.get("kernels") or {}).get(kernel) or {}
    nodes = lk.get("post_grad_nodes") or []
    src = "links.kernels[k].post_grad_nodes"
    if not nodes:  # older sessions: the kernel's buffers' FX nodes
        nodes = [n for b in lk.get("buffers") or [] for n in ((links.get("buffers") or {}).get(b) or {}).get("fx_nodes") or []]
        src = "links.buffers[b].fx_nodes of the kernel's buffers"
    fx = links.get("fx_nodes") or {}
    lines = [(fx.get(n) or {}).get("user_line") or "(no user line)" for n in nodes]
    if not lines:
        return {"(no user line)": 1.0}, "the kernel has no FX nodes in the links"
    out: dict[str, float] = {}
    for ln in lines:
        out[ln] = out.get(ln, 0.0) + 1.0 / len(lines)
    return out, src


def line_rows(session: Any) -> list[dict[str, Any]]:
    """Wasted time by user line over every timed graph, most wasted first: ``line``, ``kernels``
    (``"[0/0] backward cpp_fused_..."``, with the share each gave), ``measured_ms``, ``roofline_ms``,
    ``wasted_ms`` (each the sum of the kernels' times x the line's share, :data:`SPLIT_RULE`),
    ``unpriced_ms`` (measured time of kernels with no roofline), ``untimed`` (the line's kernel calls with
    no time at all, each ``"[1/0] inference torch.ops._c10d_functional.all_reduce_.default#0: collective, not
    timed: ..."``: a collective, issue 23; left out of every sum, never counted as 0), ``eager_ms``: the eager time of the
    post-grad FX nodes whose user line it is (the run's ``eager_nodes_ms``, each node once), None with
    ``eager_missing`` saying why where a timed graph has none; ``slower_than_eager`` when measured > eager;
    ``unreliable``: the verdict of the runs it was timed in when any was judged not reliable (tui.trust), else None."""
    acc: dict[str, dict[str, Any]] = {}
    bad = unreliable_runs(session.runs)
    rooflines = {(r["graph"], r["name"], r["call"]): r for r in roofline_rows(session)}
    for key, run in _timed(session):
        links = session.links(key)
        for k in run["kernels"]:
            r = rooflines[(key, k["name"], k.get("call", 1))]
            weights, _src = kernel_lines(links, k["name"])
            for line, w in weights.items():
                a = acc.setdefault(line, {"line": line, "kernels": [], "measured_ms": 0.0, "roofline_ms": 0.0,
                                          "wasted_ms": 0.0, "unpriced_ms": 0.0, "untimed": [], "eager_ms": None,
                                          "eager_missing": EAGER_MISSING, "targets": []})
                a["targets"].append((key, k["name"]))
                if r["measured_ms"] is None:  # a collective: no time, left out of the sums (not a 0)
                    a["kernels"].append(f"{key} {k['name']} ({r['missing'].split(':')[0]})")
                    a["untimed"].append(f"{key} {k['name']}: {r['missing']}")
                    continue
                a["kernels"].append(f"{key} {k['name']}" + (f" (x{w:.2f})" if w < 0.999 else ""))
                a["measured_ms"] += w * r["measured_ms"]
                if r["roofline_ms"] is None:
                    a["unpriced_ms"] += w * r["measured_ms"]
                else:
                    a["roofline_ms"] += w * r["roofline_ms"]
                    a["wasted_ms"] += w * r["wasted_ms"]
        eager, eager_how = eager_by_node(session, key, run)
        fx = links.get("fx_nodes") or {}
        for node, ms in (eager or {}).items():
            line = (fx.get(node) or {}).get("user_line") or "(no user line)"
            a = acc.get(line)
            if a is not None:
                a["eager_ms"] = (a["eager_ms"] or 0.0) + ms
                a["eager_graphs"] = a.get("eager_graphs", set()) | {key}
        if eager:  # a line some of whose nodes have no eager time gets no partial sum
            post = ((session.stop_for(key, "aot") or {}).get("post_grad") or {}).get("nodes") or []
            for n in post:
                if isinstance(n, dict) and n.get("op") in _CALL_OPS and n.get("name") not in eager:
                    a = acc.get((fx.get(n.get("name")) or {}).get("user_line") or "(no user line)")
                    if a is not None:
                        a.setdefault("eager_gaps", set()).add(key)
                        if _COLLECTIVE_TARGET.match(str(n.get("target", ""))):
                            a.setdefault("eager_collectives", set()).add(f"{key} {n.get('name')}")
        if not eager:
            why = eager_how
            for a in acc.values():
                if any(g == key for g, _k in a["targets"]):
                    a["eager_missing"] = f"{key}: {why}"
    for a in acc.values():
        graphs = {g for g, _k in a["targets"]}
        gaps = a.pop("eager_gaps", set())
        colls = a.pop("eager_collectives", set())
        if colls:
            a["eager_missing"] = (f"{sorted(colls)[0]}: a collective in this line's post-grad nodes ran as a local "
                                  "stand-in and has no eager time (no partial sum)")
        elif gaps:
            a["eager_missing"] = (f"{sorted(gaps)[0]}: some of this line's post-grad nodes were changed by Inductor's "
                                  "last passes and have no eager time of their own (no partial sum)")
        if a["eager_ms"] is not None and not gaps and graphs <= a.pop("eager_graphs", set()):
            a["eager_missing"] = None
            a["eager_source"] = "sum of the line's post-grad FX nodes' eager times (run.eager_nodes_ms: " \
                                "torch.fx.Interpreter, each node alone)"
        else:
            a.pop("eager_graphs", None)
            a["eager_ms"] = None  # not every graph of the line has eager node times: no partial sum
        if a["untimed"] and len(a["untimed"]) == len(a["targets"]):  # only collectives: nothing measured, not 0
            a.update(measured_ms=None, roofline_ms=None, wasted_ms=None, unpriced_ms=None)
        a["slower_than_eager"] = a["eager_ms"] is not None and a["measured_ms"] is not None and \
            a["measured_ms"] > EAGER_MARGIN * a["eager_ms"]
        # issue 32: a line timed in a run judged not reliable carries that judgement wherever it is ranked
        a["unreliable"] = "; ".join(f"{g}: {bad[g]}" for g in dict.fromkeys(g for g, _k in a["targets"]) if g in bad) \
            or None
    return sorted(acc.values(), key=lambda a: (a["measured_ms"] is None, -(a["wasted_ms"] or 0.0),
                                               -(a["measured_ms"] or 0.0)))


def _size_bytes(buf: dict[str, Any] | None) -> tuple[int | None, str]:
    if not buf:
        return None, "the buffer is not in the lowering stop"
    size, dt = buf.get("size") or [], str(buf.get("dtype") or "").replace("torch.", "")
    if dt not in ITEMSIZE:
        return None, f"unknown dtype {dt or '?'}"
    try:
        n = math.prod(int(s) for s in size)
    except ValueError:
        return None, f"symbolic size [{', '.join(size)}]"
    return n * ITEMSIZE[dt], f"IR buffer size [{', '.join(size)}] x {dt} ({ITEMSIZE[dt]} B), lowering stop"


def node_reads(stop: dict[str, Any] | None) -> tuple[dict[str, set[str]], dict[str, str]]:
    """From a scheduling stop's ``after`` nodes: scheduler node (a member, ``op3``) -> the buffers it
    reads that another node of this graph writes (``unmet_dependencies``: MemoryDep / StarDep; WeakDep
    orders only and is left out), and buffer -> its ``.users`` text (``OUTPUT`` when the graph returns it)."""
    reads: dict[str, set[str]] = {}
    users: dict[str, str] = {}
    for n in (stop or {}).get("after") or []:
        if not isinstance(n, dict):
            continue
        text = n.get("text") or ""
        for m in _UNMET.finditer(text):
            reads.setdefault(m.group(1), set()).update(name for _kind, name in _DEP.findall(m.group(2)))
        for m in _USERS.finditer(text):
            users[m.group(1)] = m.group(2)
    return reads, users


def _names(links: dict[str, Any], kernel: str) -> list[str]:
    lk = (links.get("kernels") or {}).get(kernel) or {}
    return list(dict.fromkeys((lk.get("fused_nodes") or []) + (lk.get("scheduler_nodes") or [])))


def fusion_reason(session: Any, key: str, links: dict[str, Any], a: str, b: str,
                  memo: dict[str, set[int]] | None = None) -> tuple[str, list[str]]:
    """(verdict, Inductor's fusion-log lines naming a node of kernel ``a`` and one of kernel ``b``).
    Without such lines: "not considered" and why.  ``memo`` keeps each kernel's log lines between calls."""
    stop = session.stop_for(key, "scheduling")
    if stop and stop.get("fusion_log"):
        idx = session.fusion_index(stop)
        memo = {} if memo is None else memo

        def lines_of(k: str) -> set[int]:
            if k not in memo:
                memo[k] = {i for n in _names(links, k) for i in idx.get(n, ())}
            return memo[k]
        la, lb = lines_of(a), lines_of(b)
        log = stop["fusion_log"]
        both = [log[i].strip() for i in sorted(la & lb)]
        both = list(dict.fromkeys(both))
        if both:
            return ("Inductor: " + both[-1]), both
    colls = [k for k in (a, b) if _COLLECTIVE_KERNEL.match(k)]
    if colls:  # issue 23
        return (f"not considered: {colls[0].split('#')[0]} is a collective (communication between ranks, an extern "
                "call), which Inductor's scheduler never fuses"), []
    extern = [k for k in (a, b) if is_library(k, links)]
    if extern:  # issue 32: the same sentence as pane 4's f (tui.fusion_fix.LIBRARY_CALL)
        return f"never fusable as compiled: {extern[0].split('#')[0]} is a library call: {LIBRARY_CALL}", []
    if not stop or not stop.get("fusion_log"):
        return "not known: this session has no fusion log for the graph", []
    return ("not considered: no fusion-log line names both (Inductor tried no such pair: a fusion that would "
            "make a cycle, or nodes too far apart, are dropped before can_fuse)"), []


def fusion_rows(session: Any) -> list[dict[str, Any]]:
    """Missed fusions over every graph with a scheduling stop, costliest first.  Each: ``graph``,
    ``buffer``, ``producer``/``consumer`` kernels, ``bytes`` round-tripped (2 x the buffer, written then
    read back) with ``bytes_source``, ``cost_ms`` at the measured bandwidth (``bw_source``; None with
    why when the bandwidth or size is unknown), ``producer_lines``/``consumer_lines``, ``stays``
    (why the write would stay even if fused: a graph output or other readers), ``verdict`` and ``log``
    (:func:`fusion_reason`), ``nodes`` (a producer and a consumer scheduler node, for pane 4's ``f``),
    ``library`` (a library call on a side: never fusable as compiled, listed last) and, for the others, ``fix``
    (a setting to try with ``w``, or None) and ``fix_why`` (tui.fusion_fix).  The fusable ones come first,
    those with a setting to try before the rest, each group costliest first."""
    rows = []
    for key in session.graphs:
        sched = session.stop_for(key, "scheduling")
        links = session.links(key)
        if not sched or not links:
            continue
        run = session.runs.get(key) or {}
        have_run = bool(run)
        lowering = session.stop_for(key, "lowering") or {}
        bufs = {b.get("name"): b for b in lowering.get("buffers") or [] if isinstance(b, dict)}
        reads, users = node_reads(sched)
        lbufs = links.get("buffers") or {}
        snodes = links.get("scheduler_nodes") or {}
        seen = set()
        memo: dict[str, set[int]] = {}
        for node, names in reads.items():
            consumers = (snodes.get(node) or {}).get("kernels") or []
            for buf in sorted(names):
                producers = (lbufs.get(buf) or {}).get("kernels") or []
                for p in producers:
                    for c in consumers:
                        if p == c or (p, c, buf) in seen:
                            continue
                        seen.add((p, c, buf))
                        nbytes, bsrc = _size_bytes(bufs.get(buf))
                        total = 2 * nbytes if nbytes is not None else None
                        bw, bw_src = memory_roof(run, total) if have_run else \
                            (None, "this graph was not timed: no measured bandwidth")
                        verdict, log = fusion_reason(session, key, links, p, c, memo)
                        c_lines = sorted({ln for b in (snodes.get(node) or {}).get("buffers") or []
                                          for ln in (lbufs.get(b) or {}).get("user_lines") or []})
                        u = users.get(buf, "")
                        stays = []
                        if "OUTPUT" in u:
                            stays.append("the graph returns it")
                        n_users = u.count("NodeUser(")
                        if n_users > 1:
                            stays.append(f"{n_users} nodes read it")
                        rows.append({
                            "graph": key, "buffer": buf, "producer": p, "consumer": c,
                            "bytes": total, "bytes_source": ("2 x " + bsrc + " (written, then read back)") if total
                            else bsrc,
                            "cost_ms": total / (bw * 1e9) * 1e3 if total and bw else None,
                            "bw_gbps": bw, "bw_source": bw_src,
                            "producer_lines": list((lbufs.get(buf) or {}).get("user_lines") or []),
                            "consumer_lines": c_lines, "stays": "; ".join(stays),
                            "verdict": verdict, "log": log,
                            "nodes": ((lbufs.get(buf) or {}).get("scheduler_node"), node),
                        })
    rows.sort(key=lambda r: (r["cost_ms"] is None, -(r["cost_ms"] or 0.0), -(r["bytes"] or 0)))
    act, lib = classify(rows)  # issue 32: the ones Inductor could have made first, a setting to try on each
    return [{**r, "library": False} for r in act] + [{**r, "library": True, "fix": None, "fix_why": ""} for r in lib]


# ----------------------------------------------------------------------------- text

def fmt(v: Any, spec: str = ".4f", none: str = "-") -> str:
    return none if v is None else format(v, spec)


def roofs_text(session: Any) -> str:
    """The roofs each timed graph was priced against, every one with its source (missing ones say why)."""
    out = []
    seen = set()
    for key, run in _timed(session):
        roofs = run.get("roofs") or {}
        bw, src = memory_roof(run)
        line = f"memory roof used: {fmt(bw, '.1f')} GB/s ({src})"
        if (line, str(roofs.get("device"))) in seen:
            continue
        seen.add((line, str(roofs.get("device"))))
        out.append(f"{key} on {roofs.get('device') or run.get('device')}:")
        out.append("  " + line)
        for kind, r in (roofs.get("memory_gbps") or {}).items():
            out.append(f"  memory {kind:12} {fmt(r.get('value'), '.1f'):>9} GB/s   {r.get('source')}")
        for dt, kinds in (roofs.get("compute_tflops") or {}).items():
            for kind, r in kinds.items():
                out.append(f"  {dt:9} {kind:12} {fmt(r.get('value'), '.3f'):>9} TFLOP/s {r.get('source')}")
        if roofs.get("missing"):
            out.append("  " + roofs["missing"])
        if roofs.get("cache"):
            out.append(f"  measured roofs {'read from' if roofs.get('cached') else 'stored in'} {roofs['cache']}")
    return "\n".join(out) or "no timed graph"


def summary(session: Any, top: int = 5) -> str:
    """The short summary ``--headless --run`` prints: totals and the top rows of each ledger."""
    rr = roofline_rows(session)
    if not rr:
        return "ledger: no timed kernels"
    priced = [r for r in rr if r["roofline_ms"] is not None]
    untimed = [r for r in rr if r["measured_ms"] is None]
    meas = sum(r["measured_ms"] for r in rr if r["measured_ms"] is not None)
    roof = sum(r["roofline_ms"] for r in priced)
    wasted = sum(r["wasted_ms"] for r in priced)
    out = [f"ledger: {len(rr)} kernel calls, {meas:.4f} ms measured ({MEASURED.split(':')[0]}), "
           f"{len(priced)} priced: roofline {roof:.4f} ms, wasted {wasted:.4f} ms"]
    out += [f"  ! {line}" for line in not_reliable_lines(session)]
    if untimed:
        n_coll = sum(1 for r in untimed if r["missing"].startswith("collective"))
        out.append(f"  {n_coll} collective call(s) not timed" + (f" and {len(untimed) - n_coll} other(s)"
                                                                 if len(untimed) > n_coll else "")
                   + ": left out of every sum here (" + untimed[0]["missing"] + ")")
    run0 = _timed(session)[0][1]
    bw, src = memory_roof(run0)
    out.append(f"  memory roof {fmt(bw, '.1f')} GB/s: {src}")
    ladder = (run0.get("roofs") or {}).get("memory_ladder") or []
    if ladder:
        out.append("  CPU copy bandwidth by size (a kernel that fits the cache-resident sizes is held to the fastest of them): "
                   + ", ".join(f"{e['bytes']:,} B {e['value']:.1f} GB/s" for e in ladder))
    comp = ((run0.get("roofs") or {}).get("compute_tflops") or {})
    for dt, kinds in comp.items():
        m = kinds.get("measured") or {}
        if m.get("value"):
            out.append(f"  {dt} compute roof {m['value']:.4g} TFLOP/s: {m['source']}")
    out.append("  most wasted kernels:")
    for r in priced[:top]:
        out.append(f"    {r['wasted_ms']:9.4f} ms wasted  {r['pct_of_roof']:5.1f}% of roof  {r['bound']:7} "
                   f"{r['graph']} {r['name']}")
    out.append("  most wasted user lines (" + SPLIT_RULE.split(";")[0] + "):")
    sp = lambda line: short_path(line, getattr(session, "script_dir", None)) or line  # noqa: E731 (issue 33.3)
    for r in line_rows(session)[:top]:
        eager = f"{r['eager_ms']:9.4f} ms eager" if r["eager_ms"] is not None else "   eager -"
        if r["measured_ms"] is None:
            out.append(f"    {'not timed':>9}                                     {eager}  {sp(r['line'])}  "
                       f"({len(r['untimed'])} collective call(s), not timed)")
            continue
        out.append(f"    {r['wasted_ms']:9.4f} ms wasted  {r['measured_ms']:9.4f} ms measured  {eager}  {sp(r['line'])}"
                   + ("  SLOWER THAN EAGER (by >10%)" if r["slower_than_eager"] else "")
                   + ("  [timing NOT RELIABLE]" if r.get("unreliable") else "")
                   + (f"  (+{len(r['untimed'])} collective call(s), not timed)" if r.get("untimed") else ""))
    fr = fusion_rows(session)
    act = [r for r in fr if not r["library"]]
    out.append(f"  missed fusions: {len(act)} buffers written by one kernel and read back by another that Inductor "
               "could have fused; those with a setting to try first, then costliest:")
    for r in act[:top]:
        out.append(f"    {fmt(r['cost_ms'], '9.4f')} ms  {fmt(r['bytes'], 'd')} B  {r['graph']} {r['buffer']}: "
                   f"{r['producer']} -> {r['consumer']}  ({cut_words(r['verdict'], 90)}; {fix_text(r)})")
    if len(fr) > len(act):
        out.append(f"  never fusable as compiled: {len(fr) - len(act)} more such buffers, each with a library call on "
                   f"a side: {LIBRARY_CALL}")
    return "\n".join(out)


def report_markdown(session: Any, top: int = 10) -> str:
    """REPORT.md's section: the top ``top`` rows of each ledger as tables, with the rules and roofs."""
    rr = roofline_rows(session)
    if not rr:
        return ""
    out = ["#### Where the time goes (ledger)", "", f"Measured: {MEASURED}. Wasted = measured - roofline time, "
           "roofline time = max(bytes / bandwidth, FLOPs / peak).", "", "```", roofs_text(session), "```", "",
           *([f"{sum(1 for r in rr if r['measured_ms'] is None)} kernel call(s) not timed, left out of every sum "
              f"below: {next(r['missing'] for r in rr if r['measured_ms'] is None)}", ""]
             if any(r["measured_ms"] is None for r in rr) else []),
           *[f"> **{line}**" for line in not_reliable_lines(session)], "",
           "##### Roofline per kernel (most wasted first)", "",
           "| graph | kernel | measured ms | roofline ms | wasted ms | % of roof | bound | GB | FLOPs | bytes from |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rr[:top]:
        out.append(f"| {r['graph']} | `{r['name']}` | {fmt(r['measured_ms'])} | {fmt(r['roofline_ms'])} | "
                   f"{fmt(r['wasted_ms'])} | {fmt(r['pct_of_roof'], '.1f')} | {r['bound'] or r['missing']} | "
                   f"{fmt(r['gb'], '.3g')} | {fmt(r['flops'], '.3g')} | {r['gb_source']} |")
    out += ["", f"##### Wasted time by user line ({SPLIT_RULE})", "",
            "eager ms: the line's post-grad FX nodes run alone by torch.fx.Interpreter (missing where not recorded).", "",
            "| line | measured ms | roofline ms | wasted ms | eager ms | kernels |", "|---|---|---|---|---|---|"]
    for r in line_rows(session)[:top]:
        out.append(f"| `{short_path(r['line'], getattr(session, 'script_dir', None))}` | {fmt(r['measured_ms'])} | {fmt(r['roofline_ms'])} | {fmt(r['wasted_ms'])} | "
                   f"{fmt(r['eager_ms'])}{' (slower than eager)' if r['slower_than_eager'] else ''}"
                   f"{' (timing NOT RELIABLE)' if r.get('unreliable') else ''} | "
                   f"{'; '.join(r['kernels'][:4])}{' …' if len(r['kernels']) > 4 else ''}"
                   + (f" ({len(r['untimed'])} not timed: {r['untimed'][0]})" if r.get("untimed") else "") + " |")
    fr = fusion_rows(session)
    act, lib = [r for r in fr if not r["library"]], [r for r in fr if r["library"]]
    out += ["", "##### Missed fusions Inductor could have made, priced (a buffer written by one kernel and read back "
            "by another; those with a setting to try first)", "",
            "| graph | buffer | producer -> consumer | bytes | cost ms | lines | Inductor's reason | to try |",
            "|---|---|---|---|---|---|---|---|"]
    for r in act[:top]:
        lines = ", ".join(dict.fromkeys(short_path(x, getattr(session, "script_dir", None)) or x
                                        for x in r["producer_lines"] + r["consumer_lines"]))
        out.append(f"| {r['graph']} | {r['buffer']} | `{r['producer']}` -> `{r['consumer']}` | {fmt(r['bytes'], 'd')} "
                   f"| {fmt(r['cost_ms'])} | {lines} | {r['verdict']} | {fix_text(r)} |")
    if lib:
        out += ["", f"##### Never fusable as compiled ({len(lib)}): {LIBRARY_CALL}", "",
                "| graph | buffer | producer -> consumer | bytes | cost ms |", "|---|---|---|---|---|"]
        out += [f"| {r['graph']} | {r['buffer']} | `{r['producer']}` -> `{r['consumer']}` | {fmt(r['bytes'], 'd')} | "
                f"{fmt(r['cost_ms'])} |" for r in lib[:top]]
    return "\n".join(out) + "\n"


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


def run_ncu(cmd: list[str], kernel: str, timeout_s: int = 900, cwd: str | None = None) -> str:
    """Run ``cmd`` (:func:`ncu_command`) and say what ncu found: the speed-of-light table, the highest
    unit, or ncu's own reason it read no counters (``ERR_NVGPUCTRPERM``: no permission)."""
    import subprocess  # noqa: PLC0415

    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False,
                           cwd=cwd if cwd and os.path.isdir(cwd) else None)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"# ncu did not finish: {e}"
    out = p.stdout + p.stderr
    if "ERR_NVGPUCTRPERM" in out:
        return ("# ncu cannot read the GPU's performance counters here (ERR_NVGPUCTRPERM: profiling needs admin "
                "rights or NVreg_RestrictProfilingToAdminUsers=0)")
    sol = ncu_sol(p.stdout)
    if not sol:
        return f"# ncu found no {kernel} launch (exit {p.returncode}):\n" + "\n".join(out.splitlines()[-15:])
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


__all__ = ["roofline_rows", "line_rows", "fusion_rows", "kernel_roofline", "memory_roof", "compute_roof",
           "summary", "report_markdown", "roofs_text", "ncu_command", "ncu_sol", "run_ncu"]
