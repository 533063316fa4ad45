"""REPORT.md's sections for one session, each a function from the recorded messages to its Markdown lines."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from inductor_step.session.format import ALL_STAGES, GraphKey
from inductor_step.session import trust
from inductor_step.session.store import fmt_ms as _ms
from inductor_step.session.text import break_reasons
from inductor_step.session.report.common import PathScrubber, REPORT_NAME, _cell, _fence, _one_line, error_graph, report_key, shorten_traceback


@dataclass
class ReportFacts:
    """What several sections read from one session's messages: its header, its ``error`` messages,
    its ``run`` messages keyed ``(compile id, graph kind)`` (the last of each), its ``done`` message
    (None while the script ran on), and per compile id the most graph breaks and recompile reasons
    any of its graphs' dynamo stops lists (what-if variants left out: theirs are their original's)."""

    header: dict[str, Any]
    errors: list[dict[str, Any]]
    runs: dict[GraphKey, dict[str, Any]]
    done: dict[str, Any] | None
    breaks: dict[str, int] = field(default_factory=dict)
    recompiles: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, msgs: list[dict[str, Any]], graphs: dict) -> "ReportFacts":
        """Read ``msgs`` (a session, header first) and ``graphs`` (graph key -> stage -> stop)."""
        runs: dict[GraphKey, dict[str, Any]] = {}
        for m in msgs:
            if m.get("type") == "run":
                runs[report_key(m)] = m
        facts = cls(header=msgs[0], errors=[m for m in msgs if m.get("type") == "error"], runs=runs,
                    done=next((m for m in msgs if m.get("type") == "done"), None))
        for key, stages in graphs.items():
            dyn = stages.get("dynamo") or {}
            if key.variant:  # a what-if variant's dynamo stop is its original's, without the reasons
                continue
            cid = key.compile_id
            if isinstance(dyn.get("graph_breaks"), list):
                facts.breaks[cid] = max(facts.breaks.get(cid, 0), len(dyn["graph_breaks"]))
            if isinstance(dyn.get("recompile_reasons"), list):
                facts.recompiles[cid] = max(facts.recompiles.get(cid, 0), len(dyn["recompile_reasons"]))
        return facts


def title_lines(facts: ReportFacts, graphs: dict, session_name: str, scrub: PathScrubber) -> list[str]:
    """The report's heading (the first error, or how many graphs compiled) and the line naming the session."""
    err = facts.errors[0] if facts.errors else None
    if err:
        where = f" in {err.get('stage')}" + (f" of {error_graph(err)}" if err.get("compile_id") else "")
        title = f"torch.compile: {_one_line(scrub.text(str(err.get('message', 'error'))), 160)}{where}"
    else:
        title = f"torch.compile: {len(graphs)} graph(s) compiled" + (", timed" if facts.runs else "")
    return [f"### {title}", "",
            f"Made with `inductor-step report` from the recorded session `{session_name}` "
            f"(format `{facts.header.get('format')}`).", ""]


def environment_lines(h: dict[str, Any], scrub: PathScrubber) -> list[str]:
    """"Versions and device": the header's torch, triton, python, CUDA, device, torchrun rank and the
    settings inductor-step set, as a two-column table."""
    L = ["#### Versions and device", "", "| | |", "|---|---|"]
    for label, key in (("torch", "torch"), ("triton", "triton"), ("python", "python"), ("CUDA (torch build)", "cuda")):
        v = h.get(key) if h.get(key) is not None else 'not installed' if key == 'triton' else '-'
        if key == "triton" and h.get("triton") and not h.get("cuda") and h.get("device") == "cpu":
            v = f"{v} (installed, unused: torch is a CPU build)"  # not what compiled these kernels
        L.append(f"| {label} | {_cell(v)} |")
    L.append(f"| device | {_cell(h.get('device') or '?')} |")
    L.append(f"| device_name | {_cell(h.get('device_name') or '-')} |")
    dist = h.get("distributed")
    if isinstance(dist, dict):  # one rank of a torchrun job
        L.append(f"| torchrun rank | {_cell(dist.get('rank', '?'))} of world size {_cell(dist.get('world_size', '?'))}"
                 f" (local rank {_cell(dist.get('local_rank', '?'))}) |")
        if dist.get("note"):
            L.append(f"| collective timeout | {_cell(_one_line(scrub.text(str(dist['note']))))} |")
    settings = h.get("settings")
    if isinstance(settings, dict) and settings:
        L.append("| settings (set by inductor-step) | " + _cell(", ".join(f"`{k}={v}`" for k, v in settings.items())) + " |")
    L.append("")
    return L


