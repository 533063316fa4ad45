"""Pane 3: Inductor's IR buffers (``V.graph.buffers``) and each one's IR."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from inductor_step.tui.panes.base import Detail, StagePane, T, dtype_cell
from inductor_step.tui.table import Cell, Whole
from inductor_step.session.paths import shorten_in_text
from inductor_step.session.text import buffer_text, joined


class LoweringPane(StagePane):
    stage = "lowering"
    title = "3 IR"
    columns = ("buffer", Cell("operation", short=("op",)), "kind", "ranges", "reduction", "dtype", "size", "origins")
    # sizes are never cut ("[3… 256]"): their columns are as wide as their widest cell, written without spaces
    # ("[32,256]"), dtypes as FX writes them (f32), a template's kind without "Buffer" and the "operation" header as
    # "op" where the columns up to size would not fit otherwise
    fit = ((), 6)
    name_columns = (0,)

    def rows(self, data: dict[str, Any]) -> tuple[Sequence[str], Callable[[int], tuple]]:
        bufs = [] if data.unavailable else data.buffers or []

        def row(i: int) -> tuple:
            b = bufs[i]
            ranges, size = T(b.ranges, kind=Whole), T(b.size, kind=Whole)
            red = Whole("")
            if b.reduction_type or b.reduction_ranges:
                rr = T(b.reduction_ranges) if b.reduction_ranges else Cell("")
                red = Whole(f"{b.reduction_type or ''} {rr}".strip(), "",
                            [f"{b.reduction_type or ''} {f}".strip() for f in rr.short])
            return (T(b.name, "bold"), T(b.operation), T(b.kind, "magenta", short=[b.kind[:-len("Buffer")]] if b.kind and b.kind.endswith("TemplateBuffer") else ()), ranges,
                    red, dtype_cell(b.dtype), size, T(joined(b.origins)))
        return [b.name for b in bufs], row

    def empty(self, data: dict[str, Any]) -> Detail:
        return Detail(f"# {data.unavailable}" if data.unavailable else "# no IR buffers in this graph")

    def detail(self, data: dict[str, Any], row: int) -> Detail | None:
        bufs = data.buffers or []
        if not 0 <= row < len(bufs):
            return None
        dyn = self.app.session.stop_for(self.app.view.graph, "dynamo")
        symbols = dyn.symbols if dyn is not None and isinstance(dyn.symbols, list) else None
        return Detail(shorten_in_text(buffer_text(bufs[row], symbols), self.app.session.script_dir))

    def row_for(self, data: dict[str, Any], buffer: str) -> int | None:
        return self.row_of_key(data, buffer)

    def buffers_of(self, data: dict[str, Any], row: int) -> list[str]:
        key = self.key_of_row(data, row)
        return [key] if key else []
