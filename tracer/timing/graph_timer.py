"""One compiled graph timed step by step (:func:`tracer.timing.harness.time_graph` runs the steps).

The steps, in order: load the output module and what is known of its kernels and device; pick the
inputs; record one call's kernel calls; prepare the decomposed post-grad graph; time the whole graph
in rounds (compiled, eager, decomposed) and its memory peak; time the post-grad graph's nodes; take
the CUDA views (in-graph, CUDA-graph replay, the script's own calls); time each kernel; then gather
the ``run`` result.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable

import torch

from inductor_step.tracer import adapter
from inductor_step.tracer.codeparse import parse_wrapper, subgraph_functions
from inductor_step.tracer.timing.subgraphs import split_by_subgraph, watch_subgraphs
from inductor_step.tracer.timing.collectives import collective_entry, collectives_summary
from inductor_step.tracer.timing.eager_nodes import _no_eager, _probe_eager
from inductor_step.tracer.timing.harness import (_graph_args, _inputs_text, _use_script_inputs, capture_args,
                                                 input_sizes, script_args, settled)
from inductor_step.tracer.timing.hooks import _hooked
from inductor_step.tracer.timing.ingraph import (gpu_kernel_names, in_graph_times, partitioned_replay_time, replay_time,
                                                 script_times)
from inductor_step.tracer.timing.roofs import device_peaks, kernel_gb, op_flops, roofline
from inductor_step.tracer.timing.rounds import CPU_REP_MS, cpu_quantiles, whole_graph_rounds
from inductor_step.tracer.timing.template_flops import template_flops
from inductor_step.tracer.user_kernels import user_kernel_launch
from inductor_step.tracer.cpu_disasm import live_cpu_asm
from inductor_step.tracer.triton_stages import live_stages, stages_max

#: CPU: each kernel call is timed in this many windows of ``rep / KERNEL_ROUNDS`` ms (10 ms), one round over every call after
#: another, and keeps the window with the lowest median.  One window per call (before) put a whole burst of other
#: processes' work on one kernel: its OpenMP threads (as many as cores) waited for a core at every call, and a
#: [32, 64] x [64, 256] addmm read 10-20 ms (quiet: 0.01 ms), 99.8% of the graph's kernel time, while its twin beside
#: it read 0.01 ms.  A burst now costs that kernel one window; contention that lasts all rounds still shows (and the
#: run says so: tracer.timing.contention)
KERNEL_ROUNDS = 5


class GraphTimer:
    """The state of one :func:`tracer.timing.harness.time_graph` call (its arguments, as documented
    there), filled in by its steps; :meth:`run` takes them in order and returns the ``run`` result."""

    def __init__(self, output_path: str, eager_gm: Any, device: str, rep: float | None = None,
                 cancel: threading.Event | None = None, progress: Callable[[str], None] | None = None,
                 num_gb: dict[str, float] | None = None, script: dict[str, Any] | None = None,
                 dynamo: dict[str, Any] | None = None) -> None:
        self.output_path, self.eager_gm, self.device = output_path, eager_gm, device
        self.rep = CPU_REP_MS if rep is None else rep  # CPU: one measurement's window, ms
        self.cancel, self.progress, self.num_gb, self.dynamo = cancel, progress, num_gb, dynamo
        self.script = script
        self.cuda = device.startswith("cuda")

    def say(self, what: str) -> None:
        """Report the step now running through ``progress``, when given."""
        if self.progress is not None:
            self.progress(what)

    # ------------------------------------------------------------------ the steps

    def run(self) -> dict[str, Any]:
        """Take every step in order; return the ``run`` result (:func:`tracer.timing.harness.time_graph`)."""
        self.load()
        sc = self.script or {}
        self.script_configs = sc.get("configs") or {}
        self.pinned = (adapter.pin_configs(self.mod, {n: c["config"] for n, c in self.script_configs.items()})
                       if self.script_configs else {})
        # every collective of the graph runs as a local stand-in, never the real one (tracer.adapter.collectives)
        with torch.no_grad(), adapter.stand_ins_in_module(self.mod, self.source):
            self.pick_inputs()
            self.record_calls()
            self.prepare_decomposed()
            self.time_rounds()
            self.time_eager_nodes()
            self.cuda_views()
            self.time_kernels()
        self.subgraphs: dict[str, Any] = {}
        if self.functions:  # each subgraph's calls under its own key; the parent keeps its own
            self.kernels, self.subgraphs = split_by_subgraph(self.kernels, self.sub_rec, self.functions,
                                                             self.eager_gm, self.bench_q)
        return self.result()

    def load(self) -> None:
        """Load the output module and parse its kernels (backend, source, parameters, GPU names); read
        the device's peaks, roofs and limits; take the benchmarker."""
        self.say("loading the output module")
        self.mod = adapter.load_output_module(self.output_path)
        with open(self.output_path, encoding="utf-8") as f:
            self.source = f.read()
        parsed = parse_wrapper(self.source)
        self.backends = {k["name"]: k["backend"] for k in parsed}
        self.sources = {k["name"]: k["source"] for k in parsed}
        from inductor_step.tracer.links import _params  # noqa: PLC0415 - parameter names of a kernel's source

        self.params = {k["name"]: _params(k["backend"], k["source"]) for k in parsed if k["backend"] in ("cpp", "triton")}
        # a user @triton.jit kernel: the GPU knows it by its def name
        self.gpu_names = gpu_kernel_names(self.sources, self.backends)
        self.peak = device_peaks(self.device)
        self.machine: Any = None
        try:  # the ledger's three roofs, measured once per device and cached
            from inductor_step.tracer.timing import machine  # noqa: PLC0415

            self.machine = machine
            self.roofs: dict[str, Any] = machine.device_roofs(self.device)
        except Exception as e:  # noqa: BLE001
            self.roofs = {"missing": f"roofs not measured ({type(e).__name__}: {e})"}
        try:
            self.limits = self.machine.device_limits() if self.cuda else None
        except Exception:  # noqa: BLE001
            self.limits = None
        self.b = adapter.benchmarker()

    def pick_inputs(self) -> None:
        """The call's arguments: ``get_args()`` (else the script's first call's), with the script's own
        tensors put in where they match; ``inputs`` says where they came from, ``sizes`` what they are.
        Raises RuntimeError when neither source gives every argument."""
        sc = self.script or {}
        inputs_fallback = ""
        try:
            args = _graph_args(self.mod)
        except Exception as e:  # noqa: BLE001 - a jagged graph's get_args() omits its SymInt input
            args = script_args(self.script)
            if args is None:
                have = sorted({*(sc.get("scalars") or {}), *(sc.get("inputs") or {})})
                raise RuntimeError(f"{type(e).__name__}: {e} (the output module's get_args(); the script's first call "
                                   f"gave {len(have)} of {sc.get('n_inputs', '?')} arguments to build them from: "
                                   f"{'no call recorded' if not sc.get('calls') else 'positions ' + str(have)})") from e
            inputs_fallback = f"get_args() raised ({type(e).__name__}: {e}); "
        self.args = args
        self.random_args = list(args)
        ints, floats = _use_script_inputs(args, sc.get("inputs") or sc.get("int_inputs") or {})
        n_tensors = sum(1 for t in args if isinstance(t, torch.Tensor))
        self.inputs = inputs_fallback + _inputs_text(ints, floats, n_tensors)
        self.sizes = input_sizes(args)

    def record_calls(self) -> None:
        """Run the graph once with its kernels hooked: ``calls`` holds ``(name, fn, args, kwargs)`` per
        kernel call in call order; ``functions`` and ``sub_rec`` the higher-order ops' subgraphs seen."""
        self.calls: list = []

        def record(name: str, fn: Callable, a: tuple, k: dict) -> Any:
            self.calls.append((name, fn, a, k))
            return fn(*a, **k)

        self.say("recording the kernels' calls (one call of the graph)")
        self.functions = list(subgraph_functions(self.source))  # higher-order ops' subgraphs (tracer.timing.subgraphs)
        with _hooked(self.mod, self.backends, record), \
                watch_subgraphs(self.mod, self.functions, self.calls, "" if self.cuda else self.source) as sub_rec:
            self.mod.call(list(self.args))
        self.sub_rec = sub_rec

    def prepare_decomposed(self) -> None:
        """Make the post-grad graph runnable eagerly (collectives stood in, in-place foreach getitems
        fixed) and run it once, then probe one call: ``eager_fn`` (None where it cannot run, with
        ``eager_error``), ``eager_probe`` (its note, ``slow`` when rounds of it would not finish)."""
        eager_gm, args = self.eager_gm, self.args
        self.eager_fn: Callable | None = None
        self.eager_stubbed: dict[str, str] = {}
        self.eager_error: str | None = None if eager_gm is not None else "no post-grad graph to run op by op"
        self.eager_fixes: list[str] = []
        # checked before the one eager call below: flex attention's backward run eagerly is torch's math
        # reference, over 140 s a call on an H100 (that call made the GPU flex test run past 150 s)
        skip = _no_eager(eager_gm) if eager_gm is not None else None
        if eager_gm is not None and not skip:
            try:
                self.eager_stubbed = adapter.stand_ins_in_graph(eager_gm)
                self.eager_fixes = adapter.runnable_eager(eager_gm)  # in-place foreach getitems
                eager_gm.recompile()
                self.say("running the decomposed post-grad graph op by op once")
                eager_gm(*args)  # once: a graph that cannot run eagerly says why, and the compiled time stays
                self.eager_fn = lambda: eager_gm(*args)  # noqa: E731
            except Exception as e:  # noqa: BLE001
                self.eager_fn = None
                self.eager_error = (f"the post-grad graph does not run eagerly ({type(e).__name__}: "
                                    f"{str(e).splitlines()[0] if str(e) else ''})")
        self.eager_probe: dict[str, Any] = {}
        if skip:
            self.eager_fn, self.eager_probe = None, {"note": skip, "slow": True}
        if self.eager_fn is not None:
            self.say("one call of the decomposed post-grad graph (to see that rounds of it can finish)")
            self.eager_fn, self.eager_probe = _probe_eager(self.eager_fn, self.cuda)

    def time_rounds(self) -> None:
        """Run Dynamo's graph eagerly once (the eager baseline), time the whole graph in rounds
        (:func:`whole_graph_rounds`: compiled, eager, decomposed) and measure its memory peak."""
        self.say("running Dynamo's graph eagerly once (the eager baseline: the script without torch.compile)")
        from inductor_step.tracer.timing.eager_user import user_eager  # noqa: PLC0415

        mod, args = self.mod, self.args
        self.user = user_eager(self.dynamo, self.cuda)
        self.say("timing the whole graph in rounds (compiled, eager, decomposed post-grad graph)")
        self.graph_rounds = whole_graph_rounds(lambda: mod.call(list(args)), self.user.get("fn"), self.cuda, self.bench,
                                               eager_round=self.user.get("round"), decomposed=self.eager_fn)
        self.compiled_ms, self.eager_ms = self.graph_rounds["compiled_ms"], self.graph_rounds.get("eager_ms")
        self.decomposed_ms = self.graph_rounds.get("decomposed_ms")
        from inductor_step.tracer.timing.memory import measured_peak  # noqa: PLC0415

        self.measured_mem = measured_peak(lambda: mod.call(list(args)), self.cuda, self.dynamo or {})  # and eager's, same graph

    def time_eager_nodes(self) -> None:
        """Each FX node of the post-grad graph timed eagerly (``eager_nodes`` node -> ms, for the
        ledger's lines; collectives left out), and ``eager_nodes_how``: how, or why not."""
        self.eager_nodes: dict[str, float] = {}
        self.eager_nodes_how = f"not measured: {self.eager_error or 'no post-grad graph to run eagerly'}"
        if self.eager_probe.get("slow"):  # too slow (or flex attention's backward): node by node would be as slow
            self.eager_nodes_how = f"not measured: {self.eager_probe['note']}"
        if self.eager_fn is not None or self.eager_probe.get("raised"):  # a graph that fails whole may run node by node
            try:
                from inductor_step.tracer.timing.eager_nodes import eager_node_times  # noqa: PLC0415

                self.eager_nodes, self.eager_nodes_how = eager_node_times(self.eager_gm, list(self.args), self.cuda)
            except Exception as e:  # noqa: BLE001
                self.eager_nodes_how = f"not measured ({type(e).__name__}: {e})"
            if self.eager_stubbed and self.eager_nodes:
                self.eager_nodes = {n: ms for n, ms in self.eager_nodes.items() if n not in self.eager_stubbed}
                self.eager_nodes_how += (f"; the collective node(s) {', '.join(self.eager_stubbed)} ran as local "
                                         "stand-ins and have no eager time")

    def cuda_views(self) -> None:
        """On CUDA: every kernel inside one CUDA-graph replay (``in_graph``), the whole graph replayed as
        a CUDA graph under mode="reduce-overhead" (``replay``), and the kernels in the script's own
        profiled calls (``in_script``), each with a status; on CPU, "not applicable"."""
        sc = self.script or {}
        mod, backends, args, names = self.mod, self.backends, self.args, [c[0] for c in self.calls]
        self.in_graph, self.in_graph_status, self.cupti_status = (None, "CPU: not applicable", "CPU: not applicable")
        if self.cuda:
            self.say("every kernel inside one CUDA-graph replay of the graph")
            self.in_graph, self.in_graph_status, self.cupti_status = in_graph_times(
                mod, backends, args, names, capture=capture_args(args, self.random_args), gpu_names=self.gpu_names)
        self.replay = None
        if self.cuda and sc.get("cudagraphs"):  # mode="reduce-overhead": the graph as CUDA graphs replay it
            self.say("the whole graph replayed as a CUDA graph")
            self.replay = replay_time(mod, backends, args, self.bench, capture=capture_args(args, self.random_args))
            if self.replay.get("missing") and getattr(getattr(mod, "runner", None), "partitions", None):
                # a statement outside the partitions (a host copy, a CPU op) stops a whole-call capture: replay the
                # partitions as cudagraph trees do, the rest run as written
                whole = self.replay["missing"]
                self.replay = partitioned_replay_time(mod, args, self.bench)
                self.replay["whole"] = whole
        self.in_script, self.in_script_status = {}, "CPU: not applicable"
        if self.cuda:
            profiles = sc.get("profiles") or []
            self.in_script = script_times(names, backends, profiles, self.gpu_names) if profiles else {}
            self.in_script_status = (sc.get("status") or
                                     (f"ok: {len(profiles)} of the script's calls profiled" if profiles else
                                      f"the script called this graph {sc.get('calls', 0)} time(s); "
                                      "calls after the first are profiled when timing is asked for at start (--run) "
                                      "or in the UI"))

    def time_kernels(self) -> None:
        """Time each recorded kernel call in order (:meth:`kernel_entry`; a collective is listed, not
        timed), stopping when ``cancel`` is set; the slowest Triton kernels whose launcher kept no
        assembly are compiled again afterwards, once the timing's contention check is over."""
        from inductor_step.tracer.timing.contention import Span  # noqa: PLC0415

        self.kernels: list[dict[str, Any]] = []
        self.cancelled = False
        seen: dict[str, int] = {}
        again: list[tuple[dict[str, Any], Any, str, str]] = []  # kernels to compile again, after timing
        self.kspan = Span().__enter__()  # did the kernels' timing get the cores?
        self.cpu_times = {} if self.cuda else self.cpu_kernel_rounds()
        for i, (name, fn, a, k) in enumerate(self.calls):
            if self.cancel is not None and self.cancel.is_set():
                self.cancelled = True
                break
            if self.cuda:
                self.say(f"kernel {i + 1}/{len(self.calls)}: {name}")
            seen[name] = seen.get(name, 0) + 1
            coll = adapter.collective_of(name)
            if coll is not None:  # run as a stand-in (fn): listed, not timed
                entry = collective_entry(name, seen[name], coll, self.bench(lambda fn=fn, a=a, k=k: fn(*a, **k)))
                if (name, seen[name]) in self.in_script:
                    entry["in_script_ms"], entry["in_script_calls"] = self.in_script[(name, seen[name])]
                self.kernels.append(entry)
                continue
            self.kernels.append(self.kernel_entry(i, name, fn, a, k, seen[name], again))
        self.kspan.__exit__()
        if getattr(self, "kernels_apart", 0):  # its threads were kept apart after a kernel round (the verdict says)
            self.kspan.result["apart"] = True
        # the launcher kept no asm: compile the slowest kernels again (same source, Triton, config, target),
        # after the timing (its contention check is over)
        again.sort(key=lambda e: -(e[0].get("median_ms") or 0.0))
        for entry, fn, base, src in again[:stages_max()]:
            entry["stages"] = live_stages(fn, base, src)

    def cpu_kernel_rounds(self) -> dict[int, tuple[float, float, float]]:
        """CPU: call ``i``'s (median, p20, p80) in ms, from the window with the lowest median of its
        :data:`KERNEL_ROUNDS` windows (:func:`cpu_quantiles` over ``rep / KERNEL_ROUNDS`` ms each; the first round
        warms up 5 ms, later ones 1 ms), each round timing every kernel call in order, its OpenMP threads kept
        apart for a round after one they ended on one core (tracer.timing.contention.Apart); collectives are left out
        (:meth:`time_kernels` lists them).  Stops early when ``cancel`` is set; raises what a call raises."""
        from inductor_step.tracer.timing import contention  # noqa: PLC0415

        n = len(self.calls)
        windows: dict[int, list[tuple[float, float, float]]] = {}
        apart = contention.Apart()  # the OpenMP threads ended a round on one core: apart for the next
        try:
            for r in range(KERNEL_ROUNDS):
                with contention.Span() as span:
                    for i, (name, fn, a, k) in enumerate(self.calls):
                        if self.cancel is not None and self.cancel.is_set():
                            return {}
                        if adapter.collective_of(name) is not None:
                            continue
                        self.say(f"kernel {i + 1}/{n}, round {r + 1}/{KERNEL_ROUNDS}: {name}")
                        windows.setdefault(i, []).append(cpu_quantiles(self.b, lambda fn=fn, a=a, k=k: fn(*a, **k),
                                                                       warmup_ms=5 if r == 0 else 1,
                                                                       rep_ms=self.rep / KERNEL_ROUNDS))
                apart.after(span)
        finally:
            apart.release()
            self.kernels_apart = apart.times
        return {i: min(ws, key=lambda w: w[0]) for i, ws in windows.items()}

    def kernel_entry(self, i: int, name: str, fn: Callable, a: tuple, k: dict, call: int,
                     again: list[tuple[dict[str, Any], Any, str, str]]) -> dict[str, Any]:
        """Kernel call ``i`` (``name``'s ``call``-th) timed: its median and p20/p80, its time in the
        script's calls, its Triton launch config, its in-graph (or warm) time, then its roofs and stages
        (:meth:`roofs_and_stages`)."""
        base = name.split("#")[0]
        backend = "extern" if base.startswith(("extern_kernels", "torch.ops")) else self.backends.get(name, "?")
        med, lo, hi = self.cpu_times.get(i) or self.bench_q(lambda fn=fn, a=a, k=k: fn(*a, **k))
        entry: dict[str, Any] = {"name": name, "call": call, "backend": backend,
                                 "median_ms": med, "p20_ms": lo, "p80_ms": hi}
        if (name, call) in self.in_script:
            entry["in_script_ms"], entry["in_script_calls"] = self.in_script[(name, call)]
        if backend == "triton":
            launch = user_kernel_launch(self.sources.get(name, ""), a)
            if launch is not None:  # a user @triton.jit kernel: its grid, constexprs, num_warps
                entry["user_kernel"], entry["launch"] = True, launch
            cfg = self.script_configs.get(name) or {}
            if cfg.get("config"):
                entry["config"] = cfg["config"]
                if cfg.get("of"):
                    entry["configs_tried"] = cfg["of"]
                if cfg.get("tuned"):  # each candidate's benchmark time and the winner
                    entry["autotune_candidates"] = cfg["tuned"]
                entry["config_pinned"] = name in self.pinned
        if self.in_graph is not None:
            entry.update(self.in_graph[i])
        elif self.cuda:
            entry["warm_ms"] = self.bench_warm(fn, a, k)
        self.roofs_and_stages(entry, name, base, backend, fn, a, k, med, again)
        return entry

    def roofs_and_stages(self, entry: dict[str, Any], name: str, base: str, backend: str, fn: Callable,
                         a: tuple, k: dict, med: float, again: list[tuple[dict[str, Any], Any, str, str]]) -> None:
        """Add to a kernel's ``entry`` its bytes moved and GB/s (share of peak), FLOPs and roofline, a
        Triton kernel's resources and compile stages (TTIR ... SASS of the binary that ran; one whose
        launcher kept none goes to ``again``), a C++ kernel's disassembly (first calls only)."""
        peak, params, sources = self.peak, self.params, self.sources
        # an extern call's output comes as out=buf: its bytes are written too (the roofline)
        counted = a + tuple(v for v in k.values() if isinstance(v, torch.Tensor)) if backend == "extern" else a
        gb, gb_source = kernel_gb(name, backend, sources.get(name, ""), counted, params.get(name, []),
                                  (self.num_gb or {}).get(name))
        if gb is not None and med > 0:
            entry.update(gb=gb, gb_source=gb_source, gbps=gb / (med / 1e3))
            if peak.get("bw_gbps"):
                entry["pct_peak_bw"] = 100.0 * entry["gbps"] / peak["bw_gbps"]
        flops, dtype, op = op_flops(fn, a, k) if backend == "extern" else (None, None, None)
        if backend == "triton" and base.startswith("triton_tem_"):  # a template: FLOPs of the op it implements
            flops, dtype, op, entry["flops_source"] = template_flops(base, params.get(name, []), a)
        roofline(entry, peak, flops, dtype, op)
        if backend == "triton" and self.limits is not None:
            try:
                entry["resources"] = self.machine.kernel_resources(adapter.triton_binary_info(fn),
                                                                   params.get(name, []), a, self.limits)
            except Exception as e:  # noqa: BLE001
                entry["resources"] = {"missing": f"not read ({type(e).__name__}: {e})"}
            if entry["call"] == 1:  # TTIR ... SASS of the binary that ran, once per kernel
                src = sources.get(name) or sources.get(base, "")
                entry["stages"] = live_stages(fn, base, src, compile_again=False)
                if entry["stages"].get("compile_again"):
                    again.append((entry, fn, base, src))
        if backend == "cpp" and entry["call"] == 1:  # the compiled function, disassembled
            entry["stages"] = live_cpu_asm(fn, sources.get(name) or sources.get(base, ""))

    # ------------------------------------------------------------------ the result

    def result(self) -> dict[str, Any]:
        """The ``run`` result: the kernels with their shares, the figures and how each was taken
        (:meth:`baseline_fields`), whether the times settled (:func:`settled`), the subgraphs, memory."""
        kernels = self.kernels
        timed = [k for k in kernels if k["median_ms"] is not None]
        total = sum(k["median_ms"] for k in timed)
        for k in kernels:
            k["share"] = ((k["median_ms"] / total) if total else 0.0) if k["median_ms"] is not None else None
        out_extra: dict[str, Any] = collectives_summary(kernels, self.eager_stubbed)
        if timed and all(k.get("in_graph_ms") is not None for k in timed):
            out_extra["in_graph_sum_ms"] = sum(k["in_graph_ms"] for k in timed)
        if self.cuda:
            out_extra["in_script"] = self.in_script_status
        if self.replay is not None:
            out_extra["cudagraph_replay"] = self.replay
        out_extra["inputs"] = self.inputs
        out_extra["input_sizes"] = self.sizes
        out_extra.update(self.baseline_fields())
        if self.script_configs:
            tuned = sum(1 for c in self.script_configs.values() if (c.get("of") or 0) > 1)
            out_extra["configs"] = (f"{len(self.pinned)} of {len(self.script_configs)} Triton kernels timed with the "
                                    f"launch config the script's run autotuned to ({tuned} chose among several)")
        out_extra["graph_rounds"] = {k: v for k, v in self.graph_rounds.items()
                                     if k.endswith(("_rounds_ms", "_wait_shares", "_wait")) or k in ("rounds_stable", "load")}
        out_extra.update(settled(self.graph_rounds, self.compiled_ms, total, self.cuda,
                                 self.kspan.result if self.calls and not self.cuda else None))
        if self.subgraphs:
            out_extra["subgraphs"] = self.subgraphs
            out_extra["warnings"] = list(out_extra.get("warnings") or []) + [
                f"compiled_ms includes the subgraph function(s) {', '.join(self.subgraphs)} it calls; kernel_sum_ms "
                "and the kernels here are the graph's own (each subgraph's kernels are timed under its own key)"]
        out_extra["memory"] = self.measured_mem
        cuda = self.cuda
        return {**out_extra, "compiled_ms": self.compiled_ms, "eager_ms": self.eager_ms, "kernel_sum_ms": total,
                "kernels": kernels, "peak": self.peak, "roofs": self.roofs, "eager_nodes_ms": self.eager_nodes,
                "eager_nodes": self.eager_nodes_how, "cancelled": self.cancelled, "in_graph": self.in_graph_status,
                "in_graph_cupti": self.cupti_status,
                "method": "triton.testing.do_bench (median, L2 flushed)" if cuda else (
                    f"benchmarker.benchmark_cpu (median, 20-80% spread of the same calls; each kernel in {KERNEL_ROUNDS} "
                    "windows, one round over every kernel after another, the window with the lowest median kept)"),
                "threads": torch.get_num_threads(), "pid": os.getpid()}

    def baseline_fields(self) -> dict[str, Any]:
        """The result's fields about the baselines: the decomposed post-grad graph's time, how it ran
        and why it has none; how Dynamo's graph ran eagerly and why it has no time; foreach fixes made."""
        from inductor_step.tracer.timing.eager_user import DECOMPOSED_HOW  # noqa: PLC0415

        out: dict[str, Any] = {}
        eager_error = self.eager_error
        if self.eager_probe.get("note"):
            out["decomposed_note"] = self.eager_probe["note"]
        if self.decomposed_ms is None and eager_error is None:
            eager_error = self.eager_probe.get("note") or "its rounds failed (the post-grad graph raised while being timed)"
        out["decomposed_ms"] = self.decomposed_ms
        out["decomposed_how"] = DECOMPOSED_HOW
        if self.decomposed_ms is None:
            out["decomposed_error"] = f"decomposed post-grad graph not timed: {eager_error}"
        if self.user.get("how"):
            out["eager_how"] = self.user["how"]
        if self.eager_ms is None:
            out["eager_error"] = self.user.get("error") or "the eager rounds failed (Dynamo's graph raised while being timed)"
        if self.eager_fixes:
            out["eager_fixes"] = (f"{len(self.eager_fixes)} getitem node(s) of in-place foreach ops read the input "
                                  "they mutated (the in-place overload returns nothing when run eagerly)")
        return out

    # ------------------------------------------------------------------ benchmarking

    def bench_q(self, fn: Callable) -> tuple[float, float | None, float | None]:
        """(median, p20, p80) in ms: on CUDA ``triton.testing.do_bench`` (L2 flushed), on CPU the
        benchmarker's calls (:func:`cpu_quantiles`, ``rep`` ms)."""
        if self.cuda:
            from triton.testing import do_bench  # noqa: PLC0415

            q = do_bench(fn, warmup=25, rep=100, quantiles=[0.5, 0.2, 0.8])
            return float(q[0]), float(q[1]), float(q[2])
        return cpu_quantiles(self.b, fn, warmup_ms=5, rep_ms=self.rep)

    def bench(self, fn: Callable) -> float:
        """The median of :meth:`bench_q`, ms."""
        return self.bench_q(fn)[0]

    def bench_warm(self, fn: Callable, args: tuple, kwargs: dict) -> float | None:
        """GPU: median time with L2 warm and no launch overhead (``triton.testing.do_bench_cudagraph``:
        the call replayed inside a CUDA graph), which is what a profiler sees inside a running
        model; None where the call cannot be captured."""
        if not self.cuda or any(isinstance(x, torch.Tensor) and not x.is_cuda for x in args):
            return None  # a CPU operand (a philox seed) is read through a device pointer once captured
        try:
            from triton.testing import do_bench_cudagraph  # noqa: PLC0415

            def call() -> Any:
                kw = dict(kwargs)
                if "stream" in kw:  # the wrapper's stream handle: use the capturing stream instead
                    kw["stream"] = adapter.current_raw_stream()
                return fn(*args, **kw)

            return float(do_bench_cudagraph(call, rep=50, return_mode="median"))
        except Exception:  # noqa: BLE001
            try:
                torch.cuda.synchronize()
            except Exception:  # noqa: BLE001
                pass
            return None
