"""A job's ranks compared: per graph who compiled it, where ranks first diverge, whose kernels are slower."""

from __future__ import annotations

import os
from typing import Any

from inductor_step.session.format import STAGES, GraphKey, graph_key
from inductor_step.session.diff import Change, DiffSide, GraphDiff, Level, diff_graphs, specializations, split_reason
from inductor_step.session.ranks.devices import own_device_stops, own_index
from inductor_step.session.ranks.model import _ranks, Divergence, GRAPH_LEVELS, GraphComparison, KernelTime, RankComparison, RankState, SUM_VS_GRAPH, TIME_RATIO, _CID, _NEXT, _TITLES


# --------------------------------------------------------------------------- helpers


def _key_order(key: str) -> tuple:
    m = _CID.search(key)
    k = GraphKey.parse(key)
    kind, part = (k.kind, k.part) if not (k.subgraph or k.variant) else (k.kind_label, None)
    return (int(m.group(1)), int(m.group(2)), {"forward": 0, "inference": 0, "backward": 1}.get(kind, 2),
            part or 0) if m else (1 << 30,)


def _world(sessions: dict[int, Any]) -> int:
    n = 0
    for s in sessions.values():
        d = ((s.header if s is not None else {}) or {}).get("distributed") or {}
        if isinstance(d.get("world_size"), int):
            n = max(n, d["world_size"])
    return n


def rank_state(rank: int, session: Any, job_state: str | None = None, job_message: str | None = None) -> RankState:
    """How rank ``rank``'s session ended (see :class:`RankState`); ``job_state`` the job file's
    state for it (``JobRank.state``), which wins over what the session says when given;
    ``job_message`` the job file's message for it (how its process ended: ``"exit code -15 ...
    stopped by torch's launcher after rank 1 failed"``), added to a dead rank's line."""
    st = _rank_state(rank, session, job_state)
    if st.state == "died" and job_message and job_message not in st.line:
        st.line += ("; " if ": " in st.line else ": ") + job_message
    return st


def _rank_state(rank: int, session: Any, job_state: str | None) -> RankState:
    if session is None:
        return RankState(rank, "missing", line=f"rank {rank}: no session recorded")
    done = session.done
    err = next((e for e in reversed(session.errors) if e.get("stage") != "script" or e.get("compile_id")), None)
    where = None
    if session.stops:
        last = session.stops[-1]
        nxt = _NEXT.get(str(last.get("stage")))
        where = (graph_key(last), nxt) if nxt else (graph_key(last), "")
    if err is not None and err.get("compile_id"):
        where = (graph_key(err), str(err.get("stage")))
    if done is not None and job_state != "died":
        rc = done.get("returncode")
        if rc and err is not None and where:
            return RankState(rank, "failed", rc, where, f"rank {rank} failed at {where[0]} {where[1]}: {err.get('message')}")
        script_err = next((e for e in reversed(session.errors) if e.get("stage") == "script"), None)
        why = f": {script_err.get('message')}" if rc and script_err is not None else ""
        return RankState(rank, "done", rc, None, f"rank {rank} finished (exit status {rc}){why}")
    if job_state == "stopped":  # q / ctrl+c ended the job while this rank ran: no death of its own
        at = f" at {where[0]} {where[1]}".rstrip() if where else ""
        return RankState(rank, "stopped", None, where, f"rank {rank} was stopped by the user (q){at}")
    if job_state == "running" or (job_state is None and session.agent_exit is None):
        at = f" at {where[0]} {where[1]}".rstrip() if where else ""
        return RankState(rank, "running", None, where, f"rank {rank} is running{at}")
    rc = session.agent_exit
    if err is not None and where:
        return RankState(rank, "died", rc, where, f"rank {rank} died at {where[0]} {where[1]}: {err.get('message')}")
    if where is None:
        return RankState(rank, "died", rc, None, f"rank {rank} died before its first compile")
    if not where[1]:
        return RankState(rank, "died", rc, where, f"rank {rank} died after compiling {where[0]} (running the script)")
    return RankState(rank, "died", rc, where, f"rank {rank} died at {where[0]} {where[1]}")


