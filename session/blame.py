"""Blame as data and text: a recorded bisect (``blame`` messages) read into typed steps and a verdict, tied to the
session's graphs (the FX nodes and kernels it names), and its lines for --headless, the blame pane and REPORT.md.

No torch, no Textual: the search itself runs in the tracer (tracer.blame), one child process per step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from inductor_step.session import trust
from inductor_step.session.format import SUBGRAPH_SEP, VARIANT_SEP

#: outcomes of a step, as the pane and the text mark them
OUTCOME_MARK = {"bad": "BAD", "good": "good", "crash": "CRASH", "timeout": "TIMEOUT", "cancelled": "cancelled",
                "faster": "FASTER", "slower": "slower", "noise": "noise"}


def speed_judgement(step: dict[str, Any]) -> tuple[str, float | None, str]:
    """A speed variant's rounds judged by session.trust's rules: ``(outcome, effect, words)``; outcome ``faster``
    (the variant is faster than the original in every round: the setting as compiled costs time), ``slower`` (slower
    in every round), or ``noise`` (the rounds disagree, contention, or the effect cannot be judged: never reported
    as an effect); effect is original / variant (the median of the rounds' ratios)."""
    il = step.get("interleaved") or {}
    if step.get("outcome") == "crash" or not il:
        return "crash", None, str(step.get("error") or "not timed")
    effect, why = trust.setting_effect(il)
    ratios = [o / v for o, v in zip(il.get("original_rounds_ms") or [], il.get("variant_rounds_ms") or [])
              if isinstance(o, (int, float)) and isinstance(v, (int, float)) and o > 0 and v > 0]
    figs = (f"original {fmt_num(il.get('original_ms'))} ms, variant {fmt_num(il.get('variant_ms'))} ms, "
            f"{il.get('rounds', len(ratios))} rounds")
    if il.get("reliable") is False:
        return "noise", None, f"{figs}; NOT RELIABLE: the threads waited for a core ({il.get('why') or 'contention'})"
    if effect is None:
        return "noise", None, f"{figs}; {why or 'not judged'}"
    om, vm = il.get("original_ms"), il.get("variant_ms")
    delta = f", {om - vm:+.3f} ms a call" if isinstance(om, (int, float)) and isinstance(vm, (int, float)) else ""
    if ratios and min(ratios) > 1:
        return "faster", effect, f"{figs}; the variant is faster in every round ({effect:.2f}x{delta})"
    if ratios and max(ratios) < 1:
        return "slower", effect, f"{figs}; the variant is slower in every round ({effect:.2f}x)"
    return "noise", None, f"{figs}; the rounds disagree on the direction ({effect:.2f}x): noise, not an effect"


def fmt_num(x: Any) -> str:
    """A measure's number in 3 significant digits ("inf" as written, "-" for none)."""
    if isinstance(x, (int, float)):
        return f"{x:.3g}"
    return "-" if x is None else str(x)


@dataclass(frozen=True)
class Measure:
    """The target graph's worst output or input gradient against its Dynamo graph run eagerly, in one step:
    ``tol_ratio`` is max |compiled - eager| over torch.testing's tolerance (over 1 fails ``assert_close``), ``status``
    the numerics verdict (suspect: further from float64 than eager can explain).  From tracer.numerics.stats."""
    which: str
    status: str
    tol_ratio: Any
    max_abs: Any
    verdict: str

    @classmethod
    def of(cls, d: dict[str, Any] | None) -> "Measure | None":
        if not d:
            return None
        return cls(str(d.get("which") or "?"), str(d.get("status") or "?"), d.get("tol_ratio"), d.get("max_abs"),
                   str(d.get("verdict") or ""))

    def text(self) -> str:
        """``output 0: suspect, 1.51e+06x the tolerance (max abs 65.7)``."""
        return (f"{self.which}: {self.status}, {fmt_num(self.tol_ratio)}x the tolerance "
                f"(max abs {fmt_num(self.max_abs)})")


@dataclass(frozen=True)
class Step:
    """One step of the search: the script run again in its own process under ``env`` (torch's compiler bisector's
    TORCH_BISECT_* variables) and ``settings`` (torch._inductor.config), its ``outcome`` (bad, good, crash, timeout,
    cancelled), the target's ``measure`` and the step's wall time in seconds (its process's start included)."""
    index: int
    what: str
    level: str
    outcome: str
    seconds: float
    env: dict[str, str] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    measure: Measure | None = None
    error: str | None = None
    variant: str | None = None  # speed: the what-if variant's graph key
    effect: float | None = None  # speed: original / variant, where judged an effect (not noise)
    timing: str | None = None  # speed: the rounds in words

    @classmethod
    def of(cls, d: dict[str, Any]) -> "Step":
        outcome, effect, timing = str(d.get("outcome") or "?"), None, None
        if d.get("level") == "variant":
            outcome, effect, timing = speed_judgement(d)
        return cls(int(d.get("index", 0)), str(d.get("what") or ""), str(d.get("level") or ""),
                   outcome, float(d.get("seconds") or 0.0), dict(d.get("env") or {}),
                   dict(d.get("settings") or {}), Measure.of(d.get("measure")), d.get("error"), d.get("variant"),
                   effect, timing)

    def line(self) -> str:
        """``#3 lowerings off (7 applications): good in 10.2 s; output 0: ok, 0x the tolerance``."""
        out = f"#{self.index} {self.what}: {OUTCOME_MARK.get(self.outcome, self.outcome)} in {self.seconds:.1f} s"
        if self.timing:
            out += f"; {self.timing}"
        if self.measure:
            out += f"; {self.measure.text()}"
        if self.error:
            out += f"; {self.error}"
        return out


@dataclass(frozen=True)
class Verdict:
    """The search's answer.  ``found``: ``backend`` (eager, aot_eager, aot_eager_decomp_partition, inductor),
    ``subsystem`` and ``application`` (the n-th application in torch's counter, of ``applications``) with ``what``
    (a pass's name, a lowered FX node, a decomposed op, a setting), ``leaves`` (the divergence with it off),
    ``setting`` (the words of what turns it off), ``repro`` (a command line).  Not found: ``text`` says why."""
    found: bool
    text: str
    level: str | None = None
    backend: str | None = None
    subsystem: str | None = None
    application: int | None = None
    applications: int | None = None
    what: str | None = None
    compile_id: str | None = None
    fx_nodes: tuple[str, ...] = ()
    baseline: Measure | None = None
    leaves: Measure | None = None
    setting: str | None = None
    repro: str | None = None
    repro_off: str | None = None
    cancelled: bool = False
    steps: int = 0
    seconds: float = 0.0
    graph_kind: str | None = None  # the graph the application ran in: forward, backward, inference

    @classmethod
    def of(cls, d: dict[str, Any]) -> "Verdict":
        return cls(bool(d.get("found")), str(d.get("text") or ""), d.get("level"), d.get("backend"),
                   d.get("subsystem"), d.get("application"), d.get("applications"), d.get("what"),
                   d.get("compile_id"), tuple(d.get("fx_nodes") or ()), Measure.of(d.get("baseline")),
                   Measure.of(d.get("leaves")), (d.get("setting") or {}).get("text"), d.get("repro"),
                   d.get("repro_off"),
                   bool(d.get("cancelled")), int(d.get("steps") or 0), float(d.get("seconds") or 0.0),
                   d.get("graph_kind"))

    def cause(self) -> str:
        """``inductor / lowerings #1: relu`` (or the backend alone, or the setting)."""
        if not self.found:
            return "not found"
        parts = [self.backend or "?"]
        if self.subsystem:
            parts.append(f"{self.subsystem} #{self.application}")
        head = " / ".join(parts)
        return f"{head}: {self.what}" if self.what else head


@dataclass
class BlameRun:
    """One blame of a session (its ``blame`` messages, start to verdict): ``kind`` numerics, the graph's compile id,
    the steps so far and the verdict once it came."""
    kind: str
    compile_id: str
    graph_kind: str | None = None
    script: str | None = None
    message: str = ""
    steps: list[Step] = field(default_factory=list)
    verdict: Verdict | None = None

    @property
    def running(self) -> bool:
        return self.verdict is None

    def seconds(self) -> float:
        return self.verdict.seconds if self.verdict else sum(s.seconds for s in self.steps)


def runs(messages: Iterable[dict[str, Any]]) -> list[BlameRun]:
    """The blames in ``messages`` (any session messages; only ``blame`` ones are read), oldest first."""
    out: list[BlameRun] = []
    for m in messages:
        if m.get("type") != "blame" or m.get("event") in ("specialization", "constraint"):
            continue
        ev = m.get("event")
        if ev == "start" or not out or out[-1].verdict is not None:
            out.append(BlameRun(str(m.get("kind") or "numerics"), str(m.get("compile_id") or "?"),
                                m.get("graph_kind"), m.get("script"), str(m.get("message") or "")))
            if ev == "start":
                continue
        r = out[-1]
        if m.get("compile_id") not in (None, "?"):
            r.compile_id = str(m["compile_id"])
        if ev == "step" and isinstance(m.get("step"), dict):
            r.steps.append(Step.of(m["step"]))
        elif ev == "verdict" and isinstance(m.get("verdict"), dict):
            r.verdict = Verdict.of(m["verdict"])
            if r.kind == "speed":
                if not r.steps:  # a verdict read alone (--headless prints each message): its own list of steps
                    r.steps = [Step.of(s) for s in m["verdict"].get("variants") or []]
                r.verdict = speed_verdict(r)
    return out


def speed_verdict(run: BlameRun) -> Verdict:
    """The setting that makes the graph slower: of the variants faster than the original in every round (not
    noise, not contention), the largest effect; its ``text`` gives the times and the change in ms."""
    old = run.verdict
    common = {"steps": old.steps if old else len(run.steps), "seconds": old.seconds if old else 0.0,
              "cancelled": bool(old and old.cancelled), "compile_id": run.compile_id}
    faster = [s for s in run.steps if s.outcome == "faster" and s.effect]
    if not faster:
        noise = sum(1 for s in run.steps if s.outcome == "noise")
        text = ("cancelled" if common["cancelled"] else
                f"no setting's change moved the time beyond noise ({len(run.steps)} variant(s), {noise} within noise)")
        return Verdict(False, text, **common)
    best = max(faster, key=lambda s: s.effect or 0.0)
    text = (f"switching {best.what} makes {run.compile_id} {best.effect:.2f}x faster: the setting as compiled costs "
            f"time ({best.timing})")
    return Verdict(True, text, level="config", backend="inductor", what=best.what, setting=best.what,
                   repro=best.variant, **common)


@dataclass(frozen=True)
class Specialization:
    """A dynamic size Dynamo's shape environment made a constant during compile ``compile_id`` (torch's
    ``symbolic_shape_specialization`` event): ``symbol`` (s77) standing for ``sources`` (L['x'].size()[0]) became
    ``value``; ``user_line`` and ``user_code`` forced it, through ``torch_line``; ``reason`` is torch's word."""
    compile_id: str
    symbol: str
    sources: tuple[str, ...]
    value: str
    reason: str
    user_line: str | None
    user_code: str | None
    torch_line: str | None

    def line(self) -> str:
        """``s77 (L['x'].size()[0]) made 4 at spec.py:7 in f, through _dynamo/variables/tensor.py:2606 ...``."""
        src = f" ({', '.join(self.sources)})" if self.sources else ""
        out = f"{self.symbol}{src} specialized to {self.value} in {self.compile_id}"
        if self.user_line:
            out += f" by {self.user_line}"
        if self.torch_line:
            out += f" (torch: {self.torch_line})"
        return out + (f" [{self.reason}]" if self.reason else "")


def specializations(messages: Iterable[dict[str, Any]]) -> list[Specialization]:
    """Every specialization in ``messages`` (``blame`` messages of kind recompile), in order."""
    out = []
    for m in messages:
        sp = m.get("specialization") if m.get("type") == "blame" and m.get("event") == "specialization" else None
        if isinstance(sp, dict):
            out.append(Specialization(str(m.get("compile_id") or "?"), str(sp.get("symbol") or "?"),
                                      tuple(sp.get("sources") or ()), str(sp.get("value")), str(sp.get("reason") or ""),
                                      sp.get("user_line"), sp.get("user_code"), sp.get("torch_line")))
    return out


@dataclass(frozen=True)
class Constraint:
    """A guard the user's line put on a dynamic size during compile ``compile_id`` (torch's ``guard_added_fast``):
    ``expr`` (``s77 > 16``) on ``symbols``, each standing for ``sources``; ``user_line`` and ``user_code`` added it,
    through ``torch_line``; ``kind`` guard (checked on every call: another size that fails it recompiles) or
    runtime_assert (checked in the compiled code)."""
    compile_id: str
    expr: str
    symbols: tuple[str, ...]
    sources: dict[str, tuple[str, ...]]
    kind: str
    user_line: str | None
    user_code: str | None
    torch_line: str | None

    def line(self) -> str:
        """``s77 (L['x'].size()[0]) constrained: s77 > 16 in [0/0] by guards.py:6 in f (torch: ...)``."""
        names = ", ".join(f"{s} ({', '.join(self.sources.get(s) or ())})" if self.sources.get(s) else s
                          for s in self.symbols)
        what = "runtime assert" if self.kind == "runtime_assert" else "constrained"
        out = f"{names or '?'} {what}: {self.expr} in {self.compile_id}"
        if self.user_line:
            out += f" by {self.user_line}"
        if self.torch_line:
            out += f" (torch: {self.torch_line})"
        return out


def constraints(messages: Iterable[dict[str, Any]]) -> list[Constraint]:
    """Every constraint guard in ``messages`` (``blame`` messages of kind recompile, event constraint), in order."""
    out = []
    for m in messages:
        c = m.get("constraint") if m.get("type") == "blame" and m.get("event") == "constraint" else None
        if isinstance(c, dict) and c.get("expr"):
            out.append(Constraint(str(m.get("compile_id") or "?"), str(c["expr"]), tuple(c.get("symbols") or ()),
                                  {str(k): tuple(v or ()) for k, v in (c.get("sources") or {}).items()},
                                  str(c.get("kind") or "guard"), c.get("user_line"), c.get("user_code"),
                                  c.get("torch_line")))
    return out


def of_frame(items: Iterable[Any], compile_id: str | None) -> list[Any]:
    """The specializations or constraints of compile ``compile_id`` and of its frame's earlier compiles."""
    me = frame_of(compile_id or "")
    return [x for x in items if x.compile_id == compile_id
            or (me and (f := frame_of(x.compile_id)) and f[0] == me[0] and f[1] < me[1])]


def frame_of(cid: str) -> tuple[str, int] | None:
    """``"[3/1]"`` -> ("3", 1); None for another spelling."""
    body, _, rest = cid.strip("[").partition("]")
    f, _, n = body.partition("/")
    return (f + rest, int(n)) if n.isdigit() else None


def recompile_lines(specs: list[Specialization], compile_id: str | None,
                    cons: list[Constraint] | None = None) -> list[str]:
    """Why compile ``compile_id`` is not dynamic, or recompiled: the sizes its frame's earlier compiles (and it)
    specialized, and the guards they put on the sizes left dynamic (``cons``), each with the user's line and torch
    function that forced it."""
    me = frame_of(compile_id or "")
    if me is None:
        return []

    def earlier_of(xs: list[Any]) -> list[Any]:
        return [x for x in xs if (f := frame_of(x.compile_id)) and f[0] == me[0] and f[1] < me[1]]

    def lines(xs: list[Any]) -> list[str]:
        return [f"  {x.line()}" + (f"\n      {x.user_code}" if x.user_code else "") for x in xs]

    cons = cons or []
    earlier, own = earlier_of(specs), [s for s in specs if s.compile_id == compile_id]
    c_earlier, c_own = earlier_of(cons), [c for c in cons if c.compile_id == compile_id]
    out: list[str] = []
    if earlier:
        out.append(f"{compile_id} recompiled: an earlier compile of its frame made a dynamic size a constant, so a "
                   "call with another size failed its guard:")
        out += lines(earlier)
    if c_earlier:
        out.append(f"{compile_id}'s frame: earlier compiles guarded dynamic sizes (a call whose sizes fail one "
                   "recompiles):")
        out += lines(c_earlier)
    if own:
        out.append(f"{compile_id} is not dynamic in these sizes:")
        out += lines(own)
    if c_own:
        out.append(f"{compile_id} is dynamic in these sizes only within these guards:")
        out += lines(c_own)
    return out


def graph_keys(graphs: list[str], compile_id: str | None) -> list[str]:
    """The session's graphs of compile id ``compile_id`` (not what-if variants or subgraphs): forward or inference
    first, then the backward."""
    keys = [g for g in graphs if compile_id and g.startswith(f"{compile_id} ")
            and VARIANT_SEP not in g and SUBGRAPH_SEP not in g]
    return sorted(keys, key=lambda g: 1 if " backward" in g else 0)


def kernels_of(links: dict[str, Any] | None, fx_nodes: Iterable[str]) -> list[str]:
    """The kernels that compute the buffers of post-grad FX nodes ``fx_nodes`` (a graph's codegen links)."""
    lk = links or {}
    out: list[str] = []
    for n in fx_nodes:
        for b in ((lk.get("fx_nodes") or {}).get(n) or {}).get("buffers") or []:
            for k in ((lk.get("buffers") or {}).get(b) or {}).get("kernels") or []:
                if k not in out:
                    out.append(k)
    return out


def kernel_names(session: Any, key: str) -> list[str]:
    """The kernels of graph ``key``'s codegen stop, in order."""
    stop = session.stop_for(key, "codegen") or {}
    return [str(k.get("name")) for k in stop.get("kernels") or [] if k.get("name")]


@dataclass(frozen=True)
class Located:
    """Where a blame's verdict is in a session (:func:`located`); falsy (no ``graph``) when it names nothing there.

    - a numerics blame: ``graph`` the key whose post-grad graph holds the verdict's FX nodes (the verdict's compile id,
      its ``graph_kind`` first), ``fx_nodes`` those of the verdict's ``fx_nodes`` that graph has (its aot stop's
      post-grad nodes or its codegen links), ``kernels`` the kernels that compute their buffers (the links'
      ``fx_nodes[n].buffers`` -> ``buffers[b].kernels``).
    - a speed blame: ``graph`` the original, ``variant`` the what-if variant's key (the verdict's ``repro``),
      ``kernels_before`` / ``kernels_after`` the kernels only the original / only the variant has (their codegen
      stops' ``kernels``, by name).
    """

    graph: str = ""
    fx_nodes: tuple[str, ...] = ()
    kernels: tuple[str, ...] = ()
    variant: str = ""
    kernels_before: tuple[str, ...] = ()
    kernels_after: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.graph)

    def to_dict(self) -> dict[str, Any]:
        """The plain dict ``located`` used to return: ``{"graph", "fx_nodes", "kernels"}``, a speed blame's
        ``{"graph", "variant", "kernels_before", "kernels_after"}``, {} when it names nothing here."""
        if not self:
            return {}
        if self.variant:
            return {"graph": self.graph, "variant": self.variant, "kernels_before": list(self.kernels_before),
                    "kernels_after": list(self.kernels_after)}
        return {"graph": self.graph, "fx_nodes": list(self.fx_nodes), "kernels": list(self.kernels)}


