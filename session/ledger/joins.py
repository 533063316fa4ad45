"""The ledgers' joins over a session: roofline rows per kernel, time per user line, fusion rows and reasons."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Any

from inductor_step.session.format.messages import Run
from inductor_step.session.format.records import as_record, record_class
from inductor_step.session.format.types import STOPS, LinkKernel
from inductor_step.session.fusion_fix import classify, is_library, library_call
from inductor_step.session.trust import unreliable_runs
from inductor_step.session.ledger.rows import FusionRow, LineRow, RooflineRow
from inductor_step.session.ledger.roofs import EAGER_MARGIN, EAGER_MISSING, ITEMSIZE, _COLLECTIVE_KERNEL, _COLLECTIVE_TARGET, _DEP, _UNMET, _USERS, kernel_roofline, loopbody_flops, memory_roof


# ----------------------------------------------------------------------------- the session's joins

def _timed(session: Any) -> list[tuple[str, Any]]:
    """(graph key, run record) of every graph of ``session`` (session.store.Store) timed without error."""
    return [(key, run) for key, run in session.runs.items() if not run.error and run.kernels]


def _post_grad_nodes(session: Any, key: str) -> list[Any]:
    """Graph ``key``'s post-grad FX nodes (its aot stop's ``post_grad.nodes``, FxNode records); [] before aot or
    when torch gave none."""
    stop = session.stop_for(key, "aot")
    post = as_record(stop, STOPS["aot"]).post_grad if stop else None
    return (post.nodes if isinstance(post, dict) else None) or []


def _link_kernel(links: Any, kernel: str) -> Any:
    """Kernel ``kernel``'s entry of a graph's links (a LinkKernel record), an empty one when the links lack it."""
    return (links.kernels or {}).get(kernel) or record_class(LinkKernel)()


_CALL_OPS = ("call_function", "call_method", "call_module")


def _norm(name: str) -> str:
    name = re.sub(r"_\d+$", "", name)
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _op_name(target: str) -> str:
    """``aten.sum.dim_IntList`` -> ``sum``, ``_operator.getitem`` -> ``getitem`` (normalized)."""
    parts = target.split(".")
    return _norm(parts[1] if len(parts) >= 3 else parts[-1])


def eager_by_node(session: Any, key: str, run: dict[str, Any]) -> tuple[dict[str, float] | None, str]:
    """The run's ``eager_nodes_ms`` keyed by the post-grad graph's node names (pane 2's, the links'):
    directly where the names agree; else by position, the timing process having received the graph
    re-traced (``torch.save`` of a GraphModule renames nodes after their targets: ``mm`` ->
    ``mm_default``), checked node by node against the targets.  None with why where they cannot be matched."""
    run = as_record(run, Run)  # (a run record; a plain dict of that shape is read the same)
    eager = run.eager_nodes_ms
    if not eager:
        return None, run.eager_nodes or EAGER_MISSING
    calls = [n for n in _post_grad_nodes(session, key) if isinstance(n, dict) and n.op in _CALL_OPS]
    names = {n.name for n in calls}
    if set(eager) <= names:
        return dict(eager), run.eager_nodes or ""
    items = list(eager.items())
    if len(items) == len(calls) and all(_norm(e).startswith(_op_name(str(n.target or "")))
                                        for (e, _ms), n in zip(items, calls)):
        return {n.name: ms for (_e, ms), n in zip(items, calls)}, \
            (run.eager_nodes or "") + " (matched to the post-grad nodes by order and target)"
    # the graph timed eagerly is the one before Inductor's last post-grad passes, re-traced in the timing
    # process (names after targets: add_tensor_1); the one shown is the one lowered (tracer.capture). Align
    # the two sequences of ops (difflib, by op name): the nodes those passes changed have no eager time.
    import difflib  # noqa: PLC0415

    def full(target: str) -> str:  # aten.add.Tensor -> "addtensor", as a re-traced node is named (add_tensor_1)
        parts = target.split(".")
        return _norm(parts[1] + "_" + parts[2]) if len(parts) >= 3 and parts[0] in ("aten", "prims") else _op_name(target)

    ops = [full(str(n.target or "")) for n in calls]
    sm = difflib.SequenceMatcher(None, ops, [_norm(e) for e, _ms in items], autojunk=False)
    matched = {}
    for i, j, size in sm.get_matching_blocks():
        for k in range(size):
            matched[calls[i + k].name] = items[j + k][1]
    if calls and len(matched) < len(calls) // 2:
        matched = {name: ms for name, ms in eager.items() if name in names}
    if calls and len(matched) >= len(calls) // 2:
        return matched, ((run.eager_nodes or "") + f" ({len(matched)} of {len(calls)} post-grad call nodes matched "
                         "by their op sequence; the rest were changed by Inductor's last post-grad passes and have "
                         "no eager time)")
    return None, (f"eager node times not matched to the post-grad graph ({len(items)} timed nodes, "
                  f"{len(calls)} post-grad call nodes)")


def roofline_rows(session: Any) -> list[RooflineRow]:
    """:func:`kernel_roofline` of every timed kernel call of every graph (with ``graph``), most wasted first
    (rows with no roofline last)."""
    rows = []
    for key, run in _timed(session):
        eager, eager_how = eager_by_node(session, key, run)
        bodies = loopbody_flops(session, key)
        links = session.links(key)
        for k in run.kernels:
            lk = _link_kernel(links, k.name)
            snodes = lk.scheduler_nodes or []
            counted = [bodies.get(n) for n in snodes]
            body = None
            if snodes and all(c is not None and c[0] is not None for c in counted) and k.backend != "extern":
                body = (sum(c[0] for c in counted), "; ".join(f"{n}: {c[1]}" for n, c in zip(snodes, counted)))
            r = kernel_roofline(run, k, body)
            nodes = lk.post_grad_nodes or []
            eager_ms = sum(eager.get(n, 0.0) for n in nodes) if eager and nodes else None
            eager_source = (f"its post-grad FX nodes' eager times summed: {eager_how}" if eager_ms is not None
                            else eager_how if not eager else "the kernel has no post-grad nodes in the links")
            if r.measured_ms is None:  # a collective: its nodes ran as stand-ins, no eager time either
                eager_ms, eager_source = None, r.missing
            rows.append(replace(r, graph=key, eager_ms=eager_ms, eager_source=eager_source))
    rows.sort(key=lambda r: (r.wasted_ms is None, -(r.wasted_ms or 0.0)))
    return rows


def kernel_lines(links: dict[str, Any], kernel: str) -> tuple[dict[str, float], str]:
    """``{user line: weight}`` (weights sum to 1) for ``kernel``: its post-grad FX nodes' user lines,
    each node weighing the same (:data:`SPLIT_RULE`); nodes with no user line go to "(no user line)".
    Also says where the nodes came from."""
    lk = (links.get("kernels") or {}).get(kernel) or {}
    nodes = lk.get("post_grad_nodes") or []
    src = "links.kernels[k].post_grad_nodes"
    if not nodes:  # older sessions: the kernel's buffers' FX nodes
        nodes = [n for b in lk.get("buffers") or [] for n in ((links.get("buffers") or {}).get(b) or {}).get("fx_nodes") or []]
        src = "links.buffers[b].fx_nodes of the kernel's buffers"
    fx = links.get("fx_nodes") or {}
    lines = [(fx.get(n) or {}).get("user_line") or "(no user line)" for n in nodes]
    if not lines:
        return {"(no user line)": 1.0}, "the kernel has no FX nodes in the links"
    out: dict[str, float] = {}
    for ln in lines:
        out[ln] = out.get(ln, 0.0) + 1.0 / len(lines)
    return out, src


def line_rows(session: Any) -> list[LineRow]:
    """Wasted time by user line over every timed graph, most wasted first (:class:`LineRow`): ``line``, ``kernels``
    (``"[0/0] backward cpp_fused_..."``, with the share each gave), ``measured_ms``, ``roofline_ms``,
    ``wasted_ms`` (each the sum of the kernels' times x the line's share, :data:`SPLIT_RULE`),
    ``unpriced_ms`` (measured time of kernels with no roofline), ``untimed`` (the line's kernel calls with
    no time at all, each ``"[1/0] inference torch.ops._c10d_functional.all_reduce_.default#0: collective, not
    timed: ..."``: a collective; left out of every sum, never counted as 0), ``eager_ms``: the eager time of the
    post-grad FX nodes whose user line it is (the run's ``eager_nodes_ms``, each node once), None with
    ``eager_missing`` saying why where a timed graph has none; ``slower_than_eager`` when measured > eager;
    ``unreliable``: the verdict of the runs it was timed in when any was judged not reliable (session.trust), else None."""
    acc: dict[str, _LineSums] = {}
    bad = unreliable_runs(session.runs)
    rooflines = {(r.graph, r.name, r.call): r for r in roofline_rows(session)}
    for key, run in _timed(session):
        links = session.links(key)
        _add_kernel_times(acc, key, run, links, rooflines)
        _add_eager_times(acc, session, key, run, links)
    rows = [_settle_line(a, bad) for a in acc.values()]
    return sorted(rows, key=lambda a: (a.measured_ms is None, -(a.wasted_ms or 0.0), -(a.measured_ms or 0.0)))


@dataclass
class _LineSums:
    """A user line's sums while :func:`line_rows` adds up the timed graphs (:func:`_settle_line` makes the
    :class:`LineRow`): times in ms; the graphs with eager node times on the line (``eager_graphs``), those with
    nodes changed by Inductor's last passes (``eager_gaps``) and its collectives' nodes (``eager_collectives``)."""

    line: str
    kernels: list[str] = field(default_factory=list)
    measured_ms: float = 0.0
    roofline_ms: float = 0.0
    wasted_ms: float = 0.0
    unpriced_ms: float = 0.0
    untimed: list[str] = field(default_factory=list)
    eager_ms: float | None = None
    eager_missing: str = EAGER_MISSING
    targets: list[tuple[str, str]] = field(default_factory=list)
    eager_graphs: set[str] = field(default_factory=set)
    eager_gaps: set[str] = field(default_factory=set)
    eager_collectives: set[str] = field(default_factory=set)


def _add_kernel_times(acc: dict[str, _LineSums], key: str, run: Any, links: Any,
                      rooflines: dict[tuple[str, str, int], RooflineRow]) -> None:
    """Graph ``key``'s timed kernels into ``acc``'s lines (created here), each by its share of the line
    (:func:`kernel_lines`): measured, roofline and wasted ms; a collective's untimed call is listed, not summed."""
    for k in run.kernels:
        r = rooflines[(key, k.name, k.call if "call" in k else 1)]
        weights, _src = kernel_lines(links, k.name)
        for line, w in weights.items():
            a = acc.setdefault(line, _LineSums(line))
            a.targets.append((key, k.name))
            if r.measured_ms is None:  # a collective: no time, left out of the sums (not a 0)
                a.kernels.append(f"{key} {k.name} ({(r.missing or '').split(':')[0]})")
                a.untimed.append(f"{key} {k.name}: {r.missing}")
                continue
            a.kernels.append(f"{key} {k.name}" + (f" (x{w:.2f})" if w < 0.999 else ""))
            a.measured_ms += w * r.measured_ms
            if r.roofline_ms is None:
                a.unpriced_ms += w * r.measured_ms
            else:
                a.roofline_ms += w * r.roofline_ms
                a.wasted_ms += w * r.wasted_ms


def _add_eager_times(acc: dict[str, _LineSums], session: Any, key: str, run: Any, links: Any) -> None:
    """Graph ``key``'s eager time per post-grad FX node (the run's ``eager_nodes_ms``) into the lines already in
    ``acc``, with the graphs that have them; the nodes without one (``eager_gaps``, ``eager_collectives``), or
    why the graph has none at all (``eager_missing``)."""
    eager, eager_how = eager_by_node(session, key, run)
    fx = links.fx_nodes or {}
    for node, ms in (eager or {}).items():
        a = acc.get((fx.get(node) or {}).get("user_line") or "(no user line)")
        if a is not None:
            a.eager_ms = (a.eager_ms or 0.0) + ms
            a.eager_graphs.add(key)
    if eager:  # a line some of whose nodes have no eager time gets no partial sum
        for n in _post_grad_nodes(session, key):
            if isinstance(n, dict) and n.op in _CALL_OPS and n.name not in eager:
                a = acc.get((fx.get(n.name) or {}).get("user_line") or "(no user line)")
                if a is not None:
                    a.eager_gaps.add(key)
                    if _COLLECTIVE_TARGET.match(str(n.target or "")):
                        a.eager_collectives.add(f"{key} {n.name}")
    if not eager:
        for a in acc.values():
            if any(g == key for g, _k in a.targets):
                a.eager_missing = f"{key}: {eager_how}"


def _settle_line(a: _LineSums, bad: dict[str, str]) -> LineRow:
    """Line ``a``'s row: its eager sum kept only where every graph of the line has every node's eager time (else
    ``eager_missing`` says why), no sums for a line of collectives only, ``slower_than_eager`` and
    ``unreliable`` (``bad``: the verdicts of the runs judged not reliable)."""
    graphs = {g for g, _k in a.targets}
    eager_missing: str | None = a.eager_missing
    if a.eager_collectives:
        eager_missing = (f"{sorted(a.eager_collectives)[0]}: a collective in this line's post-grad nodes ran as a "
                         "local stand-in and has no eager time (no partial sum)")
    elif a.eager_gaps:
        eager_missing = (f"{sorted(a.eager_gaps)[0]}: some of this line's post-grad nodes were changed by Inductor's "
                         "last passes and have no eager time of their own (no partial sum)")
    eager_ms, eager_source = None, ""  # not every graph of the line has eager node times: no partial sum
    if a.eager_ms is not None and not a.eager_gaps and graphs <= a.eager_graphs:
        eager_ms, eager_missing = a.eager_ms, None
        eager_source = "sum of the line's post-grad FX nodes' eager times (run.eager_nodes_ms: " \
                       "torch.fx.Interpreter, each node alone)"
    sums: tuple[float | None, ...] = (a.measured_ms, a.roofline_ms, a.wasted_ms, a.unpriced_ms)
    if a.untimed and len(a.untimed) == len(a.targets):  # only collectives: nothing measured, not 0
        sums = (None, None, None, None)
    measured = sums[0]
    # a line timed in a run judged not reliable carries that judgement wherever it is ranked
    unreliable = "; ".join(f"{g}: {bad[g]}" for g in dict.fromkeys(g for g, _k in a.targets) if g in bad) or None
    return LineRow(line=a.line, kernels=tuple(a.kernels), measured_ms=measured, roofline_ms=sums[1],
                   wasted_ms=sums[2], unpriced_ms=sums[3], untimed=tuple(a.untimed), eager_ms=eager_ms,
                   eager_missing=eager_missing, eager_source=eager_source, targets=tuple(a.targets),
                   slower_than_eager=eager_ms is not None and measured is not None and measured > EAGER_MARGIN * eager_ms,
                   unreliable=unreliable)


def _size_bytes(buf: dict[str, Any] | None) -> tuple[int | None, str]:
    if not buf:
        return None, "the buffer is not in the lowering stop"
    size, dt = buf.get("size") or [], str(buf.get("dtype") or "").replace("torch.", "")
    if dt not in ITEMSIZE:
        return None, f"unknown dtype {dt or '?'}"
    try:
        n = math.prod(int(s) for s in size)
    except ValueError:
        return None, f"symbolic size [{', '.join(size)}]"
    return n * ITEMSIZE[dt], f"IR buffer size [{', '.join(size)}] x {dt} ({ITEMSIZE[dt]} B), lowering stop"


def node_reads(stop: dict[str, Any] | None) -> tuple[dict[str, set[str]], dict[str, str]]:
    """From a scheduling stop's ``after`` nodes: scheduler node (a member, ``op3``) -> the buffers it
    reads that another node of this graph writes (``unmet_dependencies``: MemoryDep / StarDep; WeakDep
    orders only and is left out), and buffer -> its ``.users`` text (``OUTPUT`` when the graph returns it)."""
    reads: dict[str, set[str]] = {}
    users: dict[str, str] = {}
    for n in (stop or {}).get("after") or []:
        if not isinstance(n, dict):
            continue
        text = n.get("text") or ""
        for m in _UNMET.finditer(text):
            reads.setdefault(m.group(1), set()).update(name for _kind, name in _DEP.findall(m.group(2)))
        for m in _USERS.finditer(text):
            users[m.group(1)] = m.group(2)
    return reads, users


def _names(links: dict[str, Any], kernel: str) -> list[str]:
    lk = (links.get("kernels") or {}).get(kernel) or {}
    return list(dict.fromkeys((lk.get("fused_nodes") or []) + (lk.get("scheduler_nodes") or [])))


def fusion_reason(session: Any, key: str, links: dict[str, Any], a: str, b: str,
                  memo: dict[str, set[int]] | None = None) -> tuple[str, list[str]]:
    """(verdict, Inductor's fusion-log lines naming a node of kernel ``a`` and one of kernel ``b``).
    Without such lines: "not considered" and why.  ``memo`` keeps each kernel's log lines between calls."""
    stop = session.stop_for(key, "scheduling")
    if stop and stop.fusion_log:
        idx = session.fusion_index(stop)
        memo = {} if memo is None else memo

        def lines_of(k: str) -> set[int]:
            if k not in memo:
                memo[k] = {i for n in _names(links, k) for i in idx.get(n, ())}
            return memo[k]
        la, lb = lines_of(a), lines_of(b)
        log = stop.fusion_log
        both = [log[i].strip() for i in sorted(la & lb)]
        both = list(dict.fromkeys(both))
        if both:
            return ("Inductor: " + both[-1]), both
    colls = [k for k in (a, b) if _COLLECTIVE_KERNEL.match(k)]
    if colls:
        return (f"not considered: {colls[0].split('#')[0]} is a collective (communication between ranks, an extern "
                "call), which Inductor's scheduler never fuses"), []
    extern = [k for k in (a, b) if is_library(k, links)]
    if extern:  # the same sentence as pane 4's f (session.fusion_fix.LIBRARY_CALL)
        dyn = session.stop_for(key, "dynamo")
        cw = dyn.compiled_with if dyn else None
        return f"never fusable as compiled: {extern[0].split('#')[0]} is a library call: {library_call(cw)}", []
    if not stop or not stop.fusion_log:
        return "not known: this session has no fusion log for the graph", []
    return ("not considered: no fusion-log line names both (Inductor tried no such pair: a fusion that would "
            "make a cycle, or nodes too far apart, are dropped before can_fuse)"), []


def fusion_rows(session: Any) -> list[FusionRow]:
    """Missed fusions over every graph with a scheduling stop, costliest first (:class:`FusionRow`): ``graph``,
    ``buffer``, ``producer``/``consumer`` kernels, ``bytes`` round-tripped (2 x the buffer, written then
    read back) with ``bytes_source``, ``cost_ms`` at the measured bandwidth (``bw_source``; None with
    why when the bandwidth or size is unknown), ``producer_lines``/``consumer_lines``, ``stays``
    (why the write would stay even if fused: a graph output or other readers), ``verdict`` and ``log``
    (:func:`fusion_reason`), ``nodes`` (a producer and a consumer scheduler node, for pane 4's ``f``),
    ``library`` (a library call on a side: never fusable as compiled, listed last) and, for the others, ``fix``
    (a setting to try with ``w``, or None) and ``fix_why`` (session.fusion_fix).  The fusable ones come first,
    those with a setting to try before the rest, each group costliest first."""
    rows = []
    for key in session.graphs:
        sched = session.stop_for(key, "scheduling")
        links = session.links(key)
        if not sched or not links:
            continue
        run = session.runs.get(key) or {}
        have_run = bool(run)
        lowering = session.stop_for(key, "lowering")
        bufs = {b.name: b for b in (lowering.buffers if lowering else None) or [] if isinstance(b, dict)}
        reads, users = node_reads(sched)
        lbufs = links.buffers or {}
        snodes = links.scheduler_nodes or {}
        seen = set()
        memo: dict[str, set[int]] = {}
        for node, names in reads.items():
            consumers = (snodes.get(node) or {}).get("kernels") or []
            for buf in sorted(names):
                producers = (lbufs.get(buf) or {}).get("kernels") or []
                for p in producers:
                    for c in consumers:
                        if p == c or (p, c, buf) in seen:
                            continue
                        seen.add((p, c, buf))
                        nbytes, bsrc = _size_bytes(bufs.get(buf))
                        total = 2 * nbytes if nbytes is not None else None
                        bw, bw_src = memory_roof(run, total) if have_run else \
                            (None, "this graph was not timed: no measured bandwidth")
                        verdict, log = fusion_reason(session, key, links, p, c, memo)
                        c_lines = sorted({ln for b in (snodes.get(node) or {}).get("buffers") or []
                                          for ln in (lbufs.get(b) or {}).get("user_lines") or []})
                        u = users.get(buf, "")
                        stays = []
                        if "OUTPUT" in u:
                            stays.append("the graph returns it")
                        n_users = u.count("NodeUser(")
                        if n_users > 1:
                            stays.append(f"{n_users} nodes read it")
                        rows.append(FusionRow(
                            graph=key, buffer=buf, producer=p, consumer=c,
                            bytes=total, bytes_source=("2 x " + bsrc + " (written, then read back)") if total
                            else bsrc,
                            cost_ms=total / (bw * 1e9) * 1e3 if total and bw else None,
                            bw_gbps=bw, bw_source=bw_src,
                            producer_lines=tuple((lbufs.get(buf) or {}).get("user_lines") or ()),
                            consumer_lines=tuple(c_lines), stays="; ".join(stays),
                            verdict=verdict, log=tuple(log),
                            nodes=((lbufs.get(buf) or {}).get("scheduler_node"), node),
                        ))
    rows.sort(key=lambda r: (r.cost_ms is None, -(r.cost_ms or 0.0), -(r.bytes or 0)))
    act, lib = classify(rows)  # the ones Inductor could have made first, a setting to try on each
    return [replace(r, library=False) for r in act] + [replace(r, library=True, fix=None, fix_why="") for r in lib]
