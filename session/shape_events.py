"""``--headless``'s lines for Dynamo's shape events (specializations, constraints): one per symbol, once a compile.

Under ``dynamic=True`` Dynamo's shape environment records an event for every guard a line of code puts on a
symbolic size or float (torch's ``guard_added_fast`` and ``symbolic_shape_specialization``, recorded by the
tracer as ``blame`` messages of event ``constraint`` / ``specialization``).  Printed one by one they ran to 34
lines before nanoGPT's first stage line: a dropout's ``p`` constrained three times (``>= 0.0``, ``<= 1.0``,
``== 0.0``) and then specialized to 0.0, and every one of them again when Dynamo restarted the frame's analysis
(``TensorifyScalarRestartAnalysis``).  Here a compile's events wait for its next stop (or the end) and print as:
a specialization's line alone (the constraints on the same symbol before it led to it), a constraint's line for a
symbol that stayed symbolic, and no line already printed for that compile id.
"""

from __future__ import annotations

from typing import Any

from inductor_step.session.blame import constraints, specializations

SHAPE_EVENTS = ("specialization", "constraint")


class ShapeEventLines:
    """Holds each compile's shape events (``blame`` messages, event ``specialization`` or ``constraint``) until
    :meth:`flush` prints them; :meth:`take` returns whether a message was one (held, not printed)."""

    def __init__(self) -> None:
        self._held: dict[str, list[Any]] = {}  # compile id -> its events not printed yet, in order
        self._printed: dict[str, set[str]] = {}  # compile id -> the lines printed for it

    def take(self, msg: Any) -> bool:
        """Hold ``msg`` when it is a shape event (True), else leave it (False)."""
        if msg.get("type") != "blame" or msg.get("event") not in SHAPE_EVENTS:
            return False
        self._held.setdefault(str(msg.get("compile_id") or "?"), []).append(msg)
        return True

    def flush(self, compile_id: str | None = None) -> list[str]:
        """The lines of compile ``compile_id``'s held events (every compile's where None), in the order torch
        recorded them, each ``"[0/0]                specialize  s77 (L['x'].size()[0]) specialized to 4 by f.py:7 ..."``
        (the compile id leads the line, so the event's own "in [0/0]" is left out)."""
        ids = list(self._held) if compile_id is None else [compile_id] if compile_id in self._held else []
        out: list[str] = []
        for cid in ids:
            events = self._held.pop(cid)
            special = {sp.symbol for sp in specializations(events)}
            printed = self._printed.setdefault(cid, set())
            for m in events:
                line = _line(m, special)
                if line and line not in printed:
                    printed.add(line)
                    out.append(line)
        return out


def _line(msg: Any, specialized: set[str]) -> str | None:
    """One event's line; None for a constraint on symbols that were all specialized in the same compile."""
    cid = str(msg.get("compile_id") or "?")
    if msg.get("event") == "specialization":
        sp = specializations([msg])
        return f"{cid:<20} specialize  {sp[0].line().replace(f' in {cid}', '', 1)}" if sp else None
    cs = constraints([msg])
    if not cs or (cs[0].symbols and set(cs[0].symbols) <= specialized):
        return None
    return f"{cid:<20} constrain   {cs[0].line().replace(f' in {cid}', '', 1)}"