def _rank_why(a: DiffSide, b: DiffSide) -> Level:
    """The "why" level between two ranks' versions of one graph: their recompile reasons, the Dynamo
    graphs' input specializations, and what differs in their sessions' torch / device / settings."""
    lv = Level("why", "why the ranks differ", "dynamo")
    ra = [split_reason(r) for r in (a.stops.get("dynamo") or {}).get("recompile_reasons") or []]
    rb = [split_reason(r) for r in (b.stops.get("dynamo") or {}).get("recompile_reasons") or []]
    for cid, text in rb:
        if (cid, text) not in ra:
            lv.changes.append(Change("added", None, cid or "?", f"recompiled on B only: guard of {cid or '?'} failed: {text}"))
    for cid, text in ra:
        if (cid, text) not in rb:
            lv.changes.append(Change("removed", cid or "?", None, f"recompiled on A only: guard of {cid or '?'} failed: {text}"))
    na = ((a.stops.get("dynamo") or {}).get("graph") or {}).get("nodes") or []
    nb = ((b.stops.get("dynamo") or {}).get("graph") or {}).get("nodes") or []
    for s in specializations(na, nb):
        lv.notes.append(s)
        lv.flagged = True
    for k in ("torch", "triton", "device", "device_name"):
        if a.header.get(k) != b.header.get(k):
            lv.notes.append(f"session {k}: {a.header.get(k)} -> {b.header.get(k)}")
            lv.flagged = True
    sa, sb = a.header.get("settings") or {}, b.header.get("settings") or {}
    for k in sorted(set(sa) | set(sb)):
        if sa.get(k) != sb.get(k):
            lv.notes.append(f"setting {k}: {sa.get(k)} -> {sb.get(k)}")
            lv.flagged = True
    return lv


def rank_diff(sa: Any, sb: Any, key: str, rank_a: int, rank_b: int, key_b: str | None = None) -> GraphDiff:
    """The level-by-level diff of graph ``key`` on rank ``rank_a`` (A) and on ``rank_b`` (B) (graph
    ``key_b`` there when given) (:func:`inductor_step.session.diff.diff_graphs`, its "why" level the
    ranks' one: :func:`_rank_why`)."""
    ga = DiffSide.from_session(sa, key, f"rank {rank_a}")
    gb = DiffSide.from_session(sb, key_b or key, f"rank {rank_b}")
    # cuda:N on local rank N is each rank's own GPU: the same input on every rank
    for g, s in ((ga, sa), (gb, sb)):
        g.stops = own_device_stops(g.stops, own_index(s))
        g.header = own_device_stops(g.header, own_index(s))
    d = diff_graphs(ga, gb, same_session=False)
    d.levels = [_rank_why(ga, gb) if lv.key == "why" else lv for lv in d.levels]
    return d


def _times(run: dict[str, Any]) -> dict[str, tuple[float, float | None, float | None]]:
    """Kernel name -> (median, p20, p80) in ms, summed over its calls (a run's ``kernels``)."""
    out: dict[str, tuple[float, float | None, float | None]] = {}
    for k in run.get("kernels") or []:
        m = k.get("median_ms")
        if not isinstance(m, (int, float)):
            continue
        p20, p80 = k.get("p20_ms"), k.get("p80_ms")
        o = out.get(k["name"], (0.0, 0.0, 0.0))
        out[k["name"]] = (o[0] + m, (o[1] + p20) if isinstance(p20, (int, float)) and o[1] is not None else None,
                          (o[2] + p80) if isinstance(p80, (int, float)) and o[2] is not None else None)
    return out


