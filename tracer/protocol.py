"""The session stream shared by the agent (tracer/) and the UI (tui/); standard library only.

The agent writes one JSON object per line on its message pipe; the UI appends every line, as it
arrives, to the session file, so a session file is exactly the stream (format ``inductor-step/1``,
documented in README.md).  The UI writes commands to the agent's control pipe in the same framing.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

FORMAT = "inductor-step/1"

#: The compile stages, in the order a compile passes them, then the run stage.
STAGES: tuple[str, ...] = ("dynamo", "aot", "lowering", "scheduling", "loopbody", "codegen")
ALL_STAGES: tuple[str, ...] = STAGES + ("run",)

#: Graph kinds, as AOTAutograd names them.
GRAPH_KINDS: tuple[str, ...] = ("inference", "forward", "backward")

# Control commands, UI -> agent.
CMD_CONTINUE = "continue"   # leave the current stop
CMD_RUN_THROUGH = "run_through"  # stop pausing; capture the rest without stops
CMD_RUN = "run"             # time the compiled graphs (optionally {"compile_id", "graph_kind"})
CMD_QUIT = "quit"           # end the agent


def encode(msg: dict[str, Any]) -> bytes:
    """One message as a JSON line (UTF-8, newline-terminated).

    Raises TypeError if ``msg`` holds something JSON cannot encode; callers pass plain data.
    """
    return (json.dumps(msg, separators=(",", ":"), default=str) + "\n").encode("utf-8")


def decode(line: bytes | str) -> dict[str, Any] | None:
    """Parse one line of the stream; ``None`` for a blank or torn (partly written) line."""
    if isinstance(line, bytes):
        line = line.decode("utf-8", errors="replace")
    line = line.strip()
    if not line:
        return None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def read_session(path: str) -> Iterator[dict[str, Any]]:
    """Yield the messages of a session file in order.

    Raises OSError if the file cannot be read and ValueError if its first message is not an
    ``inductor-step/*`` header.  A torn last line (the writer died mid-line) is skipped.
    """
    with open(path, "rb") as f:
        first = True
        for raw in f:
            msg = decode(raw)
            if msg is None:
                continue
            if first:
                if msg.get("type") != "header" or not str(msg.get("format", "")).startswith("inductor-step/"):
                    raise ValueError(f"{path}: not an inductor-step session (no header line)")
                first = False
            yield msg
        if first:
            raise ValueError(f"{path}: empty session file")


def graph_key(msg: dict[str, Any]) -> str:
    """The graph a message belongs to, as shown to users: ``"[0/0] forward"``."""
    return f"{msg.get('compile_id', '[?]')} {msg.get('graph_kind', '?')}"
