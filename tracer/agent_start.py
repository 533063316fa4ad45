"""The agent's start: the hooks it installs on torch, its log handlers and the session's header line.

Each function takes the :class:`inductor_step.tracer.agent.Agent` it works for; :meth:`Agent.main` calls them in
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


def torch_missing(agent: Any) -> bool:
    """Whether torch cannot be imported here; if so the session says why (a header without versions, an error
    and ``done`` with return code 2)."""
    try:
        import torch  # noqa: PLC0415
    except ImportError as e:
        msg = f"torch is not installed for {sys.executable} ({e}): pip install torch"
        agent.state.send({"type": "header", "format": protocol.FORMAT, "torch": None, "triton": None,
                          "python": sys.version.split()[0], "device": None, "script": agent.state.script,
                          "argv": agent.state.argv})
        agent.state.send({"type": "error", "stage": "script", "message": msg, "traceback": ""})
        agent.state.send({"type": "done", "returncode": 2, "graphs": 0, "message": msg})
        return True
    del torch
    return False


def install_hooks(agent: Any) -> list[str]:
    """Install every hook of ours on torch (the compile clock, the custom passes, the final hooks and the
    patched functions) and return their names, as the header lists them; sets ``agent.state.final_hooks``,
    ``agent.cudagraphs.recording_hook`` (CUDA) and ``agent.timing.profile_script_calls``."""
    from inductor_step.tracer import adapter  # noqa: PLC0415
    from inductor_step.tracer.compile_time import install_clock  # noqa: PLC0415

    if os.environ.get("INDUCTOR_STEP_COMPILE_TIME", "on") == "off":  # measure its cost
        clock_hooks, ours = ["compile time: not measured (INDUCTOR_STEP_COMPILE_TIME=off)"], lambda fn: fn
    else:
        clock_hooks, ours = install_clock(agent.state)
    cap = agent.capture
    hooks = adapter.install_passes(ours(cap.on_pre_grad), ours(cap.on_post_grad_pre), ours(cap.on_post_grad_post),
                                   ours(cap.on_pre_fusion), ours(cap.on_post_fusion))
    final = adapter.install_final_hooks(ours(cap.on_lowered_graph), ours(cap.on_final_order))
    hooks += clock_hooks
    agent.state.final_hooks = {h: True for h in final}
    hooks += final + adapter.install_kernel_args_hook() + adapter.install_subgraph_tracking()
    # torch.compile's arguments per compile, and Inductor's autotuning choices
    hooks += [h for h, ok in (("torch.compile arguments (_TorchCompileInductorWrapper.__init__)",
                               adapter.install_compile_args_hook()),
                              ("AlgorithmSelectorCache.__call__ (autotuning choices)",
                               adapter.install_autotune_hook()),
                              ("CachingAutotuner.benchmark_all_configs (Triton config candidates)",
                               adapter.install_triton_autotune_hook())) if ok]
    if str(agent.state.device).startswith("cuda") and adapter.install_kernel_bytes_hook():
        hooks.append("TritonScheduling.define_kernel (bytes estimate)")
    if str(agent.state.device).startswith("cuda"):  # mode="reduce-overhead": torch's reasons for skipping CUDA graphs
        adapter.install_cudagraph_log_hook(agent.cudagraphs.on_cudagraph_skip)
        agent.cudagraphs.recording_hook = adapter.install_recording_hook(agent.cudagraphs.on_cudagraph_record)
    hooks += adapter.install_aoti_hook(agent.capture.aoti.on_aoti_start, agent.capture.aoti.on_aoti_done)
    from inductor_step.tracer import whatif_partition  # noqa: PLC0415

    hooks += whatif_partition.install(agent)  # training graphs' joint graphs (activation_memory_budget what-ifs)
    return hooks + _install_patches(agent)


def _install_patches(agent: Any) -> list[str]:
    """The patched functions around a compile and a call (the backend, Dynamo's graph, reset, the script's
    calls): the names of those installed."""
    from inductor_step.tracer import adapter, backends  # noqa: PLC0415

    hooks: list[str] = []
    if adapter.install_backend_hook(lambda gm, name: backends.on_backend_before(agent.state, gm, name),
                                    lambda gm, name, err: backends.on_backend_after(agent.state, gm, name, err)):
        hooks.append("OutputGraph.call_user_compiler (each graph's backend; other backends' graphs)")
    if adapter.install_dynamo_graph_hook(agent.timing.on_dynamo_graph, agent.timing.on_dynamo_graph_start):
        hooks.append("torch._inductor.compile_fx.compile_fx (Dynamo's graph and its first inputs: the run stage's eager)")
    if adapter.install_reset_hook():
        hooks.append("torch._dynamo.reset (compile ids after a reset carry @resetN)")
    if adapter.install_call_hook(lambda: bool(getattr(agent.state.tl, "ours_calls", False))):
        hooks.append("OptimizeContext.__call__ (the script's compiled calls: the run stage's whole-call figure)")
    if adapter.install_graph_call_hook(agent.timing.on_graph_call):
        hooks.append("CompiledFxGraph.__call__ (the script's inputs"
                     + (", its calls profiled" if agent.timing.profiles_calls() else "") + ")")
        agent.timing.profile_script_calls = agent.timing.profiles_calls()
    return hooks


class TraceHandler(logging.Handler):
    """torch's structured trace into the capture part of ``target()`` (an Agent, or None: the event is dropped), inside
    its compile clock's ``ours`` (no clock: as is).  No handler lock around emit: logging.Handler.handle holds it, a
    stop blocks inside emit, and the timing thread's own trace events would wait on that lock.  An error of ours is
    logged (``inductor_step`` logger, debug) and never raised into the compile; the UI's quit at a stop (_Quit) is."""

    def __init__(self, target: Callable[[], Any]):
        super().__init__()
        self.target = target

    def handle(self, record: logging.LogRecord) -> bool:
        self.emit(record)
        return True

    def emit(self, record: logging.LogRecord) -> None:
        agent = self.target()
        if agent is None:
            return
        try:
            with agent.state.clock.hold("ours") if agent.state.clock else _nothing():
                agent.capture.on_trace(record)
        except _Quit:
            raise
        except Exception:  # noqa: BLE001
            logging.getLogger("inductor_step").debug("trace handler", exc_info=True)


