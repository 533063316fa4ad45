"""Pane B: blame, the bisect from a divergence to the pass or lowering behind it (session.blame): the verdict first,
then every step of the search (what was switched off, good or bad, the divergence left, its time), then the sizes
Dynamo made static, and the guards the script's lines put on the sizes left dynamic, in the viewed compile and the
earlier ones of its frame (why it is not dynamic, why it recompiled).

``B`` shows it; in a live session on a graph that diverged (pane e) it starts the search first (each step a child
process of the agent, tracer.blame); ``c`` cancels it.  Enter on the verdict selects the FX node it names (its
buffer, in every pane) and opens pane 2 at it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from textual import on

from inductor_step.session import blame as sb
from inductor_step.session.format import CMD_BLAME, CMD_CANCEL_BLAME
from inductor_step.session.format.records import Record
from inductor_step.session.format.blame import Blame
from inductor_step.session.links import related
from inductor_step.tui.panes.base import Detail, StagePane, T
from inductor_step.tui.table import Table

COLUMNS = ("", "step", "outcome", "x tol", "s")
STYLE = {"bad": "bold red", "crash": "bold red", "timeout": "yellow", "good": "green", "cancelled": "yellow"}


def _compile_id(key: str | None) -> str:
    return (key or "?").split(" ")[0]


def current(app: Any, fallback: bool = True) -> sb.BlameRun | None:
    """The blame shown: the newest of the viewed graph's compile id, else (``fallback``) the newest of the session."""
    rs = sb.runs(getattr(app.session, "blames", []) or [])
    if not rs:
        return None
    cid = _compile_id(app.view.graph)
    return next((r for r in reversed(rs) if r.compile_id == cid), rs[-1] if fallback else None)


#: what B says (status line and pane B) on a graph with no divergence to bisect
NOTHING_YET = "nothing to blame yet: press e first (blame bisects a graph whose buffers diverge from eager)"


@dataclass(frozen=True, eq=False)
class BlameView:
    """The pane's data for the viewed compile id ``cid`` (``"[0/1]"``): ``run`` the blame shown (:func:`current`;
    None when only recompile answers are there), ``items`` its rows in order (``("verdict", BlameRun)``,
    ``("step", Step)``, ``("spec", Specialization)``, ``("guard", Constraint)``: session.blame), ``n`` how many
    blame messages the session held when it was built."""

    run: sb.BlameRun | None
    items: list[tuple[str, Any]]
    n: int
    cid: str


