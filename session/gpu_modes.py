"""Lines for a run message's CUDA graphs (``mode="reduce-overhead"``) and user Triton kernels, as the run pane and the headless output show them."""

from __future__ import annotations

from typing import Any


def _ms(x: Any) -> str:
    return f"{x:.4f} ms" if isinstance(x, (int, float)) else "-"


def cudagraph_lines(run: dict[str, Any]) -> list[str]:
    """What CUDA graphs did for a graph: its verdict (captured, partitioned with the statements run outside the
    partitions, skipped with torch's own reason), its re-recordings with their causes, the plain launch
    against the replay (the launch overhead removed) and the script's own calls; [] where the run
    has no CUDA-graph record (CPU) or the graph was not compiled with CUDA graphs."""
    cg = run.get("cudagraphs") or {}
    if not cg.get("enabled"):
        return []
    out = [f"CUDA graphs: {cg['verdict']}: {cg.get('how', '')}" if cg.get("verdict") else f"CUDA graphs: {cg.get('how', '')}"]
    if cg.get("outside") and cg.get("verdict") != "partitioned":  # a partitioned verdict names them already
        out.append("  run outside the CUDA graphs: " + "; ".join(cg["outside"][:4]))
    rer = cg.get("rerecordings") or []
    if rer:
        out.append(f"  re-recorded {len(rer)} time(s) after its first recording:")
        out += [f"    script call {r.get('call', '?')}: {r.get('cause')}" for r in rer[:6]]
        if len(rer) > 6:
            out.append(f"    ... and {len(rer) - 6} more")
    elif isinstance(cg.get("recordings"), list) and cg.get("captured"):
        out.append(f"  recorded once (script call {cg['recordings'][0].get('call', '?')}), never re-recorded")
    if cg.get("replay_ms") is not None:
        how = "as CUDA graphs partition by partition, the rest as written" if "partition(s) captured" in \
            str(cg.get("replay_how") or "") else "as a CUDA graph"
        out.append(f"  plain launch {_ms(run.get('compiled_ms'))}, replayed {how} {_ms(cg['replay_ms'])}: "
                   f"{_ms(cg.get('launch_overhead_ms'))} of launch overhead removed")
    elif (run.get("cudagraph_replay") or {}).get("missing"):
        out.append(f"  replay not timed: {run['cudagraph_replay']['missing']}")
    if cg.get("script_call_ms") is None and isinstance(cg.get("calls"), int):
        out.append(f"  the script's own calls not timed: it called this graph {cg['calls']} time(s); calls 12-21 are "
                   "timed with CUDA events (calls 2-11 run under the profiler)")
    if cg.get("script_call_ms") is not None:
        out.append(f"  the script's own calls {_ms(cg['script_call_ms'])} (median of {cg.get('script_calls')}, CUDA "
                   "events around each call: as the script runs it" + (", through cudagraph trees" if cg.get("captured")
                                                                       else "") +
                   "; host work before the first launch counts, and these calls come after the profiled ones, so "
                   "CUPTI's launch callbacks may still add to them)")
    return out


def user_kernel_lines(run: dict[str, Any]) -> list[str]:
    """One line per call of a user ``@triton.jit`` kernel: its launch config and times."""
    out = []
    for k in run.get("kernels") or []:
        if not k.get("user_kernel"):
            continue
        ln = k.get("launch") or {}
        consts = ", ".join(f"{a}={v}" for a, v in (ln.get("constants") or {}).items())
        out.append(f"user Triton kernel {k['name']} (def {ln.get('def_name')}): grid {ln.get('grid')}, "
                   f"num_warps {ln.get('num_warps')}, num_stages {ln.get('num_stages')}" + (f", {consts}" if consts else "")
                   + f"; alone {_ms(k.get('median_ms'))}, in graph {_ms(k.get('in_graph_ms'))} "
                   f"({k.get('in_graph_source', '-')}), in script {_ms(k.get('in_script_ms'))}")
    if out and run.get("eager_user_kernels"):
        out.append(f"  eager: {run['eager_user_kernels']}")
    return out


def eager_note_lines(run: dict[str, Any]) -> list[str]:
    """What the eager figure is (``eager_how``: Dynamo's graph run eagerly, autograd's backward of it), or why a
    graph has none (``eager_note``, sessions), and the third figure, the decomposed post-grad
    graph run op by op (``decomposed_ms``, ``decomposed_how``; ``decomposed_error`` where it was not timed)."""
    out = []
    if run.get("eager_ms") is None and run.get("eager_note"):
        out.append(f"eager: {run['eager_note']}")
    if run.get("eager_ms") is not None and run.get("eager_how"):
        out.append(f"eager: {run['eager_how']}")
    if isinstance(run.get("decomposed_ms"), (int, float)):
        out.append(f"decomposed post-grad graph, op by op: {run['decomposed_ms']:.4f} ms (Inductor's decomposed "
                   "ATen/prims graph run by torch.fx: not what the script runs without torch.compile; for reference)")
    elif run.get("decomposed_error"):
        out.append(str(run["decomposed_error"]))
    return out


def partition_note(cg: dict[str, Any] | None) -> str:
    """The codegen stop's CUDA-graph note (its ``cudagraphs``: ``enabled``, ``partitions``, ``outside``):
    ``"CUDA graphs on: 1 partition, 0 statements outside"``; "" where CUDA graphs are off or not recorded."""
    if not cg or not cg.get("enabled"):
        return ""
    if "partitions" not in cg:
        return "CUDA graphs on: the whole call is one graph"
    parts, outside = cg.get("partitions") or [], cg.get("outside") or []
    if not parts:
        return "CUDA graphs on, but no graph partition: nothing of it is captured"
    return (f"CUDA graphs on: {len(parts)} partition(s), {len(outside)} statement(s) run outside them"
            + (f" ({'; '.join(outside[:3])})" if outside else ""))
