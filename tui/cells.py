"""Table cells: text with a style and shorter forms (:class:`Cell`), and how a cell too long for its column is cut."""

from __future__ import annotations

import re

from typing import Any, Callable, Mapping, NamedTuple, Sequence

from rich.cells import cell_len, set_cell_size

from inductor_step.session.cuts import distinct_cuts


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
    (``model``, ``layers``, ``0``, ...), each found in the text; cut by :func:`cut_name`, keeping the layer's index,
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


def cut_name(t: str, w: int, parts: Sequence[str] = ()) -> str:
    """FX name or module path ``t`` in ``w`` cells, by one rule: what is shown keeps the layer index (the last number
    part before the module: ``layers.0``), the module (the last named part before the parameter, with a number right
    after it: ``ln_1``, ``stem_0``), a letter of each module between them (``attn``, ``mlp``) and the parameter's first
    letter, every shown character in the name's order, "…" where some are left out.  ``parts``: the module path's
    parts in order, each found in ``t`` (a :class:`PathName`'s); without them a Dynamo name's are read from it
    (``l_self_h_0_ln_1_weight_``: ``h``, ``0``, ``ln``, ``1``, ``weight``).  First the name's end from a part on
    (``…norm_weight_``, ``…wte_weight_``, never ``…weight_`` alone) where that keeps them; else from the layer on,
    the modules between cut to a letter first, then the parameter, the module (to 3 letters), the leading "…" where
    the cut starts at the index: ``…0_ln_1_w…`` for ``transformer.h.0.ln_1.weight``, ``0.a…c_p…w…`` and
    ``0.m…c_p…w…`` for its ``attn.c_proj`` and ``mlp.c_proj`` (``…0…c_pr…w…`` read alike for both),
    ``…qkv_weig…``, ``…odel_0_w…``.
    Other text (``add_3``, ``primals_1``: not a module's parameter) keeps its end: :func:`cut_plain` where it is
    no identifier."""
    ident = _IDENT.fullmatch(t) if t.isascii() else None
    if w < 6 or not t.isascii() or not (ident or parts):
        return cut_plain(t, w)
    end = _end_cut(t, w) if ident else cut_plain(t, w)
    if len(parts) < 2 and not t.endswith("_"):  # (no module path in it: _ident_spans)
        return end
    spans = _spans(t, parts) if len(parts) > 1 else _ident_spans(t) if ident else None
    if not spans or len(spans) < 2:
        return end
    param = len(spans) - 1
    named = [i for i in range(param) if not t[slice(*spans[i])].isdigit()]
    if not named:
        return end
    module = named[-1]
    index = max((i for i in range(module) if t[slice(*spans[i])].isdigit()), default=None)
    first = index if index is not None else module
    if len(parts) < 2 and module - first > 2:  # read from the name: what lies between is one part (self_attn)
        spans = spans[:first + 1] + [(spans[first + 1][0], spans[module - 1][1])] + spans[module:]
        module = first + 2
        param = len(spans) - 1
    pieces = [p for p in end.split("…") if p]
    if len(pieces) == 1 and (a := t.rfind(pieces[0])) >= 0:  # the end's one run, where it holds all of them
        if a <= spans[first][0] and a + len(pieces[0]) > spans[param][0]:
            return end
    for i in range(first + 1):  # whole parts from a part on, as many as fit
        c = ("…" if spans[i][0] > 0 else "") + t[spans[i][0]:]
        if len(c) <= w:
            return c
    return _from_layer(t, spans, first, module, index is not None, w) or end


def _end_cut(t: str, w: int) -> str:
    """Identifier ``t``'s last ``w - 1`` characters after "…", from the next part on where that keeps most of the
    room and more than the last part (a parameter's last part alone, ``…weight_``, read the same on every row of
    nanoGPT's weights)."""
    tail = t[len(t) - (w - 1):]
    if t[len(t) - w] == "_":  # the tail starts a part: whole parts already
        return "…" + tail
    cut = tail.find("_", 0, len(tail) - 1)
    if 0 <= cut and len(tail) - cut - 1 >= (w - 1) * 2 // 3 and "_" in tail[cut + 1:-1]:
        tail = tail[cut + 1:]
    return "…" + tail


