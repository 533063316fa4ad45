"""The control commands the UI writes to the agent (CMD_*, Command); a command line split at the script."""

from __future__ import annotations

from typing import Any, Literal, TypedDict


# ----------------------------------------------------------------------------- control: UI -> agent

CMD_CONTINUE = "continue"   # leave the current stop
CMD_CAN_FUSE = "can_fuse"   # ask can_fuse(a, b) while paused; answered by a fusion_query message
CMD_RUN = "run"             # time the compiled graphs (all, or the one named in "graph")
CMD_CANCEL_RUN = "cancel_run"
CMD_QUIT = "quit"           # end the agent
CMD_WHAT_IF = "what_if"     # recompile one graph with Inductor settings changed
CMD_TIME_PAIR = "time_pair"  # time two graphs round by round (r in the diff view)
CMD_NUMERICS = "numerics"   # compare each buffer of the graphs (all, or "graph") with eager
CMD_SAVE_INPUTS = "save_inputs"  # save one kernel's real arguments at its launch (X in pane 6)
CMD_BLAME = "blame"  # bisect a graph's divergence to the pass or lowering behind it (tracer.blame)
CMD_CANCEL_BLAME = "cancel_blame"  # end the blame in progress (its step's process too)


class Command(TypedDict, total=False):
    cmd: Literal["continue", "can_fuse", "run", "cancel_run", "quit", "what_if", "time_pair", "numerics",
                 "save_inputs"]
    a: str  # can_fuse: scheduler node names
    b: str
    graph: str | None  # run: "[0/0] forward", or all graphs
    compile_id: str  # what_if: the graph to recompile, with these torch._inductor.config settings
    graph_kind: str
    part: int  # what_if: the graph's part (see graph_key), if it has one
    subgraph: str  # what_if: the graph's subgraph (see graph_key), if it is one
    settings: dict[str, Any]
    run: bool  # what_if: then time the original and the variant (with numerics)
    graphs: list[str]  # time_pair: the two graph keys, A then B
    kernel: str  # save_inputs: the kernel (of "graph") whose arguments to save
    dir: str  # save_inputs: the folder for <kernel>.inputs.pt (the session's repros/)
    blame: Literal["numerics", "speed"]  # blame: what to blame (of "graph", or the first graph that diverges)


def split_at_script(argv: list[str], value_options: frozenset[str] | set[str]) -> tuple[list[str], list[str]]:
    """``(options and SCRIPT, the script's arguments)`` for a command line ``[OPTS] SCRIPT ARGS`` (the
    CLI's and the agent's): SCRIPT is the first argument that is neither an option nor the value of one
    of ``value_options`` (``--`` marks it too, and is dropped); everything after SCRIPT is the script's,
    verbatim (``--n 32``, ``--h``, ``--help``, ``-m x``: never read as abbreviations of our options)."""
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            return (argv[:i] + argv[i + 1:i + 2]), argv[i + 2:]
        if a in value_options:
            i += 2
        elif a.startswith("-") and a != "-":
            i += 1
        else:
            return argv[:i + 1], argv[i + 1:]
    return list(argv), []
