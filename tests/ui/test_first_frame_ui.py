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


def screen_cells(app: StepApp) -> list[list[tuple[str, str, str]]]:
    """What a person sees of each cell, read from Textual's public ``App.export_screenshot`` (Rich's SVG): its
    character, its text style where it shows one (not for a blank) and its background.  Two screens drawn by
    different widgets (one picture for several) split their styled runs differently; this compares what shows."""
    import html  # noqa: PLC0415

    width, height = app.size
    svg = app.export_screenshot(simplify=True)
    styles = dict(re.findall(r"\.terminal-\d+-(r\d+) \{ ([^}]*) \}", svg))
    grid = [[(" ", "", "") for _ in range(width)] for _ in range(height)]
    cell_w = 1.0
    rects = re.findall(r'<rect fill="(#[0-9a-f]+)" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"',
                       svg)
    texts = re.findall(r'<text class="terminal-\d+-(r\d+)" x="([\d.]+)" y="[\d.]+" textLength="([\d.]+)" '
                       r'clip-path="url\(#terminal-\d+-line-(\d+)\)">([^<]*)</text>', svg)
    for cls, x, length, row, text in texts:
        text = html.unescape(text).replace("\xa0", " ")
        cell_w = float(length) / len(text)
        col = round(float(x) / cell_w)
        for i, ch in enumerate(text):
            if int(row) < height and col + i < width:
                grid[int(row)][col + i] = (ch, styles.get(cls, "") if ch.strip() else "", "")
    cell_h = float(rects[0][4]) if rects else 1.0
    for fill, x, y, w, h in rects:
        row, col = round((float(y) - float(rects[0][2])) / cell_h), round(float(x) / cell_w)
        for c in range(col, col + round(float(w) / cell_w)):
            if 0 <= row < height and c < width:
                grid[row][c] = (grid[row][c][0], grid[row][c][1], fill)
    return grid


def _settled_screenshot(size: tuple[int, int]) -> tuple[list, list[str]]:
    """The settled screen of the demo opened at ``size`` (:func:`screen_cells`) and the footer's widgets."""
    app = StepApp(messages=list(read_session(DEMO, lazy_over=1 << 14)), session_path=DEMO)
    seen: dict = {}

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await screen_settled(pilot, app)
            seen["svg"] = screen_cells(app)
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
    ``[0/1] inference`` included), and fewer dynamo stops were parsed.  (The background preload, which parses
    every stop half a second after the first frame, is held in both: on a loaded box it had parsed them all
    before the count.)"""
    path = os.path.join(os.path.dirname(DEMO), "flex_recompile_pair.jsonl")
    monkeypatch.setattr(StepApp, "_preload", lambda self: None)

    def opened(hold: bool) -> tuple[list, int, list[str]]:
        app = StepApp(messages=list(read_session(path, lazy_over=1 << 8)), session_path=path)  # dynamo stops lazy
        if hold:
            monkeypatch.setattr(app, "_all_graph_notes", lambda: None)
        seen: dict = {}

        async def main() -> None:
            async with app.run_test(size=(160, 50)) as pilot:
                await screen_settled(pilot, app)
                seen["svg"] = screen_cells(app)
                seen["parsed"] = sum("_raw" not in app.session.by_graph[g]["dynamo"] for g in app.session.graphs
                                     if "dynamo" in app.session.by_graph[g])
        asyncio.run(main())
        return seen["svg"], seen["parsed"], app.session.graphs

    svg, parsed, graphs = opened(hold=False)
    held_svg, held_parsed, _ = opened(hold=True)
    assert any(len(g) > 26 for g in graphs), graphs  # keys that fill the narrow list
    assert held_parsed < parsed, (held_parsed, parsed)
    assert held_svg == svg


@pytest.mark.parametrize("size", [(160, 50), (80, 24)])
def test_the_first_frames_picture_of_the_tab_bar_looks_as_the_tabs_do(size, monkeypatch) -> None:
    """The tab bar is one picture over the underline (compat.tabs_picture) until right after the first frame;
    held there, the screen is the same, colours, hidden tabs and the underline included, as with the tabs
    (TabbedContent's ContentTabs) that replace it; the number keys and a click on a tab work once they are."""
    def opened(hold: bool) -> tuple[list, list[str], tuple[str, str]]:
        if hold:
            monkeypatch.setattr(compat.Panes, "tabs_after_picture", lambda self: None)
        app = StepApp(messages=list(read_session(DEMO, lazy_over=1 << 14)), session_path=DEMO)
        seen: dict = {}

        async def main() -> None:
            async with app.run_test(size=size) as pilot:
                await screen_settled(pilot, app)
                seen["svg"] = screen_cells(app)
                seen["bar"] = [type(w).__name__ for w in app.query_one("#panes").walk_children()]
                if not hold:
                    await pilot.press("3")
                    await pilot.click("#panes Tab#--content-tab-pane-aot")
                    await screen_settled(pilot, app)
                    seen["after"] = (app.view.stage, app.query_one("#panes", compat.Panes).active)
        asyncio.run(main())
        return seen["svg"], seen["bar"], seen.get("after")

    svg, bar, after = opened(hold=False)
    monkeypatch.undo()
    held_svg, held_bar, _ = opened(hold=True)
    assert "TabsPicture" in held_bar and "ContentTabs" in bar and "TabsPicture" not in bar, (held_bar, bar)
    assert held_svg == svg
    assert after == ("aot", "pane-aot")


@pytest.mark.parametrize("size", [(140, 45), (80, 24)])
def test_n_at_the_first_frame_steps_once_the_tab_bar_replaces_its_picture(size) -> None:
    """``n`` pressed as soon as the first frame shows (a person who knows the key) steps to the next stop, and the
    view stays there when TabbedContent's tab bar replaces the first frame's picture of it.  The bar's own
    activation on mount was taken for a click on the first tab and took the view back: in tmux one start in
    three lost that ``n``.  Pilot's ``press`` waits until the app is idle, past that moment, so the key's
    action (the ``n`` binding's ``next_stop``) runs the moment the app is up, as a terminal delivers it."""
    app = StepApp(messages=list(read_session(DEMO, lazy_over=1 << 14)), session_path=DEMO)
    seen: dict = {}

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await app.run_action("next_stop")
            await screen_settled(pilot, app)
            seen["stage"] = app.view.stage
            seen["tabs"] = [type(w).__name__ for w in app.query_one("#panes").walk_children()]
            seen["status"] = str(app.query_one("#status").render())
    asyncio.run(main())
    assert "ContentTabs" in seen["tabs"] and "TabsPicture" not in seen["tabs"], seen["tabs"]
    assert seen["stage"] == "aot", seen
    assert "stop 2/" in seen["status"], seen["status"]
