"""Lookups in a graph's links (the cross-level index the tracer builds at codegen): one entry, its related names, a buffer's kernel lines.

``links`` is a codegen stop's ``links`` (session.format.Links, built by tracer.links from Inductor's
provenance and the wrapper's call arguments), or before codegen what the earlier stops tell
(session.prelinks.stop_links).  ``kind`` is one of its maps: ``buffers``, ``kernels``, ``fx_nodes``,
``dynamo_nodes``, ``scheduler_nodes``, ``fused_nodes``.  The panes and the API objects
(session.objects) both navigate through these, so a link means the same in both.  No Textual, no torch.
"""

from __future__ import annotations

from typing import Any

from inductor_step.session.format.records import Record

KINDS = ("buffers", "kernels", "fx_nodes", "dynamo_nodes", "scheduler_nodes", "fused_nodes")


def entry(links: dict[str, Any] | None, kind: str, name: str | None) -> dict[str, Any]:
    """``links[kind][name]`` (a LinkBuffer, LinkKernel, ... record where ``links`` is a ``Links`` record: read by
    attribute), {} when the links, the map or the name are missing."""
    typed = isinstance(links, Record) and isinstance(getattr(type(links), kind, None), property)
    table = getattr(links, kind) if typed else (links or {}).get(kind)
    return (table or {}).get(name or "") or {}


def related(links: dict[str, Any] | None, kind: str, name: str | None, field: str) -> list[str]:
    """The names ``links[kind][name][field]`` lists (``related(links, "kernels", k, "buffers")``: the buffers
    kernel ``k`` computes), [] when there are none."""
    return list(entry(links, kind, name).get(field) or [])


def buffer_lines(links: dict[str, Any] | None, buffer: str | None, kernel: str) -> list[tuple[int, int]]:
    """The [first, last] 1-based line ranges of ``kernel``'s source that are ``buffer``'s (tracer.kernel_lines),
    [] when ``kernel`` does not compute ``buffer`` or the links mark no line."""
    b = entry(links, "buffers", buffer)
    if kernel not in (b.get("kernels") or []):
        return []
    return [(int(a), int(e)) for a, e in (b.get("kernel_lines") or {}).get(kernel) or []]
