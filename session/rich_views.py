"""Rich renderables of the library's objects (sessions, graphs, buffers, kernels, diffs) for a terminal Python session.

The one module of ``inductor_step.session`` that imports Rich (the import contracts allow it here only); it is
imported when an object is rendered (``__rich_console__``), so the library itself needs no Rich.  Rich
renders in a plain ``python`` (``from rich import print; print(kernel)``) and in IPython / Jupyter.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text


def _row(t: Table, *cells: Any) -> None:
    """A row of plain text: ``[s77, 64]`` in a cell is a shape, not Rich markup."""
    t.add_row(*(c if isinstance(c, Text) else Text(str(c)) for c in cells))


def _ms(v: Any) -> str:
    return f"{v:.4f}" if isinstance(v, (int, float)) else "-"


def _names(xs: Any) -> str:
    return ", ".join(x.name for x in xs) or "-"


def _session(s: Any) -> Any:
    t = Table(title=Text(f"{s.label or 'session'}: torch {s.header.get('torch', '?')} on {s.header.get('device', '?')}"),
              title_justify="left")
    for col, just in (("graph", "left"), ("stages", "left"), ("buffers", "right"), ("kernels", "right"),
                      ("compiled ms", "right"), ("eager ms", "right"), ("timing", "left")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for g in s.graphs:
        run = g.run or {}
        why = g.kernel_runs()[0].unreliable if g.kernel_runs() else None
        _row(t, g.key, " ".join(g.stages), str(len(g.buffers)), str(len(g.kernels)), _ms(run.get("compiled_ms")),
                  _ms(run.get("eager_ms")), "not timed" if not run else ("NOT RELIABLE" if why else "reliable"))
    return t


def _graph(g: Any) -> Any:
    t = Table(title=Text(f"{g.key}: {len(g.kernels)} kernels"), title_justify="left")
    for col in ("kernel", "backend", "buffers", "fused nodes", "median ms", "user lines"):
        t.add_column(col, justify="right" if col == "median ms" else "left")
    for k in g.kernels:
        runs = k.runs()
        _row(t, k.name, k.backend or "-", " ".join(b.name for b in k.buffers()) or "-",
                  " ".join(n.name for n in k.fused_nodes()) or "-", _ms(runs[0].median_ms) if runs else "-",
                  ", ".join(sorted(x.rsplit("/", 1)[-1] for x in k.user_lines())))
    head = Text(f"{g.key}   stages: {' '.join(g.stages) or 'none'}", style="bold")
    note = Text(g.note, style="dim") if g.note else Text("")
    return Group(head, note, t)


def _code(k: Any, marked: set[int], title: str, context: int | None = None) -> Any:
    """``k``'s source, syntax-highlighted, ``marked`` lines flagged (❱ and a background); with ``context``, only
    the marked lines and that many lines around them."""
    lexer = "cpp" if k.backend == "cpp" else "python"
    window = (max(1, min(marked) - context), max(marked) + context) if marked and context is not None else None
    syn = Syntax(k.source or "(no source)", lexer, line_numbers=True, highlight_lines=marked, word_wrap=False,
                 theme="ansi_dark", line_range=window)
    return Panel(syn, title=Text(title), title_align="left")


def _buffer(b: Any) -> Any:
    t = Table(show_header=False, title=Text(f"{b.name} ({b.operation or '-'}, {b.ir_type} {b.kind}, "
                                          f"{'x'.join(b.size) or 'scalar'} {b.dtype})"), title_justify="left")
    t.add_column("what", style="bold")
    t.add_column("value")
    call = b.call()
    rows = [("post-grad FX nodes", _names(b.fx_nodes())), ("Dynamo nodes", _names(b.dynamo_nodes())),
            ("scheduler node", getattr(b.scheduler_node(), "name", "-")), ("fused node", getattr(b.fused_node(), "name", "-")),
            ("kernels", _names(b.kernels())),
            ("call", f"{call.name} call {call.index + 1}, wrapper line {call.line}" if call else "-"),
            ("user lines", ", ".join(b.user_lines()) or "-")]
    for n in b.notes():
        rows.append(("note", n))
    for r in rows:
        _row(t, *r)
    k = b.kernel()
    if k is None:
        return t
    lines = {i for a, e in b.kernel_lines().get(k.name, []) for i in range(a, e + 1)}
    return Group(t, _code(k, lines, f"{k.name}: {b.name}'s lines marked ({len(lines)})", context=3))


def _kernel(k: Any) -> Any:
    per = {b.name: k.lines_of(b.name) for b in k.buffers()}
    marked = {i for ls in per.values() for i in ls}
    t = Table(title=Text(f"{k.name} ({k.backend})"), title_justify="left")
    for col in ("buffer", "source lines", "FX nodes", "user lines"):
        t.add_column(col)
    for b in k.buffers():
        _row(t, b.name, ",".join(map(str, per.get(b.name) or [])) or "-", _names(b.fx_nodes()),
                  ", ".join(x.rsplit("/", 1)[-1] for x in b.user_lines()) or "-")
    runs = Table(title="timed calls (ms)", title_justify="left")
    for col in ("call", "median", "p20", "p80", "GB", "share", "timing"):
        runs.add_column(col, justify="right" if col != "timing" else "left")
    for r in k.runs():
        _row(runs, str(r.call), _ms(r.median_ms), _ms(r.p20_ms), _ms(r.p80_ms), _ms(r.gb),
                     f"{r.share:.0%}" if isinstance(r.share, (int, float)) else "-",
                     r.not_timed or ("reliable" if r.reliable else f"NOT RELIABLE: {r.unreliable}"))
    parts: list[Any] = [t, _code(k, marked, f"{k.name}: buffers' lines marked")]
    if k.runs():
        parts.append(runs)
    return Group(*parts)


def _diff(d: Any) -> Any:
    from inductor_step.session.diff import level_lines  # noqa: PLC0415

    t = Table(title=Text(f"{d.a}  ->  {d.b}"), title_justify="left")
    t.add_column("level", style="bold")
    t.add_column("")
    t.add_column("what changed")
    for lv in d.levels:
        mark = Text("changed", style="bold yellow") if lv.changed else Text("same", style="green")
        lines = [ln.strip() for ln in level_lines(lv, diffs=False)]
        more = [f"... {len(lines) - 12} more"] if len(lines) > 12 else []
        _row(t, lv.title, mark, "\n".join([lv.summary()] + lines[:12] + more))
    return Group(*(Text(n, style="bold") for n in d.notes), t)


def _plain(x: Any) -> Any:
    t = Table(show_header=False, title=Text(repr(x)), title_justify="left")
    t.add_column("key", style="bold")
    t.add_column("value")
    for k, v in (x.raw or {}).items():
        if k not in ("text", "body", "source"):
            _row(t, str(k), str(v)[:200])
    return t


def render(x: Any) -> Any:
    """The Rich renderable of a library object: a table of a session's graphs, a graph's kernels, a buffer's links
    with its kernel's source (the buffer's lines marked), a kernel's source with each buffer's lines marked and
    its timed calls, a diff's levels; any other object's raw fields.  Raises nothing for an object without data."""
    from inductor_step.session import objects  # noqa: PLC0415
    from inductor_step.session.api import Session  # noqa: PLC0415
    from inductor_step.session.diff import GraphDiff  # noqa: PLC0415
    from inductor_step.session.graph import Graph  # noqa: PLC0415

    if isinstance(x, Session):
        return _session(x)
    if isinstance(x, Graph):
        return _graph(x)
    if isinstance(x, objects.Buffer):
        return _buffer(x)
    if isinstance(x, objects.Kernel):
        return _kernel(x)
    if isinstance(x, GraphDiff):
        return _diff(x)
    return _plain(x)
