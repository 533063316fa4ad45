"""The recorded session as a library (no Textual, no torch): its format, the loaded session, diffs, ledgers, rank comparisons and reports.

The public API (README, "Using a recorded session from Python")::

    from inductor_step import session
    s = session.load("run.jsonl")            # Session: s.graphs, s.graph("[0/0] forward")
    j = session.load_job("run.job.json")     # Job: j.ranks, j.compare()

``load``, ``load_job``, ``Session``, ``Job``, ``Graph``, ``FxNode``, ``Buffer``, ``SchedulerNode``, ``Kernel``,
``Call``, ``KernelRun`` and ``LoopBody`` are imported on first use, so that ``inductor_step.session.format`` (which the
tracer imports) stays standard library only and quick to import.
"""

from __future__ import annotations

from typing import Any

_API = {"load": "api", "load_job": "api", "Session": "api", "Job": "api", "diff_graphs": "api", "Graph": "graph",
        "FxNode": "objects", "Buffer": "objects", "SchedulerNode": "objects", "Kernel": "objects", "Call": "objects",
        "KernelRun": "objects", "LoopBody": "objects"}

__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    mod = _API.get(name)
    if mod is None:
        raise AttributeError(f"module 'inductor_step.session' has no attribute {name!r}")
    import importlib  # noqa: PLC0415

    return getattr(importlib.import_module(f"inductor_step.session.{mod}"), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
