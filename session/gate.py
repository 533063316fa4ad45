"""``inductor-step gate BASELINE NEW``: a CI gate for compile regressions -- new errors or graph breaks or recompiles, more graphs or kernels, fewer fusions, slower graphs or kernels -- one line per check, JUnit XML on request.

No Textual, no torch.  The two recordings (session files, or job files whose ranks are compared rank by
rank) are counted by :mod:`inductor_step.session.compiled` and their graphs paired as the diff pairs them
(:func:`inductor_step.session.diff.diff_sessions`: by compile id and kind, then by content), which also pairs
each graph's kernels (by normalized source, then name, then similarity) and says which scheduler nodes
split or merged.  A time is compared only where both sides were timed and both figures were judged
reliable (the run's ``verdicts``, :mod:`inductor_step.session.trust`); otherwise the check says it cannot
judge, and never fails.

Limits: options (``--max-slowdown 1.05``), else a file beside the baseline (``BASE.gate.toml`` for
``BASE.jsonl`` or ``BASE.job.json``, read with :mod:`tomllib`; ``BASE.gate.json`` the same keys in JSON),
else the defaults in :data:`DEFAULTS`.  Exit status: 0 every check passed or could not be judged, 1 a
limit was crossed, 2 bad input (one line on stderr).
"""

from __future__ import annotations

import json
import math
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

from inductor_step.session import format as protocol
from inductor_step.session import trust
from inductor_step.session.compiled import Compiled
from inductor_step.session.diff import diff_sessions

#: limit name (as in the options and the limits file) -> (default, type, what it allows)
DEFAULTS: dict[str, tuple[Any, type, str]] = {
    "max-slowdown": (1.10, float, "a graph's compiled time may be at most this many times the baseline's"),
    "max-kernel-slowdown": (None, float, "a kernel's time may be at most this many times the baseline's "
                                         "(default: --max-slowdown)"),
    "min-ms": (0.0, float, "a slowdown smaller than this many milliseconds never fails"),
    "allow-new-errors": (0, int, "errors (a compile that failed, the script's own) the baseline does not have"),
    "allow-new-graph-breaks": (0, int, "graph breaks the baseline does not have"),
    "allow-new-recompiles": (0, int, "recompiles more than the baseline's"),
    "allow-more-graphs": (0, int, "graphs more than the baseline's"),
    "allow-more-kernels": (0, int, "generated kernels more than the baseline's"),
    "allow-fewer-fusions": (0, int, "fusions fewer than the baseline's"),
    "max-memory-growth": (None, float, "a graph's peak memory may be at most this many times the baseline's: the "
                                       "peak the timing worker measured where both recordings measured it, else the "
                                       "one planned from its wrapper (session.memory) (default: not checked)"),
}
OK, FAIL, CANNOT = "ok", "FAIL", "cannot judge"


class GateInputError(Exception):
    """Bad input (a file that is not a recording, a bad limit): one line, exit status 2."""


@dataclass
class Check:
    """One check's outcome: ``name`` (``"graph breaks"``, ``"time [0/0] forward"``), ``status``
    (:data:`OK`, :data:`FAIL` or :data:`CANNOT`), ``text`` (the numbers and the limit, one line),
    ``source`` (where the numbers come from), ``details`` (lines under a FAIL: which items)."""

    name: str
    status: str
    text: str
    source: str
    details: list[str] = field(default_factory=list)

    def line(self) -> str:
        """The check as one CI log line: status, name, numbers, source."""
        return f"{self.status:<12}  {self.name}: {self.text}  [{self.source}]"


# --------------------------------------------------------------------------- limits

def limits_file_for(baseline: str) -> str | None:
    """The limits file kept beside ``baseline``: ``BASE.gate.toml``, else ``BASE.gate.json`` (BASE: the
    baseline's path without ``.jsonl`` / ``.job.json`` / ``.json``); None when neither exists."""
    stem = baseline
    for ext in (".job.json", ".jsonl", ".json"):
        if stem.endswith(ext):
            stem = stem[: -len(ext)]
            break
    for ext in (".gate.toml", ".gate.json"):
        if os.path.isfile(stem + ext):
            return stem + ext
    return None


