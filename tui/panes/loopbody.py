"""Pane 5: each scheduler node's ``LoopBody`` (var_ranges, indexing, ``ops.load``/``ops.store`` graph)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from inductor_step.tui.panes.base import Detail, StagePane, T
from inductor_step.session.text import body_text, joined
from inductor_step.session.links import entry, related


class LoopBodyPane(StagePane):
    stage = "loopbody"
    title = "5 Loop"
    columns = ("node", "fused node", "buffers", "var_ranges")

    def _bodies(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        return data.bodies if isinstance(data.bodies, list) else []

    def rows(self, data: dict[str, Any]) -> tuple[Sequence[str], Callable[[int], tuple]]:
        bodies = self._bodies(data)

        def row(i: int) -> tuple:
            b = bodies[i]
            return (T(b.node, "bold"), T(b.fused_node), T(joined(b.buffers)),
                    T(", ".join(f"{k}={v}" for k, v in (b.var_ranges or {}).items()) or b.none or ""))
        return [f"{b.fused_node}/{b.node}" for b in bodies], row

    def empty(self, data: dict[str, Any]) -> Detail:
        bodies = data.bodies
        return Detail(f"# {bodies.unavailable}" if isinstance(bodies, dict)
                      else f"# {data.get('none') or 'no LoopBody in this graph'}")

    def detail(self, data: dict[str, Any], row: int) -> Detail | None:
        bodies = self._bodies(data)
        return Detail(body_text(bodies[row])) if 0 <= row < len(bodies) else None

    def row_for(self, data: dict[str, Any], buffer: str) -> int | None:
        b = entry(self.links, "buffers", buffer)
        return self.row_of_key(data, f"{b.get('fused_node')}/{b.get('scheduler_node')}")

    def buffers_of(self, data: dict[str, Any], row: int) -> list[str]:
        bodies = self._bodies(data)
        if not 0 <= row < len(bodies):
            return []
        op = bodies[row]["node"]
        return related(self.links, "scheduler_nodes", op, "buffers")