def _ident_spans(t: str) -> list[tuple[int, int]] | None:
    """Where the parts of a Dynamo name for a module's parameter lie (``l_self_h_0_ln_1_weight_``: ``h``, ``0``,
    ``ln``, ``1``, ``weight``, without ``l``, ``self`` and the filler parts; a letter and the part after it as one,
    ``c_proj``); None for any other name (not ending in ``_``: ``add_3``, ``primals_1``)."""
    if not t.endswith("_"):
        return None
    spans = [m.span() for m in re.finditer(r"[A-Za-z0-9]+", t)]
    words = [t[a:b] for a, b in spans]
    lead = 2 if words[:2] in (["l", "self"], ["L", "self"], ["g", "self"], ["G", "self"]) else 1 \
        if words[0] in ("l", "g", "L", "G") else 0  # L['self'], G['model']: the name's own start
    out: list[tuple[int, int]] = []
    for i in range(lead, len(words)):
        if words[i] in _FX_FILLER - {"self"}:
            continue
        letter = out and t[slice(*out[-1])].isalpha() and len(t[slice(*out[-1])]) == 1
        if letter and not words[i].isdigit() and out[-1][1] + 1 == spans[i][0]:
            out[-1] = (out[-1][0], spans[i][1])  # one letter and the next part: one module (c_proj, q_proj)
        else:
            out.append(spans[i])
    return out


def _from_layer(t: str, spans: list[tuple[int, int]], first: int, module: int, indexed: bool, w: int) -> str | None:
    """Name ``t`` in ``w`` cells from part ``first`` on (:func:`cut_name`'s rule): the parts to the parameter, each
    whole or its first letters and "…"; the parts between the index and the module cut to a letter first, then the
    parameter to its first letter, the module to 3, the leading "…" (``indexed``: the cut starts at the index),
    the parts between left out, the module to a letter; None where nothing fits."""
    last = len(spans) - 1
    full = {i: spans[i][1] - spans[i][0] for i in range(first, len(spans))}
    mids = [i for i in range(first + 1, module) if not t[slice(*spans[i])].isdigit()]

    def show(keep: dict[int, int], lead: bool) -> str:
        out = "…" if lead and spans[first][0] > 0 else ""
        for i in range(first, len(spans)):
            a, b = spans[i]
            if keep[i] == 0:
                out += "" if out.endswith("…") else "…"
                continue
            if i == first and keep[i] < b - a:  # the cut starts at it: its last letters, next to what follows
                out = "…" + t[b - keep[i]:b]
            else:
                out += t[a:a + keep[i]]
            if i == last:
                return out + (t[b:] if keep[i] == b - a else "…")
            sep = t[b:spans[i + 1][0]]
            whole_end = keep[i] == b - a or i == first  # (its last letters: up to the separator)
            out += sep if whole_end and len(sep) <= 1 and keep[i + 1] else "" if out.endswith("…") else "…"
        return out

    keep, lead, tried = dict(full), True, []

    def shrink(parts: list[int], least: int) -> None:  # those parts to ``least`` letters, one letter at a time
        for k in range(max((keep[i] for i in parts), default=0) - 1, least - 1, -1):
            keep.update({i: min(keep[i], k) for i in parts})
            if not any((t[spans[i][1] - keep[i]] if i == first else t[spans[i][0] + keep[i] - 1]) in "._"
                       for i in parts if keep[i]):  # never "c_…" nor "…_fc"
                tried.append((dict(keep), lead))

    shrink(mids, 1)  # the modules between, to a letter each
    shrink([last], 1)  # the parameter, to its first letter
    shrink([module], min(3, full[module]))  # the module, to 3 letters
    if indexed:  # the cut starts at the index: it reads so without "…"
        lead = False
        tried.append((dict(keep), lead))
    keep.update({i: 0 for i in mids})  # the modules between left out
    tried.append((dict(keep), lead))
    shrink([module], 1)  # the module, to a letter
    for kept, leading in tried:
        c = show(kept, leading)
        if len(c) <= w:
            return c
    return None


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


