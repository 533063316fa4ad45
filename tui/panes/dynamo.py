"""Pane 1: Dynamo's FX graph (``dynamo_output_graph``), why the graph exists, and its guards."""

from __future__ import annotations

from typing import Any

from inductor_step.tui.panes.fx import FxPane
from inductor_step.tui.text import commented, dynamo_text


class DynamoPane(FxPane):
    stage = "dynamo"
    title = "1 Dynamo"
    columns = ("node", "op", "target", "shape", "dtype", "user line")
    graph_field = "graph"
    links_field = "dynamo_nodes"

    def guards(self, data: dict[str, Any]) -> tuple[str | None, str]:
        """The guards of ``data``'s compile (``dynamo_cpp_guards_str``) and their commented text,
        kept per compile (the forward and backward graphs of one compile share them)."""
        cid = data["compile_id"]
        guards = self.app.session.guards.get(cid)
        text = self.app.session.cache.get(("guards", cid), (guards,), lambda: commented(guards or ""))
        return guards, text

    def text(self, data: dict[str, Any]) -> str:
        guards, commented_guards = self.guards(data)
        return self.app.session.cache.get(("dynamo_text", id(data)), (data, guards),
                                          lambda: dynamo_text(data, guards, commented_guards))

    def node_names(self, b: dict[str, Any]) -> list[str]:
        return list(b.get("dynamo_nodes") or [])
