"""Pane 9's first row on a run judged not reliable names its graph as the rows below do (``[0/0] fwd``), or how
many graphs were judged so: at 80 columns it read ``[0/…rward`` and named one graph of two."""

from __future__ import annotations

import os

from test_flows import press

from conftest import screen_lines, screen_settled, wait_for

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(HERE, "fixtures")


def _head_row(app_driver, name: str) -> str:
    seen: dict = {}

    async def steps(app, pilot):
        await press(pilot, "9")
        await wait_for(pilot, lambda: app.view.stage == "ledger", timeout=10)
        await screen_settled(pilot, app)
        seen["lines"] = screen_lines(app)

    app_driver(steps, size=(80, 24), path=os.path.join(FIX, name))
    return next(ln for ln in seen["lines"] if "TIMES NOT RELIABLE" in ln and ln.startswith("▌"))


def test_the_not_reliable_row_names_its_one_graph_short_and_uncut(app_driver):
    row = _head_row(app_driver, "ledger.jsonl")
    assert "[0/0] inf" in row and "…" not in row.split("RELIABLE", 1)[1], row


def test_the_not_reliable_row_counts_the_graphs_when_several_were(app_driver):
    row = _head_row(app_driver, "memory_measured_a.jsonl")
    assert "graphs" in row and "[0/" not in row, row
