"""A kernel's real inputs saved at its launch, the Textual-free side: where they go (``repros/`` beside
the session), the one line that says what was saved or why not, and why a recorded session cannot save any (the
repro that loads them is written by :func:`inductor_step.live.children.write_repro`).  Standard library only."""

from __future__ import annotations

import os
from typing import Any

from inductor_step.session.format import graph_key

REPROS = "repros"  # the folder beside the session that holds repros and saved inputs


def repro_dir(session_path: str) -> str:
    """``repros/`` beside the session file: where ``x`` writes repros and ``X`` saves inputs."""
    return os.path.join(os.path.dirname(os.path.abspath(session_path)), REPROS)


def saved_line(msg: dict[str, Any]) -> str:
    """One line for an ``inputs_saved`` message: the file, its size and whose inputs they are; or the error."""
    k = msg.get("kernel", "?")
    where = graph_key(msg) if msg.get("compile_id") not in (None, "?") else ""
    if msg.get("error"):
        return f"inputs of {k} not saved{' (' + where + ')' if where else ''}: {msg['error']}"
    size = (msg.get("bytes") or 0) / 1e6
    return (f"inputs of {k} ({where}) saved at its launch: {msg.get('path')} ({size:.3f} MB on disk, "
            f"{msg.get('tensors')} tensors; {msg.get('how')})")


def cannot_save(live: bool, agent_alive: bool) -> str | None:
    """Why inputs cannot be saved now (one line), or None when a live agent can save them."""
    if not live:
        return ("inputs cannot be saved now: this is a recorded session (--open), no process runs the script; "
                "record it again with --save-inputs KERNEL (or press X while it runs live)")
    if not agent_alive:
        return "inputs cannot be saved now: the script's process has ended (start it again to save its inputs)"
    return None


def saved_inputs(msgs: list[dict[str, Any]], session_path: str) -> dict[tuple[str, str], str]:
    """``(graph, kernel) -> path`` of every input file a session saved that still exists (for the bundle)."""
    out: dict[tuple[str, str], str] = {}
    for m in msgs:
        if m.get("type") != "inputs_saved" or m.get("error"):
            continue
        path = m.get("path") or ""
        if not os.path.isfile(path):  # moved with the session: look beside it
            path = os.path.join(repro_dir(session_path), os.path.basename(path))
        if os.path.isfile(path):
            out[(graph_key(m), str(m.get("kernel")))] = path
    return out
