"""Table cells: text with a style and shorter forms (:class:`Cell`), and how a cell too long for its column is cut."""

from __future__ import annotations

import re

from typing import Any, Sequence

from rich.cells import cell_len, set_cell_size


class Cell:
    """One table cell: plain text (never markup: compiler strings are full of brackets) and a Rich
    style.  ``str(cell)`` is its text.  ``short``: shorter forms of the same text, longest first, that a
    narrow column shows whole before it cuts anything (``aten.addmm.default``: ``aten.addmm``, ``addmm``;
    ``[32, 256]``: ``[32,256]``)."""

    __slots__ = ("text", "style", "short")

    def __init__(self, text: str, style: str = "", short: Sequence[str] = ()):
        self.text, self.style, self.short = text, style, tuple(short)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Cell({self.text!r})"


class Prose(Cell):
    """A cell of prose (a note, a reason): cut at its end, where it matters least; names and paths are cut in
    the middle (:func:`cut_middle`)."""

    __slots__ = ()


class Whole(Cell):
    """A cell a cut would misread (sizes: ``[3… 256]``): its column is measured to its widest sampled cell in its
    shortest form, not to the typical cell's width."""

    __slots__ = ()


class Exact(Cell):
    """A name that must read as it is written elsewhere on screen (an FX node's name over the graph's code): cut
    in the middle with "…" where it does not fit, never abbreviated (:func:`abbreviate_ident`'s initials name
    nothing the code shows)."""

    __slots__ = ()


class PathName(Exact):
    """A parameter's or buffer's name that spells a module path (``model.layers.0.self_attn.q_proj.weight``, or
    Dynamo's ``l_self_model_layers_0_self_attn_q_proj_weight_`` for it): ``parts`` are the path's parts in order
    (``model``, ``layers``, ``0``, ...), each found in the text; cut by :func:`cut_path`, keeping the layer's index,
    the module and the parameter's first letter where a plain cut kept only the parameter."""

    __slots__ = ("parts",)

    def __init__(self, text: str, style: str = "", short: Sequence[str] = (), parts: Sequence[str] = ()):
        super().__init__(text, style, short)
        self.parts = tuple(parts)


def _width(t: str) -> int:
    return len(t) if t.isascii() else cell_len(t)


def shortest(cell: Any) -> str:
    """The shortest form of ``cell`` (its text where it has no ``short`` forms)."""
    forms = getattr(cell, "short", ())
    return forms[-1] if forms else _text(cell)


def fitting(cell: Any, w: int) -> str | None:
    """The longest of ``cell``'s shorter forms that fits in ``w`` cells, None where none does."""
    for form in getattr(cell, "short", ()):
        if _width(form) <= w:
            return form
    return None



#: FX name parts that say nothing about which module (``l_self_modules_norm_parameters_weight_``)
_FX_FILLER = frozenset({"modules", "parameters", "buffers", "self"})
_FILE_LINE = re.compile(r"\.\w+:\d+$")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*_[A-Za-z0-9_]*")


def abbreviate_ident(t: str, w: int) -> str | None:
    """An FX-style name (``l_model_modules_norm_parameters_weight_``) in ``w`` cells keeping the
    parts that tell it from its siblings: without the filler parts (``modules``,
    ``parameters``), the middle parts as initials (``l_m_norm_weight_``), then without its leading
    parts and cut at the end (``norm_weig…``); None when ``t`` has no filler part."""
    if not _IDENT.fullmatch(t):
        return None
    parts = t.split("_")
    filler = [i for i, p in enumerate(parts) if p in _FX_FILLER]
    if not filler:
        return None  # no filler: a kernel or node name, cut in the middle as any other
    for n in range(1, len(filler) + 1):  # the filler parts dropped one by one, from the left
        s = "_".join(p for i, p in enumerate(parts) if i not in filler[:n])
        if len(s) <= w:
            return s
    parts = [p for i, p in enumerate(parts) if i not in filler]
    named = [i for i, p in enumerate(parts) if p]
    whole = set(named[:1] + named[-2:])
    parts = [p if i in whole or p.isdigit() else p[:1] for i, p in enumerate(parts)]
    s = "_".join(parts)
    if len(s) <= w:
        return s
    for start in range(1, len(parts)):  # fewer leading parts, as few dropped as will fit
        if start not in whole and not parts[start].isdigit():
            continue  # never start at an initial ("m_up_bias_")
        tail = "_".join(parts[start:])
        if len(tail) <= w or start >= (named[-2] if len(named) >= 2 else len(parts) - 1):
            return tail if len(tail) <= w else tail[:w - 1] + "…"
    return s[:w - 1] + "…"


