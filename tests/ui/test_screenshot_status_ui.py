"""``s`` at 80 columns: the status line shows the saved file's name within the 80 cells."""

from __future__ import annotations

import os

from conftest import screen_lines

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures")


def test_s_at_80_columns_shows_the_saved_files_name(app_driver, tmp_path) -> None:
    shots = tmp_path / "a" / "rather" / "deep" / "folder" / "of" / "screenshots"
    seen: dict = {}

    async def steps(app, pilot):
        await pilot.press("6")  # codegen pane of the first graph
        await pilot.pause()
        await pilot.press("s")
        await pilot.pause()
        seen["status"] = app.query_one("#status").region.y
        seen["screen"] = screen_lines(app)
        seen["saved"] = list(app.saved_screenshots)

    # a session named as the app names live ones (script-date-time): the file name alone takes 54 cells
    import shutil

    session = tmp_path / "train_step-20261128-015644.jsonl"
    shutil.copy(os.path.join(FIX, "demo.jsonl"), session)
    app_driver(steps, size=(80, 24), path=str(session), screenshots=str(shots))
    svg = next(p for p in seen["saved"] if p.endswith(".svg"))
    shown = seen["screen"][seen["status"]]  # the status row as the terminal shows it
    assert os.path.basename(svg) in shown, shown
    assert os.path.isfile(svg)


def test_a_second_s_saves_a_picture_without_the_first_ones_toast(app_driver, tmp_path) -> None:
    """``s`` twice, in two panes, as a person recording a bug report does: the first screenshot's toast ("screenshot
    saved: ...") was still on screen and went into the second picture, over the pane.  The toasts are cleared
    before a picture is taken; the new one's toast still tells the person where it went."""
    seen: dict = {}

    async def steps(app, pilot):
        for key in ("s", "3", "s"):
            await pilot.press(key)
            await pilot.pause()
        seen["saved"] = [p for p in app.saved_screenshots if p.endswith(".svg")]
        seen["screen"] = "\n".join(screen_lines(app))

    app_driver(steps, size=(120, 40), notifications=True, screenshots=str(tmp_path))
    first, second = seen["saved"]
    picture = open(second, encoding="utf-8").read().replace("&#160;", " ")
    assert "screenshot saved" not in picture, os.path.basename(second)
    assert os.path.basename(second).split("_")[0] in seen["screen"] and "screenshot saved" in seen["screen"]
