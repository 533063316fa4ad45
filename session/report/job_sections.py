"""A job's REPORT.md sections, each a function from the ranks' views to its Markdown lines."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from typing import Any

from inductor_step.session.format import GraphKey
from inductor_step.session.store import fmt_ms as _ms
from inductor_step.session.report.common import PathScrubber, REPORT_NAME, _cell, _fence, _one_line, error_graph, report_key


def _short_op(op: str) -> str:
    """``torch.ops._c10d_functional.all_reduce_.default`` -> ``all_reduce_``."""
    parts = op.split(".")
    return parts[-2] if len(parts) >= 2 and parts[-1] == "default" else op


def _graph_cell(f: dict[str, Any] | None) -> str:
    """One rank's cell of the graphs table from its graph facts: the last stage reached (or the failed
    one, bold), its kernel and collective call counts; a dash when the rank lacks the graph."""
    if f is None:
        return "—"
    last = f["reached"][-1] if f["reached"] else "-"
    txt = f"**{f['failed']} (failed)**" if f["failed"] else last
    if f["kernels"] is not None:
        txt += f", {len(f['kernels'])} kernel(s)"
    if f["collectives"]:
        txt += f", {len(f['collectives'])} collective call(s)"
    return txt


def _comparison(views: list[Any]) -> Any:
    """The ranks' comparison (:func:`inductor_step.session.ranks.compare_ranks`, what pane 0 shows) of
    the ranks whose sessions could be read, with the job file's states and messages."""
    from inductor_step.session.ranks import compare_ranks  # noqa: PLC0415
    from inductor_step.session.store import Store  # noqa: PLC0415

    sessions = {v.rank: Store.of(v.msgs) if v.msgs is not None else None for v in views}
    return compare_ranks(sessions, states={v.rank: v.entry.get("state") for v in views if v.entry.get("state")},
                         messages={v.rank: v.entry.get("message") for v in views if v.entry.get("message")})


def _times_cell(g: Any) -> str:
    """Whether one graph's kernel times agree across ranks (pane 0's rule: session.ranks.TIME_RATIO)."""
    if g is None:
        return "—"
    notes = [t.line for t in g.times if t.counts or t.noise]
    notes += [f"not timed on rank {r}: {why}" for r, why in sorted(g.untimed.items())]
    return "; ".join(notes) if notes else ("agree" if g.times else "no kernel timed on two ranks")


@dataclass
class JobFacts:
    """What several sections of a job's report read: the job file (``job``), one view per rank
    (``views``: the report's ``_RankView``, rank order), the ranks' comparison, the graphs any rank
    compiled (``keys``: graph keys in first-seen order), every rank's errors
    (``errs``: ``(rank, error message)``) and the views of the ranks the job file says died."""

    job: dict[str, Any]
    views: list[Any]
    scrub: PathScrubber
    comparison: Any
    keys: list[GraphKey]
    errs: list[tuple[int, dict[str, Any]]]
    died: list[Any]

    @classmethod
    def of(cls, job: dict[str, Any], views: list[Any], scrub: PathScrubber) -> "JobFacts":
        """Gather the facts from the job file and the ranks' loaded views (compares the ranks)."""
        keys: list[GraphKey] = []
        for v in views:
            for k in v.graphs:
                if k not in keys:
                    keys.append(k)
        return cls(job, views, scrub, _comparison(views), keys,
                   [(v.rank, e) for v in views for e in v.of_type("error")],
                   [v for v in views if v.entry.get("state") == "died"])

    @property
    def ranks(self) -> list[int]:
        """The ranks, in the views' order."""
        return [v.rank for v in self.views]


