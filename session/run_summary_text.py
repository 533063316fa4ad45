"""The run pane's summary of one graph's timing (a ``run`` message), built from groups of lines."""

from __future__ import annotations

from typing import Any

from inductor_step.session.modes import timed_sizes_line


def num(x: Any, fmt: str) -> str:
    """``x`` formatted with ``fmt``, "-" when it is not a number."""
    return format(x, fmt) if isinstance(x, (int, float)) else "-"


def run_summary(key: str | None, run: dict[str, Any], symbols: list[dict[str, Any]] | None = None,
                placeholders: list[dict[str, Any]] | None = None) -> str:
    """The run pane's summary of one graph's timing (the ``run`` message): compiled against eager,
    the kernel sum and what it means, how the times were settled, the sizes it was timed at (with
    ``symbols``, the graph's dynamic symbols from its dynamo stop, and ``placeholders``, its post-grad
    graph's placeholder nodes, each input named), the roofs and their sources."""
    from inductor_step.session.gpu_modes import cudagraph_lines, eager_note_lines, user_kernel_lines  # noqa: PLC0415
    from inductor_step.session.script_call import script_call_lines  # noqa: PLC0415
    from inductor_step.session.trust import unreliable  # noqa: PLC0415
    from inductor_step.session.whatif import numerics_lines  # noqa: PLC0415 - a what-if variant's

    if run.get("not_timed") and not isinstance(run.get("compiled_ms"), (int, float)):
        # a subgraph lowered inline into its parent's kernels (tracer: its run says why): no times of its own
        return (f"# {key} on {run.get('device')}: {run['not_timed']}\n"
                "# its kernels' times, the compiled graph's and eager's: pick the parent graph (g), pane 7")
    bad = unreliable(run)
    rounds = run.get("graph_rounds") or {}
    unstable = rounds.get("rounds_stable") is False or run.get("settled") is False
    lines = _times_lines(key, run, bad) + script_call_lines(run)
    lines += _kernel_sum_lines(run, unstable)
    lines += _rounds_lines(run, rounds, unstable)
    lines += _cuda_lines(run)
    if run.get("inputs"):
        lines.append(f"inputs: {run['inputs']}")
    lines.append(timed_sizes_line(run, symbols, placeholders))
    lines += eager_note_lines(run) + cudagraph_lines(run) + user_kernel_lines(run)
    lines += numerics_lines(run)
    lines += _peak_lines(run)
    if run.get("cancelled"):
        lines.append("cancelled: only the kernels above were timed")
    lines.append("Enter on a kernel: its code in the codegen pane")
    return "\n".join(x for x in lines if x)


def _eager_line(run: dict[str, Any]) -> str:
    """The eager line: its time and what ran eagerly (the exported program's module, Dynamo's graph or
    autograd's backward of it, or in older sessions the post-grad graph op by op), or why it was not timed."""
    from inductor_step.session.trust import figure_tag  # noqa: PLC0415

    eager = run.get("eager_ms")
    aoti = run.get("aoti") or {}
    if aoti:
        eager_what = "the exported program's module"
    elif run.get("eager_how") or "decomposed_ms" in run:  # Dynamo's graph run eagerly
        eager_what = ("autograd's backward of Dynamo's graph" if run.get("graph_kind") == "backward"
                      else "Dynamo's graph: the script without torch.compile")
    else:  # sessions recorded before: the decomposed post-grad graph was the baseline
        eager_what = "post-grad ATen graph, op by op"
    return (f"eager ({eager_what})   {eager:.4f} ms" + figure_tag(run, "eager") if eager is not None else
            f"eager   {aoti['eager'] if aoti.get('eager') else 'not timed: ' + (run.get('eager_error') or run.get('eager_note') or 'not available')}")