def cut_plain(t: str, w: int) -> str:
    """``t`` cut to ``w`` cells in the middle with "…", keeping more of its end than of its start."""
    if w <= 1:
        return set_cell_size(t, w)
    head = (w - 1) * 2 // 5
    tail = w - 1 - head
    if t.isascii():
        return t[:head] + "…" + (t[-tail:] if tail else "")
    return set_cell_size(t, head) + "…" + set_cell_size(t[::-1], tail)[::-1]


def cut_name(t: str, w: int) -> str:
    """An FX name cut to ``w`` cells keeping its end from a part on: ``…norm_weight_`` for
    ``l_model_norm_weight_`` (siblings differ at their tails: ``l_mo…_weight_`` read the same for three
    weights), never its last part alone (``…e_weight_`` rather than ``…weight_`` where ``wte_weight_`` does not
    fit), every shown character in the name's order; :func:`cut_plain` for any other text."""
    if w < 6 or not t.isascii() or not _IDENT.fullmatch(t):
        return cut_plain(t, w)
    tail = t[len(t) - (w - 1):]
    if t[len(t) - w] == "_":  # the tail starts a part: whole parts already ("…wte_weight_", not "…weight_")
        return "…" + tail if _names_a_module(t, tail) else _layer_first(t, len(t) - len(tail), w, "…" + tail)
    cut = tail.find("_", 0, len(tail) - 1)
    # from the next part on, if that keeps most of the room and more than the last part: a parameter's last part
    # alone ("…weight_") read the same on every row of nanoGPT's weights
    if 0 <= cut and len(tail) - cut - 1 >= (w - 1) * 2 // 3 and "_" in tail[cut + 1:-1]:
        tail = tail[cut + 1:]
    return "…" + tail if _names_a_module(t, tail) else _layer_first(t, len(t) - len(tail), w, "…" + tail)


def _names_a_module(t: str, tail: str) -> bool:
    """Whether ``tail`` (the end of FX name ``t`` that :func:`cut_name` keeps) names more than the last part: a
    whole part before it that is not a number (``norm_weight_``), not only the parameter and a piece or an index
    before it (``m_weight_``, ``0_weight_``: every layer's weight reads so)."""
    if not t.endswith("_"):  # not a module's parameter or input as Dynamo names it (primals_1, add_3): as cut
        return True
    parts = tail.strip("_").split("_")
    whole = t[len(t) - len(tail) - 1] == "_"
    return any(p and not p.isdigit() for p in parts[0 if whole else 1:-1])


def _layer_first(t: str, at: int, w: int, tail: str) -> str:
    """FX name ``t`` in ``w`` cells from the layer it names on: from the start of the part that holds character
    ``at`` or, where that part is a number (``stem_0``), the part before it, cut at the end: ``…stem_0_w…``,
    ``…qkv_weig…`` (a Sequential's index or the last letters of a layer's name alone named no layer); with the
    parameter's first letter kept (``…odel_0_w…`` and ``…odel_0_b…``, not ``…model_0_…`` for both); from the
    number on where the layer's name and the number do not fit (``…10_weigh…``, not ``…blocks_1…``); ``tail``
    (the end cut as usual) where even that splits a number."""
    start = t.rfind("_", 0, at) + 1
    if start > 1 and "_" not in t[start:].strip("_"):  # inside the parameter's own name: the part before it
        start = t.rfind("_", 0, start - 1) + 1
    while start > 1 and t[start:].split("_", 1)[0].isdigit():
        start = t.rfind("_", 0, start - 1) + 1
    body = t[start:]
    lead = "…" if start > 0 else ""
    if len(body) <= w - len(lead):
        return lead + body
    room = w - len(lead) - 1
    leaf = body.rstrip("_").rfind("_") + 1  # where the parameter's own name starts
    if 0 < leaf and room < leaf + 1:  # its first letter tells weight from bias: the layer's first letters give way
        body, lead, room = body[leaf + 1 - (w - 2):], "…", w - 2
    if body[room - 1].isdigit() and body[room].isdigit():  # the layer's number would be cut: from it on
        body = body[body.index("_") + 1:] if "_" in body else body
        lead = "…"
        room = w - 2
    if room < 3 or (body[room - 1].isdigit() and body[room].isdigit()):
        return tail
    return lead + body[:room] + "…"


