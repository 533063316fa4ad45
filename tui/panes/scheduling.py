"""Pane 4: the scheduler's nodes after fusion (``SchedulerNode``, ``FusedSchedulerNode``), Inductor's
fusion decisions for each, and ``f``: were two nodes fused, and why (``Scheduler.can_fuse``, live)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from inductor_step.session.format import CMD_CAN_FUSE, graph_key
from inductor_step.session.fusion import fusion_pair_text, wrapped
from inductor_step.session.format.messages import FusionQuery
from inductor_step.session.links import related
from inductor_step.tui.panes.base import Detail, StagePane, T
from inductor_step.session.paths import shorten_in_text
from inductor_step.session.text import joined, snode_text


class SchedulingPane(StagePane):
    stage = "scheduling"
    title = "4 Sched"
    columns = ("scheduler node", "type", "members", "buffers")
    name_columns = (0,)

    def rows(self, data: dict[str, Any]) -> tuple[Sequence[str], Callable[[int], tuple]]:
        after = data.after if isinstance(data.after, list) else []
        return [n.name for n in after], \
            lambda i: (T(after[i].name, "bold"), T(after[i].type, "magenta"),
                       T(joined(after[i].members)), T(joined(after[i].buffers)))

    def empty(self, data: dict[str, Any]) -> Detail | None:
        after = data.after
        return Detail(f"# {after.unavailable}") if isinstance(after, dict) else Detail("# no scheduler nodes")

    def detail(self, data: dict[str, Any], row: int) -> Detail | None:
        after = data.after or []
        if not 0 <= row < len(after):
            return None
        n = after[row]
        idx = self.app.session.fusion_index(data)
        lines = sorted({i for m in set(n.members or []) | {n.name} for i in idx.get(m, ())})
        return Detail(shorten_in_text(snode_text(data, n, lines), self.app.session.script_dir))

    def row_for(self, data: dict[str, Any], buffer: str) -> int | None:
        b = (self.links.buffers or {}).get(buffer)
        return self.row_of_key(data, b.fused_node if b else None)

    def buffers_of(self, data: dict[str, Any], row: int) -> list[str]:
        key = self.key_of_row(data, row)
        return related(self.links, "fused_nodes", key, "buffers")

    _pair_first: str | None = None

    def session_message(self, msg: dict[str, Any]) -> None:
        """``can_fuse``'s live answer (a ``fusion_query`` message) for the pair asked with ``f``."""
        if msg.SCHEMA is FusionQuery:
            self.show_pair(msg.a, msg.b, msg.verdict, msg.reasons)

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
            app._status_for = "scheduling"  # said of pane 4: another pane shown clears it (StepApp.action_stage)
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
        app._status_for = "scheduling"  # "below" is pane 4's code: pane 8 read it too, with no answer below
        if live:
            app.agent.send(CMD_CAN_FUSE, a=a, b=b)

    def show_pair(self, a: str, b: str, verdict: str | None = None, reasons: list[str] | None = None,
                  asking: str = "") -> None:
        data = self.data() or {}
        dyn = self.app.session.stop_for(self.app.view.graph, "dynamo") if self.app.view.graph else None
        text = shorten_in_text(fusion_pair_text(data, a, b, verdict, reasons, asking,
                                                dyn.compiled_with if dyn is not None else None),
                               self.app.session.script_dir)
        self.apply(Detail(wrapped(text, max(30, self.code.size.width - 8))))