def command_lines(h: dict[str, Any], scrub: PathScrubber) -> list[str]:
    """"Command": the header's script and arguments as one shell line (paths scrubbed)."""
    script = h.get("script")
    argv = h.get("argv") if isinstance(h.get("argv"), list) else []
    L = ["#### Command", ""]
    if script:
        L.append(_fence(scrub.text(shlex.join(["python", str(script)] + [str(a) for a in argv])), "bash"))
        L.append("")
        note = f": {_one_line(h['note'])}" if h.get("note") else ""
        L.append(f"(run under `inductor-step`{note})")
    else:
        L.append("(the session header names no script)")
    L.append("")
    return L


def stood_lines(stood: dict | None, scrub: PathScrubber) -> list[str]:
    """"Where I stood": the graph, stage and selection of ``stood``; no lines without it."""
    if not stood:
        return []
    parts = []
    if stood.get("graph"):
        parts.append(f"graph `{stood['graph']}`")
    if stood.get("stage"):
        parts.append(f"stage `{stood['stage']}`")
    if stood.get("selection"):
        parts.append(f"selection `{scrub.text(str(stood['selection']))}`")
    return ["#### Where I stood", "", ", ".join(parts) if parts else "(nothing selected)", ""]


def error_lines(facts: ReportFacts, scrub: PathScrubber) -> list[str]:
    """"Error": each recorded error's stage, compile id, message and (folded) traceback, or "None
    recorded" with the script's exit status."""
    L = ["#### Error", ""]
    if not facts.errors:
        rc = facts.done.get("returncode") if facts.done else None
        L.append("None recorded" + (f" (the script exited with status {rc})." if rc is not None else "."))
        L.append("")
    for e in facts.errors:
        graph = error_graph(e) or "-"
        L.append(f"- stage: **{e.get('stage', '?')}**")
        L.append(f"- compile id: **{e.get('compile_id') or '-'}** (graph: {graph})")
        L.append(f"- message: `{_one_line(scrub.text(str(e.get('message', ''))), 300).replace('`', chr(39))}`")
        L.append("")
        tb = e.get("traceback")
        if isinstance(tb, str) and tb.strip():
            short, truncated = shorten_traceback(scrub.text(tb))
            L.append("<details><summary>Traceback" + (" (shortened; the full one is in the session file)" if truncated else "")
                     + "</summary>")
            L += ["", _fence(short, "text"), "", "</details>", ""]
    return L


def _stages_reached(facts: ReportFacts, key: GraphKey, stages: dict) -> str:
    """The stages graph ``key`` reached, joined by arrows: ``run`` when timed, the failed stage in bold."""
    reached = [s for s in ALL_STAGES if s in stages]
    if key in facts.runs:
        reached.append("run")
    failed = next((e for e in facts.errors if e.get("compile_id") == key.compile_id
                   and (e.get("graph_kind") is None or report_key(e) == key)), None)
    if failed and reached and reached[-1] == failed.get("stage"):
        reached[-1] = f"**{reached[-1]} (failed)**"
    elif failed:
        reached.append(f"**{failed.get('stage')} (failed)**")
    return " → ".join(reached)


def graphs_lines(facts: ReportFacts, graphs: dict, scrub: PathScrubber) -> list[str]:
    """"Graphs compiled": one table row per graph (stages reached, kernel count, graph breaks and
    recompile reasons of its frame), a what-if variant named as one; the ``done`` message's word when none compiled."""
    L = ["#### Graphs compiled", ""]
    if graphs:
        L.append("| graph | stages reached | kernels | graph breaks | recompile reasons |")
        L.append("|---|---|---|---|---|")
        for key, stages in graphs.items():
            stages_txt = _stages_reached(facts, key, stages)
            kernels = (stages.get("codegen") or {}).get("kernels")
            n_k = str(len(kernels)) if isinstance(kernels, list) else "-"
            if key.variant:  # a what-if variant is its own row, named as one
                L.append(f"| `{key}` (what-if variant of `{key.original}`: its post-grad graph recompiled with "
                         f"`{key.variant}`) | {stages_txt} | {n_k} | - | - |")
                continue
            cid = key.compile_id
            L.append(f"| `{key}` | {stages_txt} | {n_k} | {facts.breaks.get(cid, 0)} | {facts.recompiles.get(cid, 0)} |")
    else:
        msg = (facts.done or {}).get("message")
        L.append(_one_line(scrub.text(msg)) if msg else "No graph was compiled.")
    L.append("")
    return L


