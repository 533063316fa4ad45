"""Stepping through the stops with n and b: walk the recorded stops, or continue the paused compile (StepApp's keys)."""

from __future__ import annotations

from typing import Any

from inductor_step.session.format import CMD_CONTINUE, graph_key


def current_index(app: Any) -> int | None:
    """The stop shown, or for a pane that is no stop (linked, run, log) the graph's last stop."""
    v, last = app.view, None
    for i, s in enumerate(app.session.stops):
        if graph_key(s) == v.graph:
            if s["stage"] == v.stage:
                return i
            last = i
    return last


def resume(app: Any) -> None:
    """Continue the paused compile; the view follows it to its next stop."""
    app.view.paused = None
    app.view.follow = True
    app.view.stepped_back = False
    app.agent.send(CMD_CONTINUE)


def continues_here(app: Any) -> bool:
    """``n`` continues the compile without walking the recorded stops: the compile waits at the newest
    stop, the view is on that stop's graph (any pane: a pane key shows another level of the same stop)
    and the person did not step back with ``b``."""
    stops, v = app.session.stops, app.view
    return (v.paused is not None and not v.stepped_back and bool(stops) and graph_key(stops[-1]) == v.graph
            and app.agent is not None and app.agent.alive and not app.jobs.not_stepped_here())


def following_the_compile(app: Any) -> bool:
    """The compile runs on after ``n`` (not paused, the script not done) and the view follows it: ``n`` waits for
    the next pause instead of walking into the stops recorded meanwhile that the compile did not pause at (a
    flex-attention subgraph's), which would leave the view behind when the compile next pauses."""
    v = app.view
    return (v.follow and not v.stepped_back and v.paused is None and app.session.done is None
            and app.agent is not None and app.agent.alive and not app.jobs.not_stepped_here())


def next_stop(app: Any) -> None:
    """``n``: the next recorded stop, or where the view is at the newest (or follows the running compile), the
    compile continued to its next stop; a bell where there is none."""
    stops = app.session.stops
    cur = current_index(app)
    if continues_here(app) or following_the_compile(app):
        cur = None
    if cur is not None and cur + 1 < len(stops):
        nxt = stops[cur + 1]
        app.go(graph_key(nxt), nxt["stage"])
        app.view.follow = cur + 1 == len(stops) - 1
        app.view.stepped_back = not app.view.follow
        app.refresh_all()
        return
    if app.jobs.not_stepped_here():
        return
    if app.agent is not None and app.agent.alive:
        if app.view.paused is not None:
            resume(app)
        elif app.session.done is None:  # never passes the next stop unseen
            app.set_status("continuing the compile… (it runs to its next stop; n continues it from there)")
            return
        else:
            app.bell()
            return
        app._status_extra = "continuing the compile…"
        app.refresh_status()
        app.refresh_stagebar()
        return
    app.bell()


def prev_stop(app: Any) -> None:
    """``b``: the stop before the shown one (from a pane that is no stop: the graph's last stop first)."""
    stops = app.session.stops
    cur = current_index(app)
    if cur is None:
        if stops:
            app.go(graph_key(stops[-1]), stops[-1]["stage"])
            app.refresh_all()
        return
    exact = graph_key(stops[cur]) == app.view.graph and stops[cur]["stage"] == app.view.stage
    target = cur - 1 if exact else cur  # from linked/run/log: the graph's last stop first
    if target < 0:
        app.bell()
        return
    app.go(graph_key(stops[target]), stops[target]["stage"])
    app.view.follow = False
    app.view.stepped_back = True
    app.refresh_all()