class FusionHandler(logging.Handler):
    """The scheduler's fusion log (Inductor's reasons not to fuse) into ``target()``'s ``state.fusion_lines`` while
    its ``state.capture_fusion`` is on (``target()`` None: dropped)."""

    def __init__(self, target: Callable[[], Any]):
        super().__init__()
        self.target = target

    def emit(self, record: logging.LogRecord) -> None:
        agent = self.target()
        if agent is not None and agent.state.capture_fusion:
            try:
                agent.state.fusion_lines.append(record.getMessage())
            except Exception:  # noqa: BLE001
                pass


def add_log_handlers(agent: Any) -> None:
    """Attach the agent's handlers to torch's structured trace (every stage's event: ``agent.capture.on_trace``) and to
    the scheduler's fusion logger (Inductor's reasons not to fuse, kept while ``agent.state.capture_fusion``)."""
    from inductor_step.tracer import adapter  # noqa: PLC0415

    adapter.add_trace_handler(TraceHandler(lambda: agent), wants_trace_event)
    fl = adapter.fusion_logger()
    fl.addHandler(FusionHandler(lambda: agent))
    if not fl.isEnabledFor(logging.DEBUG):
        fl.setLevel(logging.DEBUG)
        fl.propagate = False


def header(agent: Any, info: dict[str, Any], settings: Any, hooks: list[str], caches: bool) -> dict[str, Any]:
    """The session's header line: versions and device (``info``: adapter.versions), the script, the settings we
    changed, the hooks installed, Inductor's settings now, and a torchrun rank's part (whose process groups are
    watched from here on)."""
    from inductor_step.tracer import adapter  # noqa: PLC0415

    head = {"type": "header", "format": protocol.FORMAT, "torch": info["torch"], "triton": info["triton"],
            "python": sys.version.split()[0], "device": info["device"],
            "device_name": info.get("device_name"), "cuda": info.get("cuda"),
            "script": agent.state.script, "argv": agent.state.argv, "cwd": os.getcwd(), "pid": os.getpid(),
            "time": time.time(),
            "settings": settings, "hooks": hooks, "inductor_settings": adapter.inductor_settings(),
            "note": ("Inductor's caches were left on (--caches on): a cache hit skips the stages after it; "
                     if caches else "FX-graph and AOTAutograd caches are off inside the agent so every stage "
                                    "is captured; ")
                    + "inductor_settings were read before the script ran (torch.compile's mode and options "
                    "patch them per compile): each graph's own are its dynamo stop's compiled_with"}
    if agent.state.distributed is not None:
        from inductor_step.tracer.adapter import distributed  # noqa: PLC0415

        d = agent.state.distributed
        note = distributed.watch_process_groups(d.get("collective_timeout_s"), agent.state.send)
        role = ("steps at every stop" if d.get("stepped_rank") == d["rank"] else
                f"records every stop without pausing (the UI steps rank {d['stepped_rank']})"
                if d.get("stepped_rank") is not None else "records every stop without pausing")
        d["note"] = f"rank {d['rank']} of {d['world_size']}: {role}" + (f"; {note}" if note else "")
        head["distributed"] = d
    return head
