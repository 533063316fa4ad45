"""Record the torch.compile compiles made inside this process, in a ``with`` block, into a session file (the pytest fixture's recorder).

The agent (:mod:`inductor_step.tracer.agent`) runs a script in a process of its own and configures torch
for good.  :func:`recording` runs the same capture -- :class:`inductor_step.tracer.agent.Agent`'s hooks,
stops and links, never pausing -- around a block of the caller's code, writes every message to a session
file as it comes (the file ``inductor-step --open`` views and ``inductor-step gate`` compares), and on
leaving puts back every torch setting it changed (:mod:`inductor_step.tracer.adapter.inprocess`).

The hooks torch offers by patching (``GraphLowering.run``, the kernel definitions, the backend call) are
installed once per process and call whichever recording is active, none otherwise.  One recording at a
time: a second one inside the first raises RuntimeError.  By default the block starts on a fresh Dynamo
(``torch._dynamo.reset()``), so a function compiled before is compiled -- and recorded -- again, and
compile ids start at ``[0/0]``.  Nothing is timed (no ``run`` messages: timing belongs to the command line).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from typing import Any, Callable, Iterator

from inductor_step.session import format as protocol
from inductor_step.tracer.agent import Agent
from inductor_step.tracer.agent_state import AgentOptions
from inductor_step.tracer.agent_start import FusionHandler, TraceHandler

#: the recorder the process-wide hooks call now (None: no recording is active)
_ACTIVE: list["Recorder | None"] = [None]
_INSTALLED: dict[str, list[str]] = {}  # "hooks" -> the patched hooks' names, once installed
_LOCK = threading.Lock()


class _File:
    """The session file as the agent writes it: a failed write is kept (``error``), never the end of the
    process (the agent proper ends itself when its UI is gone)."""

    def __init__(self, f: Any):
        self.f = f
        self.error: OSError | None = None

    def write(self, data: bytes) -> None:
        try:
            self.f.write(data)
        except OSError as e:
            self.error = self.error or e


class Recorder(Agent):
    """An :class:`~inductor_step.tracer.agent.Agent` writing to ``path`` in this process: no control pipe,
    no pauses, no timing; ``label`` stands where a script's path would (the test's id)."""

    def __init__(self, path: str, label: str):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        super().__init__(fd, None, AgentOptions(script=label))
        self.state.stream.out = _File(self.state.stream.out)
        self.path = path


def _call_active(name: str) -> Callable[..., Any]:
    """A hook that calls method ``name`` of the active recorder's capture part, and nothing when none is."""
    def call(*a: Any) -> Any:
        rec = _ACTIVE[0]
        return getattr(rec.capture, name)(*a) if rec is not None else None
    return call


def _part(name: str) -> Any:
    """Part ``name`` (``"capture"``, ``"state"``) of the active recorder, or None when none is active."""
    rec = _ACTIVE[0]
    return getattr(rec, name) if rec is not None else None


def _install_once() -> list[str]:
    """The patching hooks, installed on the first recording (they stay, calling no one in between)."""
    if "hooks" in _INSTALLED:
        return _INSTALLED["hooks"]
    from inductor_step.tracer import adapter, backends  # noqa: PLC0415

    hooks = adapter.install_final_hooks(_call_active("on_lowered_graph"), _call_active("on_final_order"))
    _INSTALLED["final"] = list(hooks)
    hooks += adapter.install_kernel_args_hook() + adapter.install_subgraph_tracking()
    hooks += [h for h, ok in (("torch.compile arguments (_TorchCompileInductorWrapper.__init__)",
                               adapter.install_compile_args_hook()),
                              ("AlgorithmSelectorCache.__call__ (autotuning choices)",
                               adapter.install_autotune_hook())) if ok]

    def before(gm: Any, name: str) -> None:
        if _ACTIVE[0] is not None:
            backends.on_backend_before(_ACTIVE[0].state, gm, name)

    def after(gm: Any, name: str, err: BaseException | None) -> None:
        if _ACTIVE[0] is not None:
            backends.on_backend_after(_ACTIVE[0].state, gm, name, err)

    if adapter.install_backend_hook(before, after):
        hooks.append("OutputGraph.call_user_compiler (each graph's backend; other backends' graphs)")
    if adapter.install_reset_hook():
        hooks.append("torch._dynamo.reset (compile ids after a reset carry @resetN)")
    _INSTALLED["hooks"] = hooks
    return hooks


