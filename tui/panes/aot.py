"""Pane 2: the AOT graphs (``aot_*_graph``) and the post-grad graph Inductor lowered."""

from __future__ import annotations

from typing import Any

from inductor_step.tui.panes.fx import FxPane
from inductor_step.session.paths import shorten_in_text
from inductor_step.session.text import POST_GRAD_HEAD, aot_text


class AotPane(FxPane):
    stage = "aot"
    title = "2 AOT"
    columns = ("node", "op", "target", "shape", "dtype", "user line")
    graph_field = "post_grad"
    links_field = "fx_nodes"

    def text(self, data: dict[str, Any]) -> str:
        dyn = self.app.session.stop_for(self.app.view.graph or "", "dynamo") or {}
        syms = dyn.get("symbols") if isinstance(dyn.get("symbols"), list) else None
        sd = self.app.session.script_dir
        return self.app.session.cache.get(("aot_text", id(data)), (data, syms),
                                          lambda: shorten_in_text(aot_text(data, syms), sd))

    def text_start(self, text: str) -> int:
        m = POST_GRAD_HEAD.search(text)
        return text.count("\n", 0, m.start()) if m else 0

    def node_names(self, b: dict[str, Any]) -> list[str]:
        return list(b.get("fx_nodes") or [])
