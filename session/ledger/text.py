"""The ledgers as text: roofs, the summary `inductor-step ledger` prints and the report's markdown section."""

from __future__ import annotations

from typing import Any

from inductor_step.session.fusion_fix import fix_text, library_call, max_autotuned
from inductor_step.session.paths import cut_words, short_path
from inductor_step.session.trust import not_reliable_lines
from inductor_step.session.ledger.joins import _timed, fusion_rows, line_rows, roofline_rows
from inductor_step.session.ledger.roofs import MEASURED, SPLIT_RULE, memory_roof
from inductor_step.session.ledger.rows import FusionRow


# ----------------------------------------------------------------------------- text

def _library_text(session: Any, rows: list[FusionRow]) -> str:
    """The library-call sentence for ``rows`` (fusion rows with a library call on a side): without the
    max_autotune advice when every graph among them was compiled with it."""
    graphs = {r.graph for r in rows}
    tuned = bool(graphs) and all(max_autotuned((session.stop_for(g, "dynamo") or {}).get("compiled_with"))
                                 for g in graphs)
    return library_call({"config": {"max_autotune": True}} if tuned else None)


def fmt(v: Any, spec: str = ".4f", none: str = "-") -> str:
    return none if v is None else format(v, spec)


def _roofs_kept(roofs: dict[str, Any]) -> str:
    """Where the measured roofs were kept: read from the cache file, stored there, or (a CPU measured while other
    processes held its cores: tracer.timing.machine keeps no such figure) not stored (the ledger said
    'stored in' a file that held ``{}``)."""
    if roofs.get("cached"):
        return f"measured roofs read from {roofs['cache']}"
    load, cpus = roofs.get("load"), roofs.get("cpus")
    if isinstance(load, (int, float)) and isinstance(cpus, (int, float)) and cpus and load > 0.5 * cpus:
        return (f"measured roofs not stored in {roofs['cache']}: other processes held the cores while they were "
                f"measured (load {load:.1f} on {cpus:g} CPUs), so they are measured again next time")
    return f"measured roofs stored in {roofs['cache']}"


def roofs_text(session: Any) -> str:
    """The roofs each timed graph was priced against, every one with its source (missing ones say why)."""
    out = []
    seen = set()
    for key, run in _timed(session):
        roofs = run.get("roofs") or {}
        bw, src = memory_roof(run)
        line = f"memory roof used: {fmt(bw, '.1f')} GB/s ({src})"
        if (line, str(roofs.get("device"))) in seen:
            continue
        seen.add((line, str(roofs.get("device"))))
        out.append(f"{key} on {roofs.get('device') or run.get('device')}:")
        out.append("  " + line)
        for kind, r in (roofs.get("memory_gbps") or {}).items():
            out.append(f"  memory {kind:12} {fmt(r.get('value'), '.1f'):>9} GB/s   {r.get('source')}")
        for dt, kinds in (roofs.get("compute_tflops") or {}).items():
            for kind, r in kinds.items():
                out.append(f"  {dt:9} {kind:12} {fmt(r.get('value'), '.3f'):>9} TFLOP/s {r.get('source')}")
        if roofs.get("missing"):
            out.append("  " + roofs["missing"])
        if roofs.get("cache"):
            out.append("  " + _roofs_kept(roofs))
    return "\n".join(out) or "no timed graph"


def summary(session: Any, top: int = 5) -> str:
    """The short summary ``--headless --run`` prints: totals and the top rows of each ledger."""
    rr = roofline_rows(session)
    if not rr:
        return "ledger: no timed kernels"
    priced = [r for r in rr if r.roofline_ms is not None]
    untimed = [r for r in rr if r.measured_ms is None]
    meas = sum(r.measured_ms for r in rr if r.measured_ms is not None)
    roof = sum(r.roofline_ms for r in priced)
    wasted = sum(r.wasted_ms for r in priced)
    out = [f"ledger: {len(rr)} kernel calls, {meas:.4f} ms measured ({MEASURED.split(':')[0]}), "
           f"{len(priced)} priced: roofline {roof:.4f} ms, wasted {wasted:.4f} ms"]
    out += [f"  ! {line}" for line in not_reliable_lines(session)]
    if untimed:
        n_coll = sum(1 for r in untimed if r.missing.startswith("collective"))
        out.append(f"  {n_coll} collective call(s) not timed" + (f" and {len(untimed) - n_coll} other(s)"
                                                                 if len(untimed) > n_coll else "")
                   + ": left out of every sum here (" + untimed[0].missing + ")")
    run0 = _timed(session)[0][1]
    bw, src = memory_roof(run0)
    out.append(f"  memory roof {fmt(bw, '.1f')} GB/s: {src}")
    ladder = (run0.get("roofs") or {}).get("memory_ladder") or []
    if ladder:
        out.append("  CPU copy bandwidth by size (a kernel that fits the cache-resident sizes is held to the fastest of them): "
                   + ", ".join(f"{e['bytes']:,} B {e['value']:.1f} GB/s" for e in ladder))
    comp = ((run0.get("roofs") or {}).get("compute_tflops") or {})
    for dt, kinds in comp.items():
        m = kinds.get("measured") or {}
        if m.get("value"):
            out.append(f"  {dt} compute roof {m['value']:.4g} TFLOP/s: {m['source']}")
    out.append("  most wasted kernels:")
    for r in priced[:top]:
        out.append(f"    {r.wasted_ms:9.4f} ms wasted  {r.pct_of_roof:5.1f}% of roof  {r.bound:7} "
                   f"{r.graph} {r.name}")
    out.append("  most wasted user lines (" + SPLIT_RULE.split(";")[0] + "):")
    sp = lambda line: short_path(line, getattr(session, "script_dir", None)) or line  # noqa: E731
    for r in line_rows(session)[:top]:
        eager = f"{r.eager_ms:9.4f} ms eager" if r.eager_ms is not None else "   eager -"
        if r.measured_ms is None:
            out.append(f"    {'not timed':>9}                                     {eager}  {sp(r.line)}  "
                       f"({len(r.untimed)} collective call(s), not timed)")
            continue
        out.append(f"    {r.wasted_ms:9.4f} ms wasted  {r.measured_ms:9.4f} ms measured  {eager}  {sp(r.line)}"
                   + ("  SLOWER THAN EAGER (by >10%)" if r.slower_than_eager else "")
                   + ("  [timing NOT RELIABLE]" if r.unreliable else "")
                   + (f"  (+{len(r.untimed)} collective call(s), not timed)" if r.untimed else ""))
    fr = fusion_rows(session)
    act = [r for r in fr if not r.library]
    out.append(f"  missed fusions: {len(act)} buffers written by one kernel and read back by another that Inductor "
               "could have fused; those with a setting to try first, then costliest:")
    for r in act[:top]:
        out.append(f"    {fmt(r.cost_ms, '9.4f')} ms  {fmt(r.bytes, 'd')} B  {r.graph} {r.buffer}: "
                   f"{r.producer} -> {r.consumer}  ({cut_words(r.verdict, 90)}; {fix_text(r)})")
    if len(fr) > len(act):
        out.append(f"  never fusable as compiled: {len(fr) - len(act)} more such buffers, each with a library call on "
                   f"a side: {_library_text(session, [r for r in fr if r.library])}")
    return "\n".join(out)