@contextlib.contextmanager
def recording(path: str, label: str = "<in-process>", reset: bool = True) -> Iterator[Recorder]:
    """Record every torch.compile compile made inside the block into the session file ``path`` (JSON
    lines, :mod:`inductor_step.session.format`: a header, then each graph's stops -- dynamo, aot,
    lowering, scheduling, loopbody, codegen -- as they come, then ``done``).  ``label`` is the header's
    ``script`` (e.g. a pytest node id); ``reset`` clears Dynamo first (see the module's docstring).
    Yields the :class:`Recorder`; the file is complete up to the last stop at any moment inside the block.
    Raises RuntimeError when a recording is already active, OSError when ``path`` cannot be written."""
    from inductor_step.tracer import adapter, backends  # noqa: PLC0415
    from inductor_step.tracer.adapter import inprocess  # noqa: PLC0415

    with _LOCK:
        if _ACTIVE[0] is not None:
            raise RuntimeError(f"a compile recording is already active (into {_ACTIVE[0].path}); "
                               "one at a time")
        rec = Recorder(path, label)
        _ACTIVE[0] = rec
    saved = inprocess.save_settings()
    trace, fusion = TraceHandler(lambda: _part("capture")), FusionHandler(lambda: _part("state"))  # the agent's own
    fusion_before = None
    try:
        hooks = list(_install_once())
        rec.state.final_hooks = {h: True for h in _INSTALLED.get("final", [])}
        if reset:
            inprocess.fresh_dynamo()
        inprocess.drop_leftovers()
        info = adapter.versions()
        rec.state.device = info["device"]
        settings = adapter.configure_inductor()
        cap = rec.capture
        hooks = adapter.install_passes(cap.on_pre_grad, cap.on_post_grad_pre, cap.on_post_grad_post,
                                       cap.on_pre_fusion, cap.on_post_fusion) + hooks
        adapter.add_trace_handler(trace, _wants)
        fusion_before = inprocess.listen(adapter.fusion_logger(), fusion, debug=True)
        rec.state.send({"type": "header", "format": protocol.FORMAT, "torch": info["torch"], "triton": info["triton"],
                        "python": sys.version.split()[0], "device": info["device"],
                        "device_name": info.get("device_name"), "cuda": info.get("cuda"),
                        "script": label, "argv": [], "cwd": os.getcwd(), "pid": os.getpid(), "time": time.time(),
                        "settings": settings, "hooks": hooks, "inductor_settings": adapter.inductor_settings(),
                        "in_process": "recorded inside the caller's process (inductor_step.tracer.record): its "
                                      "compiles only, no timing; every torch setting changed for it was put back "
                                      "afterwards",
                        "note": "FX-graph and AOTAutograd caches were off while recording so every stage is captured"})
        yield rec
    finally:
        try:
            compiled = sum(1 for g in rec.state.graphs.values() if g.get("last_stage"))
            extra = backends.done_fields(rec.state)
            msg = extra.pop("message", None)
            rec.state.send({"type": "done", "returncode": 0, "graphs": compiled,
                            "message": None if compiled and extra.get("inductor_graphs") else
                            msg or "no torch.compile compile was made inside the recording", **extra})
        finally:
            adapter.trace_logger().removeHandler(trace)
            if fusion_before is not None:
                inprocess.unlisten(adapter.fusion_logger(), fusion, fusion_before)
            inprocess.restore_settings(saved)
            inprocess.drop_leftovers()
            with _LOCK:
                _ACTIVE[0] = None
            rec.state.stream.out.f.close()


def _wants(name: str) -> bool:
    from inductor_step.tracer.capture import wants_trace_event  # noqa: PLC0415

    return wants_trace_event(name)


__all__ = ["Recorder", "recording"]
