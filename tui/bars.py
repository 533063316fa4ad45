"""The one-line bars: title (script, torch, device), stage bar (where the compile stands) and status
(what happens now, what was selected).  Pure functions of the session and the view: Rich ``Text``."""

from __future__ import annotations

import os
from rich.text import Text

from inductor_step.session.format import ALL_STAGES, graph_key
from inductor_step.session.store import Store
from inductor_step.tui.cells import cut_middle
from inductor_step.tui.state import ViewState

SHORT = {"dynamo": "dyn", "aot": "aot", "lowering": "ir", "scheduling": "sched", "loopbody": "loop",
         "codegen": "code", "run": "run"}


def _bar_times(session: Store, key: str | None) -> dict[str, str]:
    """session.compile_time.bar_times (imported on first use: not before the first frame's graph has one)."""
    from inductor_step.session.compile_time import bar_times  # noqa: PLC0415

    return bar_times(session, key)


def title_text(session: Store, script: str | None, argv: list[str], session_path: str | None,
               rank: str = "", width: int = 0) -> Text:
    """The title bar: script, args, torch, device, session; in a torchrun job ``rank`` ("rank 0/2
    stepped") first, and the collective timeout the agent set.  ``width`` (cells, 0: any): the session's path is
    cut in the middle to fit, and left out where fewer than 16 cells of it would (at 80 columns the screen's edge
    left the word "session" alone, naming nothing)."""
    h = session.header
    script = h.script or script or "?"
    args = " ".join(h.argv or argv)
    dev = h.device_name or h.device or "?"
    t = Text.assemble(("inductor-step ", "bold"))
    timeout = h.distributed.collective_timeout_s if h.distributed else None
    if rank:  # first, with the raised collective timeout: both stay on an 80-column screen
        t.append(f" {rank} ", style="bold reverse")
        if timeout:
            t.append(f" timeout {timeout / 3600:g} h ", style="yellow")
        t.append(" ")
    t.append_text(Text.assemble((f" {os.path.basename(script)} {args} ".rstrip() + " ", ""),
                      (f" torch {h.torch or '?'} ", "dim"), (f" {dev} ", "dim")))
    if timeout and not rank:
        t.append(f" collective timeout {timeout / 3600:g} h ", style="yellow")
    if session_path:
        room = width - t.cell_len - len(" session ") if width else len(session_path)
        if room >= min(len(session_path), 16):
            t.append(f" session {cut_middle(session_path, room)}", style="dim")
    return t


def stage_text(session: Store, view: ViewState, width: int, decode: bool = True) -> Text:
    """The graph shown and its stages: ✓ reached, ● the stop the compile is paused at (a recorded
    session, or a live one no longer paused: the stop viewed), ✗ failed; the shown one reversed.
    Below 100 columns the stage names are short, so ``run`` stays on an 80-column screen.  ``decode=False``:
    the run's mark is left out where telling it would mean uncompressing runs (:meth:`Store.run_outcome`)."""
    key = view.graph
    done = set(session.stages_done(key, decode)) if key else set()
    outcome = session.run_outcome(key, decode) if key else None
    err = session.error_for(key) if key else None
    short = width < 100
    at = view.paused.stage if view.paused and graph_key(view.paused) == key else None
    if view.paused is None and view.stage in done and view.stage != "run":
        at = view.stage  # nothing paused: the stop being viewed is the current one
    t = Text()
    t.append(f" {key or 'waiting for the first compile'} ", style="bold")
    times = _bar_times(session, key) if width >= 120 else {}  # each finished stage's compile time, wide screens
    for s in ALL_STAGES:
        mark, style = ("✓", "green") if s in done else (" ", "dim")
        run = outcome if s == "run" else None
        if run == "failed":
            mark, style = "✗", "bold red"  # a failed timing is never ✓run
        elif run == "no_eager" and s in done:
            mark, style = "✓", "yellow"  # the compiled graph timed, its eager baseline not (the run pane says why)
        if err and err.stage == s:
            mark, style = "✗", "bold red"
        if s == at and not (err and err.stage == s):  # a failed stage keeps its ✗ while viewed
            mark, style = "●", "bold yellow" if view.paused else "bold cyan"
        if s == view.stage:
            style += " reverse"
        t.append(f"{mark}{SHORT[s] if short else s} " if short else f" {mark}{s} ", style=style)
        if s in done and times.get(s):
            t.append(f"{times[s]} ", style="dim")
    return t


