"""The session stream shared by the agent (tracer/) and the UI (tui/); standard library only.

The agent writes one JSON object per line on its message pipe; the UI appends every line, as it
arrives, to the session file, so a session file is exactly the stream (format ``inductor-step/1``,
documented in README.md).  The UI writes commands to the agent's control pipe in the same framing.
"""

from __future__ import annotations

import json
import os
import re
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


# The head of a stop line as the agent writes it (tracer.agent.Agent.stop puts these keys first).
_STOP_HEAD = re.compile(rb'\{"type":"stop","seq":(\d+),"compile_id":("(?:[^"\\]|\\.)*"),'
                        rb'"graph_kind":("(?:[^"\\]|\\.)*"),"stage":("[a-z_]+"),"paused":(true|false)')
LAZY = "_raw"  # key of a stop whose body is not parsed yet (see read_session's lazy_over)


def load_lazy(msg: dict[str, Any]) -> dict[str, Any]:
    """Parse the body of a stop that ``read_session(..., lazy_over=N)`` left unparsed, in place
    (the same dict object then holds every field); a no-op for any other message.  The body is
    read back from the session file; a body that cannot be read or parsed leaves the head and an
    ``unreadable`` note."""
    where = msg.pop(LAZY, None)
    if where is not None:
        path, offset, length = where
        try:
            with open(path, "rb") as f:
                f.seek(offset)
                full = decode(f.read(length))
        except OSError as e:
            full = None
            msg["unreadable"] = f"cannot read this stop back from {path}: {e}"
        if full is None:
            msg.setdefault("unreadable", "this stop's line in the session file is not valid JSON")
        else:
            msg.clear()
            msg.update(full)
    return msg


def read_session(path: str, lazy_over: int | None = None) -> Iterator[dict[str, Any]]:
    """Yield the messages of a session file in order.

    With ``lazy_over`` (bytes), a stop line longer than that is yielded as its head only
    (``type, seq, compile_id, graph_kind, stage, paused``) plus where its line lies in the file
    (``"_raw": (path, offset, length)``); :func:`load_lazy` reads and parses it when it is first
    looked at.  Opening a 180 MB session then costs one scan for newlines instead of parsing (or
    even copying) every IR dump.
    Raises OSError if the file cannot be read and ValueError if its first message is not an
    ``inductor-step/*`` header.  A torn last line (the writer died mid-line) is skipped.
    """
    import mmap  # noqa: PLC0415

    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            raise ValueError(f"{path}: empty session file")
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            first = True
            pos = 0
            while pos < size:
                end = mm.find(b"\n", pos)
                end = size if end < 0 else end + 1
                start, pos = pos, end
                if lazy_over is not None and not first and end - start > lazy_over:
                    m = _STOP_HEAD.match(mm[start:start + 512])
                    if m and mm[end - 4:end].rstrip().endswith(b"}"):  # a whole line, not a torn one
                        yield {"type": "stop", "seq": int(m.group(1)), "compile_id": json.loads(m.group(2)),
                               "graph_kind": json.loads(m.group(3)), "stage": json.loads(m.group(4)),
                               "paused": m.group(5) == b"true", LAZY: (path, start, end - start)}
                        continue
                msg = decode(mm[start:end])
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
