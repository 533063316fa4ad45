"""ctrl+p: the app's own commands (go to a stage or a graph, run, report, screenshot), beside
Textual's (theme, quit, keys)."""

from __future__ import annotations

from typing import Any

from textual.command import Hit, Hits, Provider

from inductor_step.tui.panes import PANES


class Commands(Provider):
    """ctrl+p: go to a stage or a graph, diff with another graph, run, report, screenshot."""

    def _commands(self) -> list[tuple[str, Any, str]]:
        app: Any = self.app
        out = [(f"Go to stage: {p.title}", lambda s=p.stage: app.action_stage(s), f"pane {p.stage}")
               for p in PANES]
        out += [(f"Go to graph: {g}", lambda g=g: app.show_graph(g), "graph")
                for g in app.session.graphs]
        out += [(f"Diff with: {g}", lambda g=g: app.diff_with(g), "d: this graph against its default partner")
                for g in app.session.graphs if g != app.view.graph]
        out += [("What if: recompile this graph with Inductor settings changed", app.action_what_if, "w"),
                ("Run and time every graph", app.action_run, "r"),
                ("Write the bug-report bundle", app.action_report, "R"),
                ("Save a screenshot", app.action_screenshot, "s")]
        return out

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, call, help_ in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), call, help=help_)
