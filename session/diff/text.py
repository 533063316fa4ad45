"""A diff as plain text (as `inductor-step diff --headless` and the report print it); two files diffed."""

from __future__ import annotations

import os
import re
from typing import Any, Sequence

from inductor_step.session.diff.graphs import default_partner, diff_graphs, diff_sessions
from inductor_step.session.diff.model import DiffSide, GraphDiff, Level


# --------------------------------------------------------------------------- text

def level_lines(lv: Level, diffs: bool = True) -> list[str]:
    """A level as plain text lines: its notes, then each change (``~ a -> b: what``), with the
    change's longer text (a kernel's unified diff) indented under it when ``diffs``."""
    out = [f"  {n}" for n in lv.notes]
    for c in lv.changes:
        out.append(f"  {c.mark} {c.name}: {c.what}")
        if c.text and ((diffs and c.kind == "changed") or lv.key == "why"):
            out += ["      " + ln for ln in c.text.split("\n")]
    return out


def render(d: GraphDiff, diffs: bool = True) -> str:
    """The plain-text summary of one graph diff, top-down; unchanged levels are named on one line."""
    lines = [f"diff  A: {d.a}  ->  B: {d.b}"] + [f"! {n}" for n in d.notes]
    lines += [f"~ {d.memory}"] if getattr(d, "memory", "") else []
    same = []
    for lv in d.levels:
        if not lv.changed and not lv.missing:
            same.append(lv.title)
            continue
        lines.append(f"== {lv.title}: {lv.summary()} ==")
        if not lv.missing:
            lines += level_lines(lv, diffs)
    if same:
        lines.append("no change: " + ", ".join(same))
    return "\n".join(lines)


def render_sessions(pairs: list[tuple[str | None, str | None, str, GraphDiff | None]], label_a: str, label_b: str,
                    diffs: bool = True) -> str:
    """The plain-text summary of two sessions' diff: the pairing, then each pair's diff."""
    lines = [f"A: {label_a}", f"B: {label_b}", "graphs paired:"]
    for ka, kb, how, _d in pairs:
        lines.append(f"  {ka or '-':<22} <-> {kb or '-':<22} {how}")
    for _ka, _kb, _how, d in pairs:
        if d is not None:
            lines += ["", render(d, diffs)]
    return "\n".join(lines)







# --------------------------------------------------------------------------- files

def session_of(messages: Sequence[dict[str, Any]]) -> Any:
    """A :class:`inductor_step.session.store.Store` holding ``messages``."""
    from inductor_step.session.store import Store  # noqa: PLC0415

    s = Store()
    for m in messages:
        s.add(m)
    return s


def diff_files(path_a: str, path_b: str, diffs: bool = True) -> str:
    """The plain-text summary of two recorded sessions' diff (``inductor-step diff --headless A B``);
    one session file given twice diffs its own graphs: each recompile against its default partner.
    Raises OSError / ValueError as :func:`inductor_step.session.store.load_session` does."""
    from inductor_step.session.store import load_session  # noqa: PLC0415

    sb = session_of(load_session(path_b))
    if os.path.abspath(path_a) == os.path.abspath(path_b):
        return render_recompiles(sb, os.path.basename(path_b), diffs)
    sa = session_of(load_session(path_a))
    pairs = diff_sessions(sa, sb, os.path.basename(path_a), os.path.basename(path_b))
    from inductor_step.session.compile_time import diff_text  # noqa: PLC0415 - compile time per stage

    ctime = diff_text(sa, sb)
    return render_sessions(pairs, path_a, path_b, diffs) + (f"\n\n{ctime}" if ctime else "")


def render_recompiles(s: Any, label: str = "", diffs: bool = True) -> str:
    """Every recompile of one session (a graph ``[f/n]``, n > 0) against its default partner, as text;
    a line saying there is none otherwise."""
    out = []
    for g in s.graphs:
        m = re.match(r"\[\d+/(\d+)\]", g)
        if m and int(m.group(1)) > 0:
            p = default_partner(s.graphs, g)
            if p:
                out.append(render(diff_graphs(DiffSide.from_session(s, p), DiffSide.from_session(s, g),
                                              rounds=getattr(s, "pair_timings", {}).get((p, g))), diffs))
    return "\n\n".join(out) if out else f"{label}: no recompiles to diff (ctrl+p in the app diffs any two graphs)"
