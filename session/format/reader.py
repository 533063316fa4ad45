"""The session file's lazy reader: read_session yields a large stop or run as its head until load_lazy decodes it."""

from __future__ import annotations

import base64
import json
import os
import re
import zlib
from typing import Any, Iterator

from inductor_step.session.format.codec import decode
from inductor_step.session.format.types import FORMATS_READ


_STR = rb'"(?:[^"\\]|\\.)*"'
_STOP_HEAD = re.compile(rb'\{"type":"stop","seq":(\d+),"compile_id":(' + _STR + rb'),"graph_kind":(' + _STR
                        + rb'),"stage":("[a-z_]+"),"paused":(true|false)(?:,"part":(\d+))?(?:,"subgraph":(' + _STR
                        + rb'))?(?:,"variant":(' + _STR + rb'))?(?:,"size":(\d+),"zlib":")?')
LAZY = "_raw"  # key of a stop whose body is not parsed yet (see read_session's lazy_over)


def load_lazy(msg: dict[str, Any]) -> dict[str, Any]:
    """Parse the body of a stop or run that ``read_session(..., lazy_over=N)`` left unparsed, in place
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
            msg["unreadable"] = f"cannot read this {msg.get('type', 'message')} back from {path}: {e}"
        if full is None:
            msg.setdefault("unreadable",
                           f"this {msg.get('type', 'message')}'s line in the session file is not valid JSON")
        else:
            msg.clear()
            msg.update(full)
    return msg


# the end of a message's JSON when its last key is its what-if variant (where the agent adds it to a message that
# is not a stop): the object's own key, since the closing brace is the whole message's
_TAIL_VARIANT = re.compile(rb',"variant":("(?:[^"\\]|\\.)*")\}$')


def lazy_variant(msg: dict[str, Any]) -> None:
    """Give a message ``read_session(..., lazy_over=N)`` left unparsed its what-if ``variant`` (the key its graph
    is filed under) at the least cost: read off the end of its JSON, uncompressed but not parsed, when it ends with
    one (where the agent adds it to a message that is not a stop); else the message is parsed in place
    (:func:`load_lazy`: it holds the variant then, if it has one)."""
    where = msg.get(LAZY)
    if where is None:
        return
    path, offset, length = where
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            packed = json.loads(f.read(length))
        data = zlib.decompress(base64.b64decode(packed["zlib"]))
    except (OSError, ValueError, KeyError, TypeError, zlib.error):
        load_lazy(msg)  # says why it cannot be read
        return
    m = _TAIL_VARIANT.search(data.rstrip()[-1024:])
    if m:
        msg["variant"] = json.loads(m.group(1))
        return
    try:
        full = json.loads(data)
    except ValueError:
        full = None
    if not isinstance(full, dict):
        load_lazy(msg)
        return
    del msg[LAZY]
    msg.clear()
    msg.update(full)


#: Besides stops, the packed messages read_session yields as their heads: a run (decoded when first looked up, see
#: session.run_index), artifacts and provenance (the session's index keeps neither: the report and export read
#: the file whole).
_LAZY_TYPES = ("run", "artifact", "provenance")
#: Lines shorter than this are always parsed at once by read_session (a head costs as much).
_LAZY_MIN = 1024


def _packed_head(mm: Any, start: int, end: int, lazy_over: int) -> dict[str, Any] | None:
    """The clear head of the packed line ``mm[start:end]`` (its keys before ``size``) when the message it packs
    is over ``lazy_over`` bytes and the line is whole; else None (the line is decoded as usual)."""
    at = mm.find(b',"zlib":"', start, min(end, start + 1024))
    if at < 0 or not mm[end - 4:end].rstrip().endswith(b'"}'):
        return None
    try:
        head = json.loads(mm[start:at] + b"}")
    except ValueError:
        return None
    size = head.pop("size", None) if isinstance(head, dict) else None
    return head if isinstance(size, int) and size > lazy_over else None


def read_session(path: str, lazy_over: int | None = None) -> Iterator[dict[str, Any]]:
    """Yield the messages of a session file (any of :data:`FORMATS_READ`) in order.

    With ``lazy_over`` (bytes), a stop whose JSON is longer than that (packed or not) is yielded
    as its head only (``type, seq, compile_id, graph_kind, stage, paused``) plus where its line
    lies in the file (``"_raw": (path, offset, length)``); :func:`load_lazy` reads and parses it
    when it is first looked at.  So is a packed message of :data:`_LAZY_TYPES` over that size, as its
    packed head (a run's variant may be missing there: the session store's ``RunIndex`` decodes it when a
    lookup needs it).  Opening a 180 MB session then costs one scan for newlines instead
    of parsing (or even copying) every IR dump.
    Raises OSError if the file cannot be read and ValueError if its first message is not an
    ``inductor-step/*`` header of a format in :data:`FORMATS_READ`.  A torn last line (the writer died
    mid-line) is skipped.
    """
    import mmap  # noqa: PLC0415

    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            raise ValueError(f"{path}: empty session file")
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            first = True
            content = False  # a non-blank line was seen (so "empty" would be wrong)
            pos = 0
            while pos < size:
                end = mm.find(b"\n", pos)
                end = size if end < 0 else end + 1
                start, pos = pos, end
                if lazy_over is not None and not first and end - start > min(lazy_over, _LAZY_MIN):
                    m = _STOP_HEAD.match(mm[start:start + 512])
                    if m and (int(m.group(9)) if m.group(9) else end - start) > lazy_over \
                            and mm[end - 4:end].rstrip().endswith(b"}"):  # a whole line, not a torn one
                        head = {"type": "stop", "seq": int(m.group(1)), "compile_id": json.loads(m.group(2)),
                                "graph_kind": json.loads(m.group(3)), "stage": json.loads(m.group(4)),
                                "paused": m.group(5) == b"true", LAZY: (path, start, end - start)}
                        if m.group(6):  # one of several graphs of its compile id and kind (see graph_key)
                            head["part"] = int(m.group(6))
                        if m.group(7):  # a higher-order op's subgraph (see graph_key)
                            head["subgraph"] = json.loads(m.group(7))
                        if m.group(8):  # a what-if variant's stop (its variant follows the head)
                            head["variant"] = json.loads(m.group(8))
                        yield head
                        continue
                    if mm[start:start + 9] == b'{"type":"':
                        head = _packed_head(mm, start, end, lazy_over)
                        if head is not None and head.get("type") in _LAZY_TYPES:
                            head[LAZY] = (path, start, end - start)
                            yield head
                            continue
                msg = decode(mm[start:end])
                if msg is None:
                    content = content or bool(mm[start:end].strip())
                    continue
                if first:
                    fmt = str(msg.get("format", ""))
                    if msg.get("type") != "header" or not fmt.startswith("inductor-step/"):
                        raise ValueError(f"{path}: not an inductor-step session (no header line)")
                    if fmt not in FORMATS_READ:
                        raise ValueError(f"{path}: session format {fmt} is not one this inductor-step reads "
                                         f"({', '.join(FORMATS_READ)}): a newer version wrote it")
                    first = False
                yield msg
    if first:
        if content:
            raise ValueError(f"{path}: not an inductor-step session (no header line)")
        raise ValueError(f"{path}: empty session file")
