"""The report bundle of a distributed job: every rank's state, the rank comparison, launcher tail."""

from __future__ import annotations

import json
import os
import shutil
import tarfile
from typing import Any

from inductor_step.session.format import ALL_STAGES, GraphKey
from inductor_step.session.store import load_session
from inductor_step.session.report.bundle import _prepare_dir, _write, build_report
from inductor_step.session.report.common import PathScrubber, REPORT_NAME, _TB_LINE_CHARS, _graphs, report_key
from inductor_step.session.report.job_sections import (JobFacts, collectives_lines, diffs_lines, graphs_by_rank_lines,
                                                       job_errors_lines, job_files_lines, job_lines, job_title_lines,
                                                       launcher_lines, ranks_lines, timings_by_rank_lines)


# --------------------------------------------------------------------------- jobs

class _RankView:
    """What the job report says about one rank: its JobRank entry and, when readable, its session."""

    def __init__(self, rank: int, entry: dict[str, Any], session: str | None) -> None:
        self.rank = rank
        self.entry = entry
        self.session = session
        self.msgs: list[dict[str, Any]] | None = None
        self.problem: str | None = None
        self.graphs: dict[GraphKey, dict[str, dict[str, Any]]] = {}

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
        return f"{report_key(stop)} {stop.get('stage')}" if stop else "-"

    def graph_facts(self, key: GraphKey) -> dict[str, Any] | None:
        """Stages reached, kernel names, post-grad code and collective schedule of one graph."""
        from inductor_step.session.export import collective_schedule  # noqa: PLC0415

        stages = self.graphs.get(key)
        if stages is None:
            return None
        reached = [st for st in ALL_STAGES if st in stages]
        failed = next((e for e in self.of_type("error") if e.get("compile_id") == key.compile_id
                       and (e.get("graph_kind") is None or report_key(e) == key)), None)
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


#: how many of the launcher log's last lines a job's REPORT.md shows when the launcher failed
_LAUNCHER_TAIL = 40


def _render_job(job: dict[str, Any], views: list[_RankView], *, job_name: str, files: list[tuple[str, str]],
                problems: list[str], scrub: PathScrubber, include_paths: bool,
                launcher_tail: list[str] | None = None, diffs: dict[tuple[int, str], str] | None = None,
                stood: dict | None = None) -> str:
    """A job's REPORT.md: its sections (:mod:`inductor_step.session.report.job_sections`) in order, from
    the job file ``job`` and the ranks' loaded ``views``."""
    jf = JobFacts.of(job, views, scrub)
    L = job_title_lines(jf, job_name, problems, stood)
    L += job_lines(jf)
    L += ranks_lines(jf)
    L += graphs_by_rank_lines(jf)
    L += collectives_lines(jf)
    L += timings_by_rank_lines(jf)
    L += job_errors_lines(jf)
    L += diffs_lines(jf, diffs)
    L += launcher_lines(jf, launcher_tail)
    L += job_files_lines(files, include_paths)
    return "\n".join(L)


def build_job_report(job_path: str, out_dir: str | None = None, *, screenshots: list[str] | None = None,
                     include_paths: bool = False, archive: bool = False,
                     stood: dict | None = None) -> tuple[str, list[str]]:
    """Write a bug-report bundle for the torchrun job ``job_path`` (``X.job.json``).

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
    views = _load_views(job, sessions)
    problems = [v.problem for v in views if v.problem]
    copy = json.loads(json.dumps(job))
    job_name = os.path.basename(job_path)
    files = _copy_sessions(views, copy, out_dir)
    launcher_tail = _copy_launcher_log(job, copy, os.path.dirname(os.path.abspath(job_path)), out_dir, files, problems)
    write_job(os.path.join(out_dir, job_name), copy)
    files.insert(0, (job_name, f"the job file (`inductor-step --open {job_name}` opens every rank)"))
    scrub = PathScrubber(keep=include_paths)
    files += _rank_reports(views, out_dir, include_paths)
    diffs = _rank_diffs(views, out_dir, scrub, files)
    files += _copy_screenshots(screenshots or [], out_dir)
    text = _render_job(job, views, job_name=job_name, files=files, problems=problems, scrub=scrub,
                       include_paths=include_paths, launcher_tail=launcher_tail, diffs=diffs, stood=stood)
    _write(os.path.join(out_dir, REPORT_NAME), text)
    if not archive:
        return out_dir, problems
    tar_path = out_dir.rstrip(os.sep) + ".tar.gz"
    with tarfile.open(tar_path, "w:gz") as tar:
        tar.add(out_dir, arcname=os.path.basename(out_dir.rstrip(os.sep)))
    return tar_path, problems


def _load_views(job: dict[str, Any], sessions: dict[int, str]) -> list[_RankView]:
    """One loaded view per rank the job file's ``ranks`` or ``sessions`` (rank -> session path) name, rank order."""
    entries = {int(r["rank"]): r for r in job.get("ranks") or [] if isinstance(r, dict) and "rank" in r}
    views = [_RankView(r, entries.get(r, {"rank": r}), sessions.get(r)) for r in sorted(set(entries) | set(sessions))]
    for v in views:
        v.load()
    return views


