"""What if, the UI side without Textual: the timing deltas of variants against their
originals (``--headless --what-if ... --run`` prints them) and the numerics lines shown with a
variant's timing."""

from __future__ import annotations

from typing import Any

from inductor_step.session.format import GraphKey, graph_key, repartitioned
from inductor_step.session import trust
from inductor_step.session.text import fmt_ms


#: why a new partition's outputs are not compared with the original's (session.format.repartitioned)
REPARTITIONED = ("outputs not compared: the partitioner chose the saved tensors anew, so the forward's outputs past "
                 "the user's and the backward's inputs differ from the original's by design")


def _err(v: Any) -> str:
    return "-" if v is None else f"{v:.3g}"


def numerics_lines(run: dict[str, Any]) -> list[str]:
    """A variant's outputs against the original compiled graph's and eager's, one line per output
    (``max abs`` = max |variant - reference|, ``max rel`` = that over max |reference|)."""
    num = run.get("numerics")
    if not isinstance(num, dict):
        return []
    if run.get("compile_id") and repartitioned(graph_key(run)):  # type: ignore[arg-type]
        return [f"numerics: {REPARTITIONED}"]
    if num.get("unavailable"):
        return [f"numerics: not compared ({num['unavailable']})"]
    lines = [f"numerics (inputs: {num.get('inputs', '?')}):"] + ([f"  note: {num['note']}"] if num.get("note") else [])
    for which, label in (("vs_original", "vs original compiled"), ("vs_eager", "vs eager")):
        for r in num.get(which) or []:
            what = f"  {label:<21} output {r.get('output')}"
            if r.get("shape"):
                what += f" {r.get('dtype', '')}{r['shape']}"
            lines.append(f"{what}: {r['error']}" if r.get("error") else
                         f"{what}: max abs {_err(r.get('max_abs'))}, max rel {_err(r.get('max_rel'))}")
    return lines


def worst_error(rows: list[dict[str, Any]] | None) -> tuple[float | None, float | None]:
    """The largest ``max_abs`` and ``max_rel`` over a comparison's outputs (None when none compared)."""
    vals = [r for r in rows or [] if r.get("max_abs") is not None]
    if not vals:
        return None, None
    return max(r["max_abs"] for r in vals), max(r["max_rel"] for r in vals)


def what_if_deltas(runs: dict[str, dict[str, Any]], shapes: dict[str, dict[str, int]] | None = None) -> list[str]:
    """Lines comparing each variant (``"[0/0] forward · max_autotune=True"``) with its original: the
    scheduler nodes left after fusion and the kernels (``shapes``: key -> ``{"fused": n, "kernels": n}``,
    from the scheduling and codegen stops), then, when timed (``runs``: key -> ``run`` message),
    compiled ms, kernel sum, the change in %, and the worst numerics error."""
    out: list[str] = []
    shapes = shapes or {}
    for key in dict.fromkeys([*shapes, *runs]):
        k = GraphKey.parse(key)
        base, variant = str(k.original), k.variant
        if variant is None:
            continue
        so, sv = shapes.get(base) or {}, shapes.get(key) or {}
        shape = ", ".join(f"{label} {so.get(k, '-')} -> {sv.get(k, '-')}" for k, label in
                          (("fused", "scheduler nodes after fusion"), ("kernels", "kernels")) if k in sv)
        v = runs.get(key)
        if v is None:
            if shape:
                out.append(f"what if {key}: {shape} (not timed: --run times them)")
            continue
        o = runs.get(base)
        head = f"what if {key}: " + (f"{shape}; " if shape else "")
        if v.get("error"):
            out.append(f"{head}not timed ({v['error']})")
            continue
        if o is None or o.get("error") or not isinstance(o.get("compiled_ms"), (int, float)):
            out.append(f"{head}compiled {fmt_ms(v.get('compiled_ms'))} ms (the original was not timed)")
            continue
        oc, vc = o["compiled_ms"], v.get("compiled_ms")
        pct = f" ({(vc - oc) / oc * 100:+.1f}%)" if isinstance(vc, (int, float)) and oc else ""
        line = (f"{head}compiled {fmt_ms(oc)} -> {fmt_ms(vc)} ms{pct}, kernel calls timed "
                f"{len(o.get('kernels') or [])} -> {len(v.get('kernels') or [])}, kernel sum "
                f"{fmt_ms(o.get('kernel_sum_ms'))} -> {fmt_ms(v.get('kernel_sum_ms'))} ms")
        num = {} if repartitioned(key) else v.get("numerics") or {}
        if repartitioned(key):
            line += f"; {REPARTITIONED}"
        for which, label in (("vs_original", "original"), ("vs_eager", "eager")):
            a, r = worst_error(num.get(which))
            if a is not None:
                line += f"; vs {label}: max abs {_err(a)}, max rel {_err(r)}"
        out.append(line)
        out += ["  " + x for x in judgement_lines(o, v)]
    return out


def judgement_lines(o: dict[str, Any] | None, v: dict[str, Any] | None,
                    labels: tuple[str, str] = ("original", "variant")) -> list[str]:
    """What a comparison of an original's run ``o`` and its variant's ``v`` can be trusted to say:
    each side's verdict where it is not reliable, the eager reference's move (the machine's, not the
    setting's: session.trust.machine_moved), the interleaved rounds' effect of the setting (the variant's
    ``interleaved``) and whether the variant was compiled static at the original's size hints."""
    out = [f"{label} timing NOT RELIABLE: {why}" for label, r in zip(labels, (o, v))
           if (why := trust.unreliable(r))]
    moved = trust.machine_moved(o, v)
    if moved:
        out.append(moved)
    il = trust.interleaved_text(v)
    if il:
        out.append(il)
    if ((v or {}).get("interleaved") or {}).get("shapes"):
        out.append(f"shapes: {v['interleaved']['shapes']}")
    return out


def _tensor_shapes(stop: dict[str, Any] | None, where: str) -> list[list[str]]:
    graph = (stop or {}).get("post_grad" if where == "aot" else "graph") or {}
    return [[str(x) for x in n.get("shape") or []] for n in graph.get("nodes") or []
            if isinstance(n, dict) and n.get("op") == "placeholder" and n.get("shape")]


def static_variant_note(key_b: str, stops_a: dict[str, Any], stops_b: dict[str, Any]) -> str | None:
    """When graph ``key_b`` is a what-if variant and its original (``stops_a``: stage -> stop) has
    symbolic sizes, the sentence the diff puts at its top: the variant was compiled static at the original's
    size hints (``s27=24`` where the post-grad inputs line up), so every level shows that specialization
    besides the setting's effect.  None otherwise."""
    if GraphKey.parse(key_b).variant is None:
        return None
    sa = _tensor_shapes(stops_a.get("aot"), "aot") or _tensor_shapes(stops_a.get("dynamo"), "dynamo")
    syms = sorted({d for s in sa for d in s if not d.lstrip("-").isdigit()})
    if not syms:
        return None
    sb = _tensor_shapes(stops_b.get("aot"), "aot")
    hints: dict[str, str] = {}
    if len(sa) == len(sb):
        for x, y in zip(sa, sb):
            for d, h in zip(x, y):
                if d in syms and h.isdigit():
                    hints.setdefault(d, h)
    at = ", ".join(f"{s}={hints[s]}" if s in hints else s for s in syms)
    return (f"B is a what-if variant compiled STATIC at A's size hints ({at}), while A is dynamic: every level "
            "below shows that specialization as well as the setting's effect (sizes, guards, kernels and times "
            "of a static graph)")
