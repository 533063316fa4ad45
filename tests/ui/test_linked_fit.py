"""Pane 8's table at 80 columns on long kernel names: the kernel column is cut in the middle, not cropped by the
table's edge (which left ``triton_per_fused_add_embedding`` for every kernel of that prefix)."""

from __future__ import annotations

import os

from inductor_step.session.format import read_session

from test_flows import press

from conftest import screen_lines, screen_settled, wait_for

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPU_NANOGPT = os.path.join(HERE, "fixtures", "gpu_nanogpt.jsonl")


def test_at_80_columns_pane_8_shows_each_kernels_end(app_driver):
    """nanoGPT's first forward kernels (``triton_per_fused_add_embedding_..._layer_norm_2``): press 8 at 80x24 and
    every row on screen names its kernel down to its last characters, the table's columns within its width."""
    seen: dict = {}

    async def steps(app, pilot):
        await press(pilot, "8")
        await wait_for(pilot, lambda: app.view.stage == "linked", timeout=10)
        await screen_settled(pilot, app)
        t = app.query_one("#table-linked")
        seen["widths"] = (t.column_widths, t.size.width)
        seen["lines"] = screen_lines(app)

    app_driver(steps, size=(80, 24), path=GPU_NANOGPT)
    widths, room = seen["widths"]
    assert sum(w + 2 for w in widths) <= room + 1, seen["widths"]
    links = next(m for m in read_session(GPU_NANOGPT) if m.get("type") == "stop" and m.get("stage") == "codegen")
    kernel_of = {b: (v.get("kernels") or [""])[0] for b, v in (links.get("links") or {}).get("buffers", {}).items()}
    rows = [ln.split() for ln in seen["lines"] if ln.startswith("▌ buf")]
    assert len(rows) >= 4, seen["lines"]
    long_ones = [r for r in rows if len(kernel_of.get(r[1], "")) > 40]
    assert long_ones, (rows, kernel_of)  # the fixture's point: kernel names wider than the column
    for r in rows:
        k = kernel_of.get(r[1])
        if k:
            assert r[-1].endswith(k[-6:]), (r, k)
