"""Which lines of a generated kernel's source belong to which buffer: the lines using a pointer, and
the split of an in-place chain (buffers stored one after another in one storage) among its buffers.
Standard library only; used by tracer.links."""

from __future__ import annotations

import re
from typing import Any


def line_ranges(lines: list[int]) -> list[list[int]]:
    """1-based line numbers as sorted ``[first, last]`` runs: ``[3, 4, 5, 9]`` -> ``[[3, 5], [9, 9]]``."""
    out: list[list[int]] = []
    for n in sorted(set(lines)):
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return out


_ALIAS_LINE = re.compile(r"^\s*auto \w+ = \w+;\s*$")
_PARAM_LINE = re.compile(r'^\s*(const\s+)?[\w:<>]+\s*\*?\s*\w+[,)]\s*$')


def ptr_lines(kernel: dict[str, Any], ptrs: set[str]) -> list[list[int]]:
    """1-based line ranges of ``kernel["source"]`` that use any of the pointer names ``ptrs``
    (loads, stores, atomic updates), leaving out the parameter list, C++ ``auto a = b;`` pointer
    aliases and a Triton kernel's decorator."""
    if not ptrs:
        return []
    lines = (kernel.get("source") or "").split("\n")
    body_from = 0
    if kernel.get("backend") == "triton":
        body_from = next((i + 1 for i, line in enumerate(lines) if line.startswith("def ")), 0)
    pat = re.compile(r"\b(" + "|".join(sorted(map(re.escape, ptrs))) + r")\b")
    hit = [i + 1 for i, line in enumerate(lines)
           if i >= body_from and pat.search(line) and not line.lstrip().startswith(("def ", "#include"))
           and not _PARAM_LINE.match(line) and 'extern "C"' not in line and not _ALIAS_LINE.match(line)]
    return line_ranges(hit)


def split_in_place(kernel: dict[str, Any], rec: dict, computed: list[str]) -> dict[str, list[list[int]]]:
    """Lines of buffers one call computes one after another in the same storage (an in-place
    chain ``[A, B, ...]`` sharing ``in_out_ptrN``; in C++ each earlier one keeps its own name as a
    pointer alias, ``auto out_ptr2 = in_out_ptr0;``).  Lines through an earlier buffer's alias are
    its own; a line through the shared pointer belongs to the buffer whose computation it falls in:
    B's starts at the first use of A's alias (B reads A there).  Buffers whose boundary cannot be
    told (no alias: Triton) are left out, sharing the pointer's lines."""
    groups: dict[str, list[str]] = {}
    for b in computed:
        d = rec["ptrs"].get(b) or {}
        inner = d.get("inplace")
        if inner and inner != "REMOVED":
            groups.setdefault(inner, []).append(b)
    out: dict[str, list[list[int]]] = {}
    src = (kernel.get("source") or "").split("\n")
    for inner, members in groups.items():
        chain = rec["ptrs"][members[0]].get("chain") or members
        members.sort(key=lambda b: chain.index(b) if b in chain else len(chain))
        p_lines = [n for a, e in ptr_lines(kernel, {inner}) for n in range(a, e + 1)]
        all_lines = list(p_lines)
        store = re.compile(r"(\.store\(|\bstore\(|atomic_\w*\(&?)\s*" + re.escape(inner) + r"\b|\b"
                           + re.escape(inner) + r"\[[^\]]*\]\s*=[^=]")
        stores = [n for n in p_lines if store.search(src[n - 1])]
        first = 0
        if chain and chain[0] not in computed and stores:
            # the storage held an input (computed by an earlier call): a load through the shared
            # pointer that the next use of it stores over reads that input (each loop version,
            # vectorized and tail, loads it and then stores the result in its place), not these buffers
            first = stores[0]
            later = [n for i, n in enumerate(p_lines) if n not in stores and i + 1 < len(p_lines)
                     and p_lines[i + 1] in stores]
            p_lines = [n for n in p_lines if n not in later]
        if len(members) < 2:
            if first:
                out[members[0]] = line_ranges([n for n in p_lines if n >= first])
            continue
        # an earlier buffer's own pointer counts only where the source uses it (C++: ``auto out_ptr2 =
        # in_out_ptr0;``): KernelArgs may keep an output name the kernel never declares (buf6's
        # out_ptr5 in ``buf7 = buf6; del buf6  # reuse``, a batch norm then its SiLU in one loop); taking it for
        # a boundary credited the one store, the SiLU's, to buf6 and said buf7 stayed in registers
        alias = [(rec["ptrs"][b].get("out") if rec["ptrs"][b].get("out") not in (None, "REMOVED") else None)
                 for b in members]
        alias = [q if q and re.search(r"\b" + re.escape(q) + r"\b", kernel.get("source") or "") else None
                 for q in alias]
        if not any(alias[:-1]):
            by_loop = _split_by_loop(src, all_lines, stores, members, input_first=chain[0] not in computed) \
                if kernel.get("backend") == "cpp" else None
            if by_loop is not None:  # each buffer stored in a loop of its own (an attention block's softmax)
                out.update(by_loop)
                continue
            # no earlier buffer of the chain ever had a pointer of its own: the stores through the
            # shared pointer are the last one's; the earlier ones (fused into the same loop) never
            # leave registers
            for b in members[:-1]:
                out[b] = []
            out[members[-1]] = line_ranges([n for n in p_lines if n >= first])
            continue
        if not all(alias[:-1]):
            continue
        q_lines = [[n for a, e in ptr_lines(kernel, {q}) for n in range(a, e + 1)] if q else [] for q in alias]
        bounds = [first] + [min(q_lines[j - 1], default=len(src) + 1) for j in range(1, len(members))] + [len(src) + 2]
        for j, b in enumerate(members):
            mine = [n for n in p_lines if bounds[j] <= n < bounds[j + 1]] + q_lines[j]
            out[b] = line_ranges(mine)
    return out