def located(run: BlameRun, session: Any) -> Located:
    """Where the verdict's FX nodes are in ``session`` (a session.store.Store or anything with ``graphs`` and
    ``stop_for``): a :class:`Located`, empty (falsy) when it names none or the session lacks the graph."""
    v = run.verdict
    if run.kind == "speed" and v and v.found and v.repro:  # the variant's kernels against the original's
        base = v.repro.split(VARIANT_SEP)[0]
        a, b = kernel_names(session, base), kernel_names(session, v.repro)
        return Located(base, variant=v.repro, kernels_before=tuple(k for k in a if k not in b),
                       kernels_after=tuple(k for k in b if k not in a))
    if not v or not v.fx_nodes:
        return Located()
    keys = graph_keys(list(getattr(session, "graphs", []) or []), v.compile_id or run.compile_id)
    if v.graph_kind:  # the graph the application ran in first (a backward's node names are its own)
        keys.sort(key=lambda k: 0 if k.split(" ", 1)[-1] == v.graph_kind else 1)
    for key in keys:
        stop = session.stop_for(key, "codegen") or {}
        links = stop.get("links") or {}
        aot = session.stop_for(key, "aot") or {}
        names = {n.get("name") for n in ((aot.get("post_grad") or {}).get("nodes") or []) if isinstance(n, dict)}
        nodes = [n for n in v.fx_nodes if n in names or n in (links.get("fx_nodes") or {})]
        if nodes:
            return Located(key, tuple(nodes), tuple(kernels_of(links, nodes)))
    return Located()


