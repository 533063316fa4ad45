"""AgentState.current: a what-if or numerics variant compiling on its own thread never moves the script's graph.

The script's compile can be paused mid-graph (step mode) while a variant compiles on another thread (``e`` after
the script's first call of a graph: the comparison runs while the script goes on into ``.backward()``).
"""

from __future__ import annotations

import os
import threading

from inductor_step.tracer.agent import Agent
from inductor_step.tracer.agent_state import AgentOptions


def test_a_variant_thread_keeps_its_own_current_and_leaves_the_scripts():
    fd = os.open(os.devnull, os.O_WRONLY)
    state = Agent(fd, None, AgentOptions(script="train_step.py")).state
    state.stop("[0/0]", "forward", "codegen", {})
    seen = {}
    started, moved = threading.Event(), threading.Event()

    def variant():  # what tracer.numerics_run._compare does on its thread
        state.tl.variant = ("[0/0]", "forward · numerics")
        started.set()
        moved.wait(10)  # the script's compile meanwhile reaches the backward's dynamo stop
        state.stop("[0/0]", "forward · numerics", "aot", {})
        seen["variant"] = state.current
        state.tl.variant = None

    t = threading.Thread(target=variant)
    t.start()
    started.wait(10)
    state.stop("[0/0]", "backward", "dynamo", {})
    moved.set()
    t.join(10)
    assert seen["variant"] == ("[0/0]", "forward · numerics")
    assert state.current == ("[0/0]", "backward")  # the backward's next (aot) stop goes out under its own graph
