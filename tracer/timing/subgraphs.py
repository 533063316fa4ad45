"""Timing a graph with higher-order ops' subgraphs: which kernel call ran inside which
subgraph's function, and each subgraph's function timed against its post-grad subgraph run eagerly.

Inductor generates a ``def true_graph_0(args):`` function per subgraph in the parent's output module
(tracer.codeparse.subgraph_functions); ``call()`` calls them (a cond's branch, an invoke_subgraph
region, a while_loop's cond and body on every iteration).  While the harness records one call of
the graph, :func:`watch_subgraphs` wraps those functions: it notes the range of kernel calls each
function call made and keeps the first call's arguments.  :func:`split_by_subgraph` then gives the
parent its own kernel calls and each subgraph the calls of its first run, named as the wrapper parse
names them inside that function (``extern_kernels.mm#0`` is the function's first extern call), and
times each function that ran, compiled and eager, on those arguments.  A subgraph that did not run
in the timed call (the other branch of a cond) says so.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

import torch

from inductor_step.tracer.codeparse import subgraph_argument_lists


@contextlib.contextmanager
def watch_subgraphs(mod: Any, functions: list[str], calls: list, source: str = "") -> Iterator[dict[str, Any]]:
    """While active, each subgraph function of output module ``mod`` named in ``functions`` records
    ``(function, first call index, end index)`` of ``calls`` (the harness's recorded kernel calls) in
    ``["scopes"]`` as it returns, and its first call's arguments (tensors cloned: the parent may reuse
    their storage later) in ``["args"]``; ``["real"]`` keeps the functions themselves.

    A function its callers pass the same arguments as one that runs (``source``'s ``NAME_args = [...]``
    lines: a cond's other branch, a while_loop body whose loop was not entered) is run once too, after
    the call, on those arguments, its result dropped, so its kernels are recorded and timed;
    ``["twins"]`` names the function whose arguments it got."""
    rec: dict[str, Any] = {"scopes": [], "args": {}, "real": {}, "twins": {}, "twin_errors": {}}
    lists = subgraph_argument_lists(source) if source else {}

    def twins_of(fn: str) -> list[str]:
        mine = set(lists.get(fn) or [])
        return [o for o in functions if o != fn and mine & set(lists.get(o) or [])]

    for fn in functions:
        real = getattr(mod, fn, None)
        if not callable(real):
            continue
        rec["real"][fn] = real

        def wrapper(args: list, _real: Callable = real, _fn: str = fn) -> Any:
            if _fn not in rec["args"]:
                rec["args"][_fn] = [_copy(a) if isinstance(a, torch.Tensor) else a for a in args]
            start = len(calls)
            try:
                return _real(args)
            finally:
                rec["scopes"].append((_fn, start, len(calls)))

        setattr(mod, fn, wrapper)
    try:
        yield rec
        tried: set[str] = set()
        while True:  # after the call: the functions that did not run, on a twin's arguments (a twin's
            # run may run nested subgraphs that get twins in turn)
            todo = [(o, t) for o in rec["real"] if o not in rec["args"] and o not in tried
                    for t in [next((t for t in twins_of(o) if t in rec["args"]), None)] if t is not None]
            if not todo:
                break
            other, twin = todo[0]
            tried.add(other)
            rec["args"][other], rec["twins"][other] = rec["args"][twin], twin
            try:
                getattr(mod, other)(list(rec["args"][twin]))
            except Exception as e:  # noqa: BLE001 - it is then reported as not timed, with why
                del rec["args"][other]
                rec["twin_errors"][other] = f"it failed on the arguments {twin} got ({type(e).__name__}: {e})"
    finally:
        for fn, real in rec["real"].items():
            setattr(mod, fn, real)


def _copy(t: torch.Tensor) -> torch.Tensor:
    """``t`` with its own storage and the very same sizes, strides and offset (``clone`` makes an expanded,
    stride-0 tensor contiguous, and the subgraph's function asserts the strides it was compiled for)."""
    out = torch.empty(0, dtype=t.dtype, device=t.device)
    return out.set_(t.untyped_storage().clone(), t.storage_offset(), t.size(), t.stride())


def _scope_of(i: int, scopes: list[tuple[str, int, int]]) -> tuple[str, int, int] | None:
    """The innermost function call that made kernel call ``i``."""
    best = None
    for s in scopes:
        if s[1] <= i < s[2] and (best is None or s[2] - s[1] < best[2] - best[1]):
            best = s
    return best


def _renamed(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Kernel calls of one scope, extern and fallback calls numbered as the wrapper parse numbers them
    in that scope (``extern_kernels.*`` share one count, each ``torch.ops`` op its own), ``call``
    counted per name."""
    ext, ops, seen, out = 0, {}, {}, []
    for e in entries:
        e = dict(e)
        base = str(e["name"]).split("#")[0]
        if base.startswith("extern_kernels."):
            e["name"] = f"{base}#{ext}"
            ext += 1
        elif base.startswith("torch.ops."):
            e["name"] = f"{base}#{ops.get(base, 0)}"
            ops[base] = ops.get(base, 0) + 1
        seen[e["name"]] = seen.get(e["name"], 0) + 1
        e["call"] = seen[e["name"]]
        out.append(e)
    return out


def _shares(kernels: list[dict[str, Any]]) -> float:
    timed = [k for k in kernels if k.get("median_ms") is not None]
    total = sum(k["median_ms"] for k in timed)
    for k in kernels:
        k["share"] = ((k["median_ms"] / total) if total else 0.0) if k.get("median_ms") is not None else None
    return total


def split_by_subgraph(kernels: list[dict[str, Any]], rec: dict[str, Any], functions: list[str], eager_gm: Any,
                      bench: Callable[[Callable], tuple[float, float | None, float | None]]) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """``(the parent's own kernel calls, {function: its timing})``.  ``kernels``: the harness's timed
    calls, one per recorded call (fewer when cancelled).  A function's timing: ``kernels`` (its first
    run's calls, ``share`` of their sum), ``kernel_sum_ms``, ``runs`` (times it ran in the recorded call),
    ``compiled_ms`` (the function alone on its first run's arguments) and ``decomposed_ms`` (its post-grad
    subgraph, ``eager_gm``'s submodule, run op by op on the same arguments), or ``not_timed`` / ``decomposed_note``
    saying why not; ``eager_note`` says why there is no eager time of its own (eager is Dynamo's graph,
    which runs the subgraph inside its higher-order op, so the parent's eager holds it); ``compiled_wait`` /
    ``decomposed_wait`` (CPU): the run-queue wait while each was timed (tracer.timing.contention), which judges the
    row as the parent's rounds judge the parent."""
    from inductor_step.tracer.timing.contention import Span  # noqa: PLC0415

    scopes = rec["scopes"]
    first = {}
    for s in sorted(scopes, key=lambda s: s[1]):
        first.setdefault(s[0], s)
    own: list[dict[str, Any]] = []
    per: dict[str, list[dict[str, Any]]] = {}
    for i, k in enumerate(kernels):
        s = _scope_of(i, scopes)
        if s is None:
            own.append(k)
        elif first.get(s[0]) is s:
            per.setdefault(s[0], []).append(k)
    own = _renamed(own)
    subs = {}
    eager_mods = {}
    if eager_gm is not None:
        for name, m in eager_gm.named_modules():
            if name:
                eager_mods[name.replace(".", "_")] = m
    for fn in functions:
        runs = sum(1 for s in scopes if s[0] == fn)
        twin = rec["twins"].get(fn)
        if twin is not None:
            runs -= 1
        if fn not in rec["args"]:
            subs[fn] = {"not_timed": f"{fn} did not run in the timed call of its parent (a branch not taken, "
                                     f"or a loop body not entered, on the timed inputs)"
                                     + (f"; {rec['twin_errors'][fn]}" if fn in rec["twin_errors"] else ""), "runs": 0}
            continue
        ks = _renamed(per.get(fn, []))
        out: dict[str, Any] = {"kernels": ks, "kernel_sum_ms": _shares(ks), "runs": runs}
        if twin is not None:
            out["inputs"] = (f"{fn} did not run in the timed call of its parent; timed on the arguments its parent "
                             f"passed {twin}, which it passes {fn} too")
        args = rec["args"].get(fn)
        real = rec["real"].get(fn)
        try:
            with Span() as span:
                out["compiled_ms"] = bench(lambda: real(list(args)))[0]
            out["compiled_wait"] = span.result
        except Exception as e:  # noqa: BLE001
            out["compiled_ms"] = None
            out["not_timed"] = f"{fn} alone could not be run again on its first call's arguments ({type(e).__name__}: {e})"
        out["eager_ms"] = None
        out["eager_note"] = ("eager not timed on its own: without torch.compile this subgraph runs inside its "
                             "higher-order op in Dynamo's graph, so its eager time is inside the parent's eager")
        sub = eager_mods.get(fn)
        if sub is None:
            out["decomposed_ms"] = None
            out["decomposed_note"] = "decomposed post-grad subgraph not timed: " + (
                "no post-grad graph reached the timing process" if eager_gm is None
                else f"the post-grad graph has no subgraph module {fn}")
        else:
            try:
                with torch.no_grad(), Span() as span:
                    out["decomposed_ms"] = bench(lambda: sub(*args))[0]
                out["decomposed_wait"] = span.result
            except Exception as e:  # noqa: BLE001
                out["decomposed_ms"] = None
                out["decomposed_note"] = (f"decomposed post-grad subgraph not timed: it failed on these arguments "
                                          f"({type(e).__name__}: {e})")
        subs[fn] = out
    _shares(own)
    return own, subs
