"""Capture of AOTInductor compiles (``aoti_compile_and_package``, ``aot_compile``): their codegen stop from
torch's AOT wrapper and kernel code, and the package or ``.so`` the run stage times.

A part of :class:`inductor_step.tracer.agent.Agent` (its ``aoti``) beside :class:`tracer.capture.Capture`.  What torch
gives (torch 2.14, torch/_inductor/codecache.py ``AotCodeCompiler.compile``): no ``inductor_output_code``
event; instead two ``graph_dump`` structured-trace events, ``inductor_aot_wrapper_code`` (the C++ wrapper,
``AOTInductorModel::run_impl``) then ``inductor_aot_kernel_code`` (the C++ kernels; on a GPU the Triton
kernels' launchers are in the wrapper), each with its file name.  Their text, wrapper then kernels, is
what ``TORCH_COMPILE_DEBUG`` saves as ``output_code.cpp``.  The compile has no Dynamo compile id
(``torch.export`` traced the graph; ``compile_fx_aot`` takes ``dynamo_compile_id`` from the graph's meta,
absent outside a strict export), so its graph is keyed ``[?]`` as torch logs it.
"""

from __future__ import annotations

from typing import Any, Callable

AOT_CODE_EVENTS = frozenset({"graph_dump:inductor_aot_wrapper_code", "graph_dump:inductor_aot_kernel_code"})

EXPORT_NOTE = ("AOTInductor compile: torch.export traced this graph (no Dynamo frame, so no Dynamo compile id: torch "
               "logs it as [?]); this is the exported ATen graph compile_fx got, before Inductor's pre-grad passes.")


class AotiCapture:
    """The agent's AOTInductor part (see the module docstring), over the shared
    :class:`tracer.agent_state.AgentState` (``current``, ``graph``, ``script_calls``, ``send``); the code it
    puts together goes to the codegen stop through ``on_output_code`` (:meth:`Capture.on_output_code`).
    Its own state: ``code`` (the wrapper event waiting for its kernel event), ``call`` (the API call under
    way: ``{"api", "path"}``), ``graphs`` (graphs whose codegen stop came from AOT code, in order) and
    ``seen`` (how many of them came before the call under way)."""

    def __init__(self, state: Any, on_output_code: Callable[[str, dict[str, Any], str], None]):
        self.state = state  # tracer.agent_state.AgentState
        self.on_output_code = on_output_code
        self.code: dict[str, Any] | None = None
        self.call: dict[str, Any] | None = None
        self.graphs: list[tuple[str, str]] = []
        self.seen = 0

    def on_aoti_code(self, cid: str, name: str, md: dict[str, Any], payload: str) -> None:
        """A ``graph_dump`` event of AOT code: the wrapper is kept until the kernels arrive, then both
        make the graph's codegen stop (:meth:`Capture.on_output_code` with ``meta["aoti"]``)."""
        info = md.get("graph_dump") or {}
        if name == "graph_dump:inductor_aot_wrapper_code":
            self.code = {"wrapper": payload, "wrapper_path": info.get("filename")}
            return
        pending = self.code or {"wrapper": "", "wrapper_path": None}
        self.code = None
        call = self.call or {}
        aoti = {"api": call.get("api"), "wrapper_path": pending["wrapper_path"], "kernel_path": info.get("filename"),
                "package_path": call.get("path"),
                "note": ("the wrapper (C++, AOTInductorModel::run_impl) then the kernels, as torch saves them in "
                         "output_code.cpp; torch compiles them into a .so" +
                         ("" if call.get("path") else ", packaged where aoti_compile_and_package returns")
                         if call.get("api") != "aot_compile" else
                         "the wrapper (C++, AOTInductorModel::run_impl) then the kernels; torch compiles them into "
                         "the .so aot_compile returns")}
        text = pending["wrapper"] + "\n" + payload + "\n"
        self.on_output_code(cid, {"aoti": aoti}, text)
        if self.state.current is not None:
            self.graphs = self.graphs + [self.state.current]

    def on_aoti_start(self, api: str, path: str | None) -> None:
        """The script calls ``torch._inductor.<api>`` (tracer.adapter.install_aoti_hook)."""
        self.call = {"api": api, "path": path}
        self.seen = len(self.graphs)

    def on_aoti_done(self, api: str, path: str | None, info: dict[str, Any]) -> None:
        """``torch._inductor.<api>`` returned ``path`` (a ``.pt2`` package or a ``.so``): the graphs it compiled
        are timed from it (the run stage loads it with ``aoti_load_package`` / ``aot_load``), on the
        example inputs it was exported with; an ``artifact`` message ``aoti_package`` names it."""
        from inductor_step.tracer import adapter  # noqa: PLC0415

        self.call = None
        for cid, kind in self.graphs[self.seen:]:
            g = self.state.graph(cid, kind)
            why = None
            if not path:
                why = f"{api} returned no package or .so path to load"
            elif info.get("inputs") is None:
                why = "the example inputs are not all tensors: the package is not timed"
            elif info.get("kwargs"):
                why = "the exported program takes keyword inputs: the package is not timed"
            if why is None:
                g.output_path = path
                g.gm = info.get("eager")
                g.device = info.get("device") or g.device
                self.state.script_calls[adapter.output_module_key(path)] = {
                    "calls": 0, "inputs": dict(enumerate(info["inputs"])), "profiles": [], "status": None,
                    "configs": {}}
            self.state.send({"type": "artifact", "name": "aoti_package", "compile_id": cid,
                             "graph_kind": kind, "payload": path or "",
                             "note": f"made by {api}; " + (f"not timed: {why}" if why else
                                                     "the run stage times it (tracer.timing.aoti)")})