def job_title_lines(jf: JobFacts, job_name: str, problems: list[str], stood: dict | None) -> list[str]:
    """The heading (ranks, which died, the first error), the line naming the job file, what the bundle
    lacks (``problems``) and where the user stood (rank, graph, stage, selection)."""
    scrub = jf.scrub
    title = f"torch.compile under torchrun: {len(jf.views)} rank(s)"
    if jf.died:
        title += ", " + ", ".join(f"rank {v.rank} died" for v in jf.died)
    if jf.errs:
        r, e = jf.errs[0]
        title += f"; rank {r}: {_one_line(scrub.text(str(e.get('message', 'error'))), 120)} in {e.get('stage')}"
    L = [f"### {title}", "",
         f"Made with `inductor-step report` from the job file `{job_name}` (format `{jf.job.get('format')}`): "
         "one recorded session per rank. Each rank's own report (versions, errors with tracebacks, graphs, "
         "repros) is `rank<N>/REPORT.md`.", ""]
    if problems:
        L += ["#### Missing from this bundle", ""] + [f"- {scrub.text(p)}" for p in problems] + [""]
    if stood:  # R in the app: the rank, graph, stage and selection on screen
        where = [f"{k} `{scrub.text(str(stood[k]))}`" for k in ("rank", "graph", "stage", "selection")
                 if stood.get(k) is not None]
        L += ["#### Where I stood", "", ", ".join(where) or "(nothing selected)", ""]
    return L


def job_lines(jf: JobFacts) -> list[str]:
    """"Job": the torchrun command line and a table of the launcher's settings, the collective timeout,
    the launcher's exit status and the ranks' torch, python and device."""
    job, views, scrub = jf.job, jf.views, jf.scrub
    # the job's ``launcher``: torch's launcher options as given (the lead's JobProcess), then the script
    cmd = ["python", "-m", "torch.distributed.run", *[str(a) for a in job.get("launcher") or []],
           str(job.get("script") or "?"), *[str(a) for a in job.get("argv") or []]]
    L = ["#### Job", "", _fence(scrub.text(shlex.join(cmd)), "bash"), "",
         "(run under `inductor-step`: torch's launcher starts our agent in every rank, which runs the script)", "",
         "| | |", "|---|---|"]
    L.append(f"| script | `{_cell(scrub.text(str(job.get('script') or '-')))}` |")
    L.append(f"| processes per node | {_cell(job.get('nproc_per_node', '-'))} |")
    L.append(f"| world size | {_cell(job.get('world_size') if job.get('world_size') is not None else '-')} |")
    stepped = job.get("stepped_rank")
    L.append(f"| stepped rank | {stepped if stepped is not None else 'none (every rank recorded without pausing)'} |")
    cto = job.get("collective_timeout_s")
    L.append("| collective timeout | " + (f"raised to {cto:g} s for the job (so that a paused rank does not kill "
                                            "the others waiting at their next collective)"
                                            if isinstance(cto, (int, float)) else "left as the script set it")
             + " |")
    lrc = job.get("launcher_returncode")
    L.append(f"| launcher exit status | {lrc if lrc is not None else '- (still running when the job file was last written)'} |")
    h0 = next((v.header for v in views if v.msgs), {})
    for label, key in (("torch", "torch"), ("python", "python"), ("device", "device")):
        vals = sorted({str(v.header.get(key)) for v in views if v.msgs})
        L.append(f"| {label} | {_cell(' / '.join(vals) if vals else h0.get(key, '-'))} |")
    L.append("")
    return L


def _process_group_note(rank: int, pg: dict[str, Any]) -> str:
    """One rank's ``process_group`` message as a line: the call, backend, size and the timeouts asked and in effect."""
    asked = pg.get("timeout_asked_s")
    got = pg.get("timeout_s")
    default = pg.get("default_s")
    return (f"- rank {rank}: `{pg.get('call', 'init_process_group')}` backend {pg.get('backend') or '?'}, "
            f"size {pg.get('world_size', '?')}; timeout: "
            + (f"{asked:g} s asked" if isinstance(asked, (int, float)) else
               "none asked" + (f" (torch's default {default:g} s)" if isinstance(default, (int, float)) else ""))
            + (f", {got:g} s in effect" if isinstance(got, (int, float)) else ""))