def cut_cell(v: Any, w: int) -> str:
    """Cell ``v`` (a :class:`Cell` or a plain value) as a column ``w`` cells wide shows it where its text is wider:
    its longest shorter form that fits (:func:`fitting`); else a :class:`PathName` cut along its parts and an
    :class:`Exact` name (:func:`cut_name`), :class:`Prose` at its end, any other text's shortest form in the middle
    (:func:`cut_middle`: ``_sca…r_cpu``, not ``aten…default``; an abbreviated FX name can come back shorter)."""
    if (form := fitting(v, w)) is not None:
        return form
    if isinstance(v, PathName):
        return cut_name(v.text, w, v.parts)
    if isinstance(v, Exact):
        return cut_name(shortest(v), w)
    if isinstance(v, Prose):
        t = _text(v).replace("\n", " ")
        return set_cell_size(t, max(0, w - 1)) + "…" if w > 1 else set_cell_size(t, w)
    t = shortest(v).replace("\n", " ")
    return cut_list(t, w) or cut_middle(t, w)


_LIST_ITEM = re.compile(r"[A-Za-z_][\w.#]*")
_MORE = re.compile(r"(.*) \+(\d+)")


def cut_list(t: str, w: int) -> str | None:
    """A list of names (``op48, op49, op51``, ``buf4, buf5 +3`` as :func:`inductor_step.session.text.joined`
    writes it) in ``w`` cells: the first whole names that fit and ``+K`` for the rest (``op48 +2``), the first
    cut in the middle where no whole one does; None for any other text (a shape ``[4, 64, 1]``, prose).  A list
    cut inside a name read as another name: ``op4…, op51`` for ``op48, op49, op51``."""
    if ", " not in t:
        return None
    if cell_len(t) <= w:
        return t
    items = t.split(", ")
    more = 0
    if (m := _MORE.fullmatch(items[-1])) is not None:
        items[-1], more = m.group(1), int(m.group(2))
    if not all(_LIST_ITEM.fullmatch(x) for x in items):
        return None
    for k in range(len(items) - 1, 0, -1):
        s = ", ".join(items[:k]) + f" +{len(items) - k + more}"
        if cell_len(s) <= w:
            return s
    tail = f" +{len(items) - 1 + more}"
    return cut_middle(items[0], w - len(tail)) + tail if w - len(tail) >= 2 else None


class NameColumn(NamedTuple):
    """A table column of names (FX nodes, buffers, kernels) for :class:`Names`: ``texts()`` gives every row's text
    in it (called once, when a cell of the column is first cut); ``cell(i)`` row ``i``'s cell in it, without
    formatting the whole row."""

    texts: Callable[[], Sequence[str]]
    cell: Callable[[int], Any]


class Names:
    """A table's columns of names whose cuts are kept apart: where a column is too narrow for some of its names,
    each name whose cut (:func:`cut_cell`) another name's equals gets one of its own
    (:func:`inductor_step.session.cuts.distinct_cuts`), worked out over the whole column the first time one of its
    cells is cut at a width, and kept per column and width (a pane keeps one per graph)."""

    def __init__(self, columns: Mapping[int, NameColumn]) -> None:
        self.columns = dict(columns)
        self._texts: dict[int, Sequence[str]] = {}
        self._cuts: dict[tuple[int, int], dict[str, str]] = {}

    def cut(self, c: int, w: int, text: str) -> str | None:
        """Name ``text`` of column ``c`` in ``w`` cells, cut unlike every other name of the column; None where its
        own cut (:func:`cut_cell`) already reads unlike them, or ``c`` is no column of names."""
        cuts = self._cuts.get((c, w))
        if cuts is None:
            if c not in self.columns:
                return None
            cuts = self._cuts[(c, w)] = self._column_cuts(c, w)
        return cuts.get(text)

    def _column_cuts(self, c: int, w: int) -> dict[str, str]:
        """The new cuts of column ``c``'s names at ``w`` cells: each name wider than that and shown cut, with its own
        cut, to :func:`~inductor_step.session.cuts.distinct_cuts` (every row's text read once per column)."""
        col = self.columns[c]
        texts = self._texts.get(c)
        if texts is None:
            texts = self._texts[c] = col.texts()
        shown: dict[str, str] = {}
        for i in [i for i, t in enumerate(texts) if len(t) > w]:  # (a text that is not ASCII keeps its own cut)
            if texts[i] not in shown:
                cell = col.cell(i)
                if fitting(cell, w) is None:  # (a shorter form shown whole is no cut: ``aten.sum``)
                    shown[texts[i]] = cut_cell(cell, w)
        return distinct_cuts(shown, w)


def _text(cell: Any) -> str:
    return cell.text if isinstance(cell, Cell) else "" if cell is None else str(cell)
