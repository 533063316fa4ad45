"""Kernel times inside the running model: CUDA-graph replays with events and CUPTI, the script's own
profiled calls, and detaching CUPTI for a timing run."""

from __future__ import annotations

import contextlib
import os
import re
from typing import Any, Callable

import torch

from inductor_step.tracer import adapter
from inductor_step.tracer.timing.hooks import _hooked

def event_hook(events: list) -> Any:
    """A hook (:data:`tracer.timing.hooks.Hook`) that records a pair of timing events
    (``torch.cuda.Event(enable_timing=True, external=True)``: event-record nodes once captured) around
    each kernel call and appends ``(name, start, end)`` to ``events``."""

    def timed(name: str, fn: Callable, a: tuple, k: dict) -> Any:
        start = torch.cuda.Event(enable_timing=True, external=True)
        end = torch.cuda.Event(enable_timing=True, external=True)
        start.record()
        out = fn(*a, **k)
        end.record()
        events.append((name, start, end))
        return out

    return timed


def capture_graph(mod: Any, backends: dict[str, str], args: list, hook: Any, capture: list | None = None) -> Any:
    """One call of output module ``mod`` captured into a ``torch.cuda.CUDAGraph``, every kernel call
    passing through ``hook``; a warm-up call on a side stream first (lazy inits, autotuning).
    ``capture``: the inputs for the capture where they differ from the warm-up's ``args``.  Raises
    what the capture raises."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        mod.call(list(args))
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    # thread_local: the capture runs on the agent's timing thread; in the UI (`r`) the script's own
    # thread may still be using CUDA, and under the default "global" mode its cudaMalloc or
    # synchronize during our capture would raise in the user's script
    with _hooked(mod, backends, hook), torch.cuda.graph(graph, capture_error_mode="thread_local"):
        mod.call(list(capture if capture is not None else args))
    return graph


def gpu_kernel_names(sources: dict[str, str], backends: dict[str, str]) -> dict[str, str]:
    """{our kernel name: the name the GPU (CUPTI) reports} where they differ: a user's ``@triton.jit``
    kernel is named ``add_kernel_0`` in the output module, but its binary keeps the ``def`` name of its
    source (``add_kernel``), which is what torch.profiler sees.  Two of our kernels with one GPU name
    (two specializations of one user kernel) are left out: their launches cannot be told apart."""
    out: dict[str, str] = {}
    for name, src in sources.items():
        if backends.get(name) != "triton":
            continue
        m = re.search(r"^def (\w+)\(", src or "", re.M)
        if m and m.group(1) != name:
            out[name] = m.group(1)
    dup = {g for g in out.values() if list(out.values()).count(g) > 1 or g in sources}
    return {n: g for n, g in out.items() if g not in dup}


def _ours(gpu_names: dict[str, str] | None) -> dict[str, str]:
    return {g: n for n, g in (gpu_names or {}).items()}


def in_graph_times(mod: Any, backends: dict[str, str], args: list, names: list[str],
                   replays: int = 30, capture: list | None = None,
                   gpu_names: dict[str, str] | None = None) -> tuple[list[dict[str, Any]] | None, str, str]:
    """Per-kernel GPU time inside the whole graph: one dict per kernel call in call order, or None
    with the reason; returns ``(times, status, cupti_status)``.

    The output module's ``call`` is captured once into a CUDA graph with a pair of timing events
    (``torch.cuda.Event(enable_timing=True, external=True)``: event-record nodes) around every
    kernel launch, then replayed.  Each kernel thus runs in the model's own order, with L2 as the
    kernels before it leave it and no launch gaps.  ``names`` must match the calls recorded earlier
    (same graph, same order).  ``capture``: the inputs for the capture where they differ from the
    warm-up's ``args`` (:func:`tracer.timing.harness.capture_args`).  Each dict has ``in_graph_events_ms`` (median over ``replays`` of the
    event pair) and ``in_graph_ms`` with ``in_graph_source``:

    * ``"cupti"`` for Triton kernels: the kernel's own duration in ``replays`` more replays of the same
      graph under torch.profiler (CUPTI), k-th launch of a kernel name in a replay = its k-th call.
      The event pair is not used for them because, measured on an H200 against CUPTI on the very
      same replays, it adds about 3 us (2.4-5.4 us) of graph-node latency to every kernel whatever
      its size (the kernels themselves run no slower): +15-30% on 10-30 us kernels, x3 on 1-2 us ones.
    * ``"events"`` for extern calls (cuBLAS and other library ops launch zero, one or several kernels
      of names we do not know), and for every kernel where the profiler is unavailable (another
      profiler active) or did not see a Triton kernel exactly once per replay per call.
    """
    events: list = []
    graph = None
    try:
        graph = capture_graph(mod, backends, args, event_hook(events), capture)
        if [n for n, _, _ in events] != names:
            return None, "the captured graph launched different kernels than the recorded call", "not run"
        samples: list[list[float]] = [[] for _ in events]
        for r in range(replays + 3):
            graph.replay()
            torch.cuda.synchronize()
            if r >= 3:
                for i, (_, s, e) in enumerate(events):
                    samples[i].append(s.elapsed_time(e))
        out = [{"in_graph_ms": sorted(x)[len(x) // 2], "in_graph_source": "events",
                "in_graph_events_ms": sorted(x)[len(x) // 2]} for x in samples]
        cupti, cupti_status = _cupti_in_graph(graph, names, backends, replays, gpu_names)
        seen: dict[str, int] = {}
        for name, t in zip(names, out):
            seen[name] = seen.get(name, 0) + 1
            if (name, seen[name]) in cupti:
                t["in_graph_ms"], t["in_graph_source"] = cupti[(name, seen[name])], "cupti"
        return out, "ok", cupti_status
    except Exception as e:  # noqa: BLE001 - a graph that cannot be captured still gets the other times
        try:
            torch.cuda.synchronize()
        except Exception:  # noqa: BLE001
            pass
        return (None, f"not capturable in a CUDA graph ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})",
                "not run")
    finally:
        del graph


def replay_time(mod: Any, backends: dict[str, str], args: list, bench: Callable[[Callable], float],
                capture: list | None = None) -> dict[str, Any]:
    """The whole graph as CUDA graphs run it: ``call`` captured once into a ``torch.cuda.CUDAGraph``
    (:func:`capture_graph`, no hook) and ``graph.replay()`` timed with ``bench`` (do_bench: median, L2
    flushed), the way cudagraph trees replay it after their warm-up and recording calls (less their
    copies of non-static inputs into the graph's buffers).  ``{"replay_ms", "how"}``, or
    ``{"missing": why}`` where the call cannot be captured whole (a CPU op between partitions)."""
    graph = None
    try:
        graph = capture_graph(mod, backends, args, lambda name, fn, a, k: fn(*a, **k), capture)
        ms = bench(graph.replay)
        return {"replay_ms": float(ms), "how": "the whole call captured in one torch.cuda.CUDAGraph, replay() timed by "
                                               "triton.testing.do_bench (median, L2 flushed), no input copies"}
    except Exception as e:  # noqa: BLE001
        try:
            torch.cuda.synchronize()
        except Exception:  # noqa: BLE001
            pass
        return {"missing": f"not capturable whole ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"}
    finally:
        del graph


def partitioned_replay_time(mod: Any, args: list, bench: Callable[[Callable], float]) -> dict[str, Any]:
    """The graph as cudagraph trees run a partitioned output module (statements of ``Runner.call``
    outside the partitions, a CPU op or a copy from the host): each partition function captured once into its own
    ``torch.cuda.CUDAGraph`` on static copies of its inputs, then whole ``call``s timed with ``bench``, each
    partition's inputs copied into its static buffers and its graph replayed, the statements between run as
    written.  ``{"replay_ms", "how"}``, or ``{"missing": why}`` (no partitions, or one cannot be captured)."""
    runner = getattr(mod, "runner", None)
    real = list(getattr(runner, "partitions", None) or [])
    if not real:
        return {"missing": "no graph partition to capture"}
    states: list[dict[str, Any]] = [{} for _ in real]

    def graphed(i: int, fn: Callable) -> Callable:
        def run(pargs: list) -> Any:
            st = states[i]
            if "graph" not in st:
                st["ins"] = [a.clone() if isinstance(a, torch.Tensor) else a for a in pargs]
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):
                    fn(list(st["ins"]))  # warm-up, as cudagraph trees' first call
                torch.cuda.current_stream().wait_stream(side)
                torch.cuda.synchronize()
                st["graph"] = torch.cuda.CUDAGraph()
                with torch.cuda.graph(st["graph"], capture_error_mode="thread_local"):
                    st["outs"] = fn(list(st["ins"]))
            for dst, src in zip(st["ins"], pargs):
                if isinstance(dst, torch.Tensor) and dst.data_ptr() != src.data_ptr():
                    dst.copy_(src)
            pargs.clear()
            st["graph"].replay()
            return st["outs"]
        return run

    try:
        runner.partitions = [graphed(i, fn) for i, fn in enumerate(real)]
        mod.call(list(args))  # captures each partition
        ms = bench(lambda: mod.call(list(args)))
        return {"replay_ms": float(ms), "how": f"each of {len(real)} partition(s) captured in its own "
                                              "torch.cuda.CUDAGraph and replayed, the statements of call between them "
                                              "run as written, inputs copied into the graphs' static buffers (as "
                                              "cudagraph trees do); timed by triton.testing.do_bench (median, L2 "
                                              "flushed)"}
    except Exception as e:  # noqa: BLE001
        try:
            torch.cuda.synchronize()
        except Exception:  # noqa: BLE001
            pass
        return {"missing": f"partitions not capturable ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"}
    finally:
        runner.partitions = real
        states.clear()


def _cupti_in_graph(graph: Any, names: list[str], backends: dict[str, str],
                    replays: int, gpu_names: dict[str, str] | None = None) -> tuple[dict[tuple[str, int], float], str]:
    """{(Triton kernel name, call k): median CUPTI duration in ms} over ``replays`` replays of
    ``graph`` under torch.profiler, and a status ("ok" or what went wrong); ``gpu_names``:
    :func:`gpu_kernel_names`."""
    ours = _ours(gpu_names)
    counts: dict[str, int] = {}
    for n in names:
        if backends.get(n) == "triton":
            counts[n] = counts.get(n, 0) + 1
    if not counts:
        return {}, "ok (no Triton kernels)"
    try:
        records = adapter.cuda_kernel_records(lambda: [graph.replay() for _ in range(replays)])
    except Exception as e:  # noqa: BLE001 - fall back to the event pairs
        try:
            torch.cuda.synchronize()
        except Exception:  # noqa: BLE001
            pass
        return {}, f"profiler unavailable, event pairs used ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
    by_name: dict[str, list[float]] = {}
    for name, _, ms in records:
        name = ours.get(name, name)
        if name in counts:
            by_name.setdefault(name, []).append(ms)
    out: dict[tuple[str, int], float] = {}
    missed = []
    for name, c in counts.items():
        v = by_name.get(name, [])
        if len(v) != c * replays:  # launches per replay in capture order: v[r * c + j] is call j+1 of replay r
            missed.append(f"{name} ({len(v)} of {c * replays})")
            continue
        for j in range(c):
            x = sorted(v[j::c])
            out[(name, j + 1)] = x[len(x) // 2]
    if missed:
        return out, f"event pairs used for {len(missed)} Triton kernel(s) the profiler saw a different number of times: {', '.join(missed[:5])}"
    return out, "ok"


_NOT_A_KERNEL = ("##", "Memcpy", "Memset", "Torch-Compiled Region", "CompiledFunction")


def script_times(names: list[str], backends: dict[str, str], profiles: list[list[tuple]],
                 gpu_names: dict[str, str] | None = None) -> dict[tuple[str, int], tuple[float, int]]:
    """{(kernel name, call k): (median ms, number of calls)} from the script's own calls of the
    graph, each recorded by :func:`tracer.adapter.cuda_kernel_records` (CUPTI kernel durations,
    with ``cpu_ops``: the operator that launched each kernel).

    ``names``: the graph's kernel calls in order, as the timing harness names them (Triton kernels
    by name, extern calls ``extern_kernels.mm#3``, ATen fallbacks ``torch.ops.aten....#7``);
    ``gpu_names``: the GPU's names of user Triton kernels (:func:`gpu_kernel_names`).

    Triton kernels: a profiled call counts for a kernel only if that name appears in it exactly as
    many times as the graph launches it; its k-th appearance is call k.  Extern calls (cuBLAS,
    cuDNN, attention: kernels whose names we cannot predict): where the records say which operator
    launched each kernel, the k-th extern call gets the sum of every kernel its operator call
    launched (``extern_kernels.mm`` <- ``aten::mm``; one call may launch several kernels, e.g.
    cuDNN's helper kernels or cuBLAS's split-K reduction), walking our extern calls and the
    profiled operator calls in step and skipping operators of other names (a copy outside the
    harness).  Extern calls left over fall back to the Triton kernels as anchors: where a profiled
    call launched the graph's Triton kernels in the graph's order, they cut both sequences into the
    same gaps; a gap holding one extern call gets the sum of the kernels in it, a gap with as many
    kernels as extern calls pairs them in order, and other gaps are left out.  Copies and memsets
    are not counted.
    """
    ours = _ours(gpu_names)
    counts, trit, externs, ours_gaps = _our_calls(names, backends)
    samples: dict[tuple[str, int], list[float]] = {}
    for records in profiles:
        by_name, anchors, gaps, ops = _profiled_calls(records, ours, counts)
        for name, c in counts.items():
            v = by_name.get(name, [])
            if len(v) == c:
                for j, ms in enumerate(v):
                    samples.setdefault((name, j + 1), []).append(ms)
        by_op = _externs_by_op(externs, ops, samples)
        if anchors != trit or len(by_op) == len(externs):
            continue
        for mine, theirs in zip(ours_gaps, gaps):
            if len(mine) == 1 and theirs and mine[0] not in by_op:
                samples.setdefault((mine[0], 1), []).append(sum(theirs))
            elif len(mine) > 1 and len(theirs) == len(mine):
                for n, ms in zip(mine, theirs):
                    if n not in by_op:
                        samples.setdefault((n, 1), []).append(ms)
    return {key: (sorted(v)[len(v) // 2], len(v)) for key, v in samples.items()}


def _our_calls(names: list[str], backends: dict[str, str]) -> tuple[dict[str, int], list[str], list[str],
                                                                    list[list[str]]]:
    """The graph's kernel calls (script_times' ``names``) as script_times reads them: ``(each Triton kernel's
    number of calls, the Triton calls in order, the extern calls in order, the extern calls between Triton calls)``."""
    counts: dict[str, int] = {}
    trit: list[str] = []
    externs: list[str] = []
    ours_gaps: list[list[str]] = [[]]
    for n in names:
        if backends.get(n) == "triton":
            counts[n] = counts.get(n, 0) + 1
            trit.append(n)
            ours_gaps.append([])
        else:
            externs.append(n)
            ours_gaps[-1].append(n)
    return counts, trit, externs, ours_gaps


def _profiled_calls(records: list[tuple], ours: dict[str, str],
                    counts: dict[str, int]) -> tuple[dict[str, list[float]], list[str], list[list[float]], list[list]]:
    """One profiled call's kernel ``records`` as script_times reads them: ``(ms per launch of each of the graph's
    Triton kernels, those launches' names in order, the other kernels' ms between them, [op name, ms, op id] per
    operator call that launched non-Triton kernels)``; copies and memsets left out."""
    by_name: dict[str, list[float]] = {}
    anchors: list[str] = []
    gaps: list[list[float]] = [[]]
    ops: list[list] = []  # [op name, ms, op id] per operator call that launched non-Triton kernels
    for rec in records:
        name, ms = ours.get(rec[0], rec[0]), rec[2]
        if name.startswith(_NOT_A_KERNEL):
            continue
        if name in counts:
            by_name.setdefault(name, []).append(ms)
            anchors.append(name)
            gaps.append([])
            continue
        gaps[-1].append(ms)
        if len(rec) > 4 and rec[3] is not None:
            if ops and ops[-1][2] == rec[4]:
                ops[-1][1] += ms
            else:
                ops.append([rec[3], ms, rec[4]])
    return by_name, anchors, gaps, ops


def _externs_by_op(externs: list[str], ops: list[list], samples: dict[tuple[str, int], list[float]]) -> set[str]:
    """Pair the graph's extern calls with the profiled operator calls ``ops`` in step (skipping operators of other
    names) and add each paired call's ms to ``samples``; returns the extern calls paired."""
    from inductor_step.tracer.adapter import op_base_name  # noqa: PLC0415

    by_op: set[str] = set()
    j = 0
    for n in externs:
        want = op_base_name(n)
        k = j
        while k < len(ops) and op_base_name(ops[k][0]) != want:
            k += 1
        if k == len(ops):
            continue  # not found: the next extern call may still be
        samples.setdefault((n, 1), []).append(ops[k][1])
        by_op.add(n)
        j = k + 1
    return by_op