def report_markdown(session: Any, top: int = 10) -> str:
    """REPORT.md's section: the top ``top`` rows of each ledger as tables, with the rules and roofs."""
    rr = roofline_rows(session)
    if not rr:
        return ""
    out = ["#### Where the time goes (ledger)", "", f"Measured: {MEASURED}. Wasted = measured - roofline time, "
           "roofline time = max(bytes / bandwidth, FLOPs / peak).", "", "```", roofs_text(session), "```", "",
           *([f"{sum(1 for r in rr if r.measured_ms is None)} kernel call(s) not timed, left out of every sum "
              f"below: {next(r.missing for r in rr if r.measured_ms is None)}", ""]
             if any(r.measured_ms is None for r in rr) else []),
           *[f"> **{line}**" for line in not_reliable_lines(session)], "",
           "##### Roofline per kernel (most wasted first)", "",
           "| graph | kernel | measured ms | roofline ms | wasted ms | % of roof | bound | GB | FLOPs | bytes from |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rr[:top]:
        out.append(f"| {r.graph} | `{r.name}` | {fmt(r.measured_ms)} | {fmt(r.roofline_ms)} | "
                   f"{fmt(r.wasted_ms)} | {fmt(r.pct_of_roof, '.1f')} | {r.bound or r.missing} | "
                   f"{fmt(r.gb, '.3g')} | {fmt(r.flops, '.3g')} | {r.gb_source} |")
    out += ["", f"##### Wasted time by user line ({SPLIT_RULE})", "",
            "eager ms: the line's post-grad FX nodes run alone by torch.fx.Interpreter (missing where not recorded).", "",
            "| line | measured ms | roofline ms | wasted ms | eager ms | kernels |", "|---|---|---|---|---|---|"]
    for r in line_rows(session)[:top]:
        out.append(f"| `{short_path(r.line, getattr(session, 'script_dir', None))}` | {fmt(r.measured_ms)} | {fmt(r.roofline_ms)} | {fmt(r.wasted_ms)} | "
                   f"{fmt(r.eager_ms)}{' (slower than eager)' if r.slower_than_eager else ''}"
                   f"{' (timing NOT RELIABLE)' if r.unreliable else ''} | "
                   f"{'; '.join(r.kernels[:4])}{' …' if len(r.kernels) > 4 else ''}"
                   + (f" ({len(r.untimed)} not timed: {r.untimed[0]})" if r.untimed else "") + " |")
    fr = fusion_rows(session)
    act, lib = [r for r in fr if not r.library], [r for r in fr if r.library]
    out += ["", "##### Missed fusions Inductor could have made, priced (a buffer written by one kernel and read back "
            "by another; those with a setting to try first)", "",
            "| graph | buffer | producer -> consumer | bytes | cost ms | lines | Inductor's reason | to try |",
            "|---|---|---|---|---|---|---|---|"]
    for r in act[:top]:
        lines = ", ".join(dict.fromkeys(short_path(x, getattr(session, "script_dir", None)) or x
                                        for x in r.producer_lines + r.consumer_lines))
        out.append(f"| {r.graph} | {r.buffer} | `{r.producer}` -> `{r.consumer}` | {fmt(r.bytes, 'd')} "
                   f"| {fmt(r.cost_ms)} | {lines} | {r.verdict} | {fix_text(r)} |")
    if lib:
        out += ["", f"##### Never fusable as compiled ({len(lib)}): {_library_text(session, lib)}", "",
                "| graph | buffer | producer -> consumer | bytes | cost ms |", "|---|---|---|---|---|"]
        out += [f"| {r.graph} | {r.buffer} | `{r.producer}` -> `{r.consumer}` | {fmt(r.bytes, 'd')} | "
                f"{fmt(r.cost_ms)} |" for r in lib[:top]]
    return "\n".join(out) + "\n"
