"""``--open`` decodes a large recorded timing when it is first shown: pane 7 and the stage bar read the same figures
as when the whole file is decoded at once, for a graph and its what-if variants (tests/fixtures/memory_whatif.jsonl,
whose timings are packed lines)."""

from __future__ import annotations

import asyncio
import os

from inductor_step.cli.main import LAZY_OVER
from inductor_step.session.format import LAZY, read_session
from inductor_step.tui.app import StepApp

FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "memory_whatif.jsonl")
# the variant first, then its original (whose timing comes earlier in the file), then another graph's
GRAPHS = ("[1/0] forward · activation_memory_budget=0.5", "[1/0] forward", "[0/0] inference")


def _shown(lazy_over: int | None) -> dict[str, tuple]:
    app = StepApp(messages=list(read_session(FIX, lazy_over=lazy_over)), session_path=FIX)
    seen: dict[str, tuple] = {}

    async def main() -> None:
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause()
            seen["first frame"] = (str(app.query_one("#stagebar").content),)
            for key in GRAPHS:
                app.show_graph(key)
                await pilot.press("7")
                await pilot.pause()
                table = app.query_one("#table-run")
                seen[key] = (str(app.query_one("#stagebar").content), app.query_one("#code-run").text,
                             [[str(c) for c in table.get_row_at(r)] for r in range(table.row_count)])

    asyncio.run(main())
    return seen


def test_a_timing_decoded_when_first_shown_reads_as_one_decoded_at_open() -> None:
    # the fixture's timings are read as heads at open, as --open reads them
    assert any(LAZY in m for m in read_session(FIX, lazy_over=LAZY_OVER) if m["type"] == "run")
    lazy, whole = _shown(LAZY_OVER), _shown(None)
    for key in GRAPHS:
        assert lazy[key][2], key  # pane 7 lists the kernels' times
    assert lazy[GRAPHS[0]][1] != lazy[GRAPHS[1]][1]  # the variant's own timing, not its original's
    assert lazy == whole
