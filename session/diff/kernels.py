"""The diff's kernel and timing levels: kernels matched by normalized source, stem, similarity; times compared."""

from __future__ import annotations

import difflib
import re
from typing import Any

from inductor_step.session.diff.model import Change, Level, SIMILAR_PAIRS, TIME_CHANGE


# --------------------------------------------------------------------------- kernels

_NUMBERED = [(re.compile(r"\bbuf\d+\b"), "buf#"), (re.compile(r"\barg\d+_\d+\b"), "arg#"),
             (re.compile(r"\b(primals|tangents|getitem)_\d+\b"), r"\1_#"),
             (re.compile(r"'backend_hash': '[0-9A-Fa-f]+'"), "'backend_hash': '#'")]


def normalize_kernel(k: dict[str, Any]) -> str:
    """A kernel's source with what renumbering changes replaced: its own name (``KERNEL``), buffer and
    argument names (``buf#``, ``arg#``, ``primals_#``) and Triton's backend hash; two kernels that
    compute the same thing normalize to the same text."""
    src = k.get("source") or ""
    name = str(k.get("name") or "")
    if name and "#" not in name:
        src = re.sub(rf"\b{re.escape(name)}\b", "KERNEL", src)
    for rx, rep in _NUMBERED:
        src = rx.sub(rep, src)
    return src


def _kernel_stem(name: str) -> str:
    return re.sub(r"(_\d+|#\d+)$", "", name)


def match_kernels(ka: list[dict[str, Any]], kb: list[dict[str, Any]]) -> tuple[list[tuple[int, int, str]], list[int], list[int]]:
    """Kernels of A and B paired by what they compute: (index in A, index in B, how) with how
    ``same`` (equal normalized source), ``name`` (the same name stem and backend, source differs)
    or ``similar`` (the most similar source of the same backend, ratio >= 0.6); and A's and B's
    indices left unpaired."""
    na, nb = [normalize_kernel(k) for k in ka], [normalize_kernel(k) for k in kb]
    left_a, left_b = list(range(len(ka))), list(range(len(kb)))
    pairs: list[tuple[int, int, str]] = []

    def take(key_a: list[Any], key_b: list[Any], how: str) -> None:
        """Pair A's and B's kernels with equal keys, in order (a multiset match: O(n))."""
        free: dict[Any, list[int]] = {}
        for j in left_b:
            free.setdefault(key_b[j], []).append(j)
        for i in list(left_a):
            js = free.get(key_a[i])
            if js:
                j = js.pop(0)
                pairs.append((i, j, how))
                left_a.remove(i)
                left_b.remove(j)

    take([(k.get("backend"), n) for k, n in zip(ka, na)], [(k.get("backend"), n) for k, n in zip(kb, nb)], "same")
    take([(k.get("backend"), _kernel_stem(k["name"])) for k in ka],
         [(k.get("backend"), _kernel_stem(k["name"])) for k in kb], "name")
    if len(left_a) * len(left_b) > SIMILAR_PAIRS:
        return pairs, left_a, left_b  # too many to compare each with each: the rest are added / removed
    lines_a = {i: na[i].split("\n") for i in left_a}
    lines_b = {j: nb[j].split("\n") for j in left_b}
    for i in list(left_a):
        best, score = None, 0.6
        for j in left_b:
            if ka[i].get("backend") != kb[j].get("backend"):
                continue
            sm = difflib.SequenceMatcher(None, lines_a[i], lines_b[j], autojunk=False)
            if sm.real_quick_ratio() < score or sm.quick_ratio() < score:
                continue
            r = sm.ratio()
            if r >= score:
                best, score = j, r
        if best is not None:
            pairs.append((i, best, "similar"))
            left_a.remove(i)
            left_b.remove(best)
    return pairs, left_a, left_b


def diff_kernels(ka: list[dict[str, Any]], kb: list[dict[str, Any]], links_b: dict[str, Any]) -> tuple[list[Change], dict[str, str], int]:
    """Kernels changed (a unified diff of the normalized sources), added and removed; the kernel map
    A -> B; how many are the same (renumbering is no change)."""
    pairs, left_a, left_b = match_kernels(ka, kb)
    kl = (links_b or {}).get("kernels") or {}
    out: list[Change] = []
    kmap: dict[str, str] = {}
    same = 0
    for i, j, how in pairs:
        a, b = ka[i]["name"], kb[j]["name"]
        kmap[a] = b
        if how == "same":
            same += 1
            continue
        sa, sb = normalize_kernel(ka[i]), normalize_kernel(kb[j])
        udiff = "\n".join(difflib.unified_diff(sa.split("\n"), sb.split("\n"), f"A {a}", f"B {b}", lineterm="", n=2))
        plus = sum(1 for ln in udiff.split("\n") if ln.startswith("+") and not ln.startswith("+++"))
        minus = sum(1 for ln in udiff.split("\n") if ln.startswith("-") and not ln.startswith("---"))
        out.append(Change("changed", a, b, f"source changed: -{minus} +{plus} lines"
                          + (" (matched by similarity)" if how == "similar" else ""), text=udiff,
                          buffers=list((kl.get(b) or {}).get("buffers") or kb[j].get("buffers") or [])))
    for i in left_a:
        out.append(Change("removed", ka[i]["name"], None, f"{ka[i].get('backend')} kernel",
                          text=ka[i].get("source") or ""))
    for j in left_b:
        out.append(Change("added", None, kb[j]["name"], f"{kb[j].get('backend')} kernel", text=kb[j].get("source") or "",
                          buffers=list((kl.get(kb[j]["name"]) or {}).get("buffers") or kb[j].get("buffers") or [])))
    return out, kmap, same


