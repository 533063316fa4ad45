"""Capture: hook -> snapshot -> stop message, one method per stage (the agent's half that touches the
compile).  Torch calls these hooks on the compiling thread (tracer.adapter installs them); each turns
what the hook sees into plain data (tracer.adapter's snapshots) and sends the stage's stop through
``self.state.stop`` (the agent's stream, which pauses in step mode).  Per graph, the state between stops is
a :class:`tracer.agent_state.GraphState`.

Stages and where they are captured: dynamo (``pre_grad_custom_pass``), aot (the AOT structured-trace
events, then the graph ``GraphLowering.run`` lowers), lowering (``_pre_fusion_custom_pass``),
scheduling and loopbody (``log_ir_post_fusion``: the final order), codegen (``inductor_output_code``,
with the links).
"""

from __future__ import annotations

import logging
import re
import traceback
from typing import Any

from inductor_step.tracer.capture_aoti import AOT_CODE_EVENTS, EXPORT_NOTE, AotiCapture
from inductor_step.tracer.codeparse import attach_owners, bind_no_return_calls, kernel_spans, parse_wrapper
from inductor_step.tracer.codeparse_cpp import bind_extern_calls, cpp_kernel_spans, is_cpp_wrapper, parse_cpp_wrapper
from inductor_step.tracer.compile_modes import mark_templates
from inductor_step.session.format import PART_SEP, GraphKey, split_part, with_part
from inductor_step.tracer.subgraphs import SubgraphCapture, drop_subgraph_kernels, explain_hop_buffers, root_kind

_AOT_EVENTS = {"aot_joint_graph": "joint", "aot_forward_graph": "forward",
               "aot_backward_graph": "backward", "aot_inference_graph": "inference"}
# the structured-trace events Agent.on_trace reads (names as tracer.adapter.trace_event gives them);
# torch does not build the others while ours is trace_log's only handler (tracer.adapter.add_trace_handler)
_TRACE_EVENTS = frozenset({*_AOT_EVENTS, "optimize_ddp_split_child", "dynamo_output_graph", "dynamo_cpp_guards_str",
                           "inductor_output_code", "compilation_metrics", "artifact:dynamo_graph_break_reason",
                           "artifact:recompile_reasons", "artifact:fx_graph_runnable",
                           "artifact:inductor_provenance_tracking_node_mappings", *AOT_CODE_EVENTS,
                           "symbolic_shape_specialization", "guard_added_fast"})


def wants_trace_event(name: str) -> bool:
    """Whether :meth:`Agent.on_trace` reads the structured-trace event ``name`` (``"dynamo_output_graph"``,
    ``"artifact:fx_graph_runnable"``, ...)."""
    return name in _TRACE_EVENTS or name == "dynamo_start" or (name.startswith("artifact:torch_dynamo_resume_in_")
                                     and name.endswith("_ORIGINAL_BYTECODE"))


_HOOK_LINE = re.compile(r"^(\s*[\w.]+ = <[^\n]* object at 0x[0-9a-f]+>)[ \t]*$", re.M)


def runnable_without_hooks(source: str) -> str:
    """Inductor's ``fx_graph_runnable`` with the config lines that hold an object's repr (our own
    custom-pass hooks: ``torch._inductor.config._post_fusion_custom_pass = <...object at 0x...>``, which
    torch 2.11 writes and which are not Python) commented out, so the repro runs."""
    return _HOOK_LINE.sub(r"# \1  (a hook object, left out of the repro)", source) if isinstance(source, str) else source


_REUSE = re.compile(r"^[ \t]*(buf\d+) = (buf\d+); del \2[ \t]+# reuse", re.M)


def add_reused_writes(kernels: list[dict[str, Any]], wrapper: str) -> None:
    """A kernel also writes a buffer whose storage the wrapper hands it under another name
    (``buf10 = buf8; del buf8  # reuse``, then ``kernel(buf9, buf10, ...)``) when no call writes
    that buffer by its own name: Inductor computed it in the same kernel, in place
    (``auto out_ptr0 = in_out_ptr1;`` in a C++ kernel).  Extends each kernel's ``writes``."""
    reuse = dict(_REUSE.findall(wrapper))  # new name -> the buffer whose storage it takes
    if not reuse:
        return
    written = {b for k in kernels for b in k.get("writes") or []}
    for k in kernels:
        for b in list(k.get("writes") or []):
            old = reuse.get(b)
            while old and old not in written and old not in k["writes"]:
                k["writes"].append(old)
                old = reuse.get(old)


