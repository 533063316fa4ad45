"""The report bundle of a distributed job (issue 23): every rank's state, the rank comparison, launcher tail."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import tarfile
from typing import Any

from inductor_step.session.format import ALL_STAGES
from inductor_step.session.store import fmt_ms as _ms, load_session
from inductor_step.session.report.bundle import _prepare_dir, _write, build_report
from inductor_step.session.report.common import PathScrubber, REPORT_NAME, _TB_LINE_CHARS, _cell, _fence, _graphs, _kind_of, _one_line


# --------------------------------------------------------------------------- jobs (issue 23)

def _short_op(op: str) -> str:
    """``torch.ops._c10d_functional.all_reduce_.default`` -> ``all_reduce_``."""
    parts = op.split(".")
    return parts[-2] if len(parts) >= 2 and parts[-1] == "default" else op


class _RankView:
    """What the job report says about one rank: its JobRank entry and, when readable, its session."""

    def __init__(self, rank: int, entry: dict[str, Any], session: str | None) -> None:
        self.rank = rank
        self.entry = entry
        self.session = session
        self.msgs: list[dict[str, Any]] | None = None
        self.problem: str | None = None
        self.graphs: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}

    def load(self) -> None:
        if self.session is None:
            self.problem = f"rank {self.rank}: the job file names no session for it"
            return
        try:
            if not os.path.exists(self.session):
                raise FileNotFoundError(f"no such session file: {self.session}")
            self.msgs = load_session(self.session)
            self.graphs = _graphs(self.msgs)
        except (OSError, ValueError) as e:
            self.problem = f"rank {self.rank}: {e}"

    @property
    def header(self) -> dict[str, Any]:
        return self.msgs[0] if self.msgs else {}

    def of_type(self, typ: str) -> list[dict[str, Any]]:
        return [m for m in self.msgs or [] if m.get("type") == typ and not m.get("variant")]

    def last_stop(self) -> str:
        stop = next((m for m in reversed(self.msgs or []) if m.get("type") == "stop" and not m.get("variant")), None)
        return f"{stop.get('compile_id')} {_kind_of(stop)} {stop.get('stage')}" if stop else "-"

    def graph_facts(self, key: tuple[str, str]) -> dict[str, Any] | None:
        """Stages reached, kernel names, post-grad code and collective schedule of one graph."""
        from inductor_step.session.export import collective_schedule  # noqa: PLC0415

        stages = self.graphs.get(key)
        if stages is None:
            return None
        cid, kind = key
        reached = [st for st in ALL_STAGES if st in stages]
        failed = next((e for e in self.of_type("error") if e.get("compile_id") == cid
                       and (e.get("graph_kind") is None or _kind_of(e) == kind)), None)
        cg = stages.get("codegen") or {}
        kernels = [str(k.get("name")) for k in cg.get("kernels") or [] if isinstance(k, dict)] \
            if isinstance(cg.get("kernels"), list) else None
        post = (stages.get("aot") or {}).get("post_grad")
        wrapper = cg.get("wrapper") if isinstance(cg.get("wrapper"), str) else None
        after = (stages.get("scheduling") or {}).get("after")
        return {"reached": reached, "failed": failed.get("stage") if failed else None, "kernels": kernels,
                "post_grad": post.get("code") if isinstance(post, dict) else None,
                "fusion": [(n.get("name"), n.get("type")) for n in after if isinstance(n, dict)]
                if isinstance(after, list) else None,
                "kernel_sources": [k.get("source") for k in cg.get("kernels") if isinstance(k, dict)]
                if isinstance(cg.get("kernels"), list) else None,
                "collectives": collective_schedule(wrapper) if wrapper else None}


def _graph_cell(f: dict[str, Any] | None) -> str:
    if f is None:
        return "—"
    last = f["reached"][-1] if f["reached"] else "-"
    txt = f"**{f['failed']} (failed)**" if f["failed"] else last
    if f["kernels"] is not None:
        txt += f", {len(f['kernels'])} kernel(s)"
    if f["collectives"]:
        txt += f", {len(f['collectives'])} collective call(s)"
    return txt


#: how many of the launcher log's last lines a job's REPORT.md shows when the launcher failed
_LAUNCHER_TAIL = 40
def _comparison(views: list["_RankView"]) -> Any:
    """The ranks' comparison (:func:`inductor_step.session.ranks.compare_ranks`, what pane 0 shows) of
    the ranks whose sessions could be read, with the job file's states and messages."""
    from inductor_step.session.ranks import compare_ranks  # noqa: PLC0415
    from inductor_step.session.store import Session  # noqa: PLC0415

    sessions = {v.rank: Session.of(v.msgs) if v.msgs is not None else None for v in views}
    return compare_ranks(sessions, states={v.rank: v.entry.get("state") for v in views if v.entry.get("state")},
                         messages={v.rank: v.entry.get("message") for v in views if v.entry.get("message")})