def _copy_sessions(views: list[_RankView], copy: dict[str, Any], out_dir: str) -> list[tuple[str, str]]:
    """Copy each readable rank's session into ``out_dir``, point the job file's ``copy`` at it by base
    name, and return the bundle's ``(file, what)`` lines for them."""
    files: list[tuple[str, str]] = []
    for v in views:
        if v.msgs is None:
            continue
        name = os.path.basename(v.session)
        shutil.copyfile(v.session, os.path.join(out_dir, name))
        for r in copy.get("ranks") or []:
            if isinstance(r, dict) and r.get("rank") == v.rank:
                r["session"] = name
        files.append((name, f"rank {v.rank}'s session (`inductor-step --open {name}`)"))
    return files


def _copy_launcher_log(job: dict[str, Any], copy: dict[str, Any], here: str, out_dir: str,
                       files: list[tuple[str, str]], problems: list[str]) -> list[str]:
    """Copy the launcher log the job file names (relative to ``here``, the job file's folder) into
    ``out_dir``, naming it in ``copy`` and ``files``; return its last lines (each cut to a traceback
    line's width), [] without one; a log named but missing is added to ``problems``."""
    log = job.get("launcher_log")
    if not log:
        return []
    src = os.path.join(here, str(log))
    if not os.path.isfile(src):
        problems.append(f"the launcher log the job file names is missing: {src}")
        return []
    with open(src, encoding="utf-8", errors="replace") as f:
        tail = [ln[:_TB_LINE_CHARS] for ln in f.read().rstrip().splitlines()[-_LAUNCHER_TAIL:]]
    copy["launcher_log"] = os.path.basename(src)
    shutil.copyfile(src, os.path.join(out_dir, copy["launcher_log"]))
    files.append((copy["launcher_log"], "the launcher's (torch.distributed.run's) own output"))
    return tail


def _rank_reports(views: list[_RankView], out_dir: str, include_paths: bool) -> list[tuple[str, str]]:
    """Write each readable rank's own report into ``out_dir/rank<N>/`` (:func:`build_report`, pointing
    at the session copied beside it); return the bundle's ``(file, what)`` lines for them."""
    files: list[tuple[str, str]] = []
    for v in views:
        if v.msgs is None:
            continue
        sub = f"rank{v.rank}"
        build_report(v.session, os.path.join(out_dir, sub), include_paths=include_paths,
                     session_ref=os.path.join("..", os.path.basename(v.session)))
        files.append((f"{sub}/", f"rank {v.rank}'s own report (`{sub}/{REPORT_NAME}`) and repros"))
    return files


def _rank_diffs(views: list[_RankView], out_dir: str, scrub: PathScrubber,
                files: list[tuple[str, str]]) -> dict[tuple[int, str], str]:
    """The first readable rank against each other one, as ``inductor-step diff A B`` shows them: write
    each whole diff to ``DIFF_rank<A>_rank<B>.txt`` (named in ``files``) and return ``(rank B, file) ->``
    the short diff, the sessions named by their base names."""
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
    return diffs


def _copy_screenshots(screenshots: list[str], out_dir: str) -> list[tuple[str, str]]:
    """Copy each existing screenshot (once per file name) into ``out_dir/screenshots/``; return the
    bundle's ``(file, what)`` lines for them."""
    shots: list[str] = []
    files: list[tuple[str, str]] = []
    for src in screenshots:
        name = os.path.basename(src)
        if name in shots or not os.path.isfile(src):
            continue
        os.makedirs(os.path.join(out_dir, "screenshots"), exist_ok=True)
        shutil.copyfile(src, os.path.join(out_dir, "screenshots", name))
        shots.append(name)
        files.append((f"screenshots/{name}", "a screenshot"))
    return files