class Capture:
    """The stage hooks, the agent's capture part (:class:`inductor_step.tracer.agent.Agent`'s ``capture``), over
    the shared :class:`tracer.agent_state.AgentState` (``frame``/``frames``, ``graph``/``graphs``, ``current``,
    ``stop``, ``send``, ``tl``, ``clock``, ``final_hooks``, ``fusion``,
    ``variants.snapshots``); one method per hook.  ``cudagraphs`` (tracer.cudagraph_record) is told which graphs
    compile with CUDA graphs; :attr:`aoti` (tracer.capture_aoti) turns AOTInductor's code into codegen stops;
    :attr:`subgraphs` (tracer.subgraphs) makes a higher-order op's subgraphs graphs of their own.

    Parts: one compile id can call ``compile_fx`` more than once (Dynamo's DDPOptimizer compiles
    each DDP bucket's submodule on its own, all under the frame's compile id).  Each call is a graph
    of its own: its kinds carry its part (``"forward #2"``, protocol.graph_key) and its per-graph
    frame data (Dynamo graph, AOT graphs, kind) live in a frame entry of its own, keyed
    ``"[4/0] #2"`` (:meth:`part_frame`), which shares the frame's graph breaks and recompile reasons.
    A frame that DDPOptimizer split into several submodules numbers its parts from 1; any other
    frame's first call has no part (its keys stay ``"[0/0] forward"``) and a later one is #2, #3...
    A backward gets its forward's part: they share AOTAutograd's aot id.
    """

    def __init__(self, state: Any, cudagraphs: Any):
        self.state = state  # tracer.agent_state.AgentState
        self.cudagraphs = cudagraphs  # tracer.cudagraph_record.CudagraphRecord
        self.aoti = AotiCapture(state, self.on_output_code)
        self.subgraphs = SubgraphCapture(state, self.part_frame, self.build_links)  # higher-order ops' subgraphs
        self.guards_seen: set[tuple[str, str]] = set()  # (cid, expression) of the guards sent (tracer.blame_shapes)

    def new_part(self, cid: str) -> dict[str, Any]:
        """``compile_fx`` starts on a graph of compile ``cid`` (its pre-grad pass): the frame entry of
        that graph, a new part when the frame already compiled one or DDPOptimizer split it."""
        from inductor_step.tracer import adapter  # noqa: PLC0415

        fr = self.state.frame(cid)
        attempt = adapter.current_attempt()
        if fr.get("calls_attempt") != attempt:  # Dynamo restarted the frame: count again
            fr["calls_attempt"], fr["calls"], fr["cur"] = attempt, 0, None
        elif fr.get("cur") is not None and not self.state.frame(fr["cur"]).get("aot_started"):
            # the same compile_fx call: Inductor's pre-grad passes ran on a subgraph (a higher-order
            # op's body) first, AOTAutograd has not started on this call's graph yet
            return self.state.frame(fr["cur"])
        fr["calls"] = fr.get("calls", 0) + 1
        part = fr["calls"] if fr["calls"] > 1 or fr.get("ddp_children", 0) > 1 else None
        fr["cur"] = key = f"{cid}{PART_SEP}{part}" if part else cid
        if part is None:
            return fr
        pf = self.state.frame(key)
        pf.update(part=part, graph_breaks=fr["graph_breaks"], recompile_reasons=fr["recompile_reasons"],
                  resume=fr.get("resume"), dynamo_text=fr.get("dynamo_text"), ddp_children=fr.get("ddp_children"))
        return pf

    def part_frame(self, cid: str) -> dict[str, Any]:
        """The frame entry of the graph of compile ``cid`` that Inductor compiles now: a backward's is
        its forward's (the same aot id, tracer.adapter.current_aot_graph); else the current part's."""
        from inductor_step.tracer import adapter  # noqa: PLC0415

        fr = self.state.frame(cid)
        key = fr.get("cur") or cid
        aot = adapter.current_aot_graph()
        if aot is not None:
            parts = fr.setdefault("aot_parts", {})
            if aot[1] == "backward":
                key = parts.get(aot[0], key)
            else:
                parts.setdefault(aot[0], key)
                self.state.frame(key)["aot_started"] = True  # the next pre-grad pass starts another graph
        return self.state.frame(key)

    # ------------------------------------------------------------------ hooks
    def on_trace(self, record: logging.LogRecord) -> None:
        """One structured-trace event; only those :func:`wants_trace_event` names are read."""
        from inductor_step.tracer import adapter  # noqa: PLC0415

        name, md, payload = adapter.trace_event(record)
        if name is None or not wants_trace_event(name):
            return
        if name == "artifact:fx_graph_runnable":
            payload = runnable_without_hooks(payload)
        variant = getattr(self.state.tl, "variant", None)
        if variant is not None:  # a what-if recompile (tracer.whatif): only Inductor's own events
            if name == "inductor_output_code":
                self.on_output_code(variant[0], md.get("inductor_output_code") or {}, payload)
            elif name == "artifact:inductor_provenance_tracking_node_mappings":
                self.state.send({"type": "provenance", "compile_id": variant[0], "graph_kind": variant[1],
                                 "mappings": payload})
            elif name == "artifact:fx_graph_runnable":
                self.state.send({"type": "artifact", "name": "fx_graph_runnable", "compile_id": variant[0],
                                 "graph_kind": variant[1], "payload": payload})
            return
        cid = adapter.current_compile_id()
        if cid == "[?]" and "frame_id" in md:
            cid = adapter.label_compile_id(f"[{md['frame_id']}/{md['frame_compile_id']}]")
        if not self._on_frame_event(name, cid, md, payload):
            self._on_compile_event(name, cid, md, payload)

    def _on_frame_event(self, name: str, cid: str, md: dict[str, Any], payload: Any) -> bool:
        """A trace event about Dynamo's frame ``cid`` (its graph, breaks, recompiles, resume, AOT's graphs, DDP's
        split) kept in its frame; False for another event."""
        if name == "optimize_ddp_split_child":  # DDPOptimizer split this frame: one submodule per bucket
            fr = self.state.frame(cid)
            fr["ddp_children"] = fr.get("ddp_children", 0) + 1
        elif name in _AOT_EVENTS:
            fr = self.part_frame(cid)
            fr["aot"][_AOT_EVENTS[name]] = payload
            decided = {"aot_inference_graph": "inference", "aot_forward_graph": "forward"}.get(name)
            if decided:
                guessed, fr["kind"] = fr["kind"], decided
                if guessed and guessed != decided and fr.get("dynamo") is not None:
                    self.correct_kind(cid, fr, guessed, decided)
        elif name == "dynamo_output_graph":
            self.state.frame(cid)["dynamo_text"] = payload
        elif name == "artifact:dynamo_graph_break_reason":
            self.state.frame(cid)["graph_breaks"].append(payload)
        elif name == "artifact:recompile_reasons":
            self.state.frame(cid)["recompile_reasons"].append(payload)
        elif name == "dynamo_start":
            # the frame Dynamo starts on: a continuation after a graph break is named
            # torch_dynamo_resume_in_<fn>_at_<line> (torch 2.11 writes no *_ORIGINAL_BYTECODE artifact)
            stack = (md.get("dynamo_start") or {}).get("stack") or []
            fn = stack[-1].get("name") if stack and isinstance(stack[-1], dict) else None
            if isinstance(fn, str) and fn.startswith("torch_dynamo_resume_in_"):
                self.state.frame(cid).setdefault("resume", fn)
        elif name.startswith("artifact:torch_dynamo_resume_in_") and name.endswith("_ORIGINAL_BYTECODE"):
            # this frame is the continuation Dynamo made after a graph break
            self.state.frame(cid)["resume"] = name[len("artifact:"):-len("_ORIGINAL_BYTECODE")]
        else:
            return False
        return True

    def _on_compile_event(self, name: str, cid: str, md: dict[str, Any], payload: Any) -> None:
        """A trace event of compile ``cid``'s compile (the runnable repro, shape specializations and guards, the
        output code, provenance, compilation metrics): sent or kept."""
        if name == "artifact:fx_graph_runnable":
            # Inductor's standalone repro of the graph it is about to compile (forward, then the
            # backward when it compiles): kept for bug reports
            fr = self.part_frame(cid)
            fr.setdefault("runnables", []).append(payload)
            # Inductor writes one before compiling each graph of the frame: the forward (or
            # inference) graph, then, for training, the backward when it compiles
            kind = "backward" if fr["kind"] == "forward" and len(fr["runnables"]) > 1 else (fr["kind"] or "inference")
            self.state.send({"type": "artifact", "name": "fx_graph_runnable", "compile_id": cid,
                             "graph_kind": with_part(kind, fr.get("part")), "payload": payload})
        elif name == "symbolic_shape_specialization":  # a dynamic size made a constant (tracer.blame_shapes)
            from inductor_step.tracer.blame_shapes import on_event  # noqa: PLC0415

            on_event(self.state.send, cid, md)
        elif name == "guard_added_fast":  # a guard on a dynamic size (tracer.blame_shapes)
            from inductor_step.tracer.blame_shapes import on_guard  # noqa: PLC0415

            on_guard(self.state.send, self.guards_seen, cid, md)
        elif name == "dynamo_cpp_guards_str":
            self.state.send({"type": "guards", "compile_id": cid, "text": payload})
        elif name == "artifact:inductor_provenance_tracking_node_mappings" and self.state.current:
            self.state.send({"type": "provenance", "compile_id": self.state.current[0], "graph_kind": self.state.current[1],
                             "mappings": payload})
        elif name == "inductor_output_code":
            self.on_output_code(cid, md.get("inductor_output_code") or {}, payload)
        elif name in AOT_CODE_EVENTS:
            self.aoti.on_aoti_code(cid, name, md, payload)
        elif name == "compilation_metrics":
            m = md.get("compilation_metrics") or {}
            if isinstance(m, dict) and m.get("fail_type"):
                self.state.frame(cid)["fail"] = f"{m.get('fail_type')}: {m.get('fail_reason')}"
            if isinstance(m, dict) and m.get("restart_reasons"):  # torch's own record, when the frame's compile ends
                self.state.frame(cid)["restart_reasons"] = sorted(str(r) for r in m["restart_reasons"])

    def correct_kind(self, cid: str, fr: dict[str, Any], guessed: str, decided: str) -> None:
        """AOTAutograd compiles as ``decided`` the graph whose dynamo stop went out as ``guessed``
        (every input that requires grad feeds only outputs that do not, say): the dynamo stop again
        under its real key, not paused, naming the guess it corrects (protocol.DynamoStop.corrects)."""
        part = fr.get("part")
        self.state.graphs.pop((cid, with_part(guessed, part)), None)
        self.state.stop(cid, with_part(decided, part), "dynamo",
                        {"graph": fr["dynamo"], "graph_breaks": fr["graph_breaks"],
                         "recompile_reasons": fr["recompile_reasons"], "resume": fr.get("resume"),
                         "corrects": guessed, **self.how_compiled(fr), **self._restart(cid)}, pause=False)

    def on_pre_grad(self, graph: Any) -> None:
        from inductor_step.tracer import adapter  # noqa: PLC0415

        cid = adapter.current_compile_id()
        self.state.frame(cid)["attempt"] = adapter.current_attempt()
        path = adapter.pass_subgraph_path(graph)
        if path:  # a higher-order op's subgraph, before its parent: its stop waits for its post-grad name
            self.subgraphs.keep_dynamo(cid, path, graph)
            return
        if self.state.frame(cid)["attempt"]:  # Dynamo restarted the frame's analysis ([0/0_1]): why
            self.state.frame(cid)["restart_reasons"] = adapter.restart_reasons()
        fr = self.new_part(cid)
        if self.state.clock is not None:  # this part's compile time is its own
            self.state.clock.set_part(fr.get("part"))
        self.subgraphs.adopt_dynamo(cid, fr, graph)
        kind = "forward" if adapter.needs_autograd(graph) else "inference"
        fr["kind"] = kind
        snap = adapter.fx_graph(graph)
        fr["dynamo"] = snap
        # how this graph was compiled and its dynamic symbols (backward graphs reuse them)
        fr["compiled_with"] = adapter.compiled_with()
        fr["symbols"] = adapter.dynamic_symbols()
        # the id torch's provenance gives this graph: post-grad nodes name the Dynamo nodes they came from by it
        fr["dynamo_graph_id"] = adapter.pre_grad_graph_id(graph)
        extra = self._restart(cid)
        if adapter.aot_compiling():
            extra["note"] = EXPORT_NOTE
        if fr.get("part") and fr.get("ddp_children"):
            extra["note"] = (f"DDPOptimizer split this frame's Dynamo graph at DDP's bucket boundaries into "
                             f"{fr['ddp_children']} submodules, compiled one by one in the model's order: this is the "
                             f"graph of submodule {fr['part']}, as compile_fx got it.")
        self.state.stop(cid, with_part(kind, fr.get("part")), "dynamo",
                        {"graph": snap, "graph_breaks": fr["graph_breaks"],
                         "recompile_reasons": fr["recompile_reasons"], "resume": fr.get("resume"),
                         **self.state.breaks_before(cid), **self.how_compiled(fr), **extra})

    @staticmethod
    def how_compiled(fr: dict[str, Any], config_now: bool = False) -> dict[str, Any]:
        """The dynamo stop's ``compiled_with`` and ``symbols`` (protocol.DynamoStop) from frame entry ``fr``;
        ``config_now``: its Inductor config read again now (a backward or a what-if variant compiling
        under its own patches, from a hook inside ``compile_fx_inner``)."""
        from inductor_step.tracer import adapter  # noqa: PLC0415

        out: dict[str, Any] = {}
        if fr.get("compiled_with") is not None:
            out["compiled_with"] = fr["compiled_with"]
            if config_now and isinstance(fr["compiled_with"], dict) and "unavailable" not in fr["compiled_with"]:
                try:
                    out["compiled_with"] = {**fr["compiled_with"], "config": adapter.inductor_config_changes()}
                except Exception:  # noqa: BLE001 - the frame's, as read at its forward's compile
                    pass
        if fr.get("symbols"):
            out["symbols"] = fr["symbols"]
        return out

    def _restart(self, cid: str) -> dict[str, Any]:
        """A dynamo stop's ``restart_reasons`` where Dynamo restarted frame ``cid``'s analysis."""
        reasons = self.state.frames.get(cid, {}).get("restart_reasons")
        return {"restart_reasons": reasons} if reasons else {}

    def on_post_grad_pre(self, graph: Any) -> None:
        from inductor_step.tracer import adapter  # noqa: PLC0415

        cid = adapter.current_compile_id()
        path = adapter.pass_subgraph_path(graph)
        if path:  # a higher-order op's subgraph (tracer.subgraphs)
            self.subgraphs.on_post_grad_pre(cid, path, graph)
            return
        fr = self.part_frame(cid)
        if adapter.is_backward_graph(graph):
            kind = "backward"
            if self.state.clock is not None and fr.get("part"):  # the part's backward
                self.state.clock.set_part(fr["part"], backward=True)
        else:
            kind = fr["kind"] or "inference"
        kind = with_part(kind, fr.get("part"))
        if getattr(self.state.tl, "variant", None) is None:
            fr["aot_started"] = True  # (where the aot id cannot be read)
        cid, kind = getattr(self.state.tl, "variant", None) or (cid, kind)
        self.state.current = (cid, kind)
        adapter.take_autotune()  # selections left by a graph that never reached its codegen stop
        g = self.state.graph(cid, kind)
        if getattr(graph, "owning_module", None) is not None and (cid, kind) not in self.state.variants.snapshots:
            try:  # the graph compile_fx_inner got, kept for what-if recompiles (tracer.whatif)
                self.state.variants.snapshots[(cid, kind)] = adapter.graph_snapshot(graph.owning_module)
            except Exception:  # noqa: BLE001 - never in the script's way
                logging.getLogger("inductor_step").debug("graph copy", exc_info=True)
        if g.last_stage is None:
            # backward (and any graph whose pre-grad hook did not fire): its Dynamo level is the
            # frame's Dynamo graph, captured when the forward compiled
            snap = fr["dynamo"] or fr.get("dynamo_live") or {"code": fr.get("dynamo_text") or "", "nodes": []}
            note = ("The backward graph has no Dynamo graph of its own: AOTAutograd derived it from "
                    "this frame's Dynamo graph, and Inductor compiles it lazily at .backward()."
                    ) if split_part(kind)[0] == "backward" else None
            self.state.stop(cid, kind, "dynamo", {"graph": snap, "graph_breaks": fr["graph_breaks"],
                                                  "recompile_reasons": fr["recompile_reasons"], "note": note,
                                                  **self.how_compiled(fr, config_now=True), **self._restart(cid)})

    def on_post_grad_post(self, graph: Any) -> None:
        from inductor_step.tracer import adapter  # noqa: PLC0415

        path = adapter.pass_subgraph_path(graph)
        if path:  # a higher-order op's subgraph (tracer.subgraphs)
            self.subgraphs.on_post_grad_post(adapter.current_compile_id(), path, graph)
            return
        cid, kind = self.state.current or (adapter.current_compile_id(), "inference")
        kind = root_kind(kind)
        fr = self.state.frame(self.state.frame_key(cid, kind))
        g = self.state.graph(cid, kind)
        g.gm = getattr(graph, "owning_module", None)
        self.cudagraphs.note_cudagraphs(cid, kind)
        aot = dict(fr["aot"])
        base = GraphKey.parse_kind(kind).kind
        if base == "backward":
            aot = {k: v for k, v in aot.items() if k in ("joint", "backward")}
        elif base == "forward":
            aot = {k: v for k, v in aot.items() if k in ("joint", "forward", "backward")}
        if self.state.final_hooks.get("GraphLowering.run"):
            # the aot stop waits for GraphLowering.run, which gets the graph after Inductor's last
            # post-grad passes (on_lowered_graph); on_pre_fusion sends it if that never fires
            g.pending_aot = {"graph": graph, "aot_graphs": aot}
            return
        self._send_aot(cid, kind, graph, aot, lowered=False)

    def _send_aot(self, cid: str, kind: str, graph: Any, aot: dict[str, Any], lowered: bool) -> None:
        from inductor_step.tracer import adapter  # noqa: PLC0415

        g = self.state.graph(cid, kind)
        g.pending_aot = None
        post_grad = adapter.fx_graph(graph, self.state.frame(self.state.frame_key(cid, kind)).get("dynamo_graph_id"))
        if isinstance(post_grad, dict) and "unavailable" not in post_grad:
            post_grad["when"] = ("lowered: the graph GraphLowering.run lowered, after every post-grad pass" if lowered
                                 else "before Inductor's last post-grad passes (at post_grad_custom_post_pass); "
                                      "the lowered graph may differ")
        g.post_grad_nodes = post_grad.get("nodes") or []
        self.state.stop(cid, kind, "aot", {"aot_graphs": aot, "post_grad": post_grad})

    def on_lowered_graph(self, graph: Any) -> None:
        """GraphLowering.run starts on ``graph``: the post-grad graph as Inductor lowers it."""
        for (cid, kind), g in list(self.state.graphs.items()):
            pending = g.pending_aot
            if pending and pending["graph"] is graph:
                self._send_aot(cid, kind, graph, pending["aot_graphs"], lowered=True)
                return

    def on_pre_fusion(self, nodes: list) -> None:
        from inductor_step.tracer import adapter  # noqa: PLC0415

        gl = adapter.current_graph()
        cid = adapter.current_compile_id()
        if getattr(gl, "is_backward", False):
            kind = with_part("backward", self.part_frame(cid).get("part"))
        else:
            kind = root_kind(self.state.current[1]) if self.state.current else "inference"
        cid, kind = getattr(self.state.tl, "variant", None) or (cid, kind)
        sub = self.subgraphs.lowering_key(cid, kind, gl)
        if sub is not None:  # a SubgraphLowering, inside its parent's codegen (tracer.subgraphs)
            cid, kind, function = sub
            self.state.graph(cid, kind).function = function
        self.state.current = (cid, kind)
        g = self.state.graph(cid, kind)
        pending = g.pending_aot
        if pending:  # GraphLowering.run was not observed: the graph as post_grad_custom_post_pass saw it
            self._send_aot(cid, kind, pending["graph"], pending["aot_graphs"], lowered=False)
        if sub is None:  # (a subgraph's kernels are generated in the middle of its parent's)
            adapter.take_kernel_defs()  # kernel records left by a graph that never reached its codegen stop
        g.before = adapter.scheduler_nodes(nodes)
        try:
            g.device = str(next(iter(nodes)).get_device()) if nodes else "cpu"
        except Exception:  # noqa: BLE001
            g.device = "cpu"
        lowered = adapter.ir_buffers(gl)
        g.buffers = lowered.get("buffers") or []
        self.state.stop(cid, kind, "lowering", lowered)
        self.state.fusion.lines = []
        self.state.fusion.on = True

    def on_post_fusion(self, nodes: list) -> None:
        from inductor_step.tracer import adapter  # noqa: PLC0415

        self.state.fusion.on = False
        cid, kind = self.state.current or (adapter.current_compile_id(), "inference")
        g = self.state.graph(cid, kind)
        g.fusion_log = list(self.state.fusion.lines)
        if self.state.final_hooks.get("torch._inductor.debug.log_ir_post_fusion"):
            # Inductor reorders the fused nodes (reorder_for_peak_memory, ...) before codegen: the
            # scheduling stop waits for that final order (on_final_order)
            g.pending_scheduling = nodes
            return
        self._send_scheduling(cid, kind, nodes, final=False)

    def _send_scheduling(self, cid: str, kind: str, nodes: list, final: bool) -> None:
        from inductor_step.tracer import adapter  # noqa: PLC0415

        g = self.state.graph(cid, kind)
        g.pending_scheduling = None
        if g.function is not None:  # a subgraph: its GraphLowering is gone by its parent's codegen stop
            g.owners, g.mutations = adapter.scheduler_storage(adapter.current_graph(), nodes)
        after = adapter.scheduler_nodes(nodes)
        g.after = after if isinstance(after, list) else []
        order = ("final: the order Inductor generated code in (after reorder_for_peak_memory and its other "
                 "reorders; ir_post_fusion.txt's order)" if final
                 else "after fuse_nodes (Inductor may reorder the nodes before codegen)")
        self.state.stop(cid, kind, "scheduling", {"before": g.before, "after": after, "order": order,
                                                  "fusion_log": g.fusion_log})
        self.state.stop(cid, kind, "loopbody", {"bodies": adapter.loop_bodies(nodes)})

    def on_final_order(self, nodes: list) -> None:
        """The scheduler's nodes in codegen order (torch._inductor.debug.log_ir_post_fusion)."""
        if self.state.current is None:
            return
        g = self.state.graphs.get(self.state.current)
        if g is not None and g.pending_scheduling is not None:
            self._send_scheduling(self.state.current[0], self.state.current[1], nodes, final=True)

    def on_output_code(self, cid: str, meta: dict[str, Any], wrapper: str) -> None:
        from inductor_step.tracer import adapter  # noqa: PLC0415

        if self.state.current and self.state.current[0] == cid:
            kind = root_kind(self.state.current[1])  # (the last stop may have been one of its subgraphs')
        else:
            fr = self.part_frame(cid)
            kind = with_part(fr["kind"] or "inference", fr.get("part"))
        if split_part(kind)[0] == "forward" and self.state.graph(cid, kind).last_stage == "codegen":
            # a cache hit (--caches on) loads the forward's module, then the backward's: no stop came between
            kind = with_part("backward", split_part(kind)[1])
        g = self.state.graph(cid, kind)
        if g.pending_scheduling is not None:  # the final-order hook never fired
            self._send_scheduling(cid, kind, g.pending_scheduling, final=False)
        aoti = meta.get("aoti")  # AOTInductor's code (tracer.capture_aoti): the run stage times its package instead
        g.output_path = None if aoti else meta.get("file_path") or meta.get("filename")
        cpp = is_cpp_wrapper(wrapper)  # cpp_wrapper=True or AOTInductor: a C++ wrapper (tracer.codeparse_cpp)
        # (a Python wrapper's subgraph functions' kernels go under the subgraphs' keys: tracer.subgraphs)
        kernels = parse_cpp_wrapper(wrapper) if cpp else drop_subgraph_kernels(parse_wrapper(wrapper), wrapper)
        if cpp:
            bind_extern_calls(kernels, g.after)
        # calls that return nothing (a collective's wait_tensor, the in-place all_reduce_): their IR node's buffers
        storage = adapter.buffer_mutations(adapter.current_graph())
        bind_no_return_calls(kernels, g.after, (storage.get("mutation_real_name") or {}) if "unavailable" not in storage
                             else {})
        kernel_defs = adapter.take_kernel_defs()
        g.num_gb = adapter.take_kernel_num_gb()
        for k in kernels:
            if k["name"] in g.num_gb:
                k["num_gb"] = g.num_gb[k["name"]]
        owners = adapter.buffer_owners(adapter.current_graph())
        owners = owners if "unavailable" not in owners else {}
        add_reused_writes(kernels, wrapper)
        attach_owners(kernels, owners, wrapper)
        mark_templates(kernels, adapter.template_nodes(adapter.current_graph()))
        links = self.build_links(cid, kind, kernels, wrapper, owners, kernel_defs)
        explain_hop_buffers(links, g.post_grad_nodes, f"{cid} {kind}", self.subgraphs.paths_of(cid, kind))
        g.links = links
        extra: dict[str, Any] = {"autotune": autotune} if (autotune := adapter.take_autotune()) else {}
        if g.cudagraphs and g.cudagraphs.get("enabled"):  # what the partitions leave outside
            from inductor_step.tracer.cudagraph_record import partitions_of  # noqa: PLC0415

            extra["cudagraphs"] = {"enabled": True, **partitions_of(wrapper)}
        if cpp:
            extra["wrapper_language"] = "cpp"
        else:  # Inductor's own estimate, beside the plan session.memory reads from the wrapper
            from inductor_step.tracer.adapter.memory import inductor_peak_estimate  # noqa: PLC0415

            extra["memory_estimate"] = inductor_peak_estimate(adapter.current_graph())
        if aoti:
            extra["aoti"] = aoti
        out_path = (aoti or {}).get("package_path") or (aoti or {}).get("wrapper_path") or g.output_path
        spans = (cpp_kernel_spans if cpp else kernel_spans)(wrapper, kernels)
        self.state.stop(cid, kind, "codegen", {"wrapper": wrapper, "kernels": kernels, "output_path": out_path,
                                               "kernel_spans": spans, "links": links, **extra})
        self.subgraphs.send_codegen(cid, kind, wrapper, kernel_defs, cpp=cpp)
        self.state.current = (cid, kind)

    def build_links(self, cid: str, kind: str, kernels: list[dict], wrapper: str,
                    owners: dict[str, dict[str, str]], kernel_defs: list[dict] | None = None,
                    mutations: dict[str, Any] | None = None) -> dict[str, Any]:
        """The graph's cross-level index (tracer.links), or ``{"unavailable": why}``."""
        from inductor_step.tracer import adapter  # noqa: PLC0415
        from inductor_step.tracer.links import build_links  # noqa: PLC0415

        g = self.state.graph(cid, kind)
        try:
            pg = g.post_grad_nodes
            users = sorted({n["user_line"] for n in pg if n.get("user_line")})
            dyn = (g.dynamo or self.state.frame(self.state.frame_key(cid, kind)).get("dynamo") or {}).get("nodes") or []
            storage = mutations or adapter.buffer_mutations(adapter.current_graph())
            return build_links(dynamo_nodes=dyn, post_grad_nodes=pg, buffers=g.buffers,
                               fused_nodes=g.after, kernels=kernels, wrapper=wrapper, owners=owners,
                               provenance=adapter.kernel_provenance(),
                               provenance_written=adapter.provenance_map_written(),
                               kernel_defs=kernel_defs,
                               mutations=storage if "unavailable" not in storage else None,
                               source_context=adapter.source_context(users))
        except Exception as e:  # noqa: BLE001
            return {"unavailable": f"links: {type(e).__name__}: {e}", "traceback": traceback.format_exc()}
