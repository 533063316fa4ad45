"""The agent's timing part: the script's calls of each compiled graph (inputs kept, calls profiled), Dynamo's graphs for
the eager baseline, and the ``run`` requests served on their own threads (:class:`tracer.agent.Agent`'s ``timing``)."""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
import traceback
from typing import Any, Callable, Iterator

from inductor_step.session import format as protocol
from inductor_step.tracer.cudagraph_record import EVENT_CALLS
from inductor_step.tracer.subgraphs import root_kind

PROFILE_CALLS = 10  # the script's calls 2..11 of each graph run under torch.profiler (see TimingRequests.on_graph_call)


def _read(path: str | None) -> str:
    """A file's text, or "" where it cannot be read (missing, or not text: an AOTInductor ``.pt2`` package
    is a zip, whose bytes raise UnicodeDecodeError, a ValueError)."""
    try:
        with open(path or "", encoding="utf-8") as f:
            return f.read()
    except (OSError, ValueError):
        return ""



def timing_scalars(inputs: list) -> tuple[dict[int, Any], dict[int, str]]:
    """``({position: value}, {position: why it stays here})`` of a compiled graph call's arguments that are not
    tensors (a dynamic size: an int, or a ``torch.SymInt`` read as its int); tracer.timing.harness.script_args
    builds the arguments from them where the output module's ``get_args()`` fails.  A value that cannot leave
    this process (a jagged NestedTensor's nested int ``j0``, which has no int) is kept as it is, and named in
    the second dict: such a graph is timed in the agent's own process."""
    import pickle  # noqa: PLC0415

    import torch  # noqa: PLC0415

    out: dict[int, Any] = {}
    stays: dict[int, str] = {}
    for i, v in enumerate(inputs):
        if isinstance(v, torch.Tensor):
            continue
        try:
            if isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool)):
                v = {torch.SymInt: int, torch.SymFloat: float, torch.SymBool: bool}[type(v)](v)
            pickle.dumps(v)
        except Exception as e:  # noqa: BLE001
            stays[i] = (f"argument {i} is {v!r} ({type(v).__name__}"
                        + (", a jagged NestedTensor's nested int" if "NestedInt" in f"{type(e).__name__}: {e}" else "")
                        + "), which cannot be sent to a timing process")
        out[i] = v
    return out, stays


def script_record(script_calls: dict[str, dict[str, Any]], g: dict[str, Any],
                  orig: dict[str, Any] | None) -> dict[str, Any] | None:
    """What timing gets of the script's own calls of graph ``g`` (from ``script_calls``, AgentState's: output module
    key -> the calls TimingRequests.on_graph_call saw); for a what-if variant (``orig``: its
    original) only its original's first-call inputs: the script never called the variant, and the
    original's autotuned launch configs and profiles belong to the original's kernels."""
    from inductor_step.tracer import adapter  # noqa: PLC0415

    rec = script_calls.get(adapter.output_module_key((orig or g)["output_path"]))
    if orig is None and rec is not None:  # CUDA events stay here; the timing process learns whether CUDA graphs are on
        return {**{k: v for k, v in rec.items() if k != "call_events"},
                "cudagraphs": bool((g.get("cudagraphs") or {}).get("enabled"))}
    if orig is None or rec is None:
        return rec
    return {"calls": 0, "inputs": rec.get("inputs") or {}, "profiles": [], "configs": {},
            "status": "a what-if variant: the script never called it (its original's first-call inputs are used)"}


