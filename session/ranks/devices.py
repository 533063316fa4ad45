"""A rank's own GPU (``cuda:N`` on local rank N) read as the same device on every rank.

Rank 1 of a two-GPU job runs on ``cuda:1`` where rank 0 runs on ``cuda:0``: its parameters, its
Dynamo and post-grad nodes' values, its scheduler's loop groups (``device(type='cuda', index=1)``),
its kernels' ``triton_meta`` (``DeviceProperties(type='cuda', index=1, ...)``) and its wrapper
(``get_raw_stream(1)``, ``torch.cuda._DeviceGuard(1)``) all name index 1.  That is the same input,
not a divergence.  Before two ranks' graphs are diffed, each rank's own device index is written as
:data:`OWN` in every string of its stops; any other device index (a rank that put a tensor on
another rank's GPU) stays as recorded, so it still differs.
"""

from __future__ import annotations

import re
from typing import Any

#: what a rank's own device index reads as in the compared stops: ``cuda:LOCAL_RANK``
OWN = "LOCAL_RANK"

# the spellings of a CUDA device index in recorded stops, each with the index as group "i"
_SPELLINGS = (
    r"\bcuda:(?P<i>\d+)\b",
    r"""\btype=['"]cuda['"],\s*index=(?P<i>\d+)\b""",  # device(type='cuda', index=1), DeviceProperties(...)
    r"""\bdevice\(\s*['"]cuda['"],\s*(?P<i>\d+)\s*\)""",  # torch.device('cuda', 1)
    r"\bget_raw_stream\(\s*(?P<i>\d+)\s*\)",
    r"\bstream(?P<i>\d+)\b",  # the wrapper's variable for it: stream1 = get_raw_stream(1)
    r"\b_DeviceGuard\(\s*(?P<i>\d+)\s*\)",
    r"\bset_device\(\s*(?P<i>\d+)\s*\)",
    r"\bcuda\.device\(\s*(?P<i>\d+)\s*\)",
)
_ANY = re.compile("|".join(f"(?:{s})".replace("(?P<i>", f"(?P<i{n}>") for n, s in enumerate(_SPELLINGS)))


def own_index(session: Any) -> int | None:
    """The CUDA device index that is rank ``session``'s own: its header's ``distributed.local_rank``
    (torchrun's LOCAL_RANK, what ``torch.cuda.set_device(local_rank)`` uses), or None for a session
    without one (not a job's rank), where nothing is rewritten."""
    d = ((getattr(session, "header", None) or {}).get("distributed") or {})
    lr = d.get("local_rank")
    return lr if isinstance(lr, int) and not isinstance(lr, bool) and lr >= 0 else None


def own_device_text(text: str, index: int) -> str:
    """``text`` with every CUDA device index equal to ``index`` written as :data:`OWN`
    (``cuda:1`` -> ``cuda:LOCAL_RANK``, ``get_raw_stream(1)`` -> ``get_raw_stream(LOCAL_RANK)``); other
    indices are kept."""
    if not any(w in text for w in ("cuda", "Guard", "stream", "set_device")):
        return text

    def sub(m: re.Match[str]) -> str:
        for name, val in m.groupdict().items():
            if val is not None and name.startswith("i"):
                if int(val) != index:
                    return m.group(0)
                s, e = m.start(name) - m.start(), m.end(name) - m.start()
                return m.group(0)[:s] + OWN + m.group(0)[e:]
        return m.group(0)

    new = _ANY.sub(sub, text)
    return text if new == text else new


def own_device_value(value: Any, index: int) -> Any:
    """``value`` (a stop message or any part of one: dicts, lists, strings) with
    :func:`own_device_text` applied to every string in it, dict keys included; a new object where
    anything changed, ``value`` itself where nothing did (the recorded stops are never changed)."""
    if isinstance(value, str):
        return own_device_text(value, index)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        changed = False
        for k, v in value.items():
            k2 = own_device_text(k, index) if isinstance(k, str) else k
            v2 = own_device_value(v, index)
            changed = changed or k2 is not k or v2 is not v
            out[k2] = v2
        return out if changed else value
    if isinstance(value, (list, tuple)):
        items = [own_device_value(v, index) for v in value]
        if all(a is b for a, b in zip(items, value)):
            return value
        return type(value)(items) if isinstance(value, list) else tuple(items)
    return value


def own_device_stops(stops: dict[str, Any], index: int | None) -> dict[str, Any]:
    """A graph's ``stops`` (stage -> stop message; or a session header) with the rank's own device ``index`` written as
    :data:`OWN` (``stops`` itself when ``index`` is None)."""
    if index is None:
        return stops
    return {stage: own_device_value(stop, index) for stage, stop in stops.items()}