class BlamePane(StagePane):
    stage = "blame"
    title = "B Blame"
    columns = COLUMNS
    HIDE_TAB = True  # reached by its key B (and ctrl+p), as pane M

    def data(self) -> BlameView | None:
        cid = _compile_id(self.app.view.graph)
        blames = getattr(self.app.session, "blames", []) or []
        specs = sb.of_frame(sb.specializations(blames), cid)
        cons = sb.of_frame(sb.constraints(blames), cid)
        r = current(self.app, fallback=not (specs or cons))  # a recompile's own answer first, not another graph's
        if r is None and not specs and not cons:
            return None
        items: list[tuple[str, Any]] = ([("verdict", r)] + [("step", s) for s in r.steps]) if r else []
        items += [("spec", s) for s in specs] + [("guard", c) for c in cons]
        return BlameView(r, items, len(blames), cid)

    def stamp(self, data: BlameView | None) -> Any:
        return None if data is None else (data.n, data.cid, data.run is not None and data.run.verdict)

    def rows(self, data: BlameView) -> tuple[Sequence[str], Callable[[int], tuple]]:
        items = data.items

        def row(i: int) -> tuple:
            kind, x = items[i]
            if kind == "verdict":
                v = x.verdict
                text = v.cause() if v and v.found else (v.text if v else f"running: {len(x.steps)} step(s) so far")
                return (T(">", "bold red"), T(f"verdict: {text}", "bold"), T("found" if v and v.found else "-"),
                        T(""), T(f"{x.seconds():.1f}"))
            if kind == "spec":
                return (T("S", "bold yellow"), T(x.line()), T("static"), T(""), T(""))
            if kind == "guard":
                return (T("G", "yellow"), T(x.line()), T("guarded"), T(""), T(""))
            tol = sb.fmt_num(x.measure.tol_ratio) if x.measure else "-"
            return (T(str(x.index)), T(x.what), T(sb.OUTCOME_MARK.get(x.outcome, x.outcome), STYLE.get(x.outcome, "")),
                    T(tol), T(f"{x.seconds:.1f}"))
        keys = [f"{k}{getattr(x, 'index', i)}" for i, (k, x) in enumerate(items)]
        return keys, row

    def fill(self, data: BlameView | None) -> None:
        """No blame for this graph: say so (not that the compile has not reached a stage: B is no stage)."""
        if data is None:
            self.table.clear()
            self.apply(self.empty(None))
            return
        super().fill(data)

    def empty(self, data: BlameView | None) -> Detail | None:
        if self.app.live:
            return Detail(f"# {self.app.view.graph or 'this graph'}: {NOTHING_YET}\n"
                          "# no blame yet: on a graph whose buffers diverged (pane e), press B to bisect it\n"
                          "# to the backend, subsystem and single pass or lowering that caused it\n"
                          "# (each step runs the script again in a child process; c cancels)", "text")
        return Detail("# this recorded session has no blame\n"
                      "# (inductor-step --headless --blame numerics SCRIPT records one; B in a live session)", "text")

    def detail(self, data: BlameView, row: int) -> Detail | None:
        items = data.items
        if not 0 <= row < len(items):
            return None
        kind, x = items[row]
        if kind in ("spec", "guard"):
            specs = [s for k, s in items if k == "spec"]
            cons = [c for k, c in items if k == "guard"]
            return Detail("\n".join(sb.recompile_lines(specs, data.cid, cons) or [x.line()]), "text")
        r = data.run
        assert r is not None  # a verdict or step row is there only with its run
        where = sb.located(r, self.app.session)
        head = sb.verdict_lines(r, where)
        if r.verdict and r.verdict.found and where.fx_nodes:
            head.append("  Enter: select that FX node's buffer in every pane and open pane 2 at it")
        if kind == "verdict":
            body = ["", "steps:", *[f"  {s.line()}" for s in r.steps]]
            return Detail("\n".join(head + body), "text")
        s = x
        lines = [s.line(), f"  level: {s.level}",
                 "  environment: " + (" ".join(f"{k}={v}" for k, v in s.env.items()) or "-")]
        if s.settings:
            lines.append("  torch._inductor.config: " + ", ".join(f"{k}={v!r}" for k, v in s.settings.items()))
        if s.measure:
            lines.append(f"  {s.measure.which}: {s.measure.verdict}")
        return Detail("\n".join(lines + ["", *head]), "text")

    def row_for(self, data: BlameView, buffer: str) -> int | None:
        return None

    def buffers_of(self, data: BlameView, row: int) -> list[str]:
        return []

    def session_message(self, msg: Record) -> None:
        if msg.SCHEMA is Blame:
            self.show(force=True)

    @on(Table.RowSelected, "#table-blame")
    def _enter(self, event: Table.RowSelected) -> None:
        """Enter on the verdict: the FX node it names, selected (its buffer) in every pane, in pane 2."""
        data = self.data()
        if not data or data.run is None or event.cursor_row != 0:
            return
        where = sb.located(data.run, self.app.session)
        if not where:
            self.app.bell()
            return
        nodes = where.fx_nodes
        links = self.app.session.links(where.graph)
        bufs = [b for n in nodes for b in related(links, "fx_nodes", n, "buffers")]
        self.app.show_graph(where.graph)
        if bufs:
            self.app.select(bufs[0], f"{bufs[0]}: the buffer of FX node {nodes[0]}, which blame names "
                                     f"({data.run.verdict.cause()})")
        self.app.action_stage("aot")


def request(app: Any) -> None:
    """``B``: show the blame pane; in a live session, from pane 7 (run) ask the agent which setting makes the shown
    graph slower (speed: what-if variants timed round by round), else, where the shown graph diverged (its numerics,
    pane e) and has no blame yet, bisect it first."""
    key = app.view.graph
    if app.view.stage == "run" and app.agent is not None and app.agent.alive and key:
        app.agent.send(CMD_BLAME, graph=key, blame="speed")
        app._status_extra = (f"blaming {key}'s time: one what-if variant per setting, each timed against it "
                             "(c cancels)…")
        app.view.stage = "blame"
        app.refresh_all(force=True)
        return
    num = app.session.numerics.get(key) if key else None
    diverged = bool(num and (num.first_suspect or num.first_divergence or num.first_nonfinite))
    have = any(r.compile_id == _compile_id(key) for r in sb.runs(getattr(app.session, "blames", []) or []))
    if app.agent is not None and app.agent.alive and key and not have:
        if diverged:
            app.agent.send(CMD_BLAME, graph=key, blame="numerics")
            app._status_extra = f"blaming {key}'s divergence: each step runs the script again (c cancels)…"
        else:
            app._status_extra = f"{key}: {NOTHING_YET}"
            app._status_for = "blame"  # said of pane B: another pane shown clears it (StepApp.action_stage)
    app.view.stage = "blame"
    app.refresh_all(force=True)


def cancel(app: Any) -> bool:
    """``c`` while a blame runs: end its step's process and the search; False when none runs here."""
    rs = sb.runs(getattr(app.session, "blames", []) or [])
    if not (rs and rs[-1].running and app.agent is not None and app.agent.alive):
        return False
    app.agent.send(CMD_CANCEL_BLAME)
    app._status_extra = "cancelling the blame…"
    return True


def on_message(app: Any, msg: Record) -> None:
    """A ``blame`` message (its Blame record): refresh the pane; the verdict in the status line."""
    if msg.event == "verdict":
        r = sb.runs([msg])[0]
        app._status_extra = f"blame {r.compile_id}: " + (r.verdict.cause() if r.verdict and r.verdict.found else
                                                         (r.verdict.text if r.verdict else ""))
    app.refresh_all(force=app.view.stage == "blame")
