"""Pane 5: each scheduler node's ``LoopBody`` (var_ranges, indexing, ``ops.load``/``ops.store`` graph)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from inductor_step.tui.panes.base import Detail, StagePane, T, field_columns
from inductor_step.tui.table import NameColumn
from inductor_step.session.text import body_text, joined, template_note
from inductor_step.session.links import entry, related


class LoopBodyPane(StagePane):
    stage = "loopbody"
    title = "5 Loop"
    columns = ("node", "fused node", "buffers", "var_ranges")

    def _bodies(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        return data.bodies if isinstance(data.bodies, list) else []

    def templates(self) -> dict[str, str]:
        """Buffer -> its IR type where Inductor lowered it to a template (``CppTemplateBuffer``,
        ``TritonTemplateBuffer``), from the lowering stop's buffers (``ir_type``)."""
        low = self.app.session.stop_for(self.app.view.graph or "", "lowering")
        bufs = low.buffers if low is not None and isinstance(low.buffers, list) else []
        return {str(x.get("name")): str(x.get("ir_type")) for x in bufs
                if isinstance(x, dict) and str(x.get("ir_type") or "").endswith("TemplateBuffer")}

    def _template(self, data: dict[str, Any], b: dict[str, Any]) -> tuple[str, str] | None:
        """(cell, detail) for a template node's row (:func:`inductor_step.session.text.template_note`), None for
        any other (its recorded LoopBody or reason shown as it is)."""
        if "body" in b or not b.get("none"):
            return None
        ir = next((t for buf, t in self.templates().items() if buf in (b.buffers or [])), None)
        if ir is None:
            return None
        kernel = next((k for buf in b.buffers or [] for k in related(self.links, "buffers", buf, "kernels")), None)
        return template_note(b, ir, self._bodies(data), kernel)

    def rows(self, data: dict[str, Any]) -> tuple[Sequence[str], Callable[[int], tuple]]:
        bodies = self._bodies(data)

        def row(i: int) -> tuple:
            b = bodies[i]
            tmpl = self._template(data, b)
            return (T(b.node, "bold"), T(b.fused_node), T(joined(b.buffers)),
                    T(", ".join(f"{k}={v}" for k, v in (b.var_ranges or {}).items())
                      or (tmpl[0] if tmpl else b.none) or ""))
        return [f"{b.fused_node}/{b.node}" for b in bodies], row

    def names(self, data: dict[str, Any], keys: tuple[str, ...]) -> dict[int, NameColumn]:
        """The node and fused node columns (:meth:`StagePane.names`)."""
        bodies = self._bodies(data)
        return field_columns(len(bodies), bodies.__getitem__, {0: "node", 1: "fused_node"})

    def empty(self, data: dict[str, Any]) -> Detail:
        bodies = data.bodies
        return Detail(f"# {bodies.unavailable}" if isinstance(bodies, dict)
                      else f"# {data.get('none') or 'no LoopBody in this graph'}")

    def detail(self, data: dict[str, Any], row: int) -> Detail | None:
        bodies = self._bodies(data)
        if not 0 <= row < len(bodies):
            return None
        tmpl = self._template(data, bodies[row])
        return Detail(tmpl[1] if tmpl else body_text(bodies[row]))

    def row_for(self, data: dict[str, Any], buffer: str) -> int | None:
        b = entry(self.links, "buffers", buffer)
        return self.row_of_key(data, f"{b.get('fused_node')}/{b.get('scheduler_node')}")

    def buffers_of(self, data: dict[str, Any], row: int) -> list[str]:
        bodies = self._bodies(data)
        if not 0 <= row < len(bodies):
            return []
        op = bodies[row]["node"]
        return related(self.links, "scheduler_nodes", op, "buffers")