def why_lines(graphs: dict, scrub: PathScrubber, done: dict[str, Any] | None = None) -> list[str]:
    """"Graph breaks and recompiles": why each graph break and recompile happened, in Dynamo's words
    (once per compile id), then the breaks of frames that gave no graph (the dynamo stops' ``breaks_before`` and
    ``done``'s ``breaks_after``); no lines when there were none."""
    why: list[str] = []
    graphless = [b for st in graphs.values() for b in ((st.get("dynamo") or {}).get("breaks_before") or [])]
    graphless += list((done or {}).get("breaks_after") or [])
    seen_cids: set[str] = set()
    for key, stages in graphs.items():
        dyn = stages.get("dynamo") or {}
        cid = key.compile_id
        if cid in seen_cids or key.variant:
            continue
        seen_cids.add(cid)
        for b in break_reasons(dyn):
            why.append(f"- graph break ending `{cid}`" + (f" at `{scrub.text(b['where'])}`" if b["where"] else "")
                       + f": {_one_line(scrub.text(b['reason']))}")
            if b["explanation"]:
                why.append(f"  - explanation: {_one_line(scrub.text(b['explanation']), 600)}")
            if b["hint"]:
                why.append(f"  - hint: {_one_line(scrub.text(b['hint']), 600)}")
        # every graph of the frame's compile (forward, backward, parts) carries the reasons: the first that has them
        reasons = next((st.get("dynamo", {}).get("recompile_reasons") for k, st in graphs.items()
                        if k.compile_id == cid and not k.variant and (st.get("dynamo") or {}).get("recompile_reasons")), [])
        for r in reasons or []:
            why.append(f"- recompile `{cid}`: {_one_line(scrub.text(str(r)), 600)}")
    seen: set[tuple[str, str]] = set()
    for gb in graphless:  # each once: a forward and its backward share their dynamo stop
        if not isinstance(gb, dict) or (str(gb.get("compile_id")), str(gb.get("text"))) in seen:
            continue
        seen.add((str(gb.get("compile_id")), str(gb.get("text"))))
        b = break_reasons({"graph_breaks": [str(gb.get("text", ""))]})[0]
        why.append(f"- graph break in `{gb.get('compile_id')}`, which gave no graph (its ops ran eagerly)"
                   + (f" at `{scrub.text(b['where'])}`" if b["where"] else "") + f": {_one_line(scrub.text(b['reason']))}")
    return ["#### Graph breaks and recompiles", ""] + why + [""] if why else []


def _run_row(key: GraphKey, r: dict[str, Any]) -> str:
    """One row of the run timings table: compiled and eager ms, speedup, kernel sum, slowest kernel, verdict."""
    c, e_ = r.get("compiled_ms"), r.get("eager_ms")
    sp = f"{e_ / c:.2f}x" if isinstance(c, (int, float)) and isinstance(e_, (int, float)) and c > 0 else "-"
    ks = [k for k in (r.get("kernels") or []) if isinstance(k, dict) and isinstance(k.get("median_ms"), (int, float))]
    slow = max(ks, key=lambda k: k["median_ms"], default=None)
    slow_txt = f"`{slow.get('name')}` {slow['median_ms']:.4f} ms" if slow else "-"
    variant = " (what-if variant)" if key.variant else ""
    verdict = "failed: " + _one_line(str(r["error"]), 120) if r.get("error") else trust.verdict_word(r)
    return (f"| `{key}`{variant} | {_ms(c)} | {_ms(e_)} | {sp} | {_ms(r.get('kernel_sum_ms'))} | "
            f"{slow_txt} | {'**' + verdict + '**' if verdict == 'NOT RELIABLE' else verdict} |")


def _script_call_lines(runs: dict[GraphKey, Any]) -> list[str]:
    """The script's compiled calls timed whole (``script_call``, session.script_call), one line each: none in a
    session recorded before that figure."""
    from inductor_step.session.script_call import script_call_lines  # noqa: PLC0415

    seen: dict[str, str] = {}
    for r in runs.values():
        lines = script_call_lines(r)
        fig = r.get("script_call") or {}
        if lines:
            seen.setdefault(f"{fig.get('name')} {fig.get('graphs')}", lines[0].replace("script's call   ", "", 1))
    if not seen:
        return []
    return (["The script's calls, timed whole (what torch.compile returned, with its own last arguments, against the "
             "module or function itself):", ""] + [f"- {_one_line(x, 600)}" for x in seen.values()] + [""])