def verdict_lines(run: BlameRun, where: Located | None = None) -> list[str]:
    """The answer in words: the cause, what it rewrote (FX nodes, kernel), the setting that turns it off and the
    divergence left with it off, the repro; or why nothing was found."""
    v = run.verdict
    if v is None:  # live: still running; recorded: the session ended first (ctrl+c, the agent gone)
        return [f"blame {run.kind} of {run.compile_id}: no verdict yet ({len(run.steps)} step(s) so far: running, "
                "or the session ended before the search did)"]
    if not v.found:
        return [f"blame {run.kind} of {run.compile_id}: {v.text} ({v.steps} step(s), {v.seconds:.1f} s)"]
    out = [f"blame {run.kind} of {run.compile_id}: {v.cause()}", f"  {v.text}"]
    looked = where is not None
    where = where or Located()
    if run.kind == "speed":
        out = [f"blame speed of {run.compile_id}: {v.what}", f"  {v.text}"]
        if where.variant:
            out.append(f"  kernels: only as compiled {', '.join(where.kernels_before) or '-'}; only in the variant "
                       f"{', '.join(where.kernels_after) or '-'} (the diff: d on {where.variant})")
        out.append(f"  ({v.steps} variant(s), {v.seconds:.1f} s)")
        return out
    if where.fx_nodes:
        out.append(f"  FX nodes: {', '.join(where.fx_nodes)} (post-grad graph of {where.graph})"
                   + (f"; kernel: {', '.join(where.kernels)}" if where.kernels else ""))
    elif v.fx_nodes:
        graph = " ".join(x for x in (v.compile_id, v.graph_kind) if x)
        out.append(f"  FX nodes: {', '.join(v.fx_nodes)} (post-grad graph of {graph})"
                   + (" (not in this session's graphs)" if looked else ""))
    if v.baseline:
        out.append(f"  divergence as compiled: {v.baseline.text()}")
    if v.setting:
        out.append(f"  turned off by: {v.setting}")
    if v.leaves:
        left = "none" if v.leaves.status not in ("suspect", "diverges") else "still over the tolerance"
        out.append(f"  divergence it leaves: {left} ({v.leaves.text()})")
    if v.repro:
        out.append(f"  repro: {v.repro}")
    if v.repro_off:
        out.append(f"  without it: {v.repro_off}")
    out.append(f"  ({v.steps} step(s) in child processes, {v.seconds:.1f} s)")
    return out


