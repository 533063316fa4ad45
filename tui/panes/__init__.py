"""One pane per stage.  Adding a stage view is one file here plus one line in :data:`PANES`."""

from inductor_step.tui.panes.aot import AotPane
from inductor_step.tui.panes.blame import BlamePane
from inductor_step.tui.panes.codegen import CodegenPane
from inductor_step.tui.panes.compile_time import CompileTimePane
from inductor_step.tui.panes.dynamo import DynamoPane
from inductor_step.tui.panes.ledger import LedgerPane
from inductor_step.tui.panes.linked import LinkedPane
from inductor_step.tui.panes.log import LogPane
from inductor_step.tui.panes.loopbody import LoopBodyPane
from inductor_step.tui.panes.lowering import LoweringPane
from inductor_step.tui.panes.memory import MemoryPane
from inductor_step.tui.panes.run import RunPane
from inductor_step.tui.panes.scheduling import SchedulingPane

#: the panes in tab order
PANES = [DynamoPane, AotPane, LoweringPane, SchedulingPane, LoopBodyPane, CodegenPane, RunPane, LinkedPane, LedgerPane, CompileTimePane,
         MemoryPane, BlamePane, LogPane]

__all__ = ["PANES"]