def _times_lines(key: str | None, run: dict[str, Any], bad: str | None) -> list[str]:
    """The heading (graph, device, method), the verdict when not reliable (``bad``), the compiled
    graph's and eager times, an AOTInductor package, where it ran, a time limit hit, the speedup."""
    from inductor_step.session.trust import figure_tag  # noqa: PLC0415

    lines = [f"# {key} on {run.get('device')}: timed with {run.get('method')}"]
    if bad:
        lines.append(f"! NOT RELIABLE: {bad}")
    compiled, eager = run.get("compiled_ms"), run.get("eager_ms")
    lines.append(f"compiled graph   {num(compiled, '.4f')} ms" + figure_tag(run, "compiled"))
    aoti = run.get("aoti") or {}  # an AOTInductor package, loaded as a deployment loads it
    if aoti:
        lines.append(f"package   {aoti.get('path')} (loaded with {aoti.get('loaded_with')})")
    lines.append(_eager_line(run))
    if run.get("in_process"):
        lines.append(f"where   {run['in_process']}")
    if run.get("timed_out") and run.get("limit_s"):
        lines.append(f"limit   {run['limit_s']:g} s per graph ran out (--timing-limit S sets it)")
    if eager and compiled:  # a ratio of these two figures: not reliable only where one of them is not
        shaky = any(figure_tag(run, w).startswith("  NOT RELIABLE") for w in ("compiled", "eager"))
        lines.append(f"speedup   {eager / compiled:.2f}x" + ("  (from times not reliable)" if shaky else ""))
    return lines


def _kernel_sum_lines(run: dict[str, Any], unstable: bool) -> list[str]:
    """Collectives left out, how a C++ wrapper's kernels were timed, the kernels' sum as a share of
    the graph and what the rest is (overhead, unsettled times, cold caches), and the run's warnings."""
    from inductor_step.session.trust import figure_tag  # noqa: PLC0415

    lines = []
    compiled, ksum = run.get("compiled_ms"), run.get("kernel_sum_ms")
    cause = run.get("gap_cause")
    if run.get("collectives_note"):  # the times below exclude the graph's collectives
        lines.append(f"! collectives, not timed: {run['collectives_note']}")
    if run.get("kernels_note"):  # a C++ wrapper's kernels, replayed one by one or not timed, and why
        lines.append(f"kernels: {run['kernels_note']}")
    if isinstance(ksum, (int, float)) and compiled:
        share = 100 * ksum / compiled
        if cause == "unsettled" or unstable:
            why = ("the times did not settle (rounds disagreed or other processes competed for the cores), so this "
                   "share says nothing about overhead; press r to time again")
        elif cause == "overhead" or (cause is None and ksum <= compiled):
            why = "the rest is launch and Python overhead"
        else:
            why = "kernels timed one at a time, each from a cold cache, add up to more than the graph"
        lines.append(f"sum of kernel times   {ksum:.4f} ms  ({share:.0f}% of the graph: {why})"
                     + figure_tag(run, "kernels"))
    for w in run.get("warnings") or []:
        lines.append(f"! {w}")
    return lines


def _rounds_lines(run: dict[str, Any], rounds: dict[str, Any], unstable: bool) -> list[str]:
    """How the graph's time was settled (``rounds``: the run's ``graph_rounds``): its rounds, the load
    average, each round's wait for a core, isolation, the in-graph kernels' sum."""
    lines = []
    compiled = run.get("compiled_ms")
    if rounds.get("compiled_rounds_ms") and not (unstable and run.get("warnings")):  # else a warning above says it
        c = rounds["compiled_rounds_ms"]
        how = "do_bench rounds" if str(run.get("device", "")).startswith("cuda") else "rounds"
        lines.append(f"graph time from {len(c)} {how}: the median of the last 5, which agree within 10%"
                     if not unstable else
                     f"! the compiled graph's {len(c)} timing rounds never agreed ({min(c):.4f} to {max(c):.4f} ms): "
                     "the machine was busy or had a slow spell, so this time is not reliable; press r to time again")
    load = rounds.get("load") or {}
    if load.get("loadavg_1m_before") is not None:
        lines.append(f"load average while timing   {load.get('loadavg_1m_before')} -> {load.get('loadavg_1m_after')} "
                     f"on {load.get('cpus')} CPU(s) (os.getloadavg)")
    if load.get("autogroup"):  # Linux shares the CPUs between autogroups (sessions) first (tracer.timing.rounds)
        lines.append(f"scheduler group while timing   {load['autogroup']}, session {load.get('session')}: "
                     + ("the session inductor-step was started in, where your script run from that shell shares the "
                        "CPUs the same way" if load.get("session") == load.get("launch_session") else
                        "not the session inductor-step was started in"
                        + (f" ({load['launch_session']})" if load.get("launch_session") is not None else "")
                        + ": the CPUs are shared between sessions first, so other processes weigh on these times "
                        "differently than on your script run from that shell"))
    waits = [(w, rounds.get(f"{w}_wait_shares")) for w in ("compiled", "eager") if rounds.get(f"{w}_wait_shares")]
    if waits:  # measured per round (tracer.timing.contention), what the verdicts above judge on
        lines.append("waiting for a core per round (% of the time the threads wanted one, schedstat): "
                     + "; ".join(f"{w} " + " ".join(f"{100 * x:.0f}" for x in xs) for w, xs in waits))
    if run.get("isolated"):
        lines.append(f"isolation: {run['isolated']}")
    if run.get("in_graph_sum_ms") is not None and compiled:
        lines.append(f"sum of in-graph kernel times   {run['in_graph_sum_ms']:.4f} ms  "
                     f"({100 * run['in_graph_sum_ms'] / compiled:.0f}% of the graph; the rest is launch "
                     "and Python overhead)")
    return lines


