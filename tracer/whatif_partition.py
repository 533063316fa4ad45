"""A training graph's what-if under ``torch._functorch.config`` settings: its joint graph partitioned again, the new forward and backward compiled as variants of both."""

from __future__ import annotations

import traceback
from typing import Any, Callable

from inductor_step.session.format import GraphKey, settings_label, split_part, with_part
from inductor_step.tracer.whatif import run_variant, send_variant_error, time_when_ready


def install(state: Any) -> list[str]:
    """Keep every training compile's joint graph in the agent's ``state`` (tracer.agent_state.AgentState), one per
    graph: ``state.variants.joints[frame key]`` (tracer.capture's frame key: ``"[0/0]"``, or ``"[4/0] #2"`` for
    DDPOptimizer's part 2, whose submodule compile_fx partitions a joint graph of its own under the same compile
    id); the hook's name."""
    from inductor_step.tracer import adapter  # noqa: PLC0415
    from inductor_step.tracer.adapter.partition import install_partition_hook  # noqa: PLC0415

    def keep(joint: dict[str, Any]) -> None:
        if getattr(state.tl, "variant", None) is None:
            cid = adapter.current_compile_id()
            # the part whose compile_fx runs now (tracer.capture.new_part set it at its pre-grad pass)
            state.variants.joints[state.frames.get(cid, {}).get("cur") or cid] = joint

    return (["min_cut_rematerialization_partition (the joint graph, for activation_memory_budget what-ifs)"]
            if install_partition_hook(keep) else [])


def run_partition_what_if(state: Any, cid: str, kind: str, settings: dict[str, Any],
                          time_with: Callable[..., None] | None = None) -> str | None:
    """Partition the joint graph of graph ``(cid, kind)`` again under ``settings`` (torch._functorch.config) and
    compile the new forward and backward (compile_fx_inner, on real inputs of their shapes) as the variants
    ``"[0/0] forward · activation_memory_budget=0.5"`` and ``"[0/0] backward · ..."``; a DDPOptimizer part's own
    joint graph for ``kind`` ``"forward #2"``, its variants ``"[4/0] forward #2 · ..."``; ``what_if`` messages as
    tracer.whatif.run_what_if sends them (for ``kind``).  ``time_with`` (the timing part's ``run_all``): time all
    four with it once the originals have code.
    Returns the variant key of ``kind``, or None when it failed."""
    from inductor_step.tracer import adapter  # noqa: PLC0415

    label = settings_label(settings)
    head = {"type": "what_if", "compile_id": cid, "graph_kind": kind, "variant": label, "settings": settings}
    base, part = split_part(kind)  # a DDPOptimizer part's forward and backward keep their part: "forward #2"
    joint = state.variants.joints.get(state.frame_key(cid, kind))
    why = None
    if base not in ("forward", "backward"):
        why = (f"{cid} {kind}: {', '.join(settings)} acts in AOTAutograd's partitioner on a training graph's joint "
               "graph; this graph has no backward")
    elif joint is None:
        why = (f"{cid} {kind}: no joint graph was kept for this compile (a cached compile, --caches on, skips the "
               "partitioner; or torch has no min_cut_rematerialization_partition to hook)")
    if why is not None:
        state.send({**head, "status": "failed", "message": why})
        return None
    origs = {k: with_part(k, part) for k in ("forward", "backward")}
    keys = {k: GraphKey(cid, k, part=part, variant=label).kind_text for k in origs}
    if all((state.graphs.get((cid, v)) or {}).get("output_path") for v in keys.values()):  # asked for both graphs
        state.send({**head, "status": "done", "message": f"{cid} {keys[base]} was compiled with its other half"})
        return f"{cid} {keys[base]}"
    state.send({**head, "status": "compiling",
                "message": f"partitioning {cid} {origs['forward']}'s joint graph again with {label}"})
    result: dict[str, Any] = {}

    def compile_them() -> None:
        try:
            fw, bw = adapter.partition_again(joint, adapter.functorch_settings(settings))
            for k, gm in (("forward", fw), ("backward", bw)):
                state.tl.variant = (cid, keys[k])
                result["at"] = k
                fr = state.frames.get(state.frame_key(cid, origs[k])) or {}
                state.stop(cid, keys[k], "dynamo", {
                    "graph": fr.get("dynamo") or {"code": fr.get("dynamo_text") or "", "nodes": []},
                    "graph_breaks": fr.get("graph_breaks") or [], "recompile_reasons": [],
                    "note": f"The Dynamo graph of {cid}: this variant partitioned its joint graph again with {label} "
                            "(AOTAutograd's min-cut partitioner) and compiled the new forward and backward; Dynamo "
                            "did not run again."})
                adapter.compile_variant(adapter.graph_snapshot(gm), {}, is_backward=k == "backward",
                                        is_inference=False)
        except BaseException as e:  # noqa: BLE001 - the variant's failure, reported at its stage
            result["error"], result["traceback"] = e, traceback.format_exc()
        finally:
            state.tl.variant = None

    run_variant(state, compile_them, "inductor-step what-if (partition)")
    if "error" in result:
        first = send_variant_error(state, result["error"], result["traceback"], "aot", cid,
                                   keys.get(result.get("at", base), keys["forward"]))
        at = result.get("at", "partition")
        state.send({**head, "status": "failed", "message": f"the {at} variant failed: {first}"})
        return None
    for k in keys:
        state.variants.original[(cid, keys[k])] = (cid, origs[k])
    state.send({**head, "status": "done", "message": f"{cid} forward and backward partitioned again and "
                                                     f"compiled with {label}"})
    if time_with is not None:
        time_when_ready(state, time_with, [(cid, k) for k in origs.values()],
                        [f"{cid} {k}" for k in origs.values()] + [f"{cid} {v}" for v in keys.values()])
    return f"{cid} {keys[base]}"
