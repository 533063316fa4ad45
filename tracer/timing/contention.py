"""Contention measured, not guessed: how long this process's threads waited for a core while timing.

A CPU time is only as good as the cores it got.  On a shared 2-core box a graph read 41.9999 ms while a plain
loop over the same call read 0.061 ms a moment later: its OpenMP threads were waiting for a core, not
computing, and the 1-minute load average (1.3-1.5 on 2 CPUs) said nothing.  What this module reads instead,
before and after each timing round:

- ``schedstat``: per thread of this process, ``/proc/self/task/<tid>/schedstat`` (Linux, ``CONFIG_SCHED_INFO``):
  nanoseconds on a CPU and nanoseconds *runnable but waiting on a run queue*.  ``wait_share`` is the waiting
  time over (running + waiting) time summed over the threads that wanted a core: ~0 when this process had the
  cores to itself, 1/3 with two OpenMP threads and one busy loop on two cores, 1/2 with a busy loop per core.
  Threads asleep (blocked on a pipe, an idle OpenMP pool) count in neither.
- ``thread_cpu``: where schedstat is missing, the calling thread's CPU time (``time.thread_time``) against wall
  time: a thread that runs a compute loop and gets fewer CPU seconds than wall seconds was waiting (or blocked).
- ``ru_nivcsw``: involuntary context switches of the process (``resource.getrusage``), reported beside.
- ``one_core``: whether the threads that worked in a span (each at least a tenth of the busiest one's CPU time) were
  all last on the same CPU at its end (``/proc/self/task/<tid>/stat``'s ``processor``).  Two OpenMP threads on one
  core wait for each other's turn at every parallel region's barrier: nanoGPT's call read 340-352 ms that way beside
  two busy processes, 4-6 ms with a core each at other moments, at the same wait share of ~50% (BENCHMARKS.md,
  "Session 39"); the verdict's text says so beside the wait, and :class:`Apart` keeps such threads off the timing
  thread's core for the next round.

Standard library only.
"""

from __future__ import annotations

import os
import time
from typing import Any

#: a figure is judged not reliable when its rounds' threads waited for a core more than this share of the
#: time they wanted one (see BENCHMARKS.md, "CPU timings that judge themselves": quiet rounds read 0-3%, a busy loop per core 35-50%)
WAIT_SHARE_LIMIT = 0.10


def _tasks() -> dict[str, tuple[int, int]] | None:
    """{tid: (ns on a CPU, ns waiting on a run queue)} of this process's threads, None without schedstat."""
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return None
    out: dict[str, tuple[int, int]] = {}
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/schedstat", encoding="ascii") as f:
                run, wait = f.read().split()[:2]
            out[tid] = (int(run), int(wait))
        except (OSError, ValueError):
            continue  # a thread that ended meanwhile
    return out or None


def _last_cpu(tid: str) -> int | None:
    """The CPU thread ``tid`` of this process last ran on (``/proc/self/task/<tid>/stat``, field 39), or None."""
    try:
        with open(f"/proc/self/task/{tid}/stat", encoding="ascii") as f:
            return int(f.read().rsplit(")", 1)[1].split()[36])
    except (OSError, ValueError, IndexError):
        return None


def _nivcsw() -> int | None:
    try:
        import resource  # noqa: PLC0415

        return int(resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw)
    except (ImportError, OSError, AttributeError):
        return None


def snapshot(cpus: bool = False) -> dict[str, Any]:
    """This process's scheduling counters now (compare two with :func:`between`); ``cpus``: also the CPU each thread
    was last on (``cpus_of``), read at the end of a span to tell whether its working threads shared one core."""
    out = {"wall_ns": time.perf_counter_ns(), "thread_ns": time.thread_time_ns(), "tasks": _tasks(),
           "nivcsw": _nivcsw()}
    if cpus and out["tasks"]:
        out["cpus_of"] = {tid: _last_cpu(tid) for tid in out["tasks"]}
    return out


