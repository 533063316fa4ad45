"""One rank of a torchrun job as pane 0 lists it: state, last stop, note and detail, from its session and job file.

No Textual, no torch: :func:`rank_row` reads the rank's session (session.store.Store: header, stops, errors,
``done``, ``agent_exit``, ``blocked``, process groups) and its entry in the job file (session.format.job.JobRank,
written by live.client.JobProcess); the app says whether the rank is paused at a stop, stepped, and live.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inductor_step.session.format import graph_key
from inductor_step.session.format.job import Job
from inductor_step.session.format.records import Record, as_record


@dataclass(frozen=True)
class RankRow:
    """One rank's row (:func:`rank_row`).

    - ``rank``: its number in the job.
    - ``state``: ``"paused"`` (at a stop, waiting for n), ``"done"`` (its script ended: the session's ``done``),
      ``"stopped"`` (the user ended the job: the job file's state), ``"died"`` (its process ended before the script
      did: ``agent_exit``, or the job file's state), ``"waiting"`` (no header yet), ``"waiting at <collective>"``
      (live: its script sits in a torch.distributed call, tracer.rank_watch's ``blocked`` message), ``"running"`` /
      ``"recording"`` (live: stepped / not stepped), else the job file's state or ``"ended"``.
    - ``at``: its last stop (``"[0/0] forward codegen"``, ``"-"`` before any); ``stops``: how many stops (a string,
      as the table shows it).
    - ``note``: the exit status, the error, where it died or what it waits for ("" when nothing to say).
    - ``detail``: the text below the table: the note, the header's distributed note and world, the process groups
      (backend, ranks, timeout in s), the error's traceback.
    """

    rank: int | None
    state: str
    at: str
    stops: str
    note: str
    detail: str


def job_ranks(job: dict[str, Any] | None) -> dict[int, Record]:
    """The job file's ranks (``ranks[i]``, JobRank records: ``state``, ``message``, ``session``) by rank, the first
    entry of a rank where it has several; {} without a job file."""
    out: dict[int, Record] = {}
    for r in as_record(job or {}, Job).ranks or []:
        if isinstance(r, dict):
            out.setdefault(r.rank, r)
    return out


def rank_row(session: Any, rank: int | None, *, paused: bool, stepped: bool, live: bool,
             job: dict[str, Any] | None) -> RankRow:
    """Rank ``rank``'s :class:`RankRow` from its ``session`` (session.store.Store) and the ``job`` file (None without
    one); ``paused``: the app holds it at a stop; ``stepped``: it is the rank n steps; ``live``: the job runs now."""
    s = session
    h = s.header
    d = h.distributed or {}
    last = s.stops[-1] if s.stops else None
    at = f"{graph_key(last)} {last.stage}" if last else "-"
    err = s.errors[-1] if s.errors else None
    entry = job_ranks(job).get(rank)  # type: ignore[arg-type]
    job_state = entry.state if entry is not None else None
    if paused:
        state = "paused"
    elif s.done is not None:
        state = "done"
    elif job_state == "stopped":
        state = "stopped"
    elif s.agent_exit is not None or job_state == "died":
        state = "died"
    elif not h:
        state = "waiting"
    elif live and getattr(s, "blocked", None):  # its script sits in a collective (tracer.rank_watch)
        state = f"waiting at {s.blocked.collective}"
    elif live:
        state = "running" if (stepped or not last) else "recording"
    else:
        state = job_state or "ended"
    if state == "died":
        where = f"at {err.compile_id} {err.graph_kind} {err.stage}" if err and err.compile_id \
            else f"after {at}" if last else "before any stop"
        note = f"died {where}: {err.message}" if err else f"died {where}: " + (
            (entry.message if entry is not None else None) or "its stream ended before the script did")
    elif state == "stopped":
        note = f"stopped by the user (q) after {at}"
    elif state == "done":
        rc = s.done.returncode if s.done is not None else None
        note = f"exit {rc}" + (f": {err.message}" if err and rc else "")
    elif err:
        note = f"error in {err.stage}: {err.message}"
    elif state.startswith("waiting at "):
        note = (f"{s.blocked.where if s.blocked else None}: for another rank to reach it"
                + (" (the stepped rank waits for n)" if not stepped else ""))
    else:
        note = "stepped: n continues it" if stepped and live else ""
    lines = [f"rank {rank}: {state}" + (f" ({note})" if note else ""), ""]
    if d and d.note:
        lines.append(d.note)
    if d:
        lines.append(f"world size {d.world_size}, local rank {d.local_rank}, pid {h.pid}, "
                     f"restart {d.restart_count or 0}")
    lines.append(f"{len(s.stops)} stops, {len(s.graphs)} graphs, {len(s.runs)} timed")
    for g in s.process_groups:
        t = g.timeout_s
        lines.append(f"{g.call}: backend {g.backend}, {g.world_size} ranks, this one "
                     f"{g.rank}; timeout {t:g} s" if t is not None else "; timeout ?")
        if t is not None and g.default_s is not None and t > g.default_s:
            lines[-1] += f" (raised from {g.timeout_asked_s or g.default_s:g} s by inductor-step)"
    if err and err.traceback:
        lines += ["", f"error in {err.stage}: {err.message}", "", err.traceback]
    return RankRow(rank, state, at, str(len(s.stops)), note, "\n".join(lines))


__all__ = ["RankRow", "job_ranks", "rank_row"]