def run_noise(run: dict[str, Any]) -> str:
    """Why a ``run`` message's times are not to be trusted, from the tracer's flags (empty when they
    are): ``settled`` False, ``contended``, ``graph_rounds.rounds_stable`` False, or the kernels
    timed one by one summing to over :data:`SUM_VS_GRAPH` times the compiled graph's time
    (``sum_vs_graph``: a kernel timed alone was descheduled, as on a loaded CPU)."""
    why = []
    if run.get("settled") is False:
        why.append("its time did not settle")
    if run.get("contended"):
        why.append("other processes competed for the cores")
    if (run.get("graph_rounds") or {}).get("rounds_stable") is False:
        why.append("its timing rounds disagreed")
    x = run.get("sum_vs_graph")
    if isinstance(x, (int, float)) and x > SUM_VS_GRAPH:
        why.append(f"its kernels timed alone sum to {x:.0f}x the whole graph's time")
    return "; ".join(why)


def _kernel_times(g: GraphComparison, runs: dict[int, dict[str, Any]], ratio: float) -> None:
    ref = g.reference
    assert ref is not None
    per = {r: _times(run) for r, run in runs.items()}
    noise = {r: run_noise(run) for r, run in runs.items()}
    # the reference's kernels, each with its name on every other rank (the kernel diff's pairing)
    for name in per.get(ref, {}):
        names = {ref: name}
        for r in runs:
            if r != ref and r in g.diffs:
                other = g.diffs[r].kernel_pairs.get(name)
                if other is not None and other in per[r]:
                    names[r] = other
            elif r != ref and name in per[r] and r not in g.diffs:
                names[r] = name
        names = {r: n for r, n in names.items() if n in per.get(r, {})}
        if len(names) < 2:
            continue
        ms = {r: per[r][n][0] for r, n in names.items()}
        p20 = {r: per[r][n][1] for r, n in names.items()}
        p80 = {r: per[r][n][2] for r, n in names.items()}
        slow, fast = max(ms, key=lambda r: (ms[r], -r)), min(ms, key=lambda r: (ms[r], r))
        def over(r: int) -> float:
            return ms[r] / ms[fast] if ms[fast] > 0 else (float("inf") if ms[r] > 0 else 1.0)

        def against(r: int) -> str:
            """Why rank r's time over the fastest's is no divergence (empty: it is one)."""
            loud = [f"rank {x}'s run: {noise[x]}" for x in (fast, r) if noise.get(x)]
            if loud:
                return "; ".join(loud)
            a, b = p80.get(fast), p20.get(r)
            if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a >= b:
                return (f"the ranks' p20..p80 ranges overlap ({p20[fast]:.4f}..{a:.4f} and {b:.4f}..{p80[r]:.4f} ms)")
            return ""

        x = over(slow)
        why = against(slow) if x > ratio else ""
        slower = sorted((r for r in ms if r != fast and over(r) > ratio and not against(r)), key=lambda r: (-ms[r], r))
        g.times.append(KernelTime(name, names, ms, p20, p80, slow, fast, x, x > ratio and not why, why,
                                  slower if x > ratio and not why else []))
    g.times.sort(key=lambda t: (not t.counts, -t.ratio))


#: stands for "rank N" in a line until the ranks that share it are known
_R = "\0"


def _user_lines(stops: dict[str, dict[str, Any]]) -> dict[str, str]:
    """FX node name -> the user line that made it (``file.py:29``), from a graph's dynamo and aot stops."""
    out: dict[str, str] = {}
    for stage, part in (("aot", "post_grad"), ("dynamo", "graph")):
        for n in ((stops.get(stage) or {}).get(part) or {}).get("nodes") or []:
            if n.get("user_line") and n.get("name"):
                out[n["name"]] = os.path.basename(str(n["user_line"]))
    return out


def _change_line(lv: Level, c: Change, ref: int, r: str, where_a: dict[str, str], where_b: dict[str, str]) -> str:
    """One change of a level between the reference rank (A) and rank ``r`` (B, its phrase: "rank 1"), in
    words; an FX node's user line (``where_a`` / ``where_b``: node name -> ``file.py:29``) when known."""
    if lv.key == "scheduling" and c.what.startswith("fused group split"):
        return f"different fusion ({(c.a or '').replace('_', ' ')} fused on rank {ref} only)"
    if lv.key == "scheduling" and c.what.startswith("fused groups merged"):
        return f"different fusion ({(c.b or '').replace('_', ' ')} fused on {r} only)"
    nodes = lv.key in ("dynamo", "post_grad")
    at_a = f", {where_a[c.a]}" if nodes and c.a in where_a else ""
    at_b = f", {where_b[c.b]}" if nodes and c.b in where_b else ""
    if c.kind == "added":
        return f"different {_TITLES[lv.key]} ({c.b} on {r} only: {c.what}{at_b})"
    if c.kind == "removed":
        return f"different {_TITLES[lv.key]} ({c.a} on rank {ref} only: {c.what}{at_a})"
    return f"different {_TITLES[lv.key]} ({c.name}: {c.what}{at_b or at_a})"