def ranks_lines(jf: JobFacts) -> list[str]:
    """"Ranks": a row per rank (state, pid, exit status, graphs, last stop, message, session file), then
    each rank's collective timeout note and process groups."""
    scrub = jf.scrub
    L = ["#### Ranks", "", "| rank | state | pid | exit status | graphs | last stop recorded | message | session |",
         "|---|---|---|---|---|---|---|---|"]
    for v in jf.views:
        e = v.entry
        state = str(e.get("state") or "?")
        state = f"**{state}**" if state == "died" else state
        rc = e.get("returncode")
        msg = e.get("message") or ""
        if v.problem:
            msg = (msg + "; " if msg else "") + v.problem
        sess = os.path.basename(v.session) if v.session else "-"
        L.append(f"| {v.rank} | {state} | {_cell(e.get('pid') if e.get('pid') is not None else '-')} | "
                 f"{rc if rc is not None else '-'} | {len(v.graphs) if v.msgs else '-'} | "
                 f"{_cell(v.last_stop()) if v.msgs else '-'} | {_cell(_one_line(scrub.text(msg), 300)) or '-'} | "
                 f"`{_cell(sess)}` |")
    L.append("")
    notes = []
    for v in jf.views:
        dist = v.header.get("distributed") if isinstance(v.header.get("distributed"), dict) else {}
        if dist.get("note"):
            notes.append(f"- rank {v.rank}: {_one_line(scrub.text(str(dist['note'])), 400)}")
        notes += [_process_group_note(v.rank, pg) for pg in v.of_type("process_group")]
    if notes:
        L += ["Process groups and collective timeouts, as each rank recorded them:", ""] + notes + [""]
    return L


def graphs_by_rank_lines(jf: JobFacts) -> list[str]:
    """"Graphs by rank": a row per graph with each rank's cell and whether the ranks agree, then where
    the ranks diverge (the comparison's divergences)."""
    views, ranks, comparison = jf.views, jf.ranks, jf.comparison
    L = ["#### Graphs by rank", ""]
    if not jf.keys:
        return L + ["No rank compiled a graph.", ""]
    L.append("| graph | " + " | ".join(f"rank {r}" for r in ranks) + " | ranks agree? |")
    L.append("|---|" + "---|" * len(ranks) + "---|")
    for k in jf.keys:
        facts = {v.rank: v.graph_facts(k) for v in views if v.msgs is not None}
        cells = [(_graph_cell(facts[v.rank]) if v.msgs is not None else "(no session)") for v in views]
        g = comparison.graph(str(k))
        L.append(f"| `{k}` | " + " | ".join(cells) + f" | {_cell(g.summary) if g else '—'} |")
    L += ["", "Compared level by level as pane 0 compares them (`session/ranks/`): Dynamo graph, post-grad graph, "
          "IR buffers, scheduler nodes and fusions, kernels; where the ranks diverge:", ""]
    L += [f"- {_cell(d.line)}" for d in comparison.divergences] or ["- nowhere"]
    L.append("")
    return L


def collectives_lines(jf: JobFacts) -> list[str]:
    """"Collectives in the compiled graphs": each rank's collective calls per graph, in its wrapper's order;
    no lines when none."""
    coll: list[str] = []
    for k in jf.keys:
        for v in jf.views:
            f = v.graph_facts(k) if v.msgs is not None else None
            if f and f["collectives"]:
                coll.append(f"- `{k}` rank {v.rank}: " + " → ".join(f"`{_short_op(o)}`" for o in f["collectives"]))
    if not coll:
        return []
    return ["#### Collectives in the compiled graphs", "", "In the order each rank's wrapper calls them:", ""] + coll + [""]


def _timing_cell(m: dict[str, Any] | None, scrub: PathScrubber) -> str:
    """One rank's cell of the run timings table from its ``run`` message (None: not timed there)."""
    if m and m.get("error") and not isinstance(m.get("compiled_ms"), (int, float)):
        return f"not timed: {_cell(_one_line(scrub.text(str(m['error'])), 120))}"
    coll = (m or {}).get("collectives_stubbed") or []
    return (f"{_ms(m.get('compiled_ms'))} ms, kernels {_ms(m.get('kernel_sum_ms'))} ms"
            + (f" ({len(coll)} collective call(s) not timed, left out)" if coll else "")
            if m else "—")


