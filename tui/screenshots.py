"""``s``: a screenshot of the screen as SVG (Textual) and PNG (librsvg's ``rsvg-convert``, when it is
installed); ``--record-screens``: one per stop."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
import time
from typing import Any

from textual.css.query import NoMatches

from inductor_step.session.format import graph_key


def svg_to_png(svg_path: str) -> str | None:
    """Convert a screenshot SVG to PNG with ``rsvg-convert`` (librsvg) if it is installed; None
    otherwise (:data:`NO_PNG` says why and how to get it).

    Textual writes spaces as NBSP, which librsvg draws narrower than a cell, so code indentation
    would shift; the copy given to the converter uses plain spaces with ``xml:space="preserve"``.
    """
    exe = shutil.which("rsvg-convert")
    if exe is None:
        return None
    with open(svg_path, encoding="utf-8") as f:
        svg = f.read().replace("&#160;", " ").replace("<svg ", '<svg xml:space="preserve" ', 1)
    png = os.path.splitext(svg_path)[0] + ".png"
    with tempfile.NamedTemporaryFile("w", suffix=".svg", delete=False, encoding="utf-8") as tmp:
        tmp.write(svg)
    try:
        subprocess.run([exe, tmp.name, "-o", png], check=True, capture_output=True, timeout=60)
    except (subprocess.SubprocessError, OSError):
        return None
    finally:
        os.unlink(tmp.name)
    return png


#: why ``s`` saved no PNG
NO_PNG = "PNG skipped: rsvg-convert is not installed (apt install librsvg2-bin, or open the SVG in a browser)"


def _graph_part(key: str | None) -> str:
    """A graph key as a file-name part of ASCII letters, digits and ``_.=+-`` only: ``[0/1] inference`` ->
    ``0-1_inference``, a subgraph's ``[0/0] forward › sdpa_score0`` -> ``0-0_forward_sdpa_score0`` (the ``›`` made
    a name a shell user had to quote or paste)."""
    import re  # noqa: PLC0415

    g = (key or "nograph").replace("[", "").replace("]", "").replace("/", "-").replace("#", "")
    return re.sub(r"[^A-Za-z0-9_.=+-]+", "_", g).strip("_") or "nograph"


def screenshot_name(app: Any) -> str:
    """``<session>_[rank<N>_]<compile id>_<kind>[_<part>]_<stage>_<HHMMSS>.svg`` (the rank in a torchrun job);
    on the diff screen ``<session>_[rank<N>_]diff_<A>_vs_<B>_<HHMMSS>.svg``, the two graphs it compares (it was
    named for the graph and pane under the diff, ``0-0_inference_dynamo``)."""
    from inductor_step.tui.screens.diff import DiffScreen  # noqa: PLC0415 - Textual's screens: on first use

    base = os.path.splitext(os.path.basename(app.session_path or app.script or "session"))[0]
    rank = f"rank{app.current.rank}_" if getattr(app, "is_job", False) and app.current.rank is not None else ""
    screen = app.screen
    if isinstance(screen, DiffScreen):
        pair = screen.pair
        what = f"diff_{_graph_part(pair.key_a)}_vs_{_graph_part(pair.key_b)}"
    else:
        what = f"{_graph_part(app.view.graph)}_{app.view.stage}"
    return f"{base}_{rank}{what}_{time.strftime('%H%M%S')}.svg"


def save(app: Any, png: bool = True) -> str:
    """Save the screen into ``app.screenshots``; returns what the app says about it (paths, or why the
    PNG was skipped)."""
    os.makedirs(app.screenshots, exist_ok=True)
    path = app.save_screenshot(screenshot_name(app), app.screenshots)
    png_path = svg_to_png(path) if png else None
    app.saved_screenshots += [p for p in (path, png_path) if p]
    why = "" if png_path or not png else ("; " + (NO_PNG if shutil.which("rsvg-convert") is None
                                                  else "PNG skipped: rsvg-convert failed"))
    # the file's name first, its folder after: a narrow status line cuts the end, never the name
    return (f"screenshot saved: {os.path.basename(path)}" + (" (+ .png)" if png_path else "")
            + f" in {os.path.dirname(path) or '.'}" + why)


def for_stop(app: Any, stop: dict[str, Any]) -> None:
    """--record-screens, live: one screenshot of this stop's pane."""
    saved = (app.view.graph, app.view.stage)
    app.view.graph, app.view.stage = graph_key(stop), stop["stage"]
    if saved != (app.view.graph, app.view.stage):
        app.refresh_all()
    save(app, png=False)
    if saved != (app.view.graph, app.view.stage):
        app.view.graph, app.view.stage = saved
        app.refresh_all()


async def every_stop(app: Any) -> None:
    """--record-screens on a recorded session: one screenshot per stop, then back to the first."""
    for stop in list(app.session.stops):
        if not app.is_running:
            return
        app.go(graph_key(stop), stop["stage"])
        try:
            app.refresh_all()
            done = asyncio.Event()
            app.screen.refresh()
            app.call_after_refresh(done.set)
            await done.wait()
            save(app, png=False)
        except NoMatches:
            return
    if app.session.stops:
        app.go(graph_key(app.session.stops[0]), app.session.stops[0]["stage"])
        app.refresh_all()
    app.say(f"saved {len(app.session.stops)} screenshots into {app.screenshots}/")


def report(app: Any) -> None:
    """``R``: write the bug-report bundle (session.report.build_report; a torchrun job's over every rank) with
    where the user stands and what they selected, and say where it went (or why it failed) in a toast."""
    if not app.session_path:
        app.notify("no session file to report from", severity="warning")
        return
    from inductor_step.session.report import build_report  # noqa: PLC0415

    for st in app.ranks.values():
        if st.writer is not None:
            st.writer.f.flush()
    try:
        if app.is_job:  # every rank's session, the job file, the launcher's log
            out = app.jobs.job_report()
        else:
            out = build_report(app.session_path, screenshots=app.saved_screenshots,
                               stood={"graph": app.view.graph, "stage": app.view.stage, "selection": app.selection()})
    except (OSError, ValueError) as e:
        app.say(f"report failed: {e}", "error")
    else:
        app.say(f"report bundle written: {out}")
