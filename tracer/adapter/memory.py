"""Inductor's own peak-memory estimate of a graph: ``torch._inductor.memory.estimate_peak_memory`` over the live scheduler's nodes, at the codegen stop."""

from __future__ import annotations

from typing import Any

from inductor_step.tracer.adapter.base import safe

SOURCE = "torch._inductor.memory.estimate_peak_memory over the scheduler's nodes in codegen order"


@safe("Inductor's peak memory estimate")
def inductor_peak_estimate(gl: Any) -> dict[str, Any]:
    """``{"bytes": peak, "source": ...}`` from torch's own estimator over ``gl`` (the live GraphLowering, after
    codegen); ``{"not_read": why}`` on torch before 2.13; ``{"unavailable": why}`` where this torch has no
    estimator or the scheduler is gone.  It sets
    the nodes' memory-planning fields (``mpi_buffer`` / ``mpi_node``) as Inductor's own reordering pass does;
    codegen is over by then, so nothing reads them again."""
    import torch  # noqa: PLC0415
    from torch._inductor import memory  # noqa: PLC0415
    from torch.utils._ordered_set import OrderedSet  # noqa: PLC0415

    if tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2]) < (2, 13):
        # torch 2.11's estimator, called this way, read 4 B for an MLP step whose plan and autograd both hold 34.8 kB
        return {"not_read": "not read on torch before 2.13 (its figures did not match the wrapper's plan here)"}

    sched = getattr(gl, "scheduler", None)
    if sched is None or not getattr(sched, "nodes", None):
        return {"unavailable": "Inductor's peak memory estimate: no live scheduler at codegen"}
    peak, _freeable = memory.prepare_planning_info(list(sched.nodes), sched.name_to_buf, sched.name_to_fused_node,
                                                   OrderedSet(gl.graph_inputs.keys()), OrderedSet(gl.get_output_names()))
    return {"bytes": int(peak), "source": SOURCE}
