"""Numerics as text: the answer first, the short error table, the pane's rows, REPORT.md's section.

Reads ``numerics`` messages (:class:`session.format.GraphNumerics`); imports neither torch nor Textual, so
``--open``, the report and the headless command show a recorded comparison anywhere.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import Any

STATUS_MARK = {"ok": "ok", "closer": "closer to f64", "same": "diverges", "order": "sum order", "suspect": "SUSPECT",
               "diverges": "diverges", "not_compared": "-"}


def num(x: Any, digits: int = 3) -> str:
    """A float as the table shows it: ``3.2e-05``, ``inf`` (JSON's ``"inf"`` string too), ``-`` for None."""
    if x is None:
        return "-"
    if isinstance(x, str):
        return "∞" if x == "inf" else x
    if isinstance(x, float) and not math.isfinite(x):
        return "∞"
    if x == 0:
        return "0"
    return f"{x:.{digits}g}"


def _short_path(user_line: str) -> str:
    path, _, line = user_line.rpartition(":")
    return f"{os.path.basename(path)}:{line}" if path else user_line


def _where(a: dict[str, Any]) -> str:
    fused = ", ".join(a.get("fused_nodes") or []) or "-"
    users = ", ".join(_short_path(u) for u in a.get("user_lines") or []) or "no user line"
    lines = ", ".join(f"{x[0]}" if x[0] == x[-1] else f"{x[0]}-{x[-1]}" for x in a.get("kernel_lines") or [])
    return (f"{a['buffer']} written by {a['kernel']} (wrapper line {a.get('wrapper_line')}; fused node(s) {fused}"
            + (f"; kernel lines {lines}" if lines else "") + f"), FX node {a.get('fx_node') or '-'}"
            + (f" of {', '.join(a['fx_nodes'])}" if len(a.get("fx_nodes") or []) > 1 else "") + f", {users}")


def answer_lines(msg: dict[str, Any]) -> list[str]:
    """The answer first: the first suspect buffer (else the first divergence), the first NaN/Inf producer, and
    where each one was localized inside its fused kernel.  One line each, no table."""
    if msg.get("failed"):
        return [f"numerics: not compared ({msg.get('error')})"]
    if msg.get("waiting"):
        return [f"numerics: {msg.get('message')}"]
    out = []
    sus, div, nf = msg.get("first_suspect"), msg.get("first_divergence"), msg.get("first_nonfinite")
    if sus:
        out.append(f"first suspect divergence: {_where(sus)}: {sus.get('verdict')}")
    if div and (not sus or div["index"] != sus["index"]):
        out.append(f"first divergence from eager: {_where(div)}: {div.get('verdict')}")
    if not div:
        s = msg.get("summary") or {}
        out.append(f"no divergence: all {s['compared']} compared buffer(s) within torch.testing's tolerance of eager"
                   if s.get("compared") else f"nothing compared: none of the {s.get('buffers', 0)} buffer(s) has an "
                   "eager value to compare with (each row says why)")
    if nf:
        eager = ("eager holds it too" if nf.get("eager_too") else
                 "eager does NOT hold it" if nf.get("eager_too") is False else "eager not compared")
        out.append(f"first NaN/Inf: {_where(nf)}: {nf.get('nan', 0)} NaN, {nf.get('inf', 0)} Inf ({eager})")
    same = msg.get("nonfinite_as_eager") or {}
    if same.get("buffers"):
        f = same.get("first") or {}
        n = len(same["buffers"])
        out.append(f"NaN/Inf as eager (not added by the compile): {n} buffer(s) hold NaN/Inf at the same elements as "
                   f"eager{' and float64' if same.get('float64_too') else ''} (a mask filled on purpose, or the data's), "
                   f"first {_where(f)}: {f.get('nan', 0)} NaN, {f.get('inf', 0)} Inf")
    for field in ("localized", "localized_nonfinite"):
        out += _localized_lines(msg.get(field) or {})
    return out


def inputs_line(msg: dict[str, Any], width: int = 78) -> str:
    """Where the compared inputs came from, in one line of at most ``width`` characters (the
    numerics pane's first line): ``inputs: real, the script's first call of this graph`` or ``inputs: RANDOM
    for 3 of 65 tensors (the script had not called this graph) ...``; a session from before ``inputs_origin``
    is read from its ``inputs`` text."""
    if msg.get("waiting"):
        line = "inputs: waiting for the script's first call of this graph (its real inputs)"
    else:
        text = str(msg.get("inputs") or "")
        origin = msg.get("inputs_origin") or ("random" if "random" in text else "real" if text else None)
        if origin is None:
            return ""
        if origin == "real":
            line = "inputs: real, the script's first call of this graph"
        else:
            m = re.search(r"for (\d+) of (\d+) tensors", text)
            n = f"{int(m.group(2)) - int(m.group(1))} of {m.group(2)} tensors" if m else "some tensors"
            line = f"inputs: RANDOM for {n} (the script had not called this graph)"
            if "made valid" in text:
                line += "; made valid"
    return line if len(line) <= width else line[:width - 1] + "…"


def _localized_lines(loc: dict[str, Any]) -> list[str]:
    if loc.get("first") or loc.get("first_nonfinite"):
        bits = []
        for what, name in (("first divergent FX node", loc.get("first")), ("first NaN/Inf FX node", loc.get("first_nonfinite"))):
            if name:
                n = next((x for x in loc.get("nodes") or [] if x["node"] == name), {})
                bits.append(f"{what} {name}" + (f" ({_short_path(n['user_line'])})" if n.get("user_line") else ""))
        return [f"localized inside {loc.get('kernel')}: {'; '.join(bits)} ({loc.get('how')})"]
    if loc.get("unavailable") or loc.get("skipped"):
        return [f"localized: {loc.get('unavailable') or loc.get('skipped')}"]
    return []


def table_lines(rows: list[dict[str, Any]], mark: int | None = None) -> list[str]:
    """The short table: buffer, kernel, FX node, status, max abs error, error/tolerance, eps units."""
    out = [f"  {'buffer':<8} {'kernel':<34} {'fx node':<14} {'status':<14} {'max abs':>9} {'x tol':>9} {'eps':>9}"]
    for r in rows:
        out.append(f"{'>' if mark is not None and r.get('buffer') == mark else ' '} {r.get('buffer', ''):<8} "
                   f"{(r.get('kernel') or '')[:34]:<34} {(r.get('fx_node') or '-')[:14]:<14} "
                   f"{STATUS_MARK.get(r.get('status') or '', r.get('status') or ''):<14} {num(r.get('max_abs')):>9} "
                   f"{num(r.get('tol_ratio')):>9} {num(r.get('eps_units')):>9}")
    return out


def headless_lines(msg: dict[str, Any]) -> list[str]:
    """``--headless --numerics``: the graph, the answer first, then the error growing along the graph."""
    from inductor_step.session.format import graph_key  # noqa: PLC0415

    key = graph_key(msg) if msg.get("compile_id") != "?" else "numerics"
    lines = [f"{key:<20} numerics    {line}" for line in answer_lines(msg)]
    if msg.get("waiting"):
        return lines
    first = msg.get("first_suspect") or msg.get("first_divergence")
    if first and first.get("table"):
        lines += [f"{'':<20}             {t}" for t in table_lines(first["table"], first["buffer"])]
    if not msg.get("failed"):
        s = msg.get("summary") or {}
        lines.append(f"{'':<20}             {s.get('compared', 0)} of {s.get('buffers', 0)} buffers compared, "
                     f"{s.get('diverging', 0)} diverge ({s.get('suspect', 0)} suspect), {s.get('nonfinite', 0)} hold "
                     f"NaN/Inf" + (f" eager lacks ({s['nonfinite_as_eager']} more as eager)" if s.get("nonfinite_as_eager")
                                   else "") + f"; inputs: {msg.get('inputs')}; {num(msg.get('seconds'))} s"
                     + (f"; {msg['random']}" if msg.get("random") else ""))
    return lines


@dataclass(frozen=True)
class NumericsRow:
    """One buffer's row in the numerics pane (:func:`pane_rows`), every cell a display string.

    From the ``numerics`` message (tracer.numerics.compare_graph), ``rows[i]`` (a NumericsBuffer):

    - ``mark``: ``>`` the first suspect or divergence (``first_suspect`` / ``first_divergence``), ``!`` the first
      NaN/Inf the compiled graph adds (``first_nonfinite``), else a space.
    - ``buffer`` (``bufN``), ``kernel`` that writes it, ``fx_node`` (its post-grad FX node, ``-`` if none), ``dtype``.
    - ``status``: the status as the table words it (:data:`STATUS_MARK`).
    - ``max_abs``: largest |compiled - eager| (the buffer's units); ``tol``: that over torch.testing's tolerance
      (x tol); ``eps``: in units of the dtype's eps (``vs_eager``, tracer.numerics.stats).
    - ``f64``: compiled vs float64 / eager vs float64, each in tolerances (``compiled_vs_f64``, ``eager_vs_f64``);
      ``-`` when neither was compared.
    - ``nonfinite``: ``NaN/Inf`` counts in the compiled buffer, "" when it holds none; ``why``: the verdict or
      why not compared.
    """

    mark: str
    buffer: str
    kernel: str
    fx_node: str
    dtype: str
    status: str
    max_abs: str
    tol: str
    eps: str
    f64: str
    nonfinite: str
    why: str

    def cells(self) -> tuple[str, ...]:
        """The pane's columns in order: mark, buffer, kernel, FX node, dtype, status, max abs, x tol, eps,
        f64 c/e x tol, NaN/Inf."""
        return (self.mark, self.buffer, self.kernel, self.fx_node, self.dtype, self.status, self.max_abs, self.tol,
                self.eps, self.f64, self.nonfinite)


def pane_rows(msg: dict[str, Any]) -> list[NumericsRow]:
    """One row per buffer in execution order for the numerics pane (:class:`NumericsRow`)."""
    first = msg.get("first_suspect") or msg.get("first_divergence") or {}
    nf = msg.get("first_nonfinite") or {}
    out = []
    for r in msg.get("rows") or []:
        ve = r.get("vs_eager") or {}
        c64, e64 = r.get("compiled_vs_f64") or {}, r.get("eager_vs_f64") or {}
        mark = ">" if r.get("index") == first.get("index") and first else (
            "!" if r.get("index") == nf.get("index") and nf else " ")
        out.append(NumericsRow(
            mark=mark, buffer=r["buffer"], kernel=r.get("kernel") or "", fx_node=r.get("fx_node") or "-",
            dtype=r.get("dtype") or "", status=STATUS_MARK.get(r.get("status") or "", r.get("status") or ""),
            max_abs=num(ve.get("max_abs")), tol=num(ve.get("tol_ratio")), eps=num(ve.get("eps_units")),
            f64=f"{num(c64.get('tol_ratio'))} / {num(e64.get('tol_ratio'))}" if c64 or e64 else "-",
            nonfinite=(f"{r.get('nan', 0)}/{r.get('inf', 0)}" if r.get("nan") or r.get("inf") else ""),
            why=r.get("verdict") or r.get("why") or ""))
    return out


@dataclass(frozen=True)
class ErrorStats:
    """One comparison of a buffer (tracer.numerics.stats, a NumericsBuffer's ``vs_eager``, ``compiled_vs_f64`` or
    ``eager_vs_f64``): ``max_abs`` largest absolute error (the buffer's units), ``max_rel`` largest relative error,
    ``eps_units`` the error in units of the dtype's eps, ``tol_ratio`` the error over torch.testing's tolerance
    (each a float, or ``"inf"`` as JSON carries it; None when not measured), ``nonfinite_mismatch`` how many
    elements are NaN/Inf on one side only."""

    max_abs: Any = None
    max_rel: Any = None
    eps_units: Any = None
    tol_ratio: Any = None
    nonfinite_mismatch: int = 0

    @classmethod
    def of(cls, s: dict[str, Any]) -> "ErrorStats":
        return cls(s.get("max_abs"), s.get("max_rel"), s.get("eps_units"), s.get("tol_ratio"),
                   s.get("nonfinite_mismatch") or 0)


#: a buffer's comparisons, in the order the pane lists them: (label, the NumericsBuffer's field)
COMPARISONS = (("vs eager", "vs_eager"), ("compiled vs float64", "compiled_vs_f64"),
               ("eager vs float64", "eager_vs_f64"))


def comparisons(row: dict[str, Any]) -> list[tuple[str, ErrorStats]]:
    """A NumericsBuffer's comparisons that were made, as (label, :class:`ErrorStats`) in :data:`COMPARISONS` order."""
    return [(label, ErrorStats.of(row[key])) for label, key in COMPARISONS if row.get(key)]


def first_buffer(msg: dict[str, Any] | None) -> str | None:
    """The buffer Enter goes to: the first suspect, else the first divergence, else the first NaN/Inf."""
    if not msg:
        return None
    a = (msg.get("first_suspect") or msg.get("first_divergence") or msg.get("first_nonfinite")
         or (msg.get("nonfinite_as_eager") or {}).get("first"))
    return a.get("buffer") if a else None


def report_section(numerics: dict[str, dict[str, Any]], kernel_source: Any = None) -> list[str]:
    """REPORT.md's numerics section: per graph key, the answer, the short table and the kernel source excerpt
    around the first divergence's lines (``kernel_source(key, kernel) -> str | None``)."""
    if not numerics:
        return []
    out = ["## Numerics (compiled vs eager)", ""]
    for key, msg in numerics.items():
        out.append(f"### {key}")
        out.append("")
        out += [f"- {line}" for line in answer_lines(msg)]
        first = msg.get("first_suspect") or msg.get("first_divergence") or msg.get("first_nonfinite")
        if first and first.get("table"):
            out += ["", "```"] + table_lines(first["table"], first["buffer"]) + ["```"]
        src = kernel_source(key, first["kernel"]) if first and kernel_source else None
        if src:
            lines = src.splitlines()
            spans = first.get("kernel_lines") or []
            lo = max(1, min((s[0] for s in spans), default=1) - 3)
            hi = min(len(lines), max((s[-1] for s in spans), default=12) + 3)
            out += ["", f"{first['kernel']}, lines {lo}-{hi}:", "", "```"]
            out += [f"{i:>4}{'>' if any(s[0] <= i <= s[-1] for s in spans) else ' '} {lines[i - 1]}"
                    for i in range(lo, hi + 1)] + ["```"]
        out.append("")
    return out


def report_markdown(session: Any) -> str:
    """REPORT.md's numerics section for a :class:`tui.session.Session` ("" when it has no numerics): the answer,
    the short table and the kernel source around the first divergence (its codegen stop's kernel source)."""
    def source(key: str, kernel: str) -> str | None:
        stop = session.stop_for(key, "codegen") or {}
        return next((k.get("source") for k in stop.get("kernels") or [] if k.get("name") == kernel
                     and k.get("backend") != "extern"), None)

    return "\n".join(report_section(session.numerics, source))


def short_answer(msg: dict[str, Any] | None) -> str:
    """One phrase: ``first suspect buf1 (cpp_fused_add_mul_tanh_0, FX node tanh)``, ``first divergence buf2
    (closer to float64 than eager)``, ``no divergence``, or ``not compared``."""
    if not msg:
        return "not compared"
    if msg.get("failed"):
        return f"not compared ({msg.get('error')})"
    if msg.get("waiting"):
        return "not compared yet (waiting for the script's first call)"
    sus, div, nf = msg.get("first_suspect"), msg.get("first_divergence"), msg.get("first_nonfinite")
    loc = (msg.get("localized") or {}).get("first")
    out = (f"first suspect {sus['buffer']} ({sus['kernel']}" + (f", FX node {loc}" if loc else "") + ")" if sus else
           f"first divergence {div['buffer']} ({STATUS_MARK.get(div.get('status') or '', '')})" if div else "no divergence")
    if nf:
        out += f"; first NaN/Inf {nf['buffer']} ({nf['kernel']})"
    return out


def diff_lines(a: dict[str, Any] | None, b: dict[str, Any] | None) -> list[str]:
    """The diff's numerics note (A and B each against its own eager): empty when neither was compared."""
    if not a and not b:
        return []
    sa, sb = short_answer(a), short_answer(b)
    if sa == sb:
        return [f"numerics: both {sa}"]
    return [f"numerics: A {sa}; B {sb}"]


def what_if_lines(by_key: dict[str, dict[str, Any]]) -> list[str]:
    """``--what-if ... --numerics``: per variant, whether its setting made the original's divergence go away."""
    from inductor_step.session.format import GraphKey  # noqa: PLC0415

    out = []
    for key, msg in by_key.items():
        k = GraphKey.parse(key)
        if k.variant is None:
            continue
        orig = by_key.get(str(k.original))
        a, b = short_answer(orig), short_answer(msg)
        verdict = "no change" if a == b else ("the divergence goes away" if b.startswith("no divergence") else "changed")
        out.append(f"numerics what if {key}: {verdict} (original: {a}; variant: {b})")
    return out