def _times_cell(g: Any) -> str:
    """Whether one graph's kernel times agree across ranks (pane 0's rule: session.ranks.TIME_RATIO)."""
    if g is None:
        return "—"
    notes = [t.line for t in g.times if t.counts or t.noise]
    notes += [f"not timed on rank {r}: {why}" for r, why in sorted(g.untimed.items())]
    return "; ".join(notes) if notes else ("agree" if g.times else "no kernel timed on two ranks")


def _render_job(job: dict[str, Any], views: list[_RankView], *, job_name: str, files: list[tuple[str, str]],
                problems: list[str], scrub: PathScrubber, include_paths: bool,
                launcher_tail: list[str] | None = None, diffs: dict[tuple[int, str], str] | None = None,
                stood: dict | None = None) -> str:
    ranks = [v.rank for v in views]
    died = [v for v in views if v.entry.get("state") == "died"]
    L: list[str] = []
    title = f"torch.compile under torchrun: {len(views)} rank(s)"
    if died:
        title += ", " + ", ".join(f"rank {v.rank} died" for v in died)
    errs = [(v.rank, e) for v in views for e in v.of_type("error")]
    if errs:
        r, e = errs[0]
        title += f"; rank {r}: {_one_line(scrub.text(str(e.get('message', 'error'))), 120)} in {e.get('stage')}"
    L += [f"### {title}", "",
          f"Made with `inductor-step report` from the job file `{job_name}` (format `{job.get('format')}`): "
          "one recorded session per rank. Each rank's own report (versions, errors with tracebacks, graphs, "
          "repros) is `rank<N>/REPORT.md`.", ""]
    if problems:
        L += ["#### Missing from this bundle", ""] + [f"- {scrub.text(p)}" for p in problems] + [""]
    if stood:  # R in the app: the rank, graph, stage and selection on screen
        where = [f"{k} `{scrub.text(str(stood[k]))}`" for k in ("rank", "graph", "stage", "selection")
                 if stood.get(k) is not None]
        L += ["#### Where I stood", "", ", ".join(where) or "(nothing selected)", ""]

    # the job
    # the job's ``launcher``: torch's launcher options as given (the lead's JobProcess), then the script
    cmd = ["python", "-m", "torch.distributed.run", *[str(a) for a in job.get("launcher") or []],
           str(job.get("script") or "?"), *[str(a) for a in job.get("argv") or []]]
    L += ["#### Job", "", _fence(scrub.text(shlex.join(cmd)), "bash"), "",
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

    # ranks
    L += ["#### Ranks", "", "| rank | state | pid | exit status | graphs | last stop recorded | message | session |",
          "|---|---|---|---|---|---|---|---|"]
    for v in views:
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
    for v in views:
        dist = v.header.get("distributed") if isinstance(v.header.get("distributed"), dict) else {}
        if dist.get("note"):
            notes.append(f"- rank {v.rank}: {_one_line(scrub.text(str(dist['note'])), 400)}")
        for pg in v.of_type("process_group"):
            asked = pg.get("timeout_asked_s")
            got = pg.get("timeout_s")
            default = pg.get("default_s")
            notes.append(f"- rank {v.rank}: `{pg.get('call', 'init_process_group')}` backend {pg.get('backend') or '?'}, "
                         f"size {pg.get('world_size', '?')}; timeout: "
                         + (f"{asked:g} s asked" if isinstance(asked, (int, float)) else
                            "none asked" + (f" (torch's default {default:g} s)" if isinstance(default, (int, float)) else ""))
                         + (f", {got:g} s in effect" if isinstance(got, (int, float)) else ""))
    if notes:
        L += ["Process groups and collective timeouts, as each rank recorded them:", ""] + notes + [""]

    # graphs by rank
    comparison = _comparison(views)
    keys: list[tuple[str, str]] = []
    for v in views:
        for k in v.graphs:
            if k not in keys:
                keys.append(k)
    L += ["#### Graphs by rank", ""]
    if keys:
        L.append("| graph | " + " | ".join(f"rank {r}" for r in ranks) + " | ranks agree? |")
        L.append("|---|" + "---|" * len(ranks) + "---|")
        for k in keys:
            facts = {v.rank: v.graph_facts(k) for v in views if v.msgs is not None}
            cells = [(_graph_cell(facts[v.rank]) if v.msgs is not None else "(no session)") for v in views]
            g = comparison.graph(f"{k[0]} {k[1]}")
            L.append(f"| `{k[0]} {k[1]}` | " + " | ".join(cells) + f" | {_cell(g.summary) if g else '—'} |")
        L += ["", "Compared level by level as pane 0 compares them (`session/ranks/`): Dynamo graph, post-grad graph, "
              "IR buffers, scheduler nodes and fusions, kernels; where the ranks diverge:", ""]
        L += [f"- {_cell(d.line)}" for d in comparison.divergences] or ["- nowhere"]
        L.append("")
    else:
        L += ["No rank compiled a graph.", ""]

    # collectives
    coll: list[str] = []
    for k in keys:
        for v in views:
            f = v.graph_facts(k) if v.msgs is not None else None
            if f and f["collectives"]:
                coll.append(f"- `{k[0]} {k[1]}` rank {v.rank}: " + " → ".join(f"`{_short_op(o)}`" for o in f["collectives"]))
    if coll:
        L += ["#### Collectives in the compiled graphs", "", "In the order each rank's wrapper calls them:", ""] + coll + [""]

    # run timings, where the ranks were timed
    timed = {v.rank: {(str(m.get("compile_id")), _kind_of(m)): m for m in v.of_type("run")} for v in views}
    tkeys = [k for k in keys if any(k in t for t in timed.values())]
    if tkeys:
        methods = sorted({str(m.get("method")) for t in timed.values() for m in t.values() if m.get("method")})
        L += ["#### Run timings by rank", "",
              f"Each rank's `run` (method: {', '.join(methods) or '?'}): the compiled graph's ms and the sum of its "
              f"kernels' median ms; a kernel whose median differs by more than {comparison.time_ratio:g}x between "
              "ranks (with their p20..p80 ranges apart) is named.", "",
              "| graph | " + " | ".join(f"rank {r}" for r in ranks) + " | ranks agree? |",
              "|---|" + "---|" * len(ranks) + "---|"]
        for k in tkeys:
            cells = []
            for r in ranks:
                m = timed.get(r, {}).get(k)
                if m and m.get("error") and not isinstance(m.get("compiled_ms"), (int, float)):
                    cells.append(f"not timed: {_cell(_one_line(scrub.text(str(m['error'])), 120))}")
                else:
                    coll = (m or {}).get("collectives_stubbed") or []
                    cells.append(f"{_ms(m.get('compiled_ms'))} ms, kernels {_ms(m.get('kernel_sum_ms'))} ms"
                                 + (f" ({len(coll)} collective call(s) not timed, left out)" if coll else "")
                                 if m else "—")
            L.append(f"| `{k[0]} {k[1]}` | " + " | ".join(cells)
                     + f" | {_cell(_times_cell(comparison.graph(f'{k[0]} {k[1]}')))} |")
        L.append("")

    # errors
    L += ["#### Errors", ""]
    if not errs and not died:
        L += ["None recorded on any rank.", ""]
    for v in died:
        L.append(f"- rank {v.rank} **died**: {_one_line(scrub.text(str(v.entry.get('message') or 'no message')), 400)}"
                 + (f" (last stop recorded: {v.last_stop()})" if v.msgs else ""))
    for r, e in errs:
        graph = f"{e.get('compile_id')} {_kind_of(e) if e.get('graph_kind') else ''}".strip() if e.get("compile_id") else "-"
        L.append(f"- rank {r}: stage **{e.get('stage', '?')}**, graph `{graph}`: "
                 f"`{_one_line(scrub.text(str(e.get('message', ''))), 300).replace('`', chr(39))}` "
                 f"(traceback in `rank{r}/REPORT.md`)")
    if errs or died:
        L.append("")

    # the diff view (inductor-step diff) of the first rank against each other rank
    if diffs:
        L += [f"#### Rank {views[0].rank} against each other rank", "",
              "Level by level (`inductor-step diff`); the kernels' source diffs are in the `DIFF_*.txt` files.", ""]
        for (r, name), short in diffs.items():
            L += [f"<details><summary>rank {views[0].rank} → rank {r} (`{name}`)</summary>", "",
                  _fence(scrub.text(short), "text"), "", "</details>", ""]

    # the launcher's last words, where it failed (torch's launcher names the first failing rank there)
    lrc = job.get("launcher_returncode")
    if launcher_tail and lrc not in (0, None):
        L += [f"<details><summary>The launcher's log, last {len(launcher_tail)} lines (it exited with status "
              f"{lrc})</summary>", "", _fence(scrub.text("\n".join(launcher_tail)), "text"), "", "</details>", ""]

    # files
    L += ["#### Files in this bundle", "", f"- `{REPORT_NAME}`: this text"]
    for name, what in files:
        L.append(f"- `{name}`: {what}")
    L.append("")
    if not include_paths:
        L.append("_Paths outside the working directory are shown as `<path>/name` above. The sessions, the "
                 "launcher log and the repro files are included as recorded and contain absolute paths; review "
                 "them before attaching. No environment variables are included._")
    else:
        L.append("_Absolute paths are included as recorded. No environment variables are included._")
    L.append("")
    return "\n".join(L)


def build_job_report(job_path: str, out_dir: str | None = None, *, screenshots: list[str] | None = None,
                     include_paths: bool = False, archive: bool = False,
                     stood: dict | None = None) -> tuple[str, list[str]]:
    """Write a bug-report bundle for the torchrun job ``job_path`` (``X.job.json``, issue 23).

    The bundle holds ``REPORT.md`` (the job: command, collective timeout, each rank's state and where
    a rank died, which ranks compiled which graphs and where their versions differ, the collectives,
    every rank's errors), a copy of the job file (naming the sessions beside it), the launcher's log,
    every rank's session, and ``rank<N>/`` with that rank's own report (:func:`build_report`).
    Returns ``(directory or archive, problems)``: a problem is one line naming what the job file
    names but the bundle lacks (a missing or unreadable session, the launcher log); the rest is
    bundled all the same.  Raises ValueError (not a job file; ``out_dir`` holds something other
    than an earlier report), OSError (unreadable job file, unwritable output).
    """
    from inductor_step.session.format import job_paths, read_job, write_job  # noqa: PLC0415

    job, sessions = read_job(job_path)
    base = os.path.basename(job_paths(job_path)[1])
    # beside the job file (its sessions and launcher log live there), wherever the command runs
    out_dir = out_dir or os.path.join(os.path.dirname(os.path.abspath(job_path)), f"report-{base}")
    _prepare_dir(out_dir)
    entries = {int(r["rank"]): r for r in job.get("ranks") or [] if isinstance(r, dict) and "rank" in r}
    views = [_RankView(r, entries.get(r, {"rank": r}), sessions.get(r)) for r in sorted(set(entries) | set(sessions))]
    problems: list[str] = []
    files: list[tuple[str, str]] = []
    copy = json.loads(json.dumps(job))
    job_name = os.path.basename(job_path)
    for v in views:
        v.load()
        if v.problem:
            problems.append(v.problem)
    # the sessions beside the job file's copy, which names them by their base names
    for v in views:
        if v.msgs is None:
            continue
        name = os.path.basename(v.session)
        shutil.copyfile(v.session, os.path.join(out_dir, name))
        for r in copy.get("ranks") or []:
            if isinstance(r, dict) and r.get("rank") == v.rank:
                r["session"] = name
        files.append((name, f"rank {v.rank}'s session (`inductor-step --open {name}`)"))
    here = os.path.dirname(os.path.abspath(job_path))
    launcher_tail: list[str] = []
    log = job.get("launcher_log")
    if log:
        src = os.path.join(here, str(log))
        if os.path.isfile(src):
            with open(src, encoding="utf-8", errors="replace") as f:
                launcher_tail = [ln[:_TB_LINE_CHARS] for ln in f.read().rstrip().splitlines()[-_LAUNCHER_TAIL:]]
            copy["launcher_log"] = os.path.basename(src)
            shutil.copyfile(src, os.path.join(out_dir, copy["launcher_log"]))
            files.append((copy["launcher_log"], "the launcher's (torch.distributed.run's) own output"))
        else:
            problems.append(f"the launcher log the job file names is missing: {src}")
    write_job(os.path.join(out_dir, job_name), copy)
    files.insert(0, (job_name, f"the job file (`inductor-step --open {job_name}` opens every rank)"))
    scrub = PathScrubber(keep=include_paths)
    for v in views:
        if v.msgs is None:
            continue
        sub = f"rank{v.rank}"
        build_report(v.session, os.path.join(out_dir, sub), include_paths=include_paths,
                     session_ref=os.path.join("..", os.path.basename(v.session)))
        files.append((f"{sub}/", f"rank {v.rank}'s own report (`{sub}/{REPORT_NAME}`) and repros"))
    # the first readable rank against each other one, as `inductor-step diff A B` shows them
    from inductor_step.session.diff import diff_files  # noqa: PLC0415

    diffs: dict[tuple[int, str], str] = {}
    readable = [v for v in views if v.msgs is not None]
    for v in readable[1:]:
        a, b = readable[0], v
        name = f"DIFF_rank{a.rank}_rank{b.rank}.txt"
        def named(text: str) -> str:  # the sessions as this bundle names them
            return text.replace(a.session, os.path.basename(a.session)).replace(b.session, os.path.basename(b.session))

        _write(os.path.join(out_dir, name), scrub.text(named(diff_files(a.session, b.session))) + "\n")
        diffs[(b.rank, name)] = named(diff_files(a.session, b.session, diffs=False))
        files.append((name, f"rank {a.rank}'s session against rank {b.rank}'s, level by level, with the kernels' "
                            "source diffs (`inductor-step diff`)"))
    shots: list[str] = []
    for src in screenshots or []:
        name = os.path.basename(src)
        if name in shots or not os.path.isfile(src):
            continue
        os.makedirs(os.path.join(out_dir, "screenshots"), exist_ok=True)
        shutil.copyfile(src, os.path.join(out_dir, "screenshots", name))
        shots.append(name)
        files.append((f"screenshots/{name}", "a screenshot"))
    text = _render_job(job, views, job_name=job_name, files=files, problems=problems, scrub=scrub,
                       include_paths=include_paths, launcher_tail=launcher_tail, diffs=diffs, stood=stood)
    _write(os.path.join(out_dir, REPORT_NAME), text)
    if not archive:
        return out_dir, problems
    tar_path = out_dir.rstrip(os.sep) + ".tar.gz"
    with tarfile.open(tar_path, "w:gz") as tar:
        tar.add(out_dir, arcname=os.path.basename(out_dir.rstrip(os.sep)))
    return tar_path, problems
