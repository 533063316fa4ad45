"""ctrl+p: the app's own commands (go to a stage or a graph, diff with a graph, run, report,
screenshot), listed first, then Textual's (theme, keys, quit, ...)."""

from __future__ import annotations

from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

from inductor_step.tui.panes import PANES


def diff_help(graphs: list[str], shown: str | None, other: str) -> str:
    """What "Diff with: ``other``" does from graph ``shown``: the earlier of the two as A."""
    if shown is None:
        return "diff needs a graph shown first"
    a, b = sorted((other, shown), key=lambda g: graphs.index(g) if g in graphs else 0)
    mark = {shown: " (shown)"}
    return f"diff {a}{mark.get(a, '')} as A against {b}{mark.get(b, '')} as B, level by level"


class Commands(Provider):
    """ctrl+p: ours first (go to a stage or a graph, diff with another graph, what if, run, report,
    screenshot), then Textual's system commands."""

    def _commands(self) -> list[tuple[str, Any, str]]:
        app: Any = self.app
        graphs = app.session.graphs
        out = [(f"Go to stage: {p.title}", lambda s=p.stage: app.action_stage(s), f"pane {p.stage}")
               for p in PANES]
        out += [(f"Go to graph: {g}", lambda g=g: app.show_graph(g), "graph") for g in graphs]
        out += [(f"Diff with: {g}", lambda g=g: app.diff_with(g), diff_help(graphs, app.view.graph, g))
                for g in graphs if g != app.view.graph]
        out += [("What if: recompile this graph with Inductor settings changed", app.action_what_if, "w"),
                ("Run and time every graph", app.action_run, "r"),
                ("Numerics: compare this graph's buffers with eager", app.action_numerics, "e"),
                ("Write the bug-report bundle", app.action_report, "R"),
                ("Save a screenshot", app.action_screenshot, "s")]
        return out

    def _system(self) -> list[tuple[str, str, Any, bool]]:
        return sorted(self.app.get_system_commands(self.screen), key=lambda c: c[0])

    async def discover(self) -> Hits:
        """The empty query: ours in order, then Textual's."""
        for name, call, help_ in self._commands():
            yield DiscoveryHit(name, call, help=help_)
        for name, help_, call, discover in self._system():
            if discover:
                yield DiscoveryHit(name, call, help=help_)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, call, help_ in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), call, help=help_)
        for name, help_, call, *_ in self._system():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score * 0.9, matcher.highlight(name), call, help=help_)