def _level_line(lv: Level, ref: int, r: str, where_a: dict[str, str] | None = None,
                where_b: dict[str, str] | None = None) -> str:
    if lv.key == "why":
        if lv.changes:
            return lv.changes[0].what.replace("on B only", f"on {r} only").replace("on A only", f"on rank {ref} only")
        return f"different compile inputs (rank {ref} -> {r}: {'; '.join(lv.notes[:2])})"
    if lv.changes:
        line = _change_line(lv, lv.changes[0], ref, r, where_a or {}, where_b or {})
        more = len(lv.changes) - 1
        return line + (f" and {more} more" if more else "")
    return f"different {_TITLES[lv.key]} ({'; '.join(lv.notes[:2]) or lv.summary()})"


# --------------------------------------------------------------------------- the comparison

def compare_ranks(sessions: dict[int, Any], states: dict[int, str] | None = None,
                  time_ratio: float = TIME_RATIO, cache: Any = None,
                  messages: dict[int, str] | None = None) -> RankComparison:
    """Compare the ranks of one job: ``sessions`` rank -> its :class:`inductor_step.session.store.Store`
    (None where a rank has none); ``states`` rank -> the job file's state for it (``JobRank.state``:
    ``"running"``, ``"done"``, ``"died"``), when known: without it a session that has no ``done``
    message and whose process ended (``agent_exit``) died, one without either is still running;
    ``messages`` rank -> the job file's message (``JobRank.message``), named in a dead rank's line.
    Sessions are read, never changed (stops are parsed on demand).  ``cache`` (an
    :class:`inductor_step.session.store.IdentityCache`, kept by the caller between calls while a job
    runs) keeps each rank pair's graph diff while the two graphs' stops are the same objects.
    Returns a :class:`RankComparison`."""
    states = states or {}
    ranks = sorted(set(sessions) | set(range(_world(sessions))))
    messages = messages or {}
    st = {r: rank_state(r, sessions.get(r), states.get(r), messages.get(r)) for r in ranks}
    live = {r: s for r, s in sessions.items() if s is not None}
    keys: list[str] = []
    for r in sorted(live):
        for k in live[r].graphs:
            if k not in keys:
                keys.append(k)
    keys.sort(key=_key_order)  # stable: within a compile id, as first seen
    out: list[GraphComparison] = []
    # a rank whose compile failed first: the others usually died of it (the launcher stops them)
    divergences = [Divergence(r, s.where[0] if s.where else None, s.state, s.line)
                   for r, s in sorted(st.items(), key=lambda x: (x[1].state != "failed", x[0]))
                   if s.state in ("died", "failed")]
    divergences += [Divergence(r, None, "missing", s.line) for r, s in st.items() if s.state == "missing"]
    for key in keys:
        g = _compare_graph(key, ranks, st, live, time_ratio, cache)
        out.append(g)
        divergences += g.divergences
    return RankComparison(ranks, st, out, divergences, time_ratio, _nothing_compiled(live))


