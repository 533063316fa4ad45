"""The view's state, in one place: which graph and stage are shown and the one selection every pane
follows (DESIGN.md: "one selection is the single source of truth; panes react to it")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message


@dataclass
class ViewState:
    """What the user is looking at.

    ``graph``: the graph key shown (``"[0/0] forward"``), None before the first compile;
    ``stage``: the pane shown (a stage, ``linked`` or ``log``); ``selected``: an IR buffer name of
    ``graph`` (``buf6``) that every pane shows its row for, None until one is chosen; ``follow``:
    stay on the newest stop as the compile advances; ``paused``: the stop message the agent waits at.
    """

    graph: str | None = None
    stage: str = "dynamo"
    selected: str | None = None
    follow: bool = True
    paused: dict[str, Any] | None = None
    #: the stops the user stepped through, by graph: (graph, stage) pairs
    history: list[tuple[str, str]] = field(default_factory=list)
    #: True after ``b``: ``n`` walks forward through the recorded stops before it continues the compile;
    #: a pane key (1-9) only shows another level of the same stop, so ``n`` then continues at once
    stepped_back: bool = False


@dataclass
class RankView:
    """One rank's recording and where the user stands in it; a single-process session is
    one of these with ``rank`` None.  ``session``: a :class:`inductor_step.session.store.Store`;
    ``agent``: the live agent (``AgentProcess``/``RankAgent``) or None; ``script_rc``: the script's
    exit status once known."""

    rank: int | None
    session: Any
    view: ViewState = field(default_factory=ViewState)
    agent: Any = None
    writer: Any = None
    script_rc: int | None = None


class OpenKernel(Message):
    """Show kernel ``kernel`` (and its buffer ``buffer``) in the codegen pane (Enter in the run pane)."""

    def __init__(self, kernel: str, buffer: str | None) -> None:
        super().__init__()
        self.kernel, self.buffer = kernel, buffer