def _cuda_lines(run: dict[str, Any]) -> list[str]:
    """On a CUDA device: what the median, in-graph and in-script kernel times measure, and CUPTI's word; [] elsewhere."""
    if not str(run.get("device", "")).startswith("cuda"):
        return []
    lines = ["median: each kernel alone, L2 flushed (GB/s and % of peak use it); in graph: the kernel inside "
             "a CUDA-graph replay of the whole graph between timing events, as a profiler sees it"
             + (f"  [in graph: {run['in_graph']}]" if run.get("in_graph") not in (None, "ok") else ""),
             "in script: the kernel in the script's own calls of this graph (calls 2-11, CUPTI via "
             f"torch.profiler), L2 and clocks as the model left them  [{run.get('in_script', 'not recorded')}]"]
    if run.get("cupti"):
        lines.append(f"CUPTI: {run['cupti']}")
    return lines


def _peak_lines(run: dict[str, Any]) -> list[str]:
    """The roofs: peak memory bandwidth and matmul TFLOP/s with their sources, where the kernels'
    byte counts came from, and a note when a kernel's share of peak bandwidth is over 100%."""
    peak = run.get("peak") or {}
    lines = [f"peak memory bandwidth   {peak['bw_gbps']:.0f} GB/s  ({peak.get('bw_source')})" if peak.get("bw_gbps")
             else f"peak memory bandwidth   {peak.get('bw_source', 'not recorded')}"]
    if peak.get("tflops"):
        lines.append("peak matmul   " + ", ".join(f"{d} {v:.0f} TFLOP/s" for d, v in peak["tflops"].items())
                     + f"  ({peak.get('tflops_source')})")
    srcs = sorted({k.get("gb_source") for k in run.get("kernels") or [] if k.get("gb_source")})
    if srcs:
        lines.append("bytes moved from: " + "; ".join(srcs))
    over = [over_bandwidth(k, peak) for k in run.get("kernels") or []]
    if "copy" in over:
        lines.append(f"* over 100% but under the driver's peak ({peak['bw_datasheet_gbps']:.0f} GB/s): faster than the "
                     "measured copy; a kernel that reads more than it writes can outrun a copy's even mix of reads "
                     "and writes (BENCHMARKS.md, 'Session 37 on the GPU')")
    if "driver" in over:
        lines.append("* over 100%" + (" and over the driver's peak" if peak.get("bw_datasheet_gbps") else "")
                     + ": the byte count is an upper bound (the kernel reads only part of a tensor it is passed)")
    return lines


def over_bandwidth(kernel: dict[str, Any], peak: dict[str, Any]) -> str | None:
    """Whether a kernel's bandwidth is over the run's roof (``pct_peak_bw`` > 100, the roof being the measured
    device copy on CUDA, ``peak["bw_gbps"]``): ``"copy"`` when its GB/s stays under the driver's figure
    (``peak["bw_datasheet_gbps"]``, ``triton.testing.get_dram_gbps``), which a kernel cannot pass and a
    read-heavy one can approach beyond a copy; ``"driver"`` when over that too (or no driver figure: then the
    byte count is the likelier fault); None when under the roof."""
    if (kernel.get("pct_peak_bw") or 0) <= 100:
        return None
    sheet, gbps = peak.get("bw_datasheet_gbps"), kernel.get("gbps")
    return "copy" if sheet and isinstance(gbps, (int, float)) and gbps <= sheet else "driver"