def timings_by_rank_lines(jf: JobFacts) -> list[str]:
    """"Run timings by rank": each timed graph's compiled and kernel-sum ms on every rank and whether the
    kernels' times agree; no lines when no rank was timed."""
    ranks, comparison = jf.ranks, jf.comparison
    timed = {v.rank: {report_key(m): m for m in v.of_type("run")} for v in jf.views}
    tkeys = [k for k in jf.keys if any(k in t for t in timed.values())]
    if not tkeys:
        return []
    methods = sorted({str(m.get("method")) for t in timed.values() for m in t.values() if m.get("method")})
    L = ["#### Run timings by rank", "",
         f"Each rank's `run` (method: {', '.join(methods) or '?'}): the compiled graph's ms and the sum of its "
         f"kernels' median ms; a kernel whose median differs by more than {comparison.time_ratio:g}x between "
         "ranks (with their p20..p80 ranges apart) is named.", "",
         "| graph | " + " | ".join(f"rank {r}" for r in ranks) + " | ranks agree? |",
         "|---|" + "---|" * len(ranks) + "---|"]
    for k in tkeys:
        cells = [_timing_cell(timed.get(r, {}).get(k), jf.scrub) for r in ranks]
        L.append(f"| `{k}` | " + " | ".join(cells) + f" | {_cell(_times_cell(comparison.graph(str(k))))} |")
    L.append("")
    return L


def job_errors_lines(jf: JobFacts) -> list[str]:
    """"Errors": each dead rank's message and last stop, then every rank's errors (stage, graph, message)."""
    scrub = jf.scrub
    L = ["#### Errors", ""]
    if not jf.errs and not jf.died:
        L += ["None recorded on any rank.", ""]
    for v in jf.died:
        L.append(f"- rank {v.rank} **died**: {_one_line(scrub.text(str(v.entry.get('message') or 'no message')), 400)}"
                 + (f" (last stop recorded: {v.last_stop()})" if v.msgs else ""))
    for r, e in jf.errs:
        graph = error_graph(e) or "-"
        L.append(f"- rank {r}: stage **{e.get('stage', '?')}**, graph `{graph}`: "
                 f"`{_one_line(scrub.text(str(e.get('message', ''))), 300).replace('`', chr(39))}` "
                 f"(traceback in `rank{r}/REPORT.md`)")
    if jf.errs or jf.died:
        L.append("")
    return L


def diffs_lines(jf: JobFacts, diffs: dict[tuple[int, str], str] | None) -> list[str]:
    """The diff view (``inductor-step diff``) of the first rank against each other rank, folded:
    ``diffs`` maps ``(rank, DIFF file name)`` to the short diff; no lines without it."""
    if not diffs:
        return []
    first = jf.views[0].rank
    L = [f"#### Rank {first} against each other rank", "",
         "Level by level (`inductor-step diff`); the kernels' source diffs are in the `DIFF_*.txt` files.", ""]
    for (r, name), short in diffs.items():
        L += [f"<details><summary>rank {first} → rank {r} (`{name}`)</summary>", "",
              _fence(jf.scrub.text(short), "text"), "", "</details>", ""]
    return L


def launcher_lines(jf: JobFacts, launcher_tail: list[str] | None) -> list[str]:
    """The launcher log's last lines, folded, when the launcher failed (torch's launcher names the first
    failing rank there); no lines otherwise."""
    lrc = jf.job.get("launcher_returncode")
    if not launcher_tail or lrc in (0, None):
        return []
    return [f"<details><summary>The launcher's log, last {len(launcher_tail)} lines (it exited with status "
            f"{lrc})</summary>", "", _fence(jf.scrub.text("\n".join(launcher_tail)), "text"), "", "</details>", ""]


def job_files_lines(files: list[tuple[str, str]], include_paths: bool) -> list[str]:
    """"Files in this bundle": each ``(name, what)`` of ``files`` and what the bundle says about paths."""
    L = ["#### Files in this bundle", "", f"- `{REPORT_NAME}`: this text"]
    L += [f"- `{name}`: {what}" for name, what in files]
    L.append("")
    if not include_paths:
        L.append("_Paths outside the working directory are shown as `<path>/name` above. The sessions, the "
                 "launcher log and the repro files are included as recorded and contain absolute paths; review "
                 "them before attaching. No environment variables are included._")
    else:
        L.append("_Absolute paths are included as recorded. No environment variables are included._")
    L.append("")
    return L
