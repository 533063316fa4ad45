"""Pane 4: the scheduler's nodes after fusion (``SchedulerNode``, ``FusedSchedulerNode``), Inductor's
fusion decisions for each, and ``f``: were two nodes fused, and why (``Scheduler.can_fuse``, live)."""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from inductor_step.session.format import CMD_CAN_FUSE, graph_key
from inductor_step.session.fusion_fix import LIBRARY_CALL
from inductor_step.tui.panes.base import Detail, StagePane, T
from inductor_step.session.paths import shorten_in_text
from inductor_step.session.text import joined, snode_text


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
                     asking: str) -> str:
    """The ``f`` answer for nodes ``a`` and ``b``: fused or not (from the ``after`` list), the fusion
    log's lines naming both, and ``can_fuse``'s live verdict when it came (else ``asking``)."""
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
    text += ["# " + x for x in log] or [_no_log_reason(stop, a, b)]
    if verdict is not None:
        text += [f"\n# scheduler.can_fuse({a}, {b}) now: {verdict}"] + ["#   " + r for r in reasons or []]
    else:
        text.append("\n# " + asking)
    return "\n".join(text)


def wrapped(text: str, width: int) -> str:
    """``text`` with its lines wrapped at ``width`` (a comment's continuation keeps its ``#``): the
    ``f`` answer is prose, read in a code view that does not wrap (issue 33.7)."""
    import textwrap  # noqa: PLC0415

    out: list[str] = []
    for line in text.split("\n"):
        lead = line[:len(line) - len(line.lstrip("# "))] if line.startswith("#") else ""
        out += textwrap.wrap(line, width, subsequent_indent=(lead or "") + "  ", break_on_hyphens=False) or [""]
    return "\n".join(out)


def _no_log_reason(stop: dict[str, Any], a: str, b: str) -> str:
    """Why the fusion log has no line on ``a`` and ``b`` (issue 32): a library call on a side (an
    ``ExternKernelSchedulerNode``: never fused, the ledger's reason, session.fusion_fix.LIBRARY_CALL), else no
    shared data, else why Inductor dropped the pair before ``can_fuse``."""
    nodes = {n.get("name"): n for n in stop.get("after") or [] if isinstance(n, dict)}
    lib = [x for x in (a, b) if "Extern" in str((nodes.get(x) or {}).get("type") or "")
           or "NopKernel" in str((nodes.get(x) or {}).get("type") or "")]
    if lib:
        return f"# (no fusion-log line on this pair: {lib[0]} is a library call: {LIBRARY_CALL})"
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


class SchedulingPane(StagePane):
    stage = "scheduling"
    title = "4 Sched"
    columns = ("scheduler node", "type", "members", "buffers")

    def rows(self, data: dict[str, Any]) -> tuple[Sequence[str], Callable[[int], tuple]]:
        after = data.get("after")
        after = after if isinstance(after, list) else []
        return [n["name"] for n in after], \
            lambda i: (T(after[i]["name"], "bold"), T(after[i].get("type"), "magenta"),
                       T(joined(after[i].get("members"))), T(joined(after[i].get("buffers"))))

    def empty(self, data: dict[str, Any]) -> Detail | None:
        after = data.get("after")
        return Detail(f"# {after.get('unavailable')}") if isinstance(after, dict) else Detail("# no scheduler nodes")

    def detail(self, data: dict[str, Any], row: int) -> Detail | None:
        after = data.get("after") or []
        if not 0 <= row < len(after):
            return None
        n = after[row]
        idx = self.app.session.fusion_index(data)
        lines = sorted({i for m in set(n.get("members") or []) | {n["name"]} for i in idx.get(m, ())})
        return Detail(shorten_in_text(snode_text(data, n, lines), self.app.session.script_dir))

    def row_for(self, data: dict[str, Any], buffer: str) -> int | None:
        return self.row_of_key(data, ((self.links.get("buffers") or {}).get(buffer) or {}).get("fused_node"))

    def buffers_of(self, data: dict[str, Any], row: int) -> list[str]:
        key = self.key_of_row(data, row)
        return list(((self.links.get("fused_nodes") or {}).get(key or "") or {}).get("buffers") or [])

    _pair_first: str | None = None

    def session_message(self, msg: dict[str, Any]) -> None:
        """``can_fuse``'s live answer (a ``fusion_query`` message) for the pair asked with ``f``."""
        if msg.get("type") == "fusion_query":
            self.show_pair(msg.get("a"), msg.get("b"), msg.get("verdict"), msg.get("reasons"))

    def fusion_pair(self) -> None:
        """``f``: the first press names a node; the second, on another node, shows whether the two
        were fused, the fusion log's lines on them, and (while this graph is paused at scheduling or
        later) ``Scheduler.can_fuse`` asked live."""
        table, app = self.table, self.app
        if not table.row_count:
            return
        name = table.row_keys[table.cursor_row]
        if self._pair_first is None or self._pair_first == name:
            self._pair_first = name
            app.set_status(f"fusion pair: {name} and … (move to another node, press f)")
            return
        a, b = self._pair_first, name
        self._pair_first = None
        v = app.view
        live = (app.agent is not None and v.paused is not None and graph_key(v.paused) == v.graph
                and v.paused["stage"] in ("scheduling", "loopbody", "codegen"))
        self.show_pair(a, b, asking="asking scheduler.can_fuse …" if live else
                       "can_fuse for any pair is asked live while the compile is paused at this graph's "
                       "scheduling, loopbody or codegen stop")
        app.set_status(f"fusion pair {a} and {b}: answer below")
        if live:
            app.agent.send(CMD_CAN_FUSE, a=a, b=b)

    def show_pair(self, a: str, b: str, verdict: str | None = None, reasons: list[str] | None = None,
                  asking: str = "") -> None:
        data = self.data() or {}
        text = shorten_in_text(fusion_pair_text(data, a, b, verdict, reasons, asking), self.app.session.script_dir)
        self.apply(Detail(wrapped(text, max(30, self.code.size.width - 8))))
