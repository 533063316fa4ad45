"""The ``f`` answer on two scheduler nodes: were they fused (the scheduling stop's ``after``), Inductor's fusion-log lines on them, and why there are none."""

from __future__ import annotations

import re
from typing import Any

from inductor_step.session.fusion_fix import NOP_NODE, library_call


def members(stop: dict[str, Any], name: str) -> set[str]:
    """The scheduler nodes (``opN``) a node of ``stop``'s ``after`` list stands for: its members, or
    itself when it has none (a node not fused with anything)."""
    n = next((n for n in stop.get("after") or [] if n.get("name") == name), None)
    return set((n or {}).get("members") or []) or {name}


def fused_together(stop: dict[str, Any], a: str, b: str) -> bool:
    """Did Inductor put ``a`` and ``b`` (names from ``after``) into one node: is there a node whose
    members hold both sides' members?"""
    want = members(stop, a) | members(stop, b)
    return a == b or any(set(n.get("members") or [n.get("name")]) >= want for n in stop.get("after") or [])


def fusion_pair_text(stop: dict[str, Any], a: str, b: str, verdict: str | None, reasons: list[str] | None,
                     asking: str, compiled_with: dict[str, Any] | None = None) -> str:
    """The ``f`` answer for nodes ``a`` and ``b``: fused or not (from the ``after`` list), the fusion
    log's lines naming both, and ``can_fuse``'s live verdict when it came (else ``asking``);
    ``compiled_with``: the graph's (its dynamo stop's), so a library call's advice fits how it was compiled."""
    ma, mb = members(stop, a), members(stop, b)

    def mentions(line: str, names: set[str]) -> bool:
        return any(re.search(rf"\b{re.escape(x)}\b", line) for x in names)

    counts: dict[str, int] = {}
    for ln in stop.get("fusion_log") or []:
        if mentions(ln, ma | {a}) and mentions(ln, mb | {b}):
            counts[ln] = counts.get(ln, 0) + 1
    log = [x if k == 1 else f"{x}  (logged {k} times: once per fusion round)" for x, k in counts.items()]
    text = [f"# {a} and {b}: " + ("fused into one node" if fused_together(stop, a, b) else "not fused"),
            "# ---- Inductor's fusion log for this pair ----"]
    text += ["# " + x for x in log] or [_no_log_reason(stop, a, b, compiled_with)]
    if verdict is not None:
        text += [f"\n# scheduler.can_fuse({a}, {b}) now: {verdict}"] + ["#   " + r for r in reasons or []]
    else:
        text.append("\n# " + asking)
    return "\n".join(text)


def wrapped(text: str, width: int) -> str:
    """``text`` with its lines wrapped at ``width`` (a comment's continuation keeps its ``#``): the
    ``f`` answer is prose, read in a code view that does not wrap."""
    import textwrap  # noqa: PLC0415

    out: list[str] = []
    for line in text.split("\n"):
        lead = line[:len(line) - len(line.lstrip("# "))] if line.startswith("#") else ""
        out += textwrap.wrap(line, width, subsequent_indent=(lead or "") + "  ", break_on_hyphens=False) or [""]
    return "\n".join(out)


def _no_log_reason(stop: dict[str, Any], a: str, b: str, compiled_with: dict[str, Any] | None = None) -> str:
    """Why the fusion log has no line on ``a`` and ``b``: a library call on a side (an
    ``ExternKernelSchedulerNode``: never fused, the ledger's reason, session.fusion_fix.library_call), a
    ``NopKernelSchedulerNode`` (no kernel at all), else no shared data, else why Inductor dropped the
    pair before ``can_fuse``."""
    nodes = {n.get("name"): n for n in stop.get("after") or [] if isinstance(n, dict)}
    kind = {x: str((nodes.get(x) or {}).get("type") or "") for x in (a, b)}
    nop = [x for x in (a, b) if "NopKernel" in kind[x]]
    if nop:
        return f"# (no fusion-log line on this pair: {nop[0]} is {NOP_NODE})"
    lib = [x for x in (a, b) if "Extern" in kind[x]]
    if lib:
        return f"# (no fusion-log line on this pair: {lib[0]} is a library call: {library_call(compiled_with)})"
    shared = set((nodes.get(a) or {}).get("buffers") or []) & _reads(nodes.get(b)) \
        | set((nodes.get(b) or {}).get("buffers") or []) & _reads(nodes.get(a))
    if shared:
        return (f"# (no fusion-log line on this pair, though they share {', '.join(sorted(shared))}: Inductor pairs "
                "a node only with the next max_fusion_buffer_group_pairwise_attempts (64) nodes using the same buffer, "
                "and some of can_fuse's refusals are not logged)")
    return "# (the fusion log never considered this pair: Inductor only tries pairs that share data)"


def _reads(node: dict[str, Any] | None) -> set[str]:
    """Buffers a scheduler node reads from other nodes (its ``unmet_dependencies`` text)."""
    return set(re.findall(r"(?:MemoryDep|StarDep)\(\s*(?:name=)?'(\w+)'", str((node or {}).get("text") or "")))
