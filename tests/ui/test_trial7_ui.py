"""What a new user met at 80x24 driving nanoGPT, BERT and a flex-attention block, through the keys they pressed:
pane 6's kernel names pushed the buffers each kernel computes off screen."""

from __future__ import annotations

import re

from conftest import DEMO, screen_lines, screen_settled


def test_pane_6_at_80_columns_shows_each_kernels_buffers(app_driver):
    """g, Down, Enter (the backward), 6: every kernel row on screen ends with the buffers it computes, whole
    (``buf8, buf9``), the kernel's name cut in the middle where it is too long for the rest to fit."""
    shown: list[str] = []
    kernels: list = []

    async def steps(app, pilot):
        for key in ("g", "down", "enter", "6"):
            await pilot.press(key)
            await screen_settled(pilot, app)
        assert "backward" in screen_lines(app)[1]
        kernels.extend(app.pane("codegen").data().kernels)
        shown.extend(screen_lines(app)[4:11])

    app_driver(steps, size=(80, 24), path=DEMO)
    assert "buffers" in shown[0], shown
    rows = [r for r in shown[1:] if re.match(r"▌ \S", r)]
    assert len(rows) >= 5, shown
    for row, k in zip(rows, kernels):
        assert re.search(rf"\s{re.escape(', '.join(k.buffers))}\s*(▄▄|▇▇|\s)*$", row), (row, k.name, k.buffers)
