"""The first frame of ``--open`` draws what the settled screen draws: what it builds in a cheaper way (the footer's
keys as one picture) looks the same as what replaces it."""

from __future__ import annotations

import asyncio
import os
import re

import pytest

from inductor_step.session.format import read_session
from inductor_step.tui import compat
from inductor_step.tui.app import StepApp

from conftest import screen_settled

DEMO = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "demo.jsonl")


def _settled_screenshot(size: tuple[int, int]) -> tuple[str, list[str]]:
    """The settled screen of the demo opened at ``size`` (SVG, colours included) and the footer's widgets."""
    app = StepApp(messages=list(read_session(DEMO, lazy_over=1 << 14)), session_path=DEMO)
    seen: dict = {}

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await screen_settled(pilot, app)
            # the SVG's id is not the screen's (Rich's export: a checksum of more than what is drawn)
            seen["svg"] = re.sub(r"terminal-\d+", "terminal", app.export_screenshot(simplify=False))
            seen["footer"] = [type(w).__name__ for w in app.query_one(compat.SteadyFooter).children]

    asyncio.run(main())
    return seen["svg"], seen["footer"]


@pytest.mark.parametrize("size", [(160, 50), (80, 24)])
def test_the_first_frames_picture_of_the_footer_keys_looks_as_the_keys_do(size, monkeypatch) -> None:
    """The footer's first keys are one widget (compat.footer_picture) until right after the first frame; held
    there, the screen is the same, colours and all, as with the keys of their own that replace it."""
    keys_svg, keys = _settled_screenshot(size)
    monkeypatch.setattr(compat.SteadyFooter, "keys_after_picture", lambda self: None)  # the picture stays
    picture_svg, picture = _settled_screenshot(size)
    assert "FooterPicture" in picture and "FooterPicture" not in keys and keys.count("FooterKey") > 3, (picture, keys)
    assert picture_svg == keys_svg


def test_the_first_frame_reads_only_the_graph_notes_it_shows(monkeypatch) -> None:
    """The graph list's notes that the first frame would cut off (a subgraph's or what-if variant's key fills the
    narrow list) are read right after it: held before that, the screen is the same (the recompile's note on
    ``[0/1] inference`` included), and fewer dynamo stops were parsed."""
    path = os.path.join(os.path.dirname(DEMO), "flex_recompile_pair.jsonl")

    def opened(hold: bool) -> tuple[str, int, list[str]]:
        app = StepApp(messages=list(read_session(path, lazy_over=1 << 8)), session_path=path)  # dynamo stops lazy
        if hold:
            monkeypatch.setattr(app, "_all_graph_notes", lambda: None)
        seen: dict = {}

        async def main() -> None:
            async with app.run_test(size=(160, 50)) as pilot:
                await screen_settled(pilot, app)
                seen["svg"] = re.sub(r"terminal-\d+", "terminal", app.export_screenshot(simplify=False))
                seen["parsed"] = sum("_raw" not in app.session.by_graph[g]["dynamo"] for g in app.session.graphs
                                     if "dynamo" in app.session.by_graph[g])
        asyncio.run(main())
        return seen["svg"], seen["parsed"], app.session.graphs

    svg, parsed, graphs = opened(hold=False)
    held_svg, held_parsed, _ = opened(hold=True)
    assert any(len(g) > 26 for g in graphs), graphs  # keys that fill the narrow list
    assert held_parsed < parsed, (held_parsed, parsed)
    assert held_svg == svg