def run_timings_lines(facts: ReportFacts) -> list[str]:
    """"Run timings": a row per timed graph, the trust notes (:func:`trust.report_lines`), collectives
    left untimed, the device and timing methods; no lines when nothing was timed."""
    runs = facts.runs
    if not runs:
        return []
    L = ["#### Run timings", ""]
    methods = sorted({str(r.get("method")) for r in runs.values() if r.get("method")})
    L.append("| graph | compiled ms | eager ms | speedup | kernel sum ms | slowest kernel | verdict |")
    L.append("|---|---|---|---|---|---|---|")
    L += [_run_row(key, r) for key, r in runs.items()]
    L.append("")
    L += _script_call_lines(runs)
    L.extend(_one_line(x, 600) if x else x
             for x in trust.report_lines({str(key): r for key, r in runs.items()}))
    colls = [f"`{key}`" for key, r in runs.items() if r.get("collectives_stubbed")]
    if colls:
        L.append(f"Collectives, not timed: the times of {', '.join(colls)} exclude their collective calls (each ran "
                 "as a local stand-in; timing a collective needs every rank running it together).")
        L.append("")
    dev = facts.header.get("device") or "?"
    L.append(f"Device `{next(iter(runs.values())).get('device', dev)}`; method: {', '.join(methods) or '?'}.")
    L.append("")
    return L


def compile_time_memory_lines(msgs: list[dict[str, Any]], scrub: PathScrubber) -> list[str]:
    """"Compile time" (:func:`inductor_step.session.compile_time.report_section`) and "Memory"
    (:func:`inductor_step.session.memory_text.report_section`), each one entry, when the session has them."""
    from inductor_step.session.compile_time import report_section  # noqa: PLC0415
    from inductor_step.session.memory_text import report_section as memory_section  # noqa: PLC0415
    from inductor_step.session.store import Store  # noqa: PLC0415

    L: list[str] = []
    ctime = report_section(Store.of([m for m in msgs if m.get("type") in ("compile_time", "stop")]))
    if ctime:
        L.append(scrub.text(ctime.replace("## Compile time", "#### Compile time", 1)))
    memory = memory_section(Store.of([m for m in msgs if m.get("type") == "stop"]))
    if memory:
        L.append(scrub.text(memory.replace("## Memory", "#### Memory", 1)))
    return L


def repro_lines(repros: list[tuple[str, str]], fallbacks: list[tuple[str, str]]) -> list[str]:
    """"Minimal repro": each ``(graph, file)`` of ``repros`` (Inductor's ``fx_graph_runnable``) and of
    ``fallbacks`` (post-grad graphs, not runnable), or what to do without either."""
    L = ["#### Minimal repro", ""]
    for label, name in repros:
        L.append(f"- `{name}`: Inductor's `fx_graph_runnable` for `{label}`: `python {name}`")
    if fallbacks:
        if not repros:
            L.append("The session holds no `fx_graph_runnable` (Inductor's standalone repro), so there is no "
                     "runnable repro in this bundle. The post-grad graphs are included for reading; they are "
                     "**not runnable**:")
        else:
            L.append("Graphs without an `fx_graph_runnable` (post-grad graph only, **not runnable**):")
        for label, name in fallbacks:
            L.append(f"- `{name}`: post-grad graph of `{label}`")
    if not repros and not fallbacks:
        L.append("The session holds no `fx_graph_runnable` and no post-grad graph; run the script itself to reproduce.")
    L.append("")
    return L


def files_lines(session_name: str, repros: list[tuple[str, str]], fallbacks: list[tuple[str, str]],
                shots: list[str], include_paths: bool) -> list[str]:
    """"Files in this bundle": REPORT.md, the session, the repro files and screenshots, and what the
    bundle says about paths (kept, or shown as ``<path>/name``)."""
    L = ["#### Files in this bundle", "", f"- `{REPORT_NAME}`: this text",
         f"- `{session_name}`: the whole recorded session (JSON lines, `inductor-step --open {session_name}` "
         "views it without torch)"]
    L += [f"- `{name}`" for _label, name in repros]
    L += [f"- `{name}` (not runnable)" for _label, name in fallbacks]
    L += [f"- `screenshots/{s}`" for s in shots]
    L.append("")
    if shots:
        L += ["Screenshots: drag the files in `screenshots/` into the issue to attach them.", ""]
    if not include_paths:
        L.append(f"_Paths outside the working directory are shown as `<path>/name` above. `{session_name}` "
                 "and the repro files are included as recorded and contain absolute paths "
                 "(script, Inductor cache); review them before attaching. No environment variables are included._")
    else:
        L.append("_Absolute paths are included as recorded. No environment variables are included._")
    L.append("")
    return L
