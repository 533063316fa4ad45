"""Pane 2: the AOT graphs (``aot_*_graph``) and the post-grad graph Inductor lowered."""

from __future__ import annotations

from typing import Any

from inductor_step.tui.panes.fx import FxPane
from inductor_step.session.fx_names import aot_input_names
from inductor_step.session.paths import shorten_in_text
from inductor_step.session.subgraph_lines import inner_user_lines
from inductor_step.session.text import POST_GRAD_HEAD, aot_text


class AotPane(FxPane):
    stage = "aot"
    title = "2 AOT"
    columns = ("node", "op", "target", "shape", "dtype", "user line")
    graph_field = "post_grad"
    links_field = "fx_nodes"

    def text(self, data: dict[str, Any]) -> str:
        dyn = self.app.session.stop_for(self.app.view.graph or "", "dynamo")
        syms = dyn.symbols if dyn is not None and isinstance(dyn.symbols, list) else None
        sd = self.app.session.script_dir
        return self.app.session.cache.get(("aot_text", id(data)), (data, syms),
                                          lambda: shorten_in_text(aot_text(data, syms), sd))

    def user_lines(self, data: dict[str, Any]) -> dict[str, str]:
        """In a higher-order op's subgraph (flex attention's ``sdpa_score0``), the line in the user's function
        (``score_mod``) for the post-grad nodes whose recorded stack ends at the op's call
        (:func:`inductor_step.session.subgraph_lines.inner_user_lines`, from the Dynamo subgraph's nodes)."""
        if not data.subgraph:
            return {}
        nodes = self._dynamo_nodes()
        return self.cached_index(data, "inner_lines", lambda: inner_user_lines(self.nodes(data), nodes))

    def input_names(self, data: dict[str, Any]) -> dict[str, str]:
        """``primals_1`` -> ``fc1.weight``: the parameter, buffer or script input each graph input holds, from the
        notes AOTAutograd writes beside its graphs' inputs and Dynamo's inputs (session.fx_names.aot_input_names)."""
        nodes = self._dynamo_nodes()
        return self.cached_index(data, "input_names", lambda: aot_input_names(data.aot_graphs, nodes))

    def _dynamo_nodes(self) -> list[Any]:
        """The shown graph's Dynamo FX nodes (its dynamo stop's ``graph.nodes``), [] without a Dynamo graph."""
        dyn = self.app.session.stop_for(self.app.view.graph or "", "dynamo")
        dgraph = dyn.graph if dyn is not None else None
        return (dgraph.nodes if isinstance(dgraph, dict) else None) or []

    def text_start(self, text: str) -> int:
        m = POST_GRAD_HEAD.search(text)
        return text.count("\n", 0, m.start()) if m else 0

    def node_names(self, b: dict[str, Any]) -> list[str]:
        return list(b.fx_nodes or [])