class TimingRequests:
    """The agent's timing part, over the shared :class:`tracer.agent_state.AgentState` (``graphs``,
    ``script_calls``, ``send``, ``tl``, ``device``, the options): the script's calls of each compiled graph
    (:meth:`on_graph_call`: inputs kept, calls profiled), Dynamo's graphs kept for the eager baseline
    (:meth:`on_dynamo_graph`) and the ``run`` requests (:meth:`run_all`), one at a time (``run_lock``;
    ``c`` sets ``cancel_run`` and counts in ``cancel_gen``).  ``cudagraphs`` is the CUDA-graph part
    (tracer.cudagraph_record), ``subgraph_runs`` gives a graph's subgraphs' ``run`` messages
    (tracer.subgraphs) and ``on_numerics_call`` is told of a graph's first call while numerics waits for
    it (tracer.numerics_run).  Every method runs in the agent process, which imports torch."""

    def __init__(self, state: Any, cudagraphs: Any, subgraph_runs: Callable[..., list[dict]],
                 on_numerics_call: Callable[[str], None]):
        self.state = state  # tracer.agent_state.AgentState
        self.cudagraphs = cudagraphs  # tracer.cudagraph_record.CudagraphRecord
        self.subgraph_runs = subgraph_runs
        self.on_numerics_call = on_numerics_call
        self.run_lock = threading.Lock()
        self.cancel_run = threading.Event()
        self.run_waiting = 0  # timing requests waiting for the one in progress (_wait_for_run_lock)
        self.cancel_gen = 0  # `c` commands so far: a waiting request is cancelled by one sent after it
        self.run_active = False  # a timing run holds run_lock and has not sent its last status yet
        self.profile_script_calls = False  # calls 2..11 of each graph run under torch.profiler (CUDA)
        # frame key ("[0/0]", "[4/0] #2") -> (Dynamo's GraphModule, its first call's inputs): the eager
        # the run stage times (tracer.adapter.dynamo_graph, tracer.timing.eager_user)
        self.dynamo_graphs: dict[str, tuple[Any, Any]] = {}
        self.compiling_dynamo: dict[str, tuple[Any, Any]] = {}  # compile id -> the Dynamo graph compile_fx is on

    def profiles_calls(self) -> bool:
        """Profile the script's calls (CUDA only, and only when timing may be asked for)."""
        opts = self.state.options
        return str(self.state.device).startswith("cuda") and (opts.run_at_end or opts.serve) \
            and os.environ.get("INDUCTOR_STEP_PROFILE_CALLS", "1") != "0"

    def on_graph_call(self, key: str, inputs: list, run: Any) -> Any:
        """The script calls a compiled graph (tracer.adapter.install_graph_call_hook).

        First call: its tensor inputs are kept for timing (tracer.timing.script_inputs: the honest
        inputs; random ones can crash a kernel), and so is the launch config each Triton kernel autotuned to (timing then
        runs the kernel with that config; see tracer.adapter.pin_configs).  Calls 2 to ``1 + PROFILE_CALLS``, on CUDA when timing was asked for: each runs
        under torch.profiler (CUPTI), so the run pane can show every kernel's time inside the
        script's own run (L2 and clocks as the model leaves them); see tracer.timing.script_times.
        """
        from inductor_step.tracer import adapter, timing  # noqa: PLC0415

        if getattr(self.state.tl, "ours_calls", False):  # the run stage's whole-call figure (tracer.timing.script_call)
            return run()
        adapter.note_graph(key)
        rec = self.state.script_calls.setdefault(key, {"calls": 0, "inputs": {}, "profiles": [], "status": None,
                                                       "configs": {}})
        rec["calls"] += 1
        real_run = run

        def run() -> Any:  # noqa: F811 - the same call, with the graph known to a cudagraph skip message
            self.state.tl.calling = key
            try:
                return real_run()
            finally:
                self.state.tl.calling = None
        if rec["calls"] == 1:
            try:
                rec["inputs"] = timing.script_inputs(inputs)
                # ints and floats (a dynamic size's value): timing builds the arguments from them where the
                # output module's get_args() fails (tracer.timing.harness.script_args)
                rec["scalars"], rec["scalars_stay"] = timing_scalars(inputs)
                rec["n_inputs"] = len(inputs)
            except Exception as e:  # noqa: BLE001 - never in the script's way
                rec["status"] = f"inputs not kept ({type(e).__name__}: {e})"
            try:
                counts = adapter.kernel_config_counts(key)
                adapter.reset_triton_autotuned()
            except Exception:  # noqa: BLE001
                counts = {}
            out = run()
            if self.state.numerics_waiting:  # e pressed before this call: compare now
                self.on_numerics_call(key)
            try:  # the launch config each Triton kernel autotuned to in this first call
                rec["configs"] = {n: {"config": c, "of": counts.get(n), "tuned": adapter.triton_autotuned(n)}
                                  for n, c in adapter.autotuned_configs(key).items()}
            except Exception:  # noqa: BLE001 - never in the script's way
                pass
            return out
        if self.profile_script_calls and 1 + PROFILE_CALLS < rec["calls"] <= 1 + PROFILE_CALLS + EVENT_CALLS:
            return self.cudagraphs.timed_call(rec, run)  # the script's call as the GPU sees it (CUDA graphs replayed, say)
        if not self.profile_script_calls or rec["calls"] > 1 + PROFILE_CALLS or rec["status"] is not None:
            return run()
        if self.run_lock.locked():  # a timing run is on (``r`` while the script runs): it has CUPTI detached
            return run()            # (TEARDOWN_CUPTI set), and both would share the GPU anyway
        if adapter.profiler_active():
            rec["status"] = "the script runs its own profiler; its calls were not profiled"
            return run()
        state: dict[str, Any] = {}

        def go() -> None:
            state["started"] = True
            state["out"] = run()

        try:
            adapter.synchronize()  # kernels the script queued before this call stay out of the window
            state["records"] = adapter.cuda_kernel_records(go, cpu_ops=True)
        except BaseException as e:  # noqa: BLE001
            if "out" in state:
                rec["status"] = f"profiler failed ({type(e).__name__}: {e})"
                return state["out"]
            if state.get("started"):
                raise  # the script's own call failed: its error, raised once
            rec["status"] = f"profiler unavailable ({type(e).__name__}: {e})"
            return run()
        rec["profiles"].append(state["records"])
        return state["out"]

    def on_dynamo_graph(self, gm: Any, first_call: Any) -> None:
        """compile_fx compiled Dynamo's graph ``gm`` (tracer.adapter.install_dynamo_graph_hook): kept under its
        frame key (``"[0/0]"``, a DDPOptimizer part's ``"[4/0] #2"``), with ``first_call()`` giving the script's
        inputs of its first call, for the run stage's eager (tracer.timing.eager_user)."""
        from inductor_step.tracer import adapter  # noqa: PLC0415

        cid = adapter.current_compile_id()
        key = self.state.frame(cid).get("cur") or cid
        self.dynamo_graphs[key] = (gm, first_call)

    def on_dynamo_graph_start(self, gm: Any, first_call: Any) -> None:
        """compile_fx started on Dynamo's graph ``gm``: kept as the graph being compiled under its compile id, for a
        graph of this compile timed while its compile is paused (``r`` at the codegen stop), before
        :meth:`on_dynamo_graph` keys it by its part."""
        from inductor_step.tracer import adapter  # noqa: PLC0415

        self.compiling_dynamo[adapter.current_compile_id()] = (gm, first_call)

    def dynamo_eager(self, cid: str, kind: str) -> dict[str, Any]:
        """What graph ``(cid, kind)`` is timed against as eager (tracer.timing.eager_user.user_eager's ``dyn``):
        the Dynamo graph of its compile id (and DDPOptimizer part), its first-call inputs, grad mode then, and
        ``mode`` (``inference``, ``forward`` with grad, ``backward``: autograd's backward of it); else
        ``{"missing": why}``.  A what-if variant's is its original's (the same script code)."""
        base = protocol.GraphKey.parse_kind(kind).kind
        entry = self.dynamo_graphs.get(self.state.frame_key(cid, kind))
        if entry is None and base != "backward" and (self.state.current or ("",))[0] == cid:
            entry = self.compiling_dynamo.get(cid)  # paused inside its own compile: Dynamo's example inputs
        if entry is None:
            return {"missing": f"Dynamo's graph of {cid} was not captured (it reaches the run stage when torch.compile "
                               "hands it to Inductor's compile_fx)"}
        gm, first_call = entry
        seen = first_call() or {}
        example = not seen.get("called") and "example" in seen
        if example:  # timed inside its compile, before any call: Dynamo's example inputs, copied now
            from inductor_step.tracer import adapter  # noqa: PLC0415

            seen = adapter.example_call(seen)
        if not seen:
            return {"missing": "the script never called this compiled graph, so Dynamo's graph has no real inputs to "
                               "run on"}
        if seen.get("inputs") is None:
            return {"missing": f"Dynamo's graph's inputs were not kept ({seen.get('how')})"}
        outputs = next((len(n.args[0]) if isinstance(n.args[0], (list, tuple)) else 1
                        for n in gm.graph.nodes if n.op == "output"), None)
        return {"gm": gm, "inputs": seen["inputs"], "grad_enabled": seen.get("grad_enabled"), "how": seen.get("how"),
                "grad_used": set(seen.get("grad_used") or ()), "outputs": outputs, "example": example,
                "mode": base if base in ("forward", "backward") else "inference"}

    # ------------------------------------------------------------------ run
    def run_all(self, only: str | list[str] | None = None) -> None:
        """Time every compiled graph (or the one named ``"[0/0] forward"``, or those listed); one run message each.

        Runs on a worker thread, so no compile-thread state (fake modes, V.graph) is active.
        """
        with self.one_run() as held:
            if not held:
                return
            todo = [(k, g) for k, g in self.state.graphs.items() if g.get("output_path")]
            if only:
                # a subgraph is timed with the graph that calls it (tracer.subgraphs)
                names = [root_kind(n) for n in ([only] if isinstance(only, str) else only)]
                todo = [(k, g) for k, g in todo if f"{k[0]} {k[1]}" in names]
            if not todo:
                self.run_done(protocol.RunStatus.finished("no compiled graph to time yet (codegen not reached)"))
                return
            # each run's graphs are timed in a fresh worker process, where the script's profiled calls left nothing;
            # the worker detaches CUPTI before each graph after the first (timing.cupti_detached) and says so in
            # the run's ``cupti``, which replaces this one
            cupti = ("CPU: not applicable" if not str(self.state.device).startswith("cuda") else
                     "not attached: timed in a fresh process, where no earlier profiler session left CUPTI attached")
            self._time_graphs(todo, cupti)

    @contextlib.contextmanager
    def one_run(self) -> Iterator[bool]:
        """One timing request's hold of the timing lock (:meth:`wait_for_run_lock`), ``cancel_run`` cleared and
        ``run_active`` set inside; yields False, holding nothing, where ``c`` cancelled it while it waited.  Every
        timing request (``r``, a what-if's, tracer.pair_timing's) runs inside one."""
        if not self.wait_for_run_lock():
            yield False
            return
        self.cancel_run.clear()
        self.run_active = True
        try:
            yield True
        finally:
            self.run_active = False
            self.run_lock.release()

    def run_done(self, status: protocol.RunStatus) -> None:
        """Send a timing run's last status (``done``: :meth:`RunStatus.finished`): from here on `c` finds nothing to
        cancel."""
        self.run_active = False
        self.state.send(status.to_message())

    #: a step of a loop (the same text but for its numbers: ``kernel 2/5, round 1/5``, a window every ~14 ms on
    #: the CPU) is sent at most this often, s: each is a message the app redraws for, and on a 2-core box those
    #: redraws took the timing threads' cores (the kernels waited for a core 23% of the time in the app against
    #: 1.8% headless; BENCHMARKS.md "Session 41 on the CPU").  The worker still reports every step to this
    #: process, where a crash names the kernel it was in (tracer.timing.isolate).
    PROGRESS_EVERY_S = 0.25
    _said: tuple[str, float] = ("", 0.0)

    def say(self, text: str, limit_s: float | None = None) -> None:
        """Send a timing run's progress (a ``run_status`` message, :meth:`RunStatus.progress`: ``text``, and the
        per-graph limit ``limit_s`` on the one that starts a graph); a loop's next step only when the last one
        sent is :attr:`PROGRESS_EVERY_S` old."""
        step, now = _loop_step(text), time.monotonic()
        if limit_s is None and step == self._said[0] and now - self._said[1] < self.PROGRESS_EVERY_S:
            return
        self._said = (step, now)
        self.state.send(protocol.RunStatus.progress(text, limit_s).to_message())

    def wait_for_run_lock(self) -> bool:
        """Take the timing lock; a request made while another timing run is on (a what-if's own, or
        ``r`` twice) waits for it, saying so, instead of being dropped: every request ends with a
        ``done`` status.  False (and a ``done``, ``cancelled`` status sent) when ``c`` came first."""
        if self.run_lock.acquire(blocking=False):
            return True
        gen = self.cancel_gen  # only a `c` sent after this request cancels it
        self.run_waiting += 1
        try:
            self.say("waiting for the timing run in progress to end (c cancels both)")
            while not self.run_lock.acquire(timeout=0.1):
                if self.cancel_gen != gen:
                    break
            else:
                if self.cancel_gen == gen:
                    return True
                self.run_lock.release()
        finally:
            self.run_waiting -= 1
        self.state.send(protocol.RunStatus.finished("timing cancelled before it started", cancelled=True).to_message())
        return False

    def _time_graphs(self, todo: list, cupti: str) -> None:
        """run_all's loop: one ``run`` message per graph of ``todo`` (``((compile id, kind), graph)``).

        Each graph is timed in a worker process (tracer.timing.isolate.TimingWorker): a graph whose
        timing raises or crashes the worker gets a ``run`` message with ``error`` (``timing [1/0]
        backward crashed: SIGSEGV in aten....``), ``failed: True`` and, for a crash, ``crashed`` and
        ``signal``; the next graph gets a fresh worker.  The last ``run_status`` (``done: True``)
        counts them: ``timed``, ``failed`` (a list of ``"[1/0] backward"`` keys) and ``of``.
        """
        from inductor_step.tracer.timing.isolate import TimingFailed, TimingWorker  # noqa: PLC0415

        calls = self._script_call_figures(todo)
        worker = TimingWorker()
        failed: list[str] = []
        timed = 0
        try:
            for i, ((cid, kind), g) in enumerate(todo):
                if self.cancel_run.is_set():
                    self.run_done(protocol.RunStatus.finished(f"timing cancelled after {i} of {len(todo)} graph(s)",
                                                              timed, failed, len(todo), cancelled=True))
                    return
                where = f"timing {cid} {kind} ({i + 1}/{len(todo)})"
                limit = self.state.options.timing_limit_s
                self.say(f"{where}: starting (limit {limit:g} s per graph)", limit)
                msg: dict[str, Any] = {"type": "run", "compile_id": cid, "graph_kind": kind,
                                       "device": g.get("device", "cpu"), "cupti": cupti}
                kw = self._timing_kwargs(cid, kind, g, where)
                msg["limit_s"] = limit
                try:
                    self._time_graph(worker, cid, kind, g, msg, kw)
                    timed += 1
                except TimingFailed as e:
                    if e.cancelled:
                        self.run_done(protocol.RunStatus.finished(
                            f"timing cancelled during {cid} {kind} ({e.reason}); {timed} of {len(todo)} graph(s) timed",
                            timed, failed, len(todo), cancelled=True))
                        return
                    msg.update(error=f"timing {cid} {kind} {e.reason}" if e.crashed else e.reason,
                               traceback=e.detail, failed=True, crashed=e.crashed)
                    if e.reason.startswith("timed out"):
                        msg["timed_out"] = True
                    if e.signal:
                        msg["signal"] = e.signal
                    failed.append(f"{cid} {kind}")
                except Exception as e:  # noqa: BLE001 - the worker could not be started or spoken to
                    msg.update(error=f"{type(e).__name__}: {e}", traceback=traceback.format_exc(), failed=True)
                    failed.append(f"{cid} {kind}")
                if calls.get(f"{cid} {kind}"):
                    msg["script_call"] = calls[f"{cid} {kind}"]
                self._send_run(cid, kind, g, msg, failed)
        finally:
            worker.close()
        text = f"timed {timed} of {len(todo)} graph(s)" + (f"; {len(failed)} failed: {', '.join(failed)}" if failed else "")
        self.run_done(protocol.RunStatus.finished(text, timed, failed, len(todo)))

    def _timing_kwargs(self, cid: str, kind: str, g: dict[str, Any], where: str) -> dict[str, Any]:
        """The keyword arguments graph ``(cid, kind)`` is timed with (worker and in-process alike): the cancel event,
        the limit, bytes, a what-if variant's original to compare with, the script's calls and a progress line."""
        from inductor_step.tracer.whatif import random_ops  # noqa: PLC0415

        # a what-if variant: its original
        orig = self.state.graphs.get(self.state.variants.original.get((cid, kind), ("", "")))
        compare = ({"original_path": orig["output_path"], "eager_gm": orig.get("gm"),
                    "random_ops": random_ops(orig["gm"]) if orig.get("gm") is not None else []}
                   if orig and orig.get("output_path") else None)
        return dict(cancel=self.cancel_run, timeout_s=self.state.options.timing_limit_s, num_gb=g.get("num_gb"),
                    compare=compare, script=script_record(self.state.script_calls, g, orig if compare else None),
                    progress=lambda text, where=where: self.say(f"{where}: {text}"))

    def _time_graph(self, worker: Any, cid: str, kind: str, g: dict[str, Any], msg: dict[str, Any],
                    kw: dict[str, Any]) -> None:
        """Time graph ``(cid, kind)`` against its eager (Dynamo's graph) into ``msg``: in ``worker``'s process, or in
        this one where a fresh process cannot rebuild the graph or be sent Dynamo's.  Raises TimingFailed."""
        from inductor_step.tracer import adapter  # noqa: PLC0415
        from inductor_step.tracer.timing.inprocess import (  # noqa: PLC0415
            in_process_reason, needs_this_process, time_in_process)
        from inductor_step.tracer.timing.eager_user import sendable_reason  # noqa: PLC0415
        from inductor_step.tracer.timing.isolate import TimingFailed  # noqa: PLC0415

        dyn = self.dynamo_eager(cid, kind)
        kw["dynamo"] = dyn
        # a graph a fresh process cannot rebuild (script-defined ops, opaque frozen weights) is
        # timed here instead (tracer.timing.inprocess)
        here = in_process_reason(g["output_path"], g.get("gm"))
        stays = (kw["script"] or {}).get("scalars_stay") or {}
        if here is None and stays:  # a jagged graph's nested int has no int to send
            here = f"timed in the agent's own process: {next(iter(stays.values()))}"
        sent = dyn
        why_not = None if here is not None else sendable_reason(dyn)
        if why_not and dyn.get("gm") is not None:  # higher-order ops: pickled node by node, no re-trace
            sent = {**dyn, "gm": adapter.portable_graph_module(dyn["gm"])}
            why_not = sendable_reason(sent) if sent["gm"] is not dyn["gm"] else why_not
        if why_not:  # eager is Dynamo's graph; where it cannot be sent, time here
            here = (f"timed in the agent's own process: Dynamo's graph (the eager baseline) cannot be sent "
                    f"to a timing process ({why_not})")
        if here is None:
            try:
                msg.update(worker.time(  # (a graph with higher-order ops: sent without a re-trace)
                    g["output_path"], adapter.portable_graph_module(g.get("gm")), g.get("device", "cpu"),
                    **{**kw, "dynamo": sent}))
            except TimingFailed as e:
                if e.crashed or e.cancelled or not needs_this_process(e.reason):
                    raise
                here = f"timed in the agent's own process: a timing process could not rebuild it ({e.reason})"
        if here is not None:
            msg.update(time_in_process(g["output_path"], g.get("gm"), g.get("device", "cpu"), here, **kw))

    def _send_run(self, cid: str, kind: str, g: dict[str, Any], msg: dict[str, Any], failed: list[str]) -> None:
        """Send graph ``(cid, kind)``'s ``run`` message (on CUDA with its CUDA graphs' part), then its subgraphs'
        own, each under its own key; a failed subgraph's key is added to ``failed``."""
        from inductor_step.tracer import adapter  # noqa: PLC0415

        subs = msg.pop("subgraphs", None)
        if str(msg.get("device", "")).startswith("cuda"):
            okey = adapter.output_module_key(g["output_path"])
            cg = self.cudagraphs.run_info(g, self.state.script_calls.get(okey), _read(g["output_path"]), okey)
            replay = msg.get("cudagraph_replay") or {}
            if replay.get("replay_ms") is not None and msg.get("compiled_ms"):
                cg["replay_ms"] = replay["replay_ms"]  # the launch overhead CUDA graphs remove
                cg["launch_overhead_ms"] = msg["compiled_ms"] - replay["replay_ms"]
                cg["replay_how"] = replay.get("how")  # the whole call, or partition by partition
            msg["cudagraphs"] = cg
        self.state.send(msg)
        for sub in self.subgraph_runs(cid, kind, msg, subs):  # tracer.subgraphs: each under its own key
            label = str(protocol.GraphKey.of(sub))  # before send moves the subgraph out of its kind
            self.state.send(sub)
            if sub.get("failed"):
                failed.append(label)

    def _script_call_figures(self, todo: list) -> dict[str, dict[str, Any]]:
        """``{"[0/0] forward": figure}``: the script's compiled calls that ran the graphs of ``todo``, each timed
        whole against ``force_eager`` (tracer.timing.script_call), in this process and on this thread, whose
        calls the graph-call hook leaves alone.  Before the script has returned, or on a rank of a torchrun
        job, each says why it is missing instead."""
        from inductor_step.tracer import adapter  # noqa: PLC0415
        from inductor_step.tracer.timing import script_call  # noqa: PLC0415
        from inductor_step.tracer.timing.ingraph import cupti_detached  # noqa: PLC0415

        labels_of = {adapter.output_module_key(g["output_path"]): f"{k[0]} {k[1]}" for k, g in todo}
        missing = ("not taken in a torchrun job: a rank's extra calls would run collectives the other ranks do not"
                   if self.state.options.distributed is not None else None if self.state.script_done else
                   "taken once the script has returned (its call cannot be repeated while the script runs or from "
                   "inside a paused compile): press r again then")
        cuda = str(self.state.device).startswith("cuda")
        if missing is None:
            self.say("timing the script's compiled calls, whole, against torch.compiler.set_stance(\"force_eager\")")
        self.state.tl.ours_calls = True
        try:
            if missing is not None:
                return script_call.figures(list(adapter.CALLABLES), labels_of, cuda,
                                           script_call.cpu_bench(), missing=missing)
            # the script's calls 2-11 ran under torch.profiler in this process, which leaves CUPTI attached: every
            # launch of the repeated calls would pay its callbacks (a launch-bound ResNet forward read 1.6x plain)
            # on the script's main thread (tracer.main_thread): where the script made its calls
            from inductor_step.tracer.main_thread import WORK  # noqa: PLC0415

            def take() -> dict[str, dict[str, Any]]:
                self.state.tl.ours_calls = True  # on the thread that repeats the calls: the call hook leaves them be
                try:
                    return script_call.figures(list(adapter.CALLABLES), labels_of, cuda,
                                               script_call.cpu_bench())
                finally:
                    self.state.tl.ours_calls = False

            with cupti_detached(str(self.state.device)) as cupti:
                figs = WORK.call(take)
            for fig in figs.values():
                fig.setdefault("cupti", cupti)
            return figs
        except Exception as e:  # noqa: BLE001 - never in the way of the per-graph figures
            return {label: {"name": "the script's call", "missing": f"not timed ({type(e).__name__}: {e})"}
                    for label in labels_of.values()}
        finally:
            self.state.tl.ours_calls = False


def _loop_step(text: str) -> str:
    """What a progress line says without its numbers and what follows its last colon (a kernel's name): the lines of
    one loop (``[0/0] forward (1/1): kernel 2/5, round 1/5: cpp_fused_gelu_1``) read the same."""
    head = text.rsplit(": ", 1)[0] if text.count(": ") > 1 else text
    return re.sub(r"\d+", "#", head)
