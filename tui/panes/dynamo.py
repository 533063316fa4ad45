"""Pane 1: Dynamo's FX graph (``dynamo_output_graph``), why the graph exists, and its guards."""

from __future__ import annotations

import os
from typing import Any

from textual import on

from inductor_step.session.diff import guard_list
from inductor_step.session.format import GraphKey
from inductor_step.tui.panes.fx import FxPane
from inductor_step.session.fx_names import short_names, with_short_names
from inductor_step.session.paths import short_path, shorten_in_text
from inductor_step.session.text import commented, dynamo_text
from inductor_step.tui.table import Table

#: the status line's answer to Enter on a row that opens nothing
ENTER_HELP = ("Enter in pane 1 opens the IR buffer an FX node became: in pane 8 (its kernel lines and your code) "
              "from codegen on, in pane 3 from lowering on")


class DynamoPane(FxPane):
    stage = "dynamo"
    title = "1 Dynamo"
    columns = ("node", "op", "target", "shape", "dtype", "user line")
    graph_field = "graph"
    links_field = "dynamo_nodes"

    def guards(self, data: dict[str, Any]) -> tuple[str | None, str]:
        """The guards of ``data``'s compile (``dynamo_cpp_guards_str``) and their commented text,
        kept per compile (the forward and backward graphs of one compile share them): first each
        guard with the user line that installed it and whether it failed in a later recompile of the
        frame (:func:`inductor_step.session.diff.guard_list`), then the guard tree as Dynamo prints it."""
        cid = data["compile_id"]
        session = self.app.session
        guards = session.guards.get(cid)
        frame = GraphKey(cid, "").frame
        later = tuple(s for g in session.graphs if (k := GraphKey.parse(g)).frame == frame and k.compile_id != cid
                      for s in [session.stop_for(g, "dynamo")] if s is not None)

        def build() -> str:
            script = session.header.script
            listed = guard_list(cid, guards, later, os.path.dirname(script) if script else None)
            tree = commented(guards or "")
            return f"{listed}\n\n# ---- the guard tree ----\n{tree}" if listed else tree
        text = session.cache.get(("guards", cid), (guards, *later), build)
        return guards, text

    def shown_names(self, data: dict[str, Any]) -> dict[str, str]:
        """Dynamo's names without their module-path markers (:func:`inductor_step.session.fx_names.short_names`),
        in the table and the code alike (Llama's ``g_model_modules_model_modules_layers_modules_0_modules_self_attn_
        modules_k_proj_parameters_weight_`` reads ``g_model_model_layers_0_self_attn_k_proj_weight_`` in both)."""
        def build() -> dict[str, str]:
            graph = data.graph
            nodes = (graph.nodes if graph is not None else None) or []
            code = (graph.code if graph is not None else None) or ""
            return short_names(code, [n.name for n in nodes] + [str(n.target) for n in nodes if n.op == "placeholder"])
        return self.app.session.cache.get(("dynamo_names", id(data)), (data,), build)

    def text(self, data: dict[str, Any]) -> str:
        guards, commented_guards = self.guards(data)

        def build() -> str:
            names = self.shown_names(data)
            text = with_short_names(shorten_in_text(dynamo_text(data, guards, commented_guards),
                                                    self.app.session.script_dir), names)
            if names:  # said under the first line, itself left as it is
                full, short = min(names.items(), key=lambda kv: (len(kv[0]), kv[0]))
                first, _, rest = text.partition("\n")
                text = (f"{first}\n# names: Dynamo's module-path parts _modules_, _parameters_, _buffers_ left out "
                        f"here and in the table ({full} reads {short})\n{rest}")
            return self.skipped_head(data) + text
        return self.backward_head() + self.app.session.cache.get(("dynamo_text", id(data)), (data, guards), build)

    def backward_head(self) -> str:
        """A first line when the graph shown is a backward: it has no Dynamo graph of its own, so this is the
        forward's, from which AOTAutograd derived it."""
        key = GraphKey.parse(self.app.view.graph) if self.app.view.graph else None
        if key is None or not key.kind.startswith("backward"):
            return ""
        return (f"# {key.compile_id} backward has no Dynamo graph of its own: AOTAutograd derived it from this one, "
                f"the forward's (pane 2 shows the joint and backward graphs)\n")

    def stamp(self, data: dict[str, Any] | None) -> Any:
        """As every pane's, and whether the script has ended: the last graph's head then names the frames after it
        that gave no graph (:meth:`skipped_head`)."""
        return (super().stamp(data), self.app.session.done is not None)

    def skipped_head(self, data: dict[str, Any]) -> str:
        """First lines on the frames around this graph that gave none: the session's first graph's skipped frame ids,
        the graph breaks Dynamo met in frames with no graph before it (``breaks_before``) and, on the last graph, after
        it (the ``done`` message's ``breaks_after``), each in full."""
        from inductor_step.session.format import graph_key  # noqa: PLC0415
        from inductor_step.session.text import after_frames_text, graphless_breaks, skipped_frames_text  # noqa: PLC0415

        session = self.app.session
        key = graph_key(data)
        after = session.breaks_after(key)
        head: list[str] = []
        for line, breaks in ((skipped_frames_text(data, session.skipped_frames(key), session.script_dir),
                              graphless_breaks(data)),
                             (after_frames_text(after, session.script_dir), graphless_breaks({"breaks_before": after}))):
            if not line:
                continue
            head.append(f"# {line.split(': graph break: ')[0]}")
            for b, cids in breaks:
                head.append(f"# graph break: {b['reason']} (in {', '.join(cids)}, which gave no graph)")  # reason first
                head += [f"#   {k}: {b[k]}" for k in ("explanation", "hint") if b[k]]
                if b["where"]:
                    head.append(f"#   user code: {short_path(b['where'], session.script_dir)}")
        return "\n".join(head) + "\n" if head else ""

    def node_names(self, b: dict[str, Any]) -> list[str]:
        return list(b.dynamo_nodes or [])

    @on(Table.RowSelected, "#table-dynamo")
    def _enter(self, event: Table.RowSelected) -> None:
        """Enter on an FX node: the IR buffer it became in pane 8, the linked view (its scheduler node, kernel
        lines and your code; from codegen on), else in pane 3 (from lowering on), as Enter in pane 8 opens a
        line's level; on a node that became no buffer, or before lowering, the status line says so."""
        data = self.data()
        nodes = self.nodes(data) if data is not None else []
        row = event.cursor_row
        if not 0 <= row < len(nodes):
            return
        node = self.shown_names(data).get(nodes[row].name, nodes[row].name)
        graph = self.app.view.graph
        session = self.app.session
        if session.stop_for(graph, "lowering") is None:
            self.app.set_status(f"{ENTER_HELP}; {graph} is not lowered yet (n: continue)")
            return
        bufs = self.buffers_of(data, row)
        if not bufs:
            self.app.set_status(f"{node} became no IR buffer (an input, a view or folded into another's "
                                f"kernel): {ENTER_HELP}")
            return
        stage, key = ("linked", "8") if session.links(graph) else ("lowering", "3")
        self.app.open_in_pane(graph, stage, bufs[0], bufs)
        more = f" (it became {len(bufs)}: {', '.join(bufs[:4])}{'…' if len(bufs) > 4 else ''})" if len(bufs) > 1 else ""
        self.app.set_status(f"pane {key} at {bufs[0]}, the buffer {node} became{more} (Enter in pane 1)")