def split_mutation(kernel: dict[str, Any], ptr: str, target: str, mutator: str) -> dict[str, list[list[int]]] | None:
    """Lines of a buffer and the buffer that mutates it (``mutator.mutations = [target]`` in Inductor's
    scheduler) when one C++ call computes both through one pointer ``ptr`` with plain stores: Swin's
    backward zero-fills ``buf6`` (``new_zeros``) in one loop and copies into it (``buf7``, an
    ``as_strided_scatter``) in the next, both through ``out_ptr1``.  Each storing loop is one buffer's, in
    that order; a load reads the buffer last stored before it (:func:`_split_by_loop`).  None where the
    loops storing through ``ptr`` are not one per buffer, or the mutation is atomic (a scatter-add: the
    caller splits those by ``atomic_``)."""
    if kernel.get("backend") != "cpp":
        return None
    src = (kernel.get("source") or "").split("\n")
    p_lines = [n for a, e in ptr_lines(kernel, {ptr}) for n in range(a, e + 1)]
    if any("atomic_" in src[n - 1] for n in p_lines):
        return None
    store = re.compile(r"(\.store\(|\bstore\()\s*" + re.escape(ptr) + r"\b|\b" + re.escape(ptr) + r"\[[^\]]*\]\s*=[^=]")
    stores = [n for n in p_lines if store.search(src[n - 1])]
    return _split_by_loop(src, p_lines, stores, [target, mutator], input_first=False)


def _innermost_loops(src: list[str]) -> list[int | None]:
    """Per line of a C++ kernel (0-based), the 1-based line of the innermost ``for`` loop holding it."""
    out: list[int | None] = []
    stack: list[int | None] = []
    pending: int | None = None
    for i, line in enumerate(src):
        if re.match(r"^\s*for\s*\(", line):
            pending = i + 1
        inner = next((s for s in reversed(stack) if s is not None), None)
        for ch in line:
            if ch == "{":
                stack.append(pending)
                pending = None
            elif ch == "}" and stack:
                stack.pop()
        out.append(next((s for s in reversed(stack) if s is not None), inner))
    return out


def _split_by_loop(src: list[str], p_lines: list[int], stores: list[int], members: list[str],
                   input_first: bool) -> dict[str, list[list[int]]] | None:
    """An in-place chain whose buffers each have a loop of their own in a C++ kernel (outer-loop
    fusion: ``buf22`` the softmax's exp stored in place, then ``buf24`` its division stored over it,
    both through ``in_out_ptr0`` and neither with a pointer of its own): the stores of the j-th loop
    that stores through the shared pointer are the j-th buffer's; a load reads what the storage holds
    when its loop starts (a loop that loads and then stores over the same place reads the value
    before its own store: the previous buffer's, or the input's, which is no buffer's here).  None
    where the loops storing through the pointer are not one per buffer (then the caller's rule holds)."""
    loop = _innermost_loops(src)
    store_loops: list[int | None] = []
    for n in stores:
        if loop[n - 1] not in store_loops:
            store_loops.append(loop[n - 1])
    if len(store_loops) != len(members) or None in store_loops:
        return None
    out: dict[str, list[int]] = {b: [] for b in members}
    for n in p_lines:
        lp = loop[n - 1]
        if n in stores:
            out[members[store_loops.index(lp)]].append(n)
            continue
        if lp in store_loops and any(loop[s - 1] == lp and s > n for s in stores):
            j = store_loops.index(lp) - 1  # read before this loop's own store
        else:
            j = max((store_loops.index(loop[s - 1]) for s in stores if s < n), default=-1)
        if j >= 0:
            out[members[j]].append(n)
        elif not input_first:
            return None  # a load before any store of a chain with no input: not this shape
    return {b: line_ranges(v) for b, v in out.items()}
