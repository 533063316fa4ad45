"""Pane 7: per-kernel rows whose times are not reliable carry a mark on the time and what is derived from it."""

from __future__ import annotations

import os

import pytest

from inductor_step.tui.table import Table
from inductor_step.tui.codeview import CodeView

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures")
MARKED = ("median ms [p20-p80]", "share", "GB/s", "% peak BW", "TFLOP/s")


def _rows(app_driver, path: str) -> tuple[list[str], list[list[str]], str]:
    got: dict = {}

    async def steps(app, pilot):
        await pilot.press("7")  # pane 7 of the first graph, as a person opens it
        await pilot.pause()
        table = app.query_one("#table-run", Table)
        got["labels"] = list(table.labels)
        got["rows"] = [[str(c) for c in table.get_row_at(r)] for r in range(table.row_count)]
        got["detail"] = app.query_one("#code-run", CodeView).text

    app_driver(steps, size=(200, 50), path=path)
    return got["labels"], got["rows"], got["detail"]


def test_unreliable_kernel_times_are_marked_on_every_row(app_driver) -> None:
    # demo_v2's [0/0] forward: its run's times did not settle (gap_cause "unsettled"), its summary says NOT RELIABLE
    labels, rows, detail = _rows(app_driver, os.path.join(FIX, "demo_v2.jsonl"))
    assert rows
    for r in rows:
        for label in MARKED:
            cell = r[labels.index(label)]
            assert cell == "-" or cell.startswith("!"), (label, r)
        assert r[labels.index("median ms [p20-p80]")].startswith("!")
    assert "! NOT RELIABLE (this time, its share, GB/s and TFLOP/s): the times did not settle" in detail


def test_reliable_kernel_times_carry_no_mark(app_driver) -> None:
    labels, rows, detail = _rows(app_driver, os.path.join(FIX, "demo.jsonl"))
    assert rows and not any(c.startswith("!") for r in rows for c in r)
    assert "NOT RELIABLE (this time" not in detail



@pytest.mark.parametrize("fixture, keys", [("demo_v2.jsonl", ("7",)), ("gpu_nanogpt.jsonl", ("7",)),
                                           # timm's ViT (2 blocks) trained on CPU: its backward, times unreliable
                                           ("run_many_marked.jsonl", ("g", "down", "enter", "7"))])
def test_figures_are_never_cut_at_80_columns(app_driver, fixture, keys) -> None:
    # a figure column was as wide as its typical cell: in a live ViT session with unreliable times the slowest
    # kernel's "!13.1%" beside many "!6.7%" read "….1%"; a number cut in the middle reads as another number
    from conftest import screen_lines, screen_settled

    got: dict = {}

    async def steps(app, pilot):
        for key in keys:
            await pilot.press(key)
            await screen_settled(pilot, app)
        table = app.query_one("#table-run", Table)
        got["labels"] = list(table.labels)
        got["rows"] = [[str(c) for c in table.get_row_at(r)] for r in range(table.row_count)]
        got["screen"] = screen_lines(app)

    app_driver(steps, size=(80, 24), path=os.path.join(FIX, fixture))
    labels, rows, screen = got["labels"], got["rows"], got["screen"]
    shown = [line for line in screen if line.startswith("▌ ") and line[2:3].strip() and not line.startswith("▌ kernel")]
    assert len(shown) >= 4, screen
    for label in ("median ms [p20-p80]", "share", "GB/s"):
        for r, line in zip(rows, shown):
            assert r[labels.index(label)] in line, (label, r, "\n".join(screen))
