"""Templates and autotuning on a graph's kernels: plain-data marking, no torch."""

from __future__ import annotations

from typing import Any


def mark_templates(kernels: list[dict[str, Any]], templates: dict[str, dict[str, Any]]) -> None:
    """Mark each kernel that computes a template's fused node (``templates``: fused node -> its template,
    tracer.adapter.template_nodes) with ``template`` (the template buffer's IR type), ``template_node``
    and its ``epilogue`` / ``prologue`` scheduler nodes (protocol.Kernel), in place.  ``templates`` that
    is ``{"unavailable": ...}`` marks nothing."""
    if not isinstance(templates, dict) or "unavailable" in templates:
        return
    for k in kernels:
        for fused in k.get("fused_nodes") or []:
            t = templates.get(fused)
            if not isinstance(t, dict):
                continue
            k["template"] = t.get("template") or "template"
            if t.get("template_node"):
                k["template_node"] = t["template_node"]
            k["epilogue"] = list(t.get("epilogue") or [])
            if t.get("prologue"):
                k["prologue"] = list(t["prologue"])
            break
