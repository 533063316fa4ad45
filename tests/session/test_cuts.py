"""session.cuts.distinct_cuts, and the table's column of names over it (tui.cells.Names): names that differ only in
the part a cell's own cut leaves out (flex attention's BlockMask inputs: ``…um_blocks`` for both
``l_self_mask_q_num_blocks`` and ``l_self_mask_full_q_num_blocks``) read differently once the whole column is
looked at; names that fit, and cut names no other name's cut equals, are left as they are."""

from __future__ import annotations

import re

import pytest

from inductor_step.session.cuts import distinct_cuts
from inductor_step.tui.cells import Cell, Exact, NameColumn, Names, cut_name

#: a flex_attention BlockMask's tensors as Dynamo names them (an attribute ``mask`` of the module), and others
FLEX = ["l_self_mask_q_num_blocks", "l_self_mask_full_q_num_blocks", "l_self_mask_q_indices",
        "l_self_mask_full_q_indices", "l_self_mask_kv_num_blocks", "l_self_mask_full_kv_num_blocks",
        "l_self_mask_kv_indices", "l_self_mask_full_kv_indices", "l_x_", "flex_attention", "getitem"]
#: FX names whose ends read alike: the end ``…default_3`` is four nodes'
DEFAULTS = [f"{stem}_default_{i}" for i in range(1, 5) for stem in ("full", "iota", "view", "scalar_tensor")]


def end_cut(name: str, w: int) -> str:
    """The plainest cut: "…" and the name's last ``w - 1`` characters."""
    return "…" + name[len(name) - (w - 1):]


def shown(names: list[str], w: int, cut) -> dict[str, str]:
    """What a ``w``-cell column shows for each of ``names``: whole where it fits, else its cut made distinct."""
    cuts = {n: cut(n, w) for n in names if len(n) > w}
    new = distinct_cuts(cuts, w)
    return {n: new.get(n, cuts[n]) if n in cuts else n for n in names}


def reads_in(cut: str, name: str) -> bool:
    """Every piece of ``cut`` between its "…" is in ``name``, in order."""
    pieces = [p for p in cut.split("…") if p]
    return bool(pieces) and re.search(".*".join(map(re.escape, pieces)), name) is not None


@pytest.mark.parametrize("w", [8, 10, 12, 14, 19])
@pytest.mark.parametrize("names", [FLEX, DEFAULTS], ids=["flex", "defaults"])
@pytest.mark.parametrize("cut", [end_cut, cut_name], ids=["end_cut", "cut_name"])
def test_distinct_names_read_differently_where_their_cuts_collide(names, w, cut):
    """At widths where the cells' own cuts collide, every name reads differently, in at most ``w`` cells, as
    pieces of itself in order; a name that fits reads whole."""
    before = [cut(n, w) if len(n) > w else n for n in names]
    after = shown(names, w, cut)
    if w == 10:
        assert len(set(before)) < len(names), before  # the cuts alone read alike here
    assert len(set(after.values())) == len(names), after
    for name, text in after.items():
        assert len(text) <= w, (name, text)
        assert text == name if len(name) <= w else reads_in(text, name), (name, text)


def test_flex_block_mask_names_show_where_they_part():
    """In pane 1's 10-cell node column: ``q_num_blocks`` and ``full_q_num_blocks`` are shown from where they part
    (``…q_num_bl…``, ``…full_q_n…``); wide enough for that and the rest, with the name's first characters
    (``l…q_num_blocks`` at 14 cells, where both end cuts read ``…_q_num_blocks``)."""
    at10 = shown(FLEX, 10, cut_name)
    assert "full" not in at10["l_self_mask_q_num_blocks"] and "q_num" in at10["l_self_mask_q_num_blocks"]
    assert "full_q" in at10["l_self_mask_full_q_num_blocks"], at10
    at14 = shown(["l_self_mask_q_num_blocks", "l_self_mask_full_q_num_blocks"], 14, end_cut)  # "…_q_num_blocks"
    assert at14 == {"l_self_mask_q_num_blocks": "l…q_num_blocks",
                    "l_self_mask_full_q_num_blocks": "…full_q_num_b…"}


def test_names_that_fit_or_read_apart_already_are_left_alone():
    """Only names whose cuts another name's equals get a new one: a cut that is already its own stays, and
    nothing is returned for names that fit (they are not cut) or at widths too narrow to part names."""
    cuts = {"convert_element_type_12": "…ent_type_12", "l_self_mask_q_num_blocks": "…um_blocks",
            "l_self_mask_full_q_num_blocks": "…um_blocks"}
    new = distinct_cuts(cuts, 10)
    assert set(new) == {"l_self_mask_q_num_blocks", "l_self_mask_full_q_num_blocks"}, new
    assert distinct_cuts({"ab_c_d": "…d", "ab_c_e": "…d"}, 3) == {}
    assert distinct_cuts({}, 10) == {}


def test_part_and_end_where_windows_of_groups_read_alike():
    """``full_default_1`` … ``full_default_4`` fall in four groups (``…default_1`` … ``…default_4``); a window
    from where each group parts would read ``full_defa…`` in all four, so each shows the part that tells it
    apart in its group and its end."""
    at10 = shown(DEFAULTS, 10, cut_name)
    assert [at10[f"full_default_{i}"] for i in range(1, 5)] == [f"full…ult_{i}" for i in range(1, 5)], at10
    assert at10["iota_default_3"] == "iota…ult_3", at10


def test_a_column_of_names_cuts_each_name_once_per_width():
    """tui.cells.Names over a column: each cut name's new cut by its text, None for a name that fits or whose own
    cut (the cell's: an Exact name by cut_name) already reads apart; worked out once per column and width."""
    names = FLEX + [f"add_{i}" for i in range(50)]
    made: list[int] = []

    def cell(i: int) -> Cell:
        made.append(i)
        return Exact(names[i])
    col = Names({0: NameColumn(lambda: names, cell)})
    texts = {n: col.cut(0, 10, n) for n in names}
    assert texts["add_1"] is None and texts["l_x_"] is None
    kept = {n: t or cut_name(n, 10) for n, t in texts.items() if len(n) > 10}
    assert len(set(kept.values())) == len(kept), kept
    assert all(len(names[i]) > 10 for i in made) and len(made) == len(kept)
    col.cut(0, 10, "l_self_mask_q_indices")
    assert len(made) == len(kept)  # kept per width
    assert col.cut(1, 10, "l_self_mask_q_indices") is None  # no column of names