def between(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """What happened between snapshots ``a`` and ``b``: ``wall_ms``; ``run_ms`` and ``wait_ms`` (summed over
    threads: on a CPU, and runnable but waiting for one); ``wait_share`` = wait / (run + wait);
    ``nivcsw`` (involuntary context switches); ``source`` ``"schedstat"`` or ``"thread_cpu"`` (no schedstat:
    ``wait_share`` = 1 - the calling thread's CPU time / wall time); where ``b`` read the threads' CPUs
    (``snapshot(cpus=True)``), ``workers``, ``cpus``, ``one_core`` and ``worker_tids`` (:func:`_one_core`;
    :class:`Span` keeps the tids aside, for :class:`Apart`)."""
    wall = (b["wall_ns"] - a["wall_ns"]) / 1e6
    out: dict[str, Any] = {"wall_ms": wall}
    if a.get("nivcsw") is not None and b.get("nivcsw") is not None:
        out["nivcsw"] = b["nivcsw"] - a["nivcsw"]
    ta, tb = a.get("tasks"), b.get("tasks")
    if ta and tb:
        run = wait = 0
        for tid, (r1, w1) in tb.items():
            r0, w0 = ta.get(tid, (0, 0))
            run, wait = run + max(r1 - r0, 0), wait + max(w1 - w0, 0)
        out.update(run_ms=run / 1e6, wait_ms=wait / 1e6, source="schedstat",
                   wait_share=(wait / (run + wait)) if run + wait else 0.0)
        out.update(_one_core(ta, tb, b.get("cpus_of")))
    else:
        cpu = (b["thread_ns"] - a["thread_ns"]) / 1e6
        out.update(run_ms=cpu, wait_ms=max(wall - cpu, 0.0), source="thread_cpu",
                   wait_share=max(0.0, 1.0 - cpu / wall) if wall > 0 else 0.0)
    return out


def _one_core(ta: dict[str, tuple[int, int]], tb: dict[str, tuple[int, int]],
              cpus_of: dict[str, int | None] | None) -> dict[str, Any]:
    """``{"workers": threads that worked (a tenth or more of the busiest thread's CPU time between the two task
    readings), "cpus": the CPUs they were last on, "one_core": two or more of them, all on one CPU}``; {} where the
    CPUs were not read."""
    ran = {tid: max(r1 - ta.get(tid, (0, 0))[0], 0) for tid, (r1, _) in tb.items()}
    top = max(ran.values(), default=0)
    workers = [tid for tid, r in ran.items() if top and r >= top / 10]
    if cpus_of is None:
        return {}
    cpus = sorted({c for c in (cpus_of.get(t) for t in workers) if c is not None})
    return {"workers": len(workers), "cpus": cpus, "one_core": len(workers) >= 2 and len(cpus) == 1,
            "worker_tids": sorted(workers)}


class Apart:
    """Keeps the OpenMP threads of a round that ended on one core apart for the next round.

    Two OpenMP threads on one core stay there: the scheduler counts the cores as balanced (the busy processes on
    the other) and every parallel region's barrier waits for the other thread's turn.  ``after(span)``, called
    after each round (a :class:`Span`): gives back the masks held since the round before, then, where ``span``'s
    working threads ended on one core, takes the calling thread's core out of each other working thread's affinity
    mask for the next round (``os.sched_setaffinity``; a thread allowed no other core is left alone), so the
    scheduler moves a busy process instead; ``release()`` gives every mask back (call it when the rounds end).
    Beside two busy loops on a 2-core box nanoGPT's call read 340-720 ms in 10 of 28 processes timed by our rounds
    without this and in none of 14 with it (6.0-6.2 ms on an otherwise quiet box, at worst 124 ms on a loaded one);
    plain ``torch.utils.benchmark`` read 352-720 ms in 5 of 14 (BENCHMARKS.md, "Session 39")."""

    def __init__(self) -> None:
        self.held: list[tuple[int, set[int]]] = []  # (tid, its own mask) of the threads kept off a core
        self.times = 0  # rounds after which threads were moved

    def after(self, span: "Span") -> bool:
        """Release the threads held for the round that just ended; hold ``span``'s apart if they ended on one core.
        Returns whether any thread was moved."""
        import threading  # noqa: PLC0415

        self.release()
        if not span.result.get("one_core") or not hasattr(os, "sched_setaffinity"):
            return False
        me = threading.get_native_id()
        here = _last_cpu(str(me))
        for tid in span.workers:
            if here is None or int(tid) == me or _last_cpu(tid) != here:
                continue
            try:
                mask = os.sched_getaffinity(int(tid))
                if mask - {here}:  # (a thread allowed this core only stays)
                    os.sched_setaffinity(int(tid), mask - {here})
                    self.held.append((int(tid), mask))
            except OSError:  # a thread that ended meanwhile
                continue
        self.times += bool(self.held)
        return bool(self.held)

    def release(self) -> None:
        """Give each held thread its own affinity mask back."""
        for tid, mask in self.held:
            try:
                os.sched_setaffinity(tid, mask)
            except OSError:
                pass
        self.held = []


def combine(parts: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Several :func:`between` results taken as one span (the rounds a median came from); None for none."""
    parts = [p for p in parts if p]
    if not parts:
        return None
    run = sum(p.get("run_ms") or 0.0 for p in parts)
    wait = sum(p.get("wait_ms") or 0.0 for p in parts)
    wall = sum(p.get("wall_ms") or 0.0 for p in parts)
    out: dict[str, Any] = {"wall_ms": wall, "run_ms": run, "wait_ms": wait, "source": parts[0].get("source"),
                           "wait_share": (wait / (run + wait)) if run + wait else 0.0}
    if parts[0]["source"] == "thread_cpu":
        out["wait_share"] = (wait / wall) if wall else 0.0
    if all(p.get("nivcsw") is not None for p in parts):
        out["nivcsw"] = sum(p["nivcsw"] for p in parts)
    known = [p for p in parts if "one_core" in p]
    if known:  # in how many of the spans the working threads ended on one core, after how many they were moved apart
        out.update(one_core_spans=sum(1 for p in known if p["one_core"]), spans=len(known),
                   workers=max(p.get("workers") or 0 for p in known),
                   apart_spans=sum(1 for p in known if p.get("apart")))
    return out


class Span:
    """``with Span() as s: ...`` then ``s.result`` (:func:`between` over the block)."""

    def __enter__(self) -> "Span":
        self.a = snapshot()
        self.result: dict[str, Any] = {}
        return self

    def __exit__(self, *exc: Any) -> None:
        self.result = between(self.a, snapshot(cpus=True))
        self.workers: list[str] = self.result.pop("worker_tids", [])  # (for :class:`Apart`; not a result field)


def judge(span: dict[str, Any] | None, what: str, limit: float = WAIT_SHARE_LIMIT) -> dict[str, Any]:
    """The verdict on one figure timed over ``span`` (:func:`combine`): ``{"reliable": bool, "wait_share",
    "source", "text"}``; ``text`` is one sentence (``"the compiled graph's threads waited for a core 41% of the
    time they wanted one (schedstat): other processes held the cores"``).  No span: ``reliable`` None."""
    if not span:
        return {"reliable": None, "text": f"{what}: contention not measured"}
    if "one_core" in span:  # one span (between), not several taken as one (combine): counted as one of one
        span = combine([span]) or span
    share = float(span.get("wait_share") or 0.0)
    how = ("/proc/self/task/*/schedstat run-queue wait" if span.get("source") == "schedstat"
           else "the timing thread's CPU time against wall time")
    ctx = f", {span['nivcsw']} involuntary context switches" if span.get("nivcsw") is not None else ""
    one = _one_core_text(span)
    if share > limit:
        return {"reliable": False, "wait_share": share, "source": span.get("source"), **_one_core_fields(span),
                "text": (f"{what}: its threads waited for a core {100 * share:.0f}% of the time they wanted one "
                         f"({how}{ctx}){one}: {'other processes or its own threads' if one else 'other processes'}"
                         " held the cores, so this time is not reliable")}
    return {"reliable": True, "wait_share": share, "source": span.get("source"), **_one_core_fields(span),
            "text": f"{what}: its threads waited for a core {100 * share:.1f}% of the time ({how}{ctx}){one}"}


def _one_core_fields(span: dict[str, Any]) -> dict[str, Any]:
    """The verdict's ``one_core_spans``, ``apart_spans`` and ``spans`` (:func:`combine`) where the span counted them."""
    return {k: span[k] for k in ("one_core_spans", "apart_spans", "spans") if k in span}


def _one_core_text(span: dict[str, Any]) -> str:
    """``"; its 2 working threads ended 5 of 5 rounds on the same core (...)"``, or "" where none did."""
    k, n = span.get("one_core_spans") or 0, span.get("spans") or 0
    if not k:
        return ""
    when = f"ended {k} of {n} rounds" if n > 1 else "ended"
    moved = span.get("apart_spans") or 0
    return (f"; its {span.get('workers') or 2} working threads {when} on the same core (/proc/self/task/*/stat: each "
            "parallel region then waits for the other thread's turn on it)"
            + (f"; after {moved} of them the others were kept off the timing thread's core for the next round "
               "(sched_setaffinity, each mask given back after it)" if moved else ""))


__all__ = ["WAIT_SHARE_LIMIT", "Apart", "Span", "between", "combine", "judge", "snapshot"]