def _spans(t: str, parts: Sequence[str]) -> list[tuple[int, int]] | None:
    """Where each of ``parts`` lies in ``t`` as a whole part (between ``.`` or ``_``), in order (None where one is
    missing)."""
    spans, at = [], 0
    for p in parts:
        m = re.compile(rf"(?<![^._]){re.escape(p)}(?![^._])").search(t, at) if p else None
        if m is None:
            return None
        spans.append(m.span())
        at = m.end()
    return spans


def cut_path(t: str, parts: Sequence[str], w: int) -> str:
    """Module-path name ``t`` (its path's ``parts`` in order, each in ``t``) in ``w`` cells: :func:`cut_name`'s cut
    where it keeps the last layer index (a number part: ``layers.0``), the module (the part before the parameter) and
    the parameter's first letter; else those three with "…" for what is left out: ``…0.ln_1.w…`` for
    ``transformer.h.0.ln_1.weight``, ``…0…q_pr…w…`` for Llama's ``model.layers.0.self_attn.q_proj.weight``
    (a plain cut read ``q_p…weight`` or ``…proj_wei…`` for every layer's q_proj and k_proj alike)."""
    spans = _spans(t, parts) if t.isascii() else None
    plain = cut_name(t, w)
    if spans is None or len(spans) < 2 or w < 6:
        return plain
    leaf, param = spans[-2], spans[-1]
    idx = max((k for k in range(len(spans) - 1) if parts[k].isdigit()), default=None)
    first = spans[idx][0] if idx is not None else leaf[0]
    pieces = [p for p in plain.split("…") if p]
    if len(pieces) == 1:  # a cut keeping one run of the name: good where that run holds what tells rows apart
        a = t.rfind(pieces[0])
        b = a + len(pieces[0])
        if a >= 0 and a <= first and b > param[0] and b >= leaf[1]:
            return plain
    lead = "…" if first > 0 else ""
    for s, _ in spans:  # whole parts from a part on, as many as fit
        if s > first:
            break
        c = ("…" if s > 0 else "") + t[s:]
        if len(c) <= w:
            return c
    if idx is not None and spans[idx] != leaf:
        head = t[spans[idx][0]:leaf[0]] if idx + 1 == len(spans) - 2 else t[slice(*spans[idx])] + "…"
    else:
        head = ""
    for k in range(len(t) - param[0], 0, -1):  # the parameter whole, then cut at its end
        c = lead + head + t[leaf[0]:param[0] + k] + ("…" if param[0] + k < len(t) else "")
        if len(c) <= w:
            return c
    for m in range(leaf[1] - leaf[0] - 1, 0, -1):  # the module cut too: its first letters, the parameter's first
        c = lead + head + t[leaf[0]:leaf[0] + m] + "…" + t[param[0]] + "…"
        if len(c) <= w:
            return c
    return plain


def cut_middle(t: str, w: int) -> str:
    """``t`` cut to ``w`` cells in the middle, keeping more of its end than of its start: FX names
    differ at their tails (``l_fn_modules_0_…_weight_``), paths at their file and line.  FX-style
    names are abbreviated instead (:func:`abbreviate_ident`), so three weights do not all read
    ``l_m…eight_``."""
    if w <= 1:
        return set_cell_size(t, w)
    if t.isascii() and len(t) <= w:
        return t
    if t.isascii() and " -> " in t and w >= 12:  # "user.py:3 -> torch/nn/functional.py:2910": both ends kept
        a, b = t.split(" -> ", 1)
        room = w - 4
        wb = min(len(b), max(room // 2, room - len(a)))
        return (cut_middle(a, room - wb) + " -> " + cut_middle(b, wb)).ljust(w)
    short = abbreviate_ident(t, w) if w >= 6 else None
    if short is not None:
        return short
    if t.isascii() and _FILE_LINE.search(t):  # a path with its line: the file and line kept whole
        base = t.rsplit("/", 1)[-1]
        if len(base) + 1 < w:
            return t[:w - 1 - len(base)] + "…" + base
        return "…" + base[len(base) - (w - 1):]
    return cut_plain(t, w)


def _text(cell: Any) -> str:
    return cell.text if isinstance(cell, Cell) else "" if cell is None else str(cell)
