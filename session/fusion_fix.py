"""Missed fusions sorted by what can be done: the ones Inductor could never make, and a setting to try for the rest.

A buffer written by one kernel and read back by another is a missed fusion only where Inductor's scheduler
could have fused the two.  A library call (an extern kernel: ``extern_kernels.mm``, ``addmm``,
``convolution``, a collective) is never fused with a generated kernel by the scheduler, so such a pair is
listed apart, with that reason said once.  For the rest, the fusion log's reason (``cannot fuse op0 with op3:
<reason>``, as ``torch._inductor.scheduler.WhyNoFuse`` and ``torch._inductor.choices`` write it) maps to a
``torch._inductor.config`` setting that lifts it where one exists (:data:`SETTINGS`), to try with ``w``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # (session.ledger imports this module)
    from inductor_step.session.ledger.rows import FusionRow

#: the one sentence for every pair with a library call on a side (ledger, REPORT.md and pane 4's ``f``)
LIBRARY_CALL = ("Inductor's scheduler never fuses a library call (an extern kernel, run by ATen/oneDNN/cuBLAS) with a "
                "generated kernel; only a GEMM generated from a template takes a "
                "pointwise epilogue (try w max_autotune=True: on GPU a Triton template, on CPU a C++ template where it "
                "applies)")

#: the same where the graph was compiled with max_autotune already (nothing to try: no template won)
LIBRARY_CALL_TUNED = ("Inductor's scheduler never fuses a library call (an extern kernel, run by ATen/oneDNN/cuBLAS) "
                      "with a generated kernel; only a GEMM generated from a template takes a pointwise epilogue, and "
                      "this graph was compiled with max_autotune=True already: autotuning chose the library call")
#: a NopKernelSchedulerNode on a side (pane 4's ``f``): no kernel at all, not a library call
NOP_NODE = ("a NopKernelSchedulerNode: no kernel of its own (a concat whose inputs were written straight into its "
            "output, a view or an empty buffer), so there is nothing to fuse; Inductor's own word for it is 'extern "
            "or nop'")


def max_autotuned(compiled_with: dict[str, Any] | None) -> bool:
    """Was the graph compiled with ``max_autotune`` on (its dynamo stop's ``compiled_with``: the mode or config)?"""
    if not isinstance(compiled_with, dict):
        return False
    cfg = {**(compiled_with.get("options") or {}), **(compiled_with.get("config") or {})}
    return bool(cfg.get("max_autotune")) or str(compiled_with.get("mode") or "").startswith("max-autotune")


def library_call(compiled_with: dict[str, Any] | None = None) -> str:
    """:data:`LIBRARY_CALL`, or :data:`LIBRARY_CALL_TUNED` for a graph compiled with max_autotune (
    REPORT.md suggested max_autotune=True for a graph compiled with it)."""
    return LIBRARY_CALL_TUNED if max_autotuned(compiled_with) else LIBRARY_CALL


#: fusion-log reason (a substring of WhyNoFuse's text) -> (setting to try with ``w`` or None, what it does)
SETTINGS: list[tuple[str, str | None, str]] = [
    ("no shared data due to indexing mismatch", None,
     "the two index the shared buffer differently; loop_ordering_after_fusion (on by default) already tries reordering"),
    ("no shared data", "aggressive_fusion=True", "fuse nodes that share no data (not for reductions)"),
    ("exceeds max fusion", "max_fusion_size=128", "the fused node would hold more than max_fusion_size (64) nodes"),
    ("score_fusion_memory_threshold", "score_fusion_memory_threshold=1",
     "they share too few bytes for Inductor to think fusing worth it (threshold 10)"),
    ("fusion_prevent_too_many_reads_and_writes", "max_fusion_unique_io_buffers=None",
     "the fused kernel would read and write too many buffers"),
    ("prologue fusion turned off", "prologue_fusion=True", "prologue fusion into a template is off"),
    ("template epilogue not satisfied", "epilogue_fusion=True", "epilogue fusion into a template"),
    ("Fusion will increase peak memory", None, "fusing would raise the graph's peak memory; no setting overrides it"),
    ("Nodes are too far away", None, "the nodes run far apart in the graph; fusing could raise peak memory"),
    ("intermediate nodes between node1 & node2", None,
     "a node between them in the graph (often a library call) needs the first's output and feeds the second: "
     "fusing would make a cycle"),
    ("node1 must go before node2", None, "the order of the graph forbids it"),
    ("memory deps did not match", None, "they index the buffer differently (loop_ordering_after_fusion is on by default)"),
    ("numel", None, "their loops have different sizes (numel/rnumel)"),
    ("register spilling", None, "the fused Triton kernel would spill registers"),
    ("strict sum ordering", None, "fusing would change the order of a floating-point sum"),
    ("device mismatch", None, "they run on different devices"),
    # the ledger's verdict when the fusion log has no line on the pair (session.ledger.fusion_reason)
    ("no fusion-log line names both", "max_fusion_buffer_group_pairwise_attempts=256",
     "if they are far apart: Inductor pairs a node only with the next 64 nodes that use the same buffer"),
]

_EXTERN = re.compile(r"^(?:extern_kernels\.|torch\.ops\.)")


def is_library(kernel: str, links: dict[str, Any] | None = None) -> bool:
    """Is ``kernel`` (a kernel name as generated: ``extern_kernels.mm#0``) a library call?"""
    return (((links or {}).get("kernels") or {}).get(kernel) or {}).get("backend") == "extern" \
        or bool(_EXTERN.match(kernel))


def setting_for(verdict: str) -> tuple[str | None, str]:
    """(setting to try with ``w`` or None, why) for a fusion log's reason (``"Inductor: cannot fuse op0 with
    op3: exceeds max fusion"``); ``(None, "")`` when no reason is known."""
    for sub, setting, why in SETTINGS:
        if sub.lower() in verdict.lower():
            return setting, why
    return None, ""


def classify(rows: list[FusionRow]) -> tuple[list[FusionRow], list[FusionRow]]:
    """Split :func:`session.ledger.fusion_rows` into (actionable, library): a library call on either side goes to
    ``library``; each actionable row gets ``fix`` (a setting to try with ``w``, or None) and ``fix_why``.
    Actionable rows with a setting come first, each group keeping its cost order."""
    act, lib = [], []
    for r in rows:
        if is_library(r.producer) or is_library(r.consumer):
            lib.append(r)
            continue
        fix, why = setting_for(r.verdict or "")
        act.append(replace(r, fix=fix, fix_why=why))
    act.sort(key=lambda r: r.fix is None)  # stable: costliest first within each group
    return act, lib


def fix_text(r: FusionRow) -> str:
    """What would make an actionable row (a :class:`~inductor_step.session.ledger.rows.FusionRow`) fuse, in words."""
    if r.fix:
        return f"try w {r.fix} ({r.fix_why})"
    return f"no setting lifts this ({r.fix_why})" if r.fix_why else "no known setting lifts this"


__all__ = ["LIBRARY_CALL", "LIBRARY_CALL_TUNED", "NOP_NODE", "SETTINGS", "classify", "fix_text", "is_library",
           "library_call", "max_autotuned", "setting_for"]