def status_text(session: Store, view: ViewState, live: bool, extra: str, current: int | None,
                width: int = 120) -> Text:
    """Where the compile or session stands, what the pane shows when that is another stop ("viewing
    X · compile at Y"), the last error, and ``extra`` (the latest selection).  Below 100 columns
    (``width``) the phrases are shorter, so the selection stays on screen."""
    s = session
    t = Text()
    p = view.paused
    narrow = width < 100
    viewed = s.stops[current] if current is not None and 0 <= current < len(s.stops) else None
    shows = f"{view.graph} {view.stage}" if view.stage in ALL_STAGES else f"{view.graph} pane {view.stage}"
    if p and graph_key(p) == view.graph and p["stage"] == view.stage:
        t.append(f" paused after {p['stage']} of {graph_key(p)}", style="bold yellow")
        t.append(" · n: continue" if narrow else " · n: continue the compile")
    elif p:
        same = graph_key(p) == view.graph
        if narrow and same:  # the stage bar names the graph
            shows = view.stage if view.stage in ALL_STAGES else f"pane {view.stage}"
        t.append(f" viewing {shows}", style="bold")
        t.append(f" · {'' if narrow else 'compile '}paused at {'' if same else graph_key(p) + ' '}{p['stage']}",
                 style="yellow")
        at_end = current is None or current == len(s.stops) - 1
        t.append((" · n: continue" if narrow else " · n: continue the compile") if at_end
                 else (" · n: next stop" if narrow else " · n: next recorded stop"))
    elif s.done is not None:
        if not live:
            t.append(" recorded" if narrow else " recorded session", style="dim")
            if viewed is not None:
                t.append(f" · stop {current + 1}/{len(s.stops)}", style="dim")
            t.append(" ·", style="dim")
        rc = s.done.returncode
        t.append(f" script finished (exit {rc})", style="green" if not rc else "red")
        if s.done.message:
            t.append(f" · {s.done.message}", style="yellow")
        elif live and s.agent_exit is None:  # its process still serves (a torchrun job's ranks end with the script)
            t.append(" · r: run and time")
    elif s.agent_exit is not None:
        t.append(f" the script's process ended (status {s.agent_exit}) before finishing", style="bold red")
    elif live:
        last = s.stops[-1] if s.stops else None
        t.append(" running the script…" if last is None else
                 f" running · last stop {graph_key(last)} {last['stage']}", style="dim")
    else:
        t.append(f" recorded session · {len(s.stops)} stops (ended before the script finished)", style="dim")
    err = s.errors[-1] if s.errors else None
    if err:
        where = f"{graph_key(err)} " if err.compile_id else ""
        t.append(f" · error in {where}{err.stage}: {err.message}", style="bold red")
    # a result just said (search, x, r, what-if), not the selection (kept across steps, said on every move)
    result = bool(extra) and not extra.startswith("selected ")
    extra = extra or (f"selected {view.selected}" if view.selected else "")
    run = f" · {s.run_status.message}" if s.run_status.message and view.stage == "run" else ""
    tail = f" · {extra}" if extra else ""
    # the newest result is what the person waits for: where the line is wider than the terminal,
    # the run's progress goes first, then where the compile stands is cut ("…"), never the result
    if run and (not result or t.cell_len + len(run) + len(tail) <= width):
        t.append(run, style="cyan")
    if tail and not result:
        t.append(tail, style="cyan")
    elif tail:
        room = width - len(tail)
        if room < 12:  # the result alone fills the line (a screenshot's file name): it alone, its end cut
            t = Text(" " + tail.removeprefix(" · "), style="cyan")
            t.truncate(width, overflow="ellipsis")
            return t
        if t.cell_len > room:
            t.truncate(max(room - 1, min(12, t.cell_len)))
            t.append("…")
        t.append(tail, style="cyan")
    return t


def missing_text(session: Store, view: ViewState, stage: str, live: bool) -> str:
    """What a pane says when its graph has no stop at ``stage``: not reached yet, failed there, or
    no compile at all (and why: the script ended or raised before compiling)."""
    key = view.graph
    err = session.error_for(key) if key else None
    if key and err and err.stage == stage:
        return (f"# {stage} failed: {err.message}\n#\n# everything captured before it is in the earlier "
                f"stages (b, 1-6)\n\n{err.traceback or ''}")
    dyn = session.stop_for(key, "dynamo") if key else None
    if key and dyn is not None and dyn.backend:  # another backend compiled it, not Inductor
        return (f"# {key}: Dynamo handed this graph to backend {dyn.backend!r}, not Inductor\n"
                f"# so it has no {stage} stage; its Dynamo graph (1) and, where AOTAutograd ran, its AOT graphs (2) "
                "are recorded")
    if key:
        reached = session.stages_done(key)
        if stage == "linked" and "codegen" not in reached:
            return (f"# {key}: pane 8 links each buffer to its kernel lines,\n"  # (short lines: 80 columns)
                    f"# which come with codegen (last stop: {reached[-1] if reached else 'none'});\n"
                    "# press n to continue; panes 1-5 already follow the selection")
        return (f"# {key}: the compile has not reached {stage} yet"
                + (f"\n# (last stop: {reached[-1]}); press n to continue" if reached else ""))
    script_err = session.error_for(None)
    if session.done is not None or session.agent_exit is not None:
        rc = session.done.returncode if session.done is not None else session.agent_exit
        lines = [f"# the script ended (exit {rc}) without compiling a graph"]
        if script_err:
            lines.append(f"# it raised: {script_err.message}")
            lines.append("")
            lines.append(str(script_err.traceback or ""))
        elif session.done is not None and session.done.message:
            lines.append(f"# {session.done.message}")
        lines.append("# (l shows what it printed)")
        return "\n".join(lines)
    return "# waiting for the script's first torch.compile…" if live else "# this session has no compiled graph"