def read_limits_file(path: str) -> dict[str, Any]:
    """The limits in ``path`` (TOML, or JSON for a ``.json`` name): ``{"max-slowdown": 1.05, ...}``, keys
    as :data:`DEFAULTS` names them (``_`` may stand for ``-``; a ``[gate]`` table may hold them).  Raises
    GateInputError with a one-line reason for an unreadable file, an unknown key or a wrong type."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise GateInputError(f"cannot read limits file {path}: {e.strerror}") from None
    try:
        if path.endswith(".json"):
            data = json.loads(raw)
        else:
            import tomllib  # noqa: PLC0415 - Python 3.11+

            data = tomllib.loads(raw.decode("utf-8"))
    except ImportError:
        raise GateInputError(f"{path}: reading TOML needs Python 3.11 (tomllib); keep the limits in "
                             f"{path[:-5]}.json instead") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise GateInputError(f"{path}: not valid {'JSON' if path.endswith('.json') else 'TOML'} "
                             f"({str(e).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise GateInputError(f"{path}: expected a table of limits (max-slowdown = 1.05, ...)")
    if isinstance(data.get("gate"), dict):
        data = data["gate"]
    out: dict[str, Any] = {}
    for k, v in data.items():
        name = str(k).replace("_", "-")
        if name not in DEFAULTS:
            raise GateInputError(f"{path}: unknown limit {k!r} (known: {', '.join(DEFAULTS)})")
        out[name] = checked_limit(name, v, f"{path}: {k}")
    return out


def checked_limit(name: str, v: Any, where: str, sep: str = " = ") -> Any:
    """``v`` as limit ``name`` takes it, or GateInputError saying why not (``where``, ``sep`` and the value
    begin the message: ``base.gate.toml: max-slowdown = 0.5``, ``--max-slowdown 0.5``)."""
    typ = DEFAULTS[name][1]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (typ is int and not float(v).is_integer()):
        raise GateInputError(f"{where}{sep}{v!r}: needs {'a whole number' if typ is int else 'a number'}")
    v = typ(v)
    if name.startswith("max-") and (v < 1 or math.isnan(v)):
        raise GateInputError(f"{where}{sep}{v:g}: needs a ratio of at least 1 (1.05: 5% slower allowed)")
    if v < 0:
        raise GateInputError(f"{where}{sep}{v:g}: needs a number of at least 0")
    return v


def resolve_limits(options: dict[str, Any], file: str | None) -> tuple[dict[str, Any], dict[str, str]]:
    """The limits in force and where each came from (``"option"``, the file's name, ``"default"``):
    options first, then ``file``, then :data:`DEFAULTS`."""
    from_file = read_limits_file(file) if file else {}
    limits: dict[str, Any] = {}
    source: dict[str, str] = {}
    for name, (default, _t, _h) in DEFAULTS.items():
        if options.get(name) is not None:
            limits[name], source[name] = options[name], "option"
        elif name in from_file:
            limits[name], source[name] = from_file[name], os.path.basename(file or "")
        else:
            limits[name], source[name] = default, "default"
    if limits["max-kernel-slowdown"] is None:
        limits["max-kernel-slowdown"] = limits["max-slowdown"]
        source["max-kernel-slowdown"] = "= max-slowdown"
    return limits, source


# --------------------------------------------------------------------------- counts

def _count_check(name: str, a: int, b: int, allowed: int, fewer_is_worse: bool, source: str,
                 details: list[str]) -> Check:
    worse = (a - b) if fewer_is_worse else (b - a)
    status = FAIL if worse > allowed else OK
    text = f"{a} -> {b} ({b - a:+d}; allowed: {allowed} {'fewer' if fewer_is_worse else 'more'})"
    return Check(name, status, text, source, details if status == FAIL or worse > 0 else [])


def _break_check(a: Compiled, b: Compiled, allowed: int) -> Check:
    ba, bb = a.graph_breaks, b.graph_breaks
    left = [x.key for x in ba]
    new = []
    for x in bb:
        if x.key in left:
            left.remove(x.key)
        else:
            new.append(x)
    status = FAIL if len(new) > allowed else OK
    return Check("graph breaks", status, f"{len(ba)} -> {len(bb)}, {len(new)} new (allowed {allowed})",
                 "dynamo stops' graph_breaks, matched by reason and file", [f"new: {x}" for x in new])


def _error_check(a: Compiled, b: Compiled, allowed: int) -> Check:
    def key(e: dict[str, Any]) -> tuple[str, str]:  # the stage and the message; compile ids may move
        return (str(e.get("stage")), str(e.get("message") or "").split("\n", 1)[0])

    left = [key(e) for e in a.session.errors]
    new = []
    for line, e in zip(b.errors, b.session.errors):
        if key(e) in left:
            left.remove(key(e))
        else:
            new.append(line)
    status = FAIL if len(new) > allowed else OK
    return Check("errors", status, f"{len(a.errors)} -> {len(b.errors)}, {len(new)} new (allowed {allowed})",
                 "error messages: a compile that failed at a stage, the script's exception", [f"new: {x}" for x in new])


def _recompile_check(a: Compiled, b: Compiled, allowed: int) -> Check:
    ra, rb = a.recompiles, b.recompiles
    details = [f"{g}: {'; '.join(r)}" for g, r in rb.items() if g not in ra]
    c = _count_check("recompiles", len(ra), len(rb), allowed, False, "dynamo stops' recompile_reasons", details)
    return c


def _pairs_details(pairs: list[tuple[Any, ...]], which: str) -> list[str]:
    label = "only in the new recording" if which == "new" else "only in the baseline"
    return [f"{label}: {kb if which == 'new' else ka}" for ka, kb, _how, _d in pairs
            if (kb if which == "new" else ka) and not (ka if which == "new" else kb)]


def _kernel_check(a: Compiled, b: Compiled, pairs: list[tuple[Any, ...]], allowed: int) -> Check:
    details = []
    for ka, kb, _how, d in pairs:
        na = len(a.graph(ka).kernels) if ka else 0
        nb = len(b.graph(kb).kernels) if kb else 0
        if na != nb:
            added = [c.b for c in (d.level("kernels").changes if d else []) if c.kind == "added"]
            details.append(f"{kb or ka}: {na} -> {nb}" + (f" (added: {', '.join(added[:6])})" if added else ""))
    return _count_check("kernels", len(a.kernels), len(b.kernels), allowed, False,
                        "codegen stops' kernels, Triton/C++ (extern calls not counted)", details)


def _fusion_check(a: Compiled, b: Compiled, pairs: list[tuple[Any, ...]], allowed: int) -> Check:
    details = []
    for ka, kb, _how, d in pairs:
        fa = (a.graph(ka).fusions or 0) if ka else 0
        fb = (b.graph(kb).fusions or 0) if kb else 0
        if fa != fb:
            details.append(f"{kb or ka}: {fa} -> {fb}")
            if d is not None:
                details += [f"  {c.mark} {c.name}: {c.what}" for c in d.level("scheduling").changes[:6]]
    return _count_check("fusions", a.fusions, b.fusions, allowed, True,
                        "scheduling stops: scheduler nodes before - after fusion", details)


# --------------------------------------------------------------------------- times

def judged(run: dict[str, Any] | None, which: str) -> str | None:
    """None when figure ``which`` (``"compiled"``, ``"kernels"``) of ``run`` was timed and judged reliable;
    else why it cannot be compared, in a few words."""
    if run is None:
        return "not timed"
    if run.get("error"):
        return f"timing failed ({str(run['error']).splitlines()[0][:80]})"
    if run.get("not_timed"):
        return f"not timed ({run['not_timed']})"
    v = (run.get("verdicts") or {}).get(which)
    if v:
        if v.get("reliable"):
            return None
        if v.get("reliable") is False:
            return f"NOT RELIABLE (its threads waited for a core {100 * (v.get('wait_share') or 0):.0f}% of the time)"
        return "reliability could not be measured"
    if trust.unreliable(run):
        return "NOT RELIABLE (" + str(trust.unreliable(run)).split(";")[0] + ")"
    if run.get("reliable") or run.get("settled"):
        return None
    if str(run.get("device") or "").startswith("cuda"):
        return "not judged (a GPU timing that carries no verdict on its rounds)"
    return "not judged (timed before timing verdicts were recorded)"


def _ms(v: float) -> str:
    return f"{v:.4f} ms"


def _time_check(key: str, ra: dict[str, Any] | None, rb: dict[str, Any] | None, limit: float, min_ms: float,
                limit_src: str) -> Check:
    name, src = f"time {key}", f"run messages' compiled_ms, limit {limit:g}x ({limit_src})"
    why = [f"baseline {w}" for w in [judged(ra, "compiled")] if w] + [f"new {w}" for w in [judged(rb, "compiled")] if w]
    a, b = (ra or {}).get("compiled_ms"), (rb or {}).get("compiled_ms")
    nums = f"{_ms(a)} -> {_ms(b)}, " if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a > 0 else ""
    if not why and not nums:
        why = ["no compiled time on a side"]
    if not why and (ra or {}).get("device") != (rb or {}).get("device"):
        why = [f"timed on different devices ({(ra or {}).get('device')} vs {(rb or {}).get('device')})"]
    moved = trust.machine_moved(ra, rb) if not why else None
    if moved and moved.startswith("the machine moved"):
        why = [moved.split(";")[0]]
    if why:
        return Check(name, CANNOT, f"{nums}{'; '.join(why)}", src)
    ratio = b / a
    text = f"{nums}{ratio:.2f}x"
    if ratio > limit and b - a >= min_ms:
        return Check(name, FAIL, f"{text} (allowed {limit:g}x)", src)
    return Check(name, OK, f"{text} (allowed {limit:g}x)" + (f"; {moved}" if moved else ""), src)


def _kernel_times(run: dict[str, Any]) -> dict[str, float]:
    """Kernel name -> its median time summed over its calls (ms), from a run's ``kernels``."""
    out: dict[str, float] = {}
    for k in run.get("kernels") or []:
        if isinstance(k.get("median_ms"), (int, float)):
            out[str(k["name"])] = out.get(str(k["name"]), 0.0) + k["median_ms"]
    return out


def _kernel_time_check(key: str, ra: dict[str, Any] | None, rb: dict[str, Any] | None, kmap: dict[str, str],
                       limit: float, min_ms: float, limit_src: str) -> Check:
    name, src = f"kernel times {key}", f"run messages' kernels (median per call, summed), limit {limit:g}x ({limit_src})"
    why = [f"baseline {w}" for w in [judged(ra, "kernels")] if w] + [f"new {w}" for w in [judged(rb, "kernels")] if w]
    if why:
        return Check(name, CANNOT, "; ".join(why), src)
    assert ra is not None and rb is not None
    ta, tb = _kernel_times(ra), _kernel_times(rb)
    compared = [(ka, kb, ta[ka], tb[kb]) for ka, kb in kmap.items() if ka in ta and kb in tb and ta[ka] > 0]
    if not compared:
        return Check(name, CANNOT, "no kernel timed on both sides (paired by source, then name)", src)
    slow = sorted(((tb_ / ta_, ka, kb, ta_, tb_) for ka, kb, ta_, tb_ in compared), reverse=True)
    over = [s for s in slow if s[0] > limit and s[4] - s[3] >= min_ms]
    unpaired = len(tb) - len(compared)
    tail = f"; {unpaired} kernel(s) of the new run not paired, not compared" if unpaired > 0 else ""
    r, ka, kb, x, y = slow[0]
    worst = f"{kb if ka == kb else ka + ' -> ' + kb} {_ms(x)} -> {_ms(y)} ({r:.2f}x)"
    if over:
        return Check(name, FAIL, f"{len(over)} of {len(compared)} kernel(s) slower than {limit:g}x; slowest "
                                 f"{worst}{tail}", src,
                     [f"{k_b if k_a == k_b else k_a + ' -> ' + k_b}: {_ms(p)} -> {_ms(q)} ({rr:.2f}x)"
                      for rr, k_a, k_b, p, q in over])
    return Check(name, OK, f"{len(compared)} kernel(s) within {limit:g}x; slowest {worst}{tail}", src)


# --------------------------------------------------------------------------- the gate

def gate(a: Compiled, b: Compiled, limits: dict[str, Any], sources: dict[str, str] | None = None,
         prefix: str = "") -> tuple[list[Check], list[str]]:
    """Every check of recording ``b`` against baseline ``a`` (their :class:`Compiled` counts) under
    ``limits`` (:func:`resolve_limits`), and the lines saying how the graphs were paired.  ``prefix``
    starts every check's name (``"rank 1 "`` in a job)."""
    sources = sources or {}
    la, lb = os.path.basename(a.path) or "baseline", os.path.basename(b.path) or "new"
    graphs_a, graphs_b = set(a.all_graphs), set(b.all_graphs)  # what-if variants are no recording's own
    pairs = [p for p in diff_sessions(a.session, b.session, la, lb)
             if (p[0] is None or p[0] in graphs_a) and (p[1] is None or p[1] in graphs_b)]
    paired = [f"{prefix}graphs paired (baseline <-> new):"] + [
        f"  {ka or '-':<22} <-> {kb or '-':<22} "
        + how.replace("only in A", "only in the baseline").replace("only in B", "only in the new recording")
        for ka, kb, how, _d in pairs]
    checks = [_error_check(a, b, limits["allow-new-errors"]),
              _break_check(a, b, limits["allow-new-graph-breaks"]),
              _recompile_check(a, b, limits["allow-new-recompiles"]),
              _count_check("graphs", len(a.graphs), len(b.graphs), limits["allow-more-graphs"], False,
                           "graph keys: compile id and kind, subgraphs and what-if variants left out",
                           _pairs_details([p for p in pairs if p[1] in b.graphs], "new")),
              _kernel_check(a, b, pairs, limits["allow-more-kernels"]),
              _fusion_check(a, b, pairs, limits["allow-fewer-fusions"])]
    runs_a, runs_b = a.session.runs, b.session.runs
    if not runs_a or not runs_b:
        which = "neither recording" if not runs_a and not runs_b else "the baseline" if not runs_a else "the new recording"
        checks.append(Check("times", CANNOT, f"{which} {'was' if not runs_a and not runs_b else 'was not'} timed "
                                             "(record with --headless --run, or r in the app)", "run messages"))
    else:
        for ka, kb, _how, d in pairs:
            if ka and kb:
                key = ka if ka == kb else f"{ka} -> {kb}"
                checks.append(_time_check(key, runs_a.get(ka), runs_b.get(kb), limits["max-slowdown"],
                                          limits["min-ms"], sources.get("max-slowdown", "")))
                checks.append(_kernel_time_check(key, runs_a.get(ka), runs_b.get(kb), d.kernel_pairs if d else {},
                                                 limits["max-kernel-slowdown"], limits["min-ms"],
                                                 sources.get("max-kernel-slowdown", "")))
    if limits.get("max-memory-growth") is not None:  # the peak per paired graph, measured or planned
        checks += [_memory_check(a.session, ka, b.session, kb, limits["max-memory-growth"],
                                 sources.get("max-memory-growth", "")) for ka, kb, _how, _d in pairs if ka and kb]
    for c in checks:
        c.name = prefix + c.name
    return checks, paired


def _memory_check(sa: Any, ka: str, sb: Any, kb: str, limit: float, source: str) -> Check:
    """Graph ``kb``'s peak against the baseline's ``ka``: FAIL when it grew past ``limit`` times.  The peak the
    timing worker measured (tracer.timing.memory, one call) where both recordings measured it the same way, else
    the planned one (session.memory.plan: the wrapper's allocations), the check saying which and why; eager's peak
    and the saved-for-backward bytes (planned, and eager autograd's) said alongside."""
    from inductor_step.session.memory_text import fmt_bytes, figures, graph_memory, pair_text, short_source  # noqa: PLC0415

    key = ka if ka == kb else f"{ka} -> {kb}"
    ma, mb = graph_memory(sa, ka), graph_memory(sb, kb)
    fa, fb = figures(ma), figures(mb)
    srca, srcb = short_source(ma.run_memory), short_source(mb.run_memory)
    if fa["measured"] is not None and fb["measured"] is not None and srca == srcb:
        used, pa, pb = "measured", fa["measured"], fb["measured"]
        src = f"measured by the timing worker ({srca}), one call each"
        why = ""
    else:
        used, pa, pb = "planned", fa["planned"], fb["planned"]
        src = "planned from the wrappers' allocations (session.memory)"
        why = ("; not measured on either side" if fa["measured"] is None and fb["measured"] is None else
               "; the baseline was not measured" if fa["measured"] is None else
               "; the new recording was not measured" if fb["measured"] is None else
               f"; measured by {srca} against {srcb}: not comparable")
        if ma.plan is None or mb.plan is None:
            return Check(f"memory {key}", CANNOT, "no memory plan on "
                         + ("either side" if ma.plan is None and mb.plan is None else "one side")
                         + " (no Python wrapper recorded) and no measured peak on both" + why, src)
    assert pa is not None and pb is not None
    ratio = pb / pa if pa else (1.0 if not pb else math.inf)
    text = f"{used} peak {fmt_bytes(pa)} -> {fmt_bytes(pb)} (x{ratio:.2f}; allowed: x{limit:g}"
    text += (f" {source})" if source else ")") + why
    if fa["eager"] is not None or fb["eager"] is not None:
        text += f"; eager's peak {pair_text(fa['eager'], fb['eager'])}"
    if fa["saved"] is not None or fb["saved"] is not None:
        text += f"; saved for backward {fmt_bytes(fa['saved'])} -> {fmt_bytes(fb['saved'])}"
    if fa["eager_saved"] is not None or fb["eager_saved"] is not None:
        text += f" (eager autograd's {pair_text(fa['eager_saved'], fb['eager_saved'])})"
    details = ([f"peak at {mb.plan.peak_buffer} ({mb.plan.peak_kernel}), {len(mb.plan.live_at_peak)} buffers live "
                "in the plan"] if mb.plan is not None else [])
    if used == "measured" and fa["planned"] is not None and fb["planned"] is not None:
        details.append(f"planned peak {pair_text(fa['planned'], fb['planned'])}")
    return Check(f"memory {key}", FAIL if ratio > limit else OK, text, src, details if ratio > limit else [])


def load(path: str) -> dict[int | None, Compiled]:
    """``{None: counts}`` for a session file, ``{rank: counts}`` for a job file (each rank's session).
    Raises GateInputError with a one-line reason for a missing file or one that is no recording."""
    if not os.path.exists(path):
        raise GateInputError(f"no such recording: {path}")
    if os.path.isdir(path):
        raise GateInputError(f"{path} is a directory, not a session (.jsonl) or job (.job.json) file")
    try:
        if protocol.is_job_file(path):
            _job, paths = protocol.read_job(path)
            if not paths:
                raise GateInputError(f"{path}: the job names no rank's session")
            return {r: Compiled.load(p) for r, p in sorted(paths.items())}
        return {None: Compiled.load(path)}
    except (OSError, ValueError) as e:
        raise GateInputError(str(e).splitlines()[0] if str(e) else f"{path}: {type(e).__name__}") from None


def run_gate(baseline: str, new: str, limits: dict[str, Any], sources: dict[str, str]) -> tuple[list[Check], list[str]]:
    """Every check of recording ``new`` against ``baseline`` (session or job files, rank by rank) and
    the lines that come before them (what was compared, the limits, the pairing).  Raises GateInputError."""
    a, b = load(baseline), load(new)
    if (None in a) != (None in b):
        raise GateInputError(f"cannot compare a {'session' if None in a else 'job'} ({baseline}) with a "
                             f"{'session' if None in b else 'job'} ({new}): give two sessions or two job files")
    head = [f"inductor-step gate: baseline {baseline} -> new {new}"]
    for label, rec in (("baseline", a), ("new", b)):
        h = next(iter(rec.values())).session.header
        head.append(f"{label}: torch {h.get('torch')}, {h.get('device_name') or h.get('device')}, "
                    f"script {os.path.basename(str(h.get('script') or '?'))}")
    head.append("limits: " + ", ".join(f"{k} {limits[k]:g} ({sources[k]})" for k in DEFAULTS if limits[k] is not None))
    checks: list[Check] = []
    for rank in sorted(set(a) | set(b), key=lambda r: -1 if r is None else r):
        prefix = "" if rank is None else f"rank {rank} "
        if rank not in a or rank not in b:
            checks.append(Check(f"{prefix}ranks", CANNOT, f"cannot judge: rank {rank} is only in the "
                                f"{'new recording' if rank in b else 'baseline'}", "job files' ranks"))
            continue
        cs, paired = gate(a[rank], b[rank], limits, sources, prefix)
        head += paired
        checks += cs
    return checks, head


def render(checks: list[Check], head: list[str]) -> str:
    """The CI log: the head lines, one line per check (details indented under it), then the verdict."""
    lines = list(head)
    for c in checks:
        lines.append(c.line())
        lines += [f"{'':14}  {d}" for d in c.details[:20]]
        if len(c.details) > 20:
            lines.append(f"{'':14}  ... {len(c.details) - 20} more")
    lines.append(verdict(checks))
    return "\n".join(lines)


def verdict(checks: list[Check]) -> str:
    """``gate: PASS (5 ok, 2 cannot judge)`` or ``gate: FAIL: 1 limit crossed (fusions); ...``."""
    n = {s: [c for c in checks if c.status == s] for s in (OK, FAIL, CANNOT)}
    rest = f"{len(n[OK])} ok, {len(n[CANNOT])} cannot judge"
    if n[FAIL]:
        return f"gate: FAIL: {len(n[FAIL])} limit(s) crossed ({', '.join(c.name for c in n[FAIL])}); {rest}"
    return f"gate: PASS ({rest})"


def write_junit(checks: list[Check], path: str, suite: str = "inductor-step gate") -> None:
    """``checks`` as JUnit XML at ``path``: one ``testcase`` per check (classname ``inductor-step.gate``),
    a FAIL with a ``failure`` (its line as message, the details as text), a check that cannot judge
    ``skipped``; each case's line in ``system-out``.  Raises OSError when ``path`` cannot be written."""
    fails = sum(c.status == FAIL for c in checks)
    skips = sum(c.status == CANNOT for c in checks)
    root = ET.Element("testsuites", name=suite, tests=str(len(checks)), failures=str(fails), skipped=str(skips))
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(checks)), failures=str(fails),
                       errors="0", skipped=str(skips))
    for c in checks:
        tc = ET.SubElement(ts, "testcase", classname="inductor-step.gate", name=c.name)
        if c.status == FAIL:
            f = ET.SubElement(tc, "failure", message=f"{c.text} [{c.source}]", type="limit crossed")
            f.text = "\n".join(c.details) or c.text
        elif c.status == CANNOT:
            ET.SubElement(tc, "skipped", message=f"{c.text} [{c.source}]")
        ET.SubElement(tc, "system-out").text = c.line()
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


__all__ = ["CANNOT", "Check", "DEFAULTS", "FAIL", "GateInputError", "OK", "checked_limit", "gate", "judged",
           "limits_file_for", "load", "read_limits_file", "render", "resolve_limits", "run_gate",
           "verdict", "write_junit"]
