"""Lines for a run message's CUDA graphs (``mode="reduce-overhead"``) and user Triton kernels, as the run pane and the headless output show them."""

from __future__ import annotations

from typing import Any


def _ms(x: Any) -> str:
    return f"{x:.4f} ms" if isinstance(x, (int, float)) else "-"


def cudagraph_lines(run: dict[str, Any]) -> list[str]:
    """What CUDA graphs did for a graph: captured or why not (torch's own reason), the plain launch
    against the replay (the launch overhead removed) and the script's own calls; [] where the run
    has no CUDA-graph record (CPU) or the graph was not compiled with CUDA graphs."""
    cg = run.get("cudagraphs") or {}
    if not cg.get("enabled"):
        return []
    out = [f"CUDA graphs: {cg.get('how', '')}"]
    if cg.get("outside"):
        out.append("  run outside the CUDA graphs: " + "; ".join(cg["outside"][:4]))
    if cg.get("replay_ms") is not None:
        out.append(f"  plain launch {_ms(run.get('compiled_ms'))}, replayed as a CUDA graph {_ms(cg['replay_ms'])}: "
                   f"{_ms(cg.get('launch_overhead_ms'))} of launch overhead removed")
    elif (run.get("cudagraph_replay") or {}).get("missing"):
        out.append(f"  replay not timed: {run['cudagraph_replay']['missing']}")
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
    graph has none (``eager_note``, sessions before issue 39.2), and the third figure, the decomposed post-grad
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
