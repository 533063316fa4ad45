"""The session format's framing: a message as one JSON line, long lines packed (zlib + base64), decoded back."""

from __future__ import annotations

import base64
import json
import zlib
from typing import Any, TypedDict

from inductor_step.session.format.types import StopHead


# ----------------------------------------------------------------------------- framing

#: A stop's head keys, in the order they start its line.
STOP_HEAD_KEYS: tuple[str, ...] = tuple(StopHead.__annotations__)
#: Head keys kept in the clear on a packed line, by message type (besides ``type``).
PACKED_HEAD_KEYS: dict[str, tuple[str, ...]] = {"stop": (*STOP_HEAD_KEYS[1:], "part", "subgraph", "variant")}
# a run's variant too: --open's lazy reader then knows its graph without decoding it (session.run_index)
_OTHER_HEAD_KEYS = ("compile_id", "graph_kind", "part", "subgraph", "variant", "name")
#: A packed run's head also keeps its :func:`run_outcome` under this key (what the stage bar shows of it); a head
#: that has it was written since heads keep a run's variant, so a head without ``variant`` is then the original's.
OUTCOME = "outcome"


def run_outcome(run: dict[str, Any] | None) -> str | None:
    """What a ``run`` message (a graph's timing) came to, as the stage bar marks it: ``"failed"`` (an ``error``
    or ``cancelled``: ✗run), ``"not_timed"`` (no time by design: not a done stage), ``"no_eager"`` (the compiled
    graph timed, its eager baseline not: a yellow ✓run), ``"timed"`` (✓run); None for no run."""
    if run is None:
        return None
    if run.get("error") or run.get("cancelled"):
        return "failed"
    if run.get("not_timed"):
        return "not_timed"
    return "no_eager" if run.get("eager_ms") is None else "timed"
#: Lines at least this long (bytes) are packed by the session writer.
PACK_OVER = 2048


class Packed(TypedDict, total=False):
    """A message as the session writer stores a long one: its head, then the whole message's JSON
    (``size`` bytes), zlib-compressed and base64-encoded in ``zlib``."""
    type: str
    size: int
    zlib: str


def stop_head(seq: int, compile_id: str, graph_kind: str, stage: str, paused: bool) -> dict[str, Any]:
    """The start of a stop message, keys in :data:`STOP_HEAD_KEYS` order; the agent adds the
    stage's fields after them.  The lazy reader relies on this order."""
    return {"type": "stop", "seq": seq, "compile_id": compile_id, "graph_kind": graph_kind, "stage": stage,
            "paused": paused}


def encode(msg: dict[str, Any]) -> bytes:
    """One message as a JSON line (UTF-8, newline-terminated).

    Raises TypeError if ``msg`` holds something JSON cannot encode; callers pass plain data.
    """
    return (json.dumps(msg, separators=(",", ":"), default=str) + "\n").encode("utf-8")


def pack(line: bytes, msg: dict[str, Any] | None = None, level: int = 6) -> bytes:
    """``line`` (one encoded message, without its newline) as a packed line when that is shorter,
    else ``line`` unchanged (an already packed line too, and the session's header: the first line,
    which readers of the file and job tools take as plain JSON); newline not added.  ``msg`` is the decoded message, if the caller has
    it (its head keys are copied from it)."""
    if len(line) < PACK_OVER or line.startswith(b'{"type":"header"'):  # the header stays readable as is
        return line
    if b'"zlib":"' in line[:1024] and _is_packed(line):
        return line
    if msg is None:
        msg = decode(line)
        if msg is None:
            return line
    kind = msg.get("type")
    head: dict[str, Any] = {"type": kind}
    for k in PACKED_HEAD_KEYS.get(str(kind), _OTHER_HEAD_KEYS):
        if k in msg:
            head[k] = msg[k]
    if kind == "run":
        head[OUTCOME] = run_outcome(msg)
    body = base64.b64encode(zlib.compress(line, level)).decode("ascii")
    out = json.dumps({**head, "size": len(line)}, separators=(",", ":"))[:-1] + ',"zlib":"' + body + '"}'
    data = out.encode("utf-8")
    return data if len(data) < len(line) else line


def _is_packed(line: bytes) -> bool:
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    return isinstance(obj, dict) and "zlib" in obj and "size" in obj


def _unpack(obj: dict[str, Any]) -> dict[str, Any] | None:
    try:
        full = json.loads(zlib.decompress(base64.b64decode(obj["zlib"])))
    except (ValueError, TypeError, zlib.error):
        return None
    return full if isinstance(full, dict) else None


def decode(line: bytes | str) -> dict[str, Any] | None:
    """Parse one line of the stream (a packed line gives the message it holds); ``None`` for a
    blank or torn (partly written) line."""
    if isinstance(line, (bytes, bytearray, memoryview)):
        line = bytes(line).decode("utf-8", errors="replace")
    line = line.strip()
    if not line:
        return None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(obj, dict):
        return None
    if "zlib" in obj and "size" in obj:
        return _unpack(obj)
    return obj


# The head of a stop line as the agent writes it (stop_head), then, on a packed line, its size.