def headless_lines(msg: dict[str, Any]) -> list[str]:
    """``--headless --blame``'s lines for one ``blame`` message: the start, each step as it ends, the verdict (the
    shape events, specializations and constraints: :class:`inductor_step.session.shape_events.ShapeEventLines`)."""
    ev = msg.get("event")
    if ev == "start":
        return [f"blame       {msg.get('message', '')}"]
    if ev == "step" and isinstance(msg.get("step"), dict):
        return [f"blame step  {Step.of(msg['step']).line()}"]
    if ev == "verdict":
        r = runs([msg])[0]
        return verdict_lines(r)
    return []


def report_markdown(messages: list[dict[str, Any]], session: Any = None) -> str:
    """REPORT.md's blame section ("" when the session has no blame): each verdict, the FX nodes and kernel it names
    where ``session`` has them, the steps of the search, and the runnable repro."""
    rs = [r for r in runs(messages) if r.verdict is not None]
    specs = specializations(messages)
    cons = constraints(messages)
    if not rs and not specs and not cons:
        return ""
    out = ["## Blame", ""]
    if any(r.kind == "numerics" for r in rs):
        out += ["Numerics: each step ran the script again in a child process under torch's compiler bisector "
                "(`TORCH_BISECT_BACKEND` / `TORCH_BISECT_SUBSYSTEM` / `TORCH_BISECT_MAX`) and compared the graph's "
                "first call with its Dynamo graph run eagerly and in float64, on the script's own inputs.", ""]
    if any(r.kind == "speed" for r in rs):
        out += ["Speed: each variant recompiled the graph with one setting switched (what-if) and was timed round by "
                "round against the original in one process; a change is an effect only where every round agrees and "
                "no thread waited for a core, else it is noise and never named.", ""]
    for r in rs:
        where = located(r, session) if session is not None else Located()
        out += ["```text", *verdict_lines(r, where), "", "steps:", *[f"  {s.line()}" for s in r.steps], "```", ""]
        if r.verdict and r.verdict.repro:
            out += ["Repro: the script on its own inputs shows the divergence; the second line keeps the cause off:",
                    "", "```sh", r.verdict.repro, *([r.verdict.repro_off] if r.verdict.repro_off else []), "```", ""]
    if specs:
        out += ["### Sizes made static", "",
                "Dynamic sizes Dynamo's shape environment specialized to a constant (torch's "
                "`symbolic_shape_specialization`), with the line that forced each: a recompile of the frame with "
                "another size follows from these.", "", "```text", *[s.line() for s in specs], "```", ""]
    if cons:
        out += ["### Sizes constrained", "",
                "Guards the script's lines put on dynamic sizes (torch's `guard_added_fast`: a branch on a size, "
                "`torch._check`, a view that needs divisibility): the size stays dynamic, but a call whose sizes fail "
                "one recompiles.", "", "```text",
                *[c.line() + (f"\n    {c.user_code}" if c.user_code else "") for c in cons], "```", ""]
    return "\n".join(out)


__all__ = ["BlameRun", "Measure", "fmt_num", "frame_of", "speed_judgement", "speed_verdict", "OUTCOME_MARK",
           "Constraint", "Specialization", "Step", "constraints", "of_frame", "Verdict", "recompile_lines",
           "specializations", "graph_keys", "headless_lines", "kernels_of",
           "Located", "located", "report_markdown", "runs", "verdict_lines"]
