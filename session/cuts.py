"""Cuts of a table column's names that keep distinct names distinct on screen.

A table cuts each cell wider than its column on its own (``…um_blocks``), so two names that differ only in the
part a cut leaves out read alike: flex attention's ``l_self_mask_q_num_blocks`` and
``l_self_mask_full_q_num_blocks`` both read ``…um_blocks`` in a 10-cell column.  :func:`distinct_cuts` looks at
the whole column at once and gives each name of such a group a cut that shows where the names part: a window
from there, ``…q_num_bl…`` and ``…full_q_n…``; the name's first characters and the rest from there where it
fits (``l…q_num_blocks`` in 14 cells, where both end cuts read ``…_q_num_blocks``); or the part that tells it
apart and the name's end (``full…ult_3`` and ``iota…ult_3``, where the windows of ``full_default_1`` and
``full_default_3`` would read alike).  Plain strings only; the table (tui/) decides which cells are cut and how.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterator, Mapping

#: what separates a name's parts (FX names, module paths, kernel names)
_SEPARATORS = "_."
#: narrower than this a cut has no room to show where names part
MIN_WIDTH = 5


def distinct_cuts(cuts: Mapping[str, str], w: int) -> dict[str, str]:
    """``cuts``: each name of a column that is wider than ``w`` cells, with the cut the column shows for it.
    Returns a new cut, at most ``w`` cells, for every name whose cut another name's cut equals, such that it reads
    differently from every other cut in the column (the names outside such a group keep theirs; names that fit are
    not in ``cuts`` and are never touched).  Each name of such a group is shown from where the group's names part
    to where it parts from the name most like it (:func:`_window`); where that would read like another group's, as
    that part and the name's end (:func:`_part_and_end`); then from a part further left, then from any character.
    A name that finds no cut of its own keeps its cut.  Names that are not ASCII (a cell is not one character
    each) keep theirs."""
    if w < MIN_WIDTH:
        return {}
    shared_by = Counter(cuts.values())
    groups: dict[str, list[str]] = {}
    for name, cut in cuts.items():
        if shared_by[cut] > 1:
            groups.setdefault(cut, []).append(name)
    parted = {shared: _parting(sorted(names)) for shared, names in groups.items()
              if all(n.isascii() and len(n) > w for n in names)}
    first = {name: _window(name, p, q, w) for group in parted.values() for p, q, name in group}
    seen = Counter(first.values())
    taken = set(shared_by)  # every cut on screen, and every new one as it is given
    out: dict[str, str] = {}
    for shared, group in parted.items():
        taken.discard(shared)  # the group's own cut is free again: at most one of its names keeps it
        for p, q, name in group:
            forms = _forms(name, p, q, w, seen[first[name]] == 1)
            cut = next((c for c in forms if c not in taken), cuts[name])
            out[name] = _tidy(cut, taken)
            taken.add(out[name])
    return {n: c for n, c in out.items() if c != cuts[n]}


def _parting(names: list[str]) -> list[tuple[int, int, str]]:
    """Each of sorted ``names`` as ``(p, q, name)``: ``p`` where the names part (how many leading characters all of
    them share), ``q`` where it parts from the name most like it (the first character it does not share with the
    neighbour in sorted order that shares more)."""
    common = [_common(a, b) for a, b in zip(names, names[1:])]
    p = min(common)
    return [(p, max(common[i - 1] if i else 0, common[i] if i < len(common) else 0), n) for i, n in enumerate(names)]


def _forms(name: str, p: int, q: int, w: int, own: bool) -> Iterator[str]:
    """Cuts of ``name`` in ``w`` cells, best first (``p``, ``q``: :func:`_parting`): its window where no other name
    of another group has the same (``own``), the part that tells it apart and its end, its window, then from each
    part's start left of ``q``, right to left, then from every character."""
    if own:
        yield _window(name, p, q, w)
    both = _part_and_end(name, p, q, w)
    if both:
        yield both
    yield _window(name, p, q, w)
    starts = [0] + [i + 1 for i, ch in enumerate(name[:q]) if ch in _SEPARATORS]
    for a in reversed(starts):
        yield _window(name, a, a, w)
    for a in range(len(name)):
        yield _window(name, a, a, w)


def _window(name: str, p: int, q: int, w: int) -> str:
    """``name`` in at most ``w`` cells from the start of the part holding character ``p`` (later where character
    ``q`` would not show otherwise): the rest of the name after its first characters (up to a separator) and "…"
    where it fits (``l_self…q_num_blocks`` in 19 cells), else the window between two "…" (``…q_num_bl…``; from
    the start: ``name[:w - 1]`` and "…")."""
    room = w - 2
    a = _part_start(name, p)
    if q - a >= room - 1:
        a = max(_part_start(name, q), q - room // 2)
    rest = len(name) - a
    if rest + 1 <= w:
        return name[:w - 1 - rest].rstrip(_SEPARATORS) + "…" + name[a:]
    if a == 0:
        return name[:w - 1] + "…"
    return "…" + name[a:a + room] + "…"


def _part_and_end(name: str, p: int, q: int, w: int) -> str | None:
    """``name`` as what tells it apart in its group, from the part holding character ``p`` to the end of the part
    holding ``q``, then "…" and as much of its end as fits (``full…ult_3``: ``full_default_3`` among
    ``iota_default_3`` and ``view_default_3``); None where that leaves less than two characters of the end."""
    a = _part_start(name, p)
    e = min((i for i in (name.find(s, q) for s in _SEPARATORS) if i >= 0), default=len(name))
    lead = "…" if a else ""
    m = w - len(lead) - (e - a) - 1
    if m < 2 or e + 1 >= len(name) - m:  # (the end would overlap the part, or leave out one character only)
        return None
    return lead + name[a:e] + "…" + name[len(name) - m:]


def _tidy(cut: str, taken: set[str]) -> str:
    """``cut`` without a separator just before its closing "…" (``…full_kv_…`` reads ``…full_kv…``) where that
    reads unlike every cut in ``taken``."""
    if len(cut) > 2 and cut.endswith("…") and cut[-2] in _SEPARATORS:
        short = cut[:-2] + "…"
        if short not in taken:
            return short
    return cut


def _part_start(name: str, p: int) -> int:
    """Where the part holding character ``p`` of ``name`` starts (just after a separator, or 0)."""
    return max(name.rfind("_", 0, p), name.rfind(".", 0, p)) + 1


def _common(a: str, b: str) -> int:
    """How many leading characters ``a`` and ``b`` share."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i