def _compare_graph(key: str, ranks: list[int], st: dict[int, RankState], live: dict[int, Any],
                   time_ratio: float, cache: Any) -> GraphComparison:
    """Graph ``key`` across ``ranks`` (``st``: each rank's state; ``live``: the ranks with a session):
    which ranks have it and how far each got, its reference rank, and where the others diverge from
    it (compiled on some only, level by level, kernel times)."""
    has = [r for r in sorted(live) if key in live[r].by_graph]
    g = GraphComparison(key, has, rank_states={r: st[r].state for r in ranks}, time_ratio=time_ratio)
    _mark_absent(g, key, ranks, st, live)
    _mark_incomplete(g, key, st)
    complete = [r for r in has if "codegen" in g.stages[r] and r not in g.incomplete]
    g.reference = (complete or has)[0] if has else None
    for r in has:
        reasons = (live[r].stop_for(key, "dynamo") or {}).get("recompile_reasons") or []
        if reasons:
            g.recompile[r] = [str(x) for x in reasons]
    _only_some_divergences(g, key)
    if g.reference is not None:
        _level_divergences(g, key, live, cache)
    _timing_divergences(g, key, live, time_ratio)
    return g


def _mark_absent(g: GraphComparison, key: str, ranks: list[int], st: dict[int, RankState], live: dict[int, Any]) -> None:
    """Fill ``g.stages`` (the stages each rank that has ``key`` reached) and ``g.absent`` (why each
    other rank lacks it: no session, not reached yet, died before, not compiled)."""
    died_at = {r: s.where for r, s in st.items() if s.state in ("died", "failed", "running")}
    for r in ranks:
        if r in g.ranks:
            g.stages[r] = live[r].stages_done(key)
        elif st[r].state == "missing":
            g.absent[r] = "no session"
        elif st[r].state in ("died", "failed", "running") and (
                died_at.get(r) is None or _key_order(key) > _key_order(died_at[r][0])):  # type: ignore[index]
            # a graph after the one it stopped in (by compile id): it never got there
            g.absent[r] = "not reached yet" if st[r].state == "running" else "died before"
        else:
            g.absent[r] = "not compiled"


def _mark_incomplete(g: GraphComparison, key: str, st: dict[int, RankState]) -> None:
    """Fill ``g.incomplete``: for each rank that has ``key`` but not its codegen (or whose error names
    it), how far it got (failed in, died in, compiling: last stop, stopped after)."""
    for r in g.ranks:
        w, state = st[r].where, st[r].state
        if state == "failed" and w and w[0] == key:  # its error names this graph (codegen too: a C++ compile)
            g.incomplete[r] = f"failed in {w[1]}"
            continue
        if "codegen" in g.stages[r]:
            continue
        if w and w[0] == key and w[1] and state == "died":
            g.incomplete[r] = f"{state} in {w[1]}"
        elif w and w[0] == key and w[1] and state == "running":
            # its last stop, as pane 0's rank row says it (a stepped rank is paused there, not yet in w[1])
            done = [x for x in g.stages[r] if x != "run"]
            g.incomplete[r] = f"compiling: last stop {done[-1]}" if done else f"compiling: at {w[1]}"
        else:
            done = [x for x in g.stages[r] if x != "run"]
            g.incomplete[r] = f"stopped after {done[-1]}" if done else "no stop"


def _only_some_divergences(g: GraphComparison, key: str) -> None:
    """Where ``key`` compiled on some ranks only: a ``recompile`` divergence per failed guard the
    ranks that have it name, an ``only`` divergence for the ranks that compiled it without one."""
    not_compiled = [r for r, why in g.absent.items() if why == "not compiled"]
    if not not_compiled:
        return
    by_reason: dict[str, list[int]] = {}
    for r in g.ranks:
        if r in g.recompile:
            cid, text = split_reason(g.recompile[r][0])
            by_reason.setdefault(f"(guard of {cid or '?'} failed: {text})", []).append(r)
    for why, rs in by_reason.items():
        g.divergences.append(Divergence(rs[0], key, "recompile", f"{_ranks(rs)} recompiled {key} {why}",
                                        (not_compiled[0], rs[0]), ranks=rs))
    plain = [r for r in g.ranks if r not in g.recompile]
    if plain:
        g.divergences.append(Divergence(plain[0], key, "only", f"{key} compiled on {_ranks(g.ranks)} only, not on "
                                        + _ranks(not_compiled), ranks=plain))