@contextlib.contextmanager
def cupti_detached(device: str):
    """Detach CUPTI from the process for the duration of a timing run (CUDA; nothing on CPU).

    Yields a one-line status for the run message.  Why: a torch.profiler session (the agent
    profiles the script's calls 2-11 of each graph, ``TimingRequests.on_graph_call``) leaves Kineto's CUPTI
    subscriber attached after it ends, and every later kernel launch pays for its callbacks.
    Measured on an H200 (benchmarks/profiler_after_effect.py, ResNet-18 training, small): the
    launch-bound forward graph took 1.21-1.30x its time before the sessions, graphs whose time is
    GPU-bound 1.00x; after an empty session ended with ``TEARDOWN_CUPTI=1`` 0.96-1.05x.

    Kineto reads ``TEARDOWN_CUPTI`` whenever a session ends (``CuptiActivityApi::teardownContext``),
    so this sets it, runs one empty session (~12 ms) and keeps it set until the run ends: the run's
    own CUPTI sessions (:func:`in_graph_times`) then detach as they end too, and re-attach lazily
    (``DISABLE_CUPTI_LAZY_REINIT`` unset).  Restored afterwards: with it set, sessions started one
    right after another lost kernel records (seen when it was set for the whole agent), which the
    script's own profiled calls must not.  Skipped when the user set ``TEARDOWN_CUPTI`` themselves,
    when a profiler is running (the script's) or CUDA is not initialised.
    """
    if not device.startswith("cuda"):
        yield "CPU: not applicable"
        return
    if "TEARDOWN_CUPTI" in os.environ:
        yield f"TEARDOWN_CUPTI={os.environ['TEARDOWN_CUPTI']} set by the user; left as is"
        return
    if adapter.profiler_active():
        yield "not detached (a profiler is running)"
        return
    if not (torch.cuda.is_available() and torch.cuda.is_initialized()):
        yield "not attached: nothing has run on the GPU in this process yet, so no profiler session has either"
        return
    os.environ["TEARDOWN_CUPTI"] = "1"
    try:
        try:
            from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]):
                torch.cuda.synchronize()
            torch.empty(1, device=device).zero_()  # a runtime call after the session: finalisation runs there
            torch.cuda.synchronize()
            status = ("detached before timing (an empty profiler session ended with TEARDOWN_CUPTI=1): earlier "
                      "profiler sessions leave CUPTI attached, which slows every kernel launch")
        except Exception as e:  # noqa: BLE001 - timing goes on, attached
            status = f"not detached ({type(e).__name__}: {e})"
        yield status
    finally:
        os.environ.pop("TEARDOWN_CUPTI", None)