# --------------------------------------------------------------------------- timings

def _delta(a: float | None, b: float | None) -> str:
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return f"{_ms(a)} -> {_ms(b)}"
    pct = f" ({100 * (b - a) / a:+.0f}%)" if a else ""
    return f"{a:.4f} -> {b:.4f} ms, {b - a:+.4f} ms{pct}"


def _ms(v: Any) -> str:
    return f"{v:.4f} ms" if isinstance(v, (int, float)) else "-"


def _kernel_times(run: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in run.get("kernels") or []:
        if isinstance(k.get("median_ms"), (int, float)):
            out[k["name"]] = out.get(k["name"], 0.0) + k["median_ms"]
    return out


def diff_timing(ra: dict[str, Any] | None, rb: dict[str, Any] | None, kmap: dict[str, str], level: Level,
                paired: bool = False) -> None:
    """Fill ``level`` with the graph times (compiled, eager, kernel sum; ms from the ``run``
    messages) and each kernel's median (summed over its calls) in A and B, with the deltas.  ``paired``: the two
    graphs were timed round by round (``r`` in the diff view), whose figures the top lines carry, not this level."""
    for side, r in (("A", ra), ("B", rb)):
        if r is None:
            level.missing = (f"{side}'s kernels were not timed (pane 7, r); the two graphs' times, round by round, "
                             "are at the top" if paired else f"{side} was not timed (r in the app, or --headless --run)")
            return
        if r.get("error"):
            level.missing = f"timing {side} failed: {r['error']}"
            return
    assert ra is not None and rb is not None
    from inductor_step.session.trust import figure_tag  # noqa: PLC0415 - each side's verdict beside it

    for label, k, w in (("compiled graph", "compiled_ms", "compiled"), ("eager", "eager_ms", "eager"),
                        ("sum of kernel times", "kernel_sum_ms", "kernels")):
        tags = [f"{side} {t.strip()}" for side, r in (("A", ra), ("B", rb)) if (t := figure_tag(r, w))
                and "NOT RELIABLE" in t]
        level.notes.append(f"{label}: {_delta(ra.get(k), rb.get(k))}" + (f"  [{'; '.join(tags)}]" if tags else ""))
    from inductor_step.session.diff.moments import timing_notes  # noqa: PLC0415 - the machine, not the change

    level.notes += timing_notes(ra, rb)
    for side, r in (("A", ra), ("B", rb)):  # the times above leave the graph's collectives out
        if r.get("collectives_stubbed"):
            level.notes.append(f"{side}: {len(r['collectives_stubbed'])} collective call(s), not timed: left out of "
                               "these times (each ran as a local stand-in; timing one needs every rank running it)")
    from inductor_step.session.whatif import numerics_lines  # noqa: PLC0415 - B a what-if variant of A

    level.notes += numerics_lines(rb)
    level.informational = True
    for k in ("compiled_ms", "kernel_sum_ms"):
        ca, cb = ra.get(k), rb.get(k)
        if isinstance(ca, (int, float)) and isinstance(cb, (int, float)) and ca and abs(cb - ca) / ca > TIME_CHANGE:
            level.flagged = True
    if ra.get("device") != rb.get("device"):
        level.notes.append(f"devices differ: {ra.get('device')} -> {rb.get('device')}")
    ta, tb = _kernel_times(ra), _kernel_times(rb)
    for a, ms in ta.items():
        b = kmap.get(a)
        if b in tb:
            level.changes.append(Change("changed", a, b, _delta(ms, tb[b]), buffers=[]))
        else:
            level.changes.append(Change("removed", a, None, f"{ms:.4f} ms in A"))
    for b, ms in tb.items():
        if b not in {kmap.get(a) for a in ta}:
            level.changes.append(Change("added", None, b, f"{ms:.4f} ms in B"))
    level.changes.sort(key=lambda c: -abs(_num_delta(c, ta, tb)))


def _num_delta(c: Change, ta: dict[str, float], tb: dict[str, float]) -> float:
    return tb.get(c.b or "", 0.0) - ta.get(c.a or "", 0.0)