def _level_divergences(g: GraphComparison, key: str, live: dict[int, Any], cache: Any) -> None:
    """Diff each rank's ``key`` against the reference rank's, level by level (``g.diffs``,
    ``g.differs``): one divergence per first changed level and line, naming every rank it holds for."""
    ref = g.reference
    same: dict[tuple[str, str], list[int]] = {}  # (level, line with _R for the rank) -> ranks
    for r in g.ranks:
        if r == ref:
            continue
        if cache is None:
            d = rank_diff(live[ref], live[r], key, ref, r)
        else:
            parts = tuple(live[x].by_graph.get(key, {}).get(stage) for x in (ref, r) for stage in STAGES) + (
                live[ref], live[r], live[ref].runs.get(key), live[r].runs.get(key))
            d = cache.get(("rank_diff", key, ref, r), parts,
                          lambda: rank_diff(live[ref], live[r], key, ref, r))  # noqa: B023 - called at once
        g.diffs[r] = d
        changed = [lv for lv in d.levels if lv.key in GRAPH_LEVELS and lv.changed and not lv.missing]
        g.differs[r] = [lv.key for lv in changed]
        if changed:
            top = changed[0]
            where = {}
            if top.key in ("dynamo", "post_grad"):
                where = {"where_a": _user_lines(DiffSide.from_session(live[ref], key).stops),
                         "where_b": _user_lines(DiffSide.from_session(live[r], key).stops)}
            line = f"{_R}: {key} {_level_line(top, ref, _R, **where)}"
            if len(changed) > 1:
                line += "; also " + ", ".join(_TITLES[lv.key] for lv in changed[1:])
            same.setdefault((top.key, line), []).append(r)
    for (level, line), rs in same.items():
        g.divergences.append(Divergence(rs[0], key, level, line.replace(_R, _ranks(rs)), (ref, rs[0]), rs))


def _timing_divergences(g: GraphComparison, key: str, live: dict[int, Any], time_ratio: float) -> None:
    """Each rank's ``run`` of ``key``: why it is untimed, noisy, its graph ms; with the reference and
    another rank timed, the kernel times compared and a ``timing`` divergence per kernel that differs."""
    ref = g.reference
    runs = {}
    for r in g.ranks:
        run = live[r].runs.get(key)
        if run is None:
            g.untimed[r] = "not timed"
        elif run.get("error"):
            g.untimed[r] = f"timing failed: {run['error']}"
        else:
            runs[r] = run
            if run_noise(run):
                g.noisy[r] = run_noise(run)
            if isinstance(run.get("compiled_ms"), (int, float)):
                g.graph_ms[r] = run["compiled_ms"]
    if ref is not None and ref in runs and len(runs) > 1:
        _kernel_times(g, runs, time_ratio)
        for t in g.times:
            if t.counts:
                other = t.fastest if t.slowest == ref else t.slowest
                g.divergences.append(Divergence(t.slowest, key, "timing", f"{key} {t.line}", (ref, other),
                                                list(t.slower)))


def _nothing_compiled(live: dict[int, Any]) -> dict[int, list[str]]:
    """Rank -> why no graph reached Inductor there (the ``done`` message's words and break reasons),
    for the ranks whose ``done`` says none did."""
    nothing: dict[int, list[str]] = {}
    for r, sess in sorted(live.items()):
        d = getattr(sess, "done", None) or {}
        if d and (d.get("inductor_graphs") == 0 or not d.get("graphs")):
            nothing[r] = [d.get("message") or "no graph reached Inductor"] + list(d.get("break_reasons") or [])
    return nothing


