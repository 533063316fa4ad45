"""The agent's start: the hooks it installs on torch, its log handlers and the session's header line.

Each function takes the parts of the :class:`inductor_step.tracer.agent.Agent` it works with (the shared
:class:`tracer.agent_state.AgentState`, the capture, timing and CUDA-graph parts); :meth:`Agent.main` calls them in
this order, before the script runs.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import Any, Callable

from inductor_step.session import format as protocol
from inductor_step.tracer.agent_process import _nothing, _Quit
from inductor_step.tracer.capture import wants_trace_event


def torch_missing(state: Any) -> bool:
    """Whether torch cannot be imported here; if so the session says why on ``state``'s stream (a header without
    versions, an error and ``done`` with return code 2)."""
    try:
        import torch  # noqa: PLC0415
    except ImportError as e:
        msg = f"torch is not installed for {sys.executable} ({e}): pip install torch"
        state.send({"type": "header", "format": protocol.FORMAT, "torch": None, "triton": None,
                    "python": sys.version.split()[0], "device": None, "script": state.options.script,
                    "argv": state.options.argv})
        state.send({"type": "error", "stage": "script", "message": msg, "traceback": ""})
        state.send({"type": "done", "returncode": 2, "graphs": 0, "message": msg})
        return True
    del torch
    return False


def install_hooks(state: Any, capture: Any, cudagraphs: Any, timing: Any) -> list[str]:
    """Install every hook of ours on torch (the compile clock over ``state``, the capture part's custom passes and
    final hooks, the CUDA-graph part's, and the patched functions) and return their names, as the header lists
    them; sets ``state.final_hooks``, ``cudagraphs.recording_hook`` (CUDA) and ``timing.profile_script_calls``."""
    from inductor_step.tracer import adapter  # noqa: PLC0415
    from inductor_step.tracer.compile_time import install_clock  # noqa: PLC0415

    if os.environ.get("INDUCTOR_STEP_COMPILE_TIME", "on") == "off":  # measure its cost
        clock_hooks, ours = ["compile time: not measured (INDUCTOR_STEP_COMPILE_TIME=off)"], lambda fn: fn
    else:
        clock_hooks, ours = install_clock(state)
    cap = capture
    hooks = adapter.install_passes(ours(cap.on_pre_grad), ours(cap.on_post_grad_pre), ours(cap.on_post_grad_post),
                                   ours(cap.on_pre_fusion), ours(cap.on_post_fusion))
    final = adapter.install_final_hooks(ours(cap.on_lowered_graph), ours(cap.on_final_order))
    hooks += clock_hooks
    state.final_hooks = {h: True for h in final}
    hooks += final + adapter.install_kernel_args_hook() + adapter.install_subgraph_tracking()
    # torch.compile's arguments per compile, and Inductor's autotuning choices
    hooks += [h for h, ok in (("torch.compile arguments (_TorchCompileInductorWrapper.__init__)",
                               adapter.install_compile_args_hook()),
                              ("AlgorithmSelectorCache.__call__ (autotuning choices)",
                               adapter.install_autotune_hook()),
                              ("CachingAutotuner.benchmark_all_configs (Triton config candidates)",
                               adapter.install_triton_autotune_hook())) if ok]
    if str(state.device).startswith("cuda") and adapter.install_kernel_bytes_hook():
        hooks.append("TritonScheduling.define_kernel (bytes estimate)")
    if str(state.device).startswith("cuda"):  # mode="reduce-overhead": torch's reasons for skipping CUDA graphs
        adapter.install_cudagraph_log_hook(cudagraphs.on_cudagraph_skip)
        cudagraphs.recording_hook = adapter.install_recording_hook(cudagraphs.on_cudagraph_record)
    hooks += adapter.install_aoti_hook(capture.aoti.on_aoti_start, capture.aoti.on_aoti_done)
    from inductor_step.tracer import whatif_partition  # noqa: PLC0415

    hooks += whatif_partition.install(state)  # training graphs' joint graphs (activation_memory_budget what-ifs)
    return hooks + _install_patches(state, timing)


def _install_patches(state: Any, timing: Any) -> list[str]:
    """The patched functions around a compile and a call (the backend over ``state``, Dynamo's graph and the
    script's calls into the timing part, reset): the names of those installed."""
    from inductor_step.tracer import adapter, backends  # noqa: PLC0415

    hooks: list[str] = []
    if adapter.install_backend_hook(lambda gm, name: backends.on_backend_before(state, gm, name),
                                    lambda gm, name, err: backends.on_backend_after(state, gm, name, err)):
        hooks.append("OutputGraph.call_user_compiler (each graph's backend; other backends' graphs)")
    if adapter.install_dynamo_graph_hook(timing.on_dynamo_graph, timing.on_dynamo_graph_start):
        hooks.append("torch._inductor.compile_fx.compile_fx (Dynamo's graph and its first inputs: the run stage's eager)")
    if adapter.install_reset_hook():
        hooks.append("torch._dynamo.reset (compile ids after a reset carry @resetN)")
    if adapter.install_call_hook(lambda: bool(getattr(state.tl, "ours_calls", False))):
        hooks.append("OptimizeContext.__call__ (the script's compiled calls: the run stage's whole-call figure)")
    if adapter.install_graph_call_hook(timing.on_graph_call):
        hooks.append("CompiledFxGraph.__call__ (the script's inputs"
                     + (", its calls profiled" if timing.profiles_calls() else "") + ")")
        timing.profile_script_calls = timing.profiles_calls()
    return hooks


class TraceHandler(logging.Handler):
    """torch's structured trace into ``target()``, a capture part (tracer.capture.Capture, or None: the event is
    dropped), inside its state's compile clock's ``ours`` (no clock: as is).  No handler lock around emit: logging.Handler.handle holds it, a
    stop blocks inside emit, and the timing thread's own trace events would wait on that lock.  An error of ours is
    logged (``inductor_step`` logger, debug) and never raised into the compile; the UI's quit at a stop (_Quit) is."""

    def __init__(self, target: Callable[[], Any]):
        super().__init__()
        self.target = target

    def handle(self, record: logging.LogRecord) -> bool:
        self.emit(record)
        return True

    def emit(self, record: logging.LogRecord) -> None:
        capture = self.target()
        if capture is None:
            return
        try:
            with capture.state.clock.hold("ours") if capture.state.clock else _nothing():
                capture.on_trace(record)
        except _Quit:
            raise
        except Exception:  # noqa: BLE001
            logging.getLogger("inductor_step").debug("trace handler", exc_info=True)


class FusionHandler(logging.Handler):
    """The scheduler's fusion log (Inductor's reasons not to fuse) into ``target()``'s ``fusion.lines`` (an
    AgentState's) while its ``fusion.on`` (``target()`` None: dropped)."""

    def __init__(self, target: Callable[[], Any]):
        super().__init__()
        self.target = target

    def emit(self, record: logging.LogRecord) -> None:
        state = self.target()
        if state is not None and state.fusion.on:
            try:
                state.fusion.lines.append(record.getMessage())
            except Exception:  # noqa: BLE001
                pass


def add_log_handlers(capture: Any) -> None:
    """Attach the agent's handlers to torch's structured trace (every stage's event: the capture part's ``on_trace``)
    and to the scheduler's fusion logger (Inductor's reasons not to fuse, kept in its state while
    ``fusion.on``)."""
    from inductor_step.tracer import adapter  # noqa: PLC0415

    adapter.add_trace_handler(TraceHandler(lambda: capture), wants_trace_event)
    fl = adapter.fusion_logger()
    fl.addHandler(FusionHandler(lambda: capture.state))
    if not fl.isEnabledFor(logging.DEBUG):
        fl.setLevel(logging.DEBUG)
        fl.propagate = False


def header(state: Any, info: dict[str, Any], settings: Any, hooks: list[str], caches: bool) -> dict[str, Any]:
    """The session's header line: versions and device (``info``: adapter.versions), ``state``'s script, the settings we
    changed, the hooks installed, Inductor's settings now, and a torchrun rank's part (whose process groups are
    watched from here on)."""
    from inductor_step.tracer import adapter  # noqa: PLC0415

    head = {"type": "header", "format": protocol.FORMAT, "torch": info["torch"], "triton": info["triton"],
            "python": sys.version.split()[0], "device": info["device"],
            "device_name": info.get("device_name"), "cuda": info.get("cuda"),
            "script": state.options.script, "argv": state.options.argv, "cwd": os.getcwd(), "pid": os.getpid(),
            "time": time.time(),
            "settings": settings, "hooks": hooks, "inductor_settings": adapter.inductor_settings(),
            "note": ("Inductor's caches were left on (--caches on): a cache hit skips the stages after it; "
                     if caches else "FX-graph and AOTAutograd caches are off inside the agent so every stage "
                                    "is captured; ")
                    + "inductor_settings were read before the script ran (torch.compile's mode and options "
                    "patch them per compile): each graph's own are its dynamo stop's compiled_with"}
    if state.options.distributed is not None:
        from inductor_step.tracer.adapter import distributed  # noqa: PLC0415

        d = state.options.distributed
        note = distributed.watch_process_groups(d.get("collective_timeout_s"), state.send)
        role = ("steps at every stop" if d.get("stepped_rank") == d["rank"] else
                f"records every stop without pausing (the UI steps rank {d['stepped_rank']})"
                if d.get("stepped_rank") is not None else "records every stop without pausing")
        d["note"] = f"rank {d['rank']} of {d['world_size']}: {role}" + (f"; {note}" if note else "")
        head["distributed"] = d
    return head
