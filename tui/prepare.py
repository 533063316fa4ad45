"""Work done ahead, while the user reads: what the next ``n`` will likely cost on a large session (the
next stop's table rows and column widths, the lines its code view will show highlighted).  Small
steps on timers, so a key pressed meanwhile is handled first; nothing shown changes (the panes read
the same caches).  Measured: BENCHMARKS.md (b), key latency."""

from __future__ import annotations

from typing import Any, Iterator

from inductor_step.session.format import LAZY, STAGES, graph_key


class Preparer:
    """Prepares the stop after the shown one for ``app`` once the view has been still for
    :attr:`DELAY_S`; any view change starts over."""

    #: seconds after the view last changed before the next stop is prepared
    DELAY_S = 0.05

    def __init__(self, app: Any) -> None:
        self.app = app
        self._timer: Any = None
        self._steps: Iterator[None] | None = None

    def schedule(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._steps = None
        self._timer = self.app.set_timer(self.DELAY_S, self._start)

    def _start(self) -> None:
        self._steps = self._next_stop()
        self._step()

    def _step(self) -> None:
        it, self._timer = self._steps, None
        if it is None:
            return
        try:
            next(it)
        except Exception:  # noqa: BLE001 - StopIteration, or a warm-up that failed: the key does the work
            self._steps = None
            return
        self._timer = self.app.set_timer(0.001, self._step)

    def _next_stop(self) -> Iterator[None]:
        app = self.app
        cur = app.current_index()
        if cur is None or cur + 1 >= len(app.session.stops):
            return
        nxt = app.session.stops[cur + 1]
        graph, stage = graph_key(nxt), nxt["stage"]
        if LAZY in nxt:  # the background parse has not reached it yet: try again soon
            self._timer = app.set_timer(0.5, self._start)
            return
        if app.session.error_for(graph) is not None:
            return
        pane = app.pane(stage)
        if graph != app.view.graph:  # another graph: its rows only (the detail reads the view's graph)
            if stage in STAGES and stage != "run":
                yield
                pane.cached_rows(app.session.stop_for(graph, stage))
            return
        data = pane.data()
        if data is None:
            return
        yield
        h = app.focus_target().scrollable_content_region.height or 40
        yield from pane.warm(data, h)