def compare_job(path: str, time_ratio: float = TIME_RATIO) -> RankComparison:
    """Compare the ranks of a recorded job: its job file (``x.job.json``, :func:`inductor_step.session.format.read_job`)
    names one session per rank; a session file that is missing or unreadable counts as no session.
    Each rank's state is the job file's (``ranks[].state``).  Raises OSError / ValueError as
    ``read_job`` does."""
    from inductor_step.session.format import read_job  # noqa: PLC0415
    from inductor_step.session.store import Store, load_session  # noqa: PLC0415

    job, paths = read_job(path)
    sessions: dict[int, Any] = {}
    for r, p in paths.items():
        try:
            sessions[r] = Store.of(load_session(p))
        except (OSError, ValueError):
            sessions[r] = None
    for jr in job.get("ranks") or []:
        if isinstance(jr, dict) and isinstance(jr.get("rank"), int):
            sessions.setdefault(jr["rank"], None)
    n = job.get("world_size")
    for r in range(n if isinstance(n, int) else 0):
        sessions.setdefault(r, None)
    states = {int(jr["rank"]): str(jr["state"]) for jr in job.get("ranks") or []
              if isinstance(jr, dict) and isinstance(jr.get("rank"), int) and jr.get("state")}
    messages = {int(jr["rank"]): str(jr["message"]) for jr in job.get("ranks") or []
                if isinstance(jr, dict) and isinstance(jr.get("rank"), int) and jr.get("message")}
    return compare_ranks(sessions, states, time_ratio, messages=messages)


def stand_in(session: Any, other: Any, key: str) -> str | None:
    """The graph of ``session`` that ran where ``other`` compiled ``key`` (which ``session`` lacks):
    for a recompile, the compile whose guard failed on ``other`` (its dynamo stop's first
    ``recompile_reasons`` names it: ``"2/0: ..."`` -> ``"[2/0] inference"``), else
    :func:`inductor_step.session.diff.default_partner`; None when ``session`` has neither."""
    from inductor_step.session.diff import default_partner  # noqa: PLC0415

    k = GraphKey.parse(key)
    for r in (other.stop_for(key, "dynamo") or {}).get("recompile_reasons") or []:
        cid = split_reason(r)[0]
        if cid and str(k.replace(compile_id=cid)) in session.by_graph:
            return str(k.replace(compile_id=cid))
    p = default_partner(session.graphs + [key], key)
    return p if p in session.by_graph and GraphKey.parse(p).replace(compile_id=k.compile_id) == k else None


#: the name the headless job's summary calls (cli/headless.py)
compare_job_file = compare_job


def diff_pair(sessions: dict[int, Any], key: str, rank_a: int, rank_b: int
              ) -> tuple[str | None, str | None, str, GraphDiff | None]:
    """What the diff screen shows for graph ``key`` on two ranks: ``(graph on rank_a, graph on
    rank_b, how, diff)``, the fields of :class:`inductor_step.tui.screens.diff.DiffPair`
    (``DiffPair(*diff_pair(...))``; push ``DiffScreen([pair], same_session=False,
    label_a=f"rank {rank_a}", label_b=f"rank {rank_b}")``).  Both ranks compiled ``key``: their two
    versions.  One rank lacks it (a recompile on the other only): the graph that ran there instead
    (:func:`stand_in`: ``[2/0] inference`` on rank 0 against rank 1's ``[2/1] inference``), ``how``
    says so; with none, that side is None and ``diff`` None.  Raises KeyError if a rank has no
    session."""
    sa, sb = sessions.get(rank_a), sessions.get(rank_b)
    if sa is None or sb is None:
        raise KeyError(rank_a if sa is None else rank_b)
    ha, hb = key in sa.by_graph, key in sb.by_graph
    if ha and hb:
        return key, key, f"{key} on rank {rank_a} and on rank {rank_b}", rank_diff(sa, sb, key, rank_a, rank_b)
    if not ha and not hb:
        return None, None, f"{key} compiled on neither rank {rank_a} nor rank {rank_b}", None
    have, lack = (rank_a, rank_b) if ha else (rank_b, rank_a)
    other = stand_in(sessions[lack], sessions[have], key)
    if other is None:
        return (key if ha else None), (key if hb else None), f"{key} compiled on rank {have} only", None
    how = f"{key} compiled on rank {have} only; rank {lack} ran {other} there"
    if ha:
        return key, other, how, rank_diff(sa, sb, key, rank_a, rank_b, key_b=other)
    return other, key, how, rank_diff(sa, sb, other, rank_a, rank_b, key_b=key)
