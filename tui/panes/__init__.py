"""One pane per stage.  Adding a stage view is one file here plus one line in :data:`PANES`.

A pane's module is imported when the pane is first mounted (the app mounts the pane of its first
frame, then the others right after that frame is on screen), so the first frame does not wait for
every pane's code and the library it uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any


@dataclass(frozen=True)
class PaneSpec:
    """A pane as the tab bar and ctrl+p know it before its code is loaded: ``stage`` (its id,
    ``#stage-<stage>``), ``title`` (its tab), and where its class is: ``tui/panes/<module>.py``,
    class ``name`` (whose own ``stage`` and ``title`` are these); ``hide_tab``: reached by its key only,
    its tab kept off the bar (the class's ``HIDE_TAB``)."""

    stage: str
    title: str
    module: str
    name: str
    hide_tab: bool = False

    def load(self) -> type:
        """The pane's class (importing its module on first use)."""
        return getattr(import_module(f"inductor_step.tui.panes.{self.module}"), self.name)


def pane_class(pane: Any) -> type:
    """The class of an entry of :data:`PANES`: a :class:`PaneSpec`'s, loaded; a class as it is."""
    return pane if isinstance(pane, type) else pane.load()


#: the panes in tab order
PANES: list[Any] = [
    PaneSpec("dynamo", "1 Dynamo", "dynamo", "DynamoPane"), PaneSpec("aot", "2 AOT", "aot", "AotPane"),
    PaneSpec("lowering", "3 IR", "lowering", "LoweringPane"),
    PaneSpec("scheduling", "4 Sched", "scheduling", "SchedulingPane"),
    PaneSpec("loopbody", "5 Loop", "loopbody", "LoopBodyPane"), PaneSpec("codegen", "6 Code", "codegen", "CodegenPane"),
    PaneSpec("run", "7 Run", "run", "RunPane"), PaneSpec("linked", "8 Linked", "linked", "LinkedPane"),
    PaneSpec("ledger", "9 Ledger", "ledger", "LedgerPane"), PaneSpec("ctime", "T Compile time", "compile_time", "CompileTimePane", hide_tab=True),
    PaneSpec("memory", "M Memory", "memory", "MemoryPane", hide_tab=True),
    PaneSpec("blame", "B Blame", "blame", "BlamePane", hide_tab=True), PaneSpec("log", "Log", "log", "LogPane"),
]
#: the numerics pane (e): its tab shows once a graph was compared with eager
NUMERICS = PaneSpec("numerics", "e Numerics", "numerics", "NumericsPane")
#: pane 0 of a torchrun job: its ranks
RANKS = PaneSpec("ranks", "0 Ranks", "ranks", "RanksPane")

__all__ = ["PANES", "NUMERICS", "RANKS", "PaneSpec", "pane_class"]
