"""Pane e: every buffer of the graph against eager and float64 in execution order (the ``numerics`` message),
the first divergence marked ``>`` and the first NaN/Inf ``!``; Enter goes to the first divergence's
buffer (selected in every pane), Enter on it opens its kernel in pane 6."""

from __future__ import annotations

import json
from typing import Any, Callable, Sequence

from textual import on

from inductor_step.session.format import CMD_NUMERICS, graph_key
from inductor_step.session.format.numerics import GraphNumerics
from inductor_step.session.format.records import Record
from inductor_step.session.numerics import (
    NumericsRow, answer_lines, comparisons, first_buffer, inputs_line, num, pane_rows, table_lines,
)
from inductor_step.tui.compat import Panes
from inductor_step.tui.panes.base import Detail, StagePane, T
from inductor_step.tui.state import OpenKernel
from inductor_step.tui.table import Table

COLUMNS = ("", "buffer", "kernel", "fx node", "dtype", "status", "max abs", "x tol", "eps", "f64 c/e x tol",
           "NaN/Inf")
#: column -> its style (NumericsRow.cells order: the buffer bold, the status magenta)
STYLES = {1: "bold", 5: "magenta"}


class NumericsPane(StagePane):
    stage = "numerics"
    title = "e Numerics"
    columns = COLUMNS

    def data(self) -> Record | None:
        v = self.app.view
        return self.app.session.numerics.get(v.graph) if v.graph else None

    def stamp(self, data: Record | None) -> Any:
        return (self.app.view.graph, id(data))

    def _rows(self, data: Record) -> list[NumericsRow]:
        return self.app.session.cache.get(("numerics_rows", id(data)), (data,), lambda: pane_rows(data))

    def rows(self, data: Record) -> tuple[Sequence[str], Callable[[int], tuple]]:
        rows = self._rows(data)

        def row(i: int) -> tuple:
            r = rows[i]
            style = "bold red" if r.mark in (">", "!") else ""
            return tuple(T(c, style or STYLES.get(k, "")) for k, c in enumerate(r.cells()))
        return [f"{i}:{r.buffer}" for i, r in enumerate(rows)], row

    def fill(self, data: Record | None) -> None:
        if data is None or data.failed or data.waiting or not data.rows:
            self.table.clear()
            self.apply(self.empty(data))
            return
        super().fill(data)

    def empty(self, data: Record | None) -> Detail:
        if data and data.failed:
            return Detail(f"# numerics failed: {data.error}\n\n{data.method or ''}", "text")
        if data and data.waiting:  # e before the script's first call of this graph
            return Detail("# numerics: waiting for the script's first call of this graph;\n"
                          "# its real inputs are compared then, automatically (n / c runs the script on)", "text")
        if not self.app.live:
            return Detail("# this recorded session has no numerics for this graph\n"
                          "# (inductor-step --headless --numerics SCRIPT records them; e in a live session)", "text")
        return Detail("# press e to compare every buffer of this graph with eager (its dtype and float64),\n"
                      "# on the script's own inputs of its first call", "text")

    def detail(self, data: Record, row: int) -> Detail | None:
        rows = data.rows or []
        if not 0 <= row < len(rows):
            return None
        head = [x for x in (inputs_line(data),) if x] + answer_lines(data)  # the inputs' origin first (40.4)
        first = data.first_suspect or data.first_divergence
        if first and first.table:
            head += ["", "the error along the graph:"] + table_lines(first.table, first.buffer)
        r = rows[row]
        body = [f"{r.buffer}: written by {r.kernel} (call {(r.call or 0) + 1}, wrapper line {r.line}),"
                f" FX node {r.fx_node or '-'} of {', '.join(r.fx_nodes or []) or '-'}",
                f"  {r.verdict or r.why or ''}"]
        for label, s in comparisons(r):
            body.append(f"  {label:<20} max abs {num(s.max_abs)}, max rel {num(s.max_rel)}, "
                        f"{num(s.eps_units)} eps, {num(s.tol_ratio)}x tolerance"
                        + (f", {s.nonfinite_mismatch} NaN/Inf on one side only" if s.nonfinite_mismatch else ""))
        if r.nan or r.inf:
            body.append(f"  compiled holds {r.nan or 0} NaN, {r.inf or 0} Inf")
        tol = json.dumps(data.tolerances or {})
        foot = ["", f"inputs: {data.inputs}", f"method: {data.method}", f"tolerances (torch.testing): {tol}"]
        for k, v in (("random", data.random), ("f64_fallbacks", data.f64_fallbacks)):
            if v:
                foot.append(f"{k}: {v}")
        return Detail("\n".join(head + [""] + body + foot), "text")

    def row_for(self, data: Record, buffer: str) -> int | None:
        return next((i for i, r in enumerate(data.rows or []) if r.buffer == buffer), None)

    def buffers_of(self, data: Record, row: int) -> list[str]:
        rows = data.rows or []
        return [rows[row].buffer] if 0 <= row < len(rows) else []

    def session_message(self, msg: Record) -> None:
        if msg.SCHEMA is GraphNumerics:
            self.show(force=True)

    def go_first(self) -> bool:
        """The cursor and the selection to the first divergent (else NaN) buffer; False when there is none."""
        data = self.data()
        buf = first_buffer(data)
        i = self.row_for(data, buf) if data and buf else None
        if i is None:
            return False
        self.app.select(buf, f"{buf}: the first divergence from eager (selected in every pane)")
        if self.table.cursor_row != i:
            self.table.move_cursor(row=i)
        self.show_row(data, i)
        return True

    @on(Table.RowSelected, "#table-numerics")
    def _enter(self, event: Table.RowSelected) -> None:
        """Enter: to the first divergence's buffer; Enter on it: its kernel in pane 6."""
        data = self.data()
        buf = first_buffer(data)
        rows = (data.rows if data is not None else None) or []
        on_first = 0 <= event.cursor_row < len(rows) and rows[event.cursor_row].buffer == buf
        if on_first:
            self.post_message(OpenKernel(rows[event.cursor_row].kernel, buf))
        elif not self.go_first():
            self.app.bell()


def request(app: Any) -> None:
    """``e``: show the numerics pane; in a live session, ask the agent to compare the shown graph's buffers
    with eager (CMD_NUMERICS) unless they were compared already."""
    app.query_one("#panes", Panes).show_tab("pane-numerics")
    if app.agent is not None and app.agent.alive and app.view.graph and app.view.graph not in app.session.numerics:
        app.agent.send(CMD_NUMERICS, graph=app.view.graph)
        app._status_extra = f"comparing {app.view.graph}'s buffers with eager…"
    app.view.stage = "numerics"
    app.refresh_all(force=True)


def on_message(app: Any, msg: Record) -> None:
    """A ``numerics`` message (its GraphNumerics record) from the agent: show the pane, say where Enter goes (or
    why it failed)."""
    app.query_one("#panes", Panes).show_tab("pane-numerics")
    if msg.failed:
        app.say(f"numerics {graph_key(msg)} failed: {msg.error}", "error")
    elif msg.waiting:
        app._status_extra = f"numerics {graph_key(msg)}: waiting for the script's first call (its real inputs)"
    elif graph_key(msg) == app.view.graph:
        app._status_extra = f"{graph_key(msg)} compared with eager: Enter in pane e goes to the first divergence"
    app.refresh_all(force=app.view.stage == "numerics")
