"""The report bundle of one session: REPORT.md with its sections, the repro scripts and graphs beside it."""

from __future__ import annotations

import os
import shutil
import tarfile
from typing import Any

from inductor_step.session.format import GraphKey
from inductor_step.session.modes import how_compiled_section
from inductor_step.session.store import load_session
from inductor_step.session.report.common import PathScrubber, REPORT_NAME, _graphs, _slug, cid_slug, report_key
from inductor_step.session.report.sections import (ReportFacts, command_lines, compile_time_memory_lines,
                                                   environment_lines, error_lines, files_lines, graphs_lines,
                                                   repro_lines, run_timings_lines, stood_lines, title_lines, why_lines)


# --------------------------------------------------------------------------- the bundle

#: where the app's ``s`` saves screenshots by default (tui.app.DEFAULT_OUT + "/screenshots")
DEFAULT_SHOTS = os.path.join("inductor-step-sessions", "screenshots")


def _default_out_dir(session_path: str) -> str:
    stem = os.path.splitext(os.path.basename(session_path))[0]
    # beside the sessions, in the folder a clone ignores (never the repository's tracked tree)
    return os.path.join("inductor-step-sessions", f"report-{stem}")


def _prepare_dir(out_dir: str) -> None:
    """Create ``out_dir``; an earlier report there is replaced, anything else is refused."""
    if os.path.exists(out_dir):
        if not os.path.isdir(out_dir):
            raise ValueError(f"{out_dir} exists and is not a directory")
        entries = os.listdir(out_dir)
        if entries and REPORT_NAME not in entries:
            raise ValueError(f"{out_dir} is not empty and holds no earlier {REPORT_NAME}; choose another --out")
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def _write_repros(msgs: list[dict[str, Any]], graphs: dict, out_dir: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Write repro_*.py (fx_graph_runnable) and graph_*.txt (fallback); return (repros, fallbacks)
    as lists of (graph label, file name)."""
    repros: list[tuple[str, str]] = []
    have: set[GraphKey] = set()
    used: set[str] = set()
    for m in msgs:
        if m.get("type") != "artifact" or m.get("name") != "fx_graph_runnable" or not isinstance(m.get("payload"), str):
            continue
        key = report_key(m, "graph")
        slug = f"{cid_slug(key.compile_id)}_{_slug(key)}"  # "[4/0] forward #2" -> repro_4-0_forward_2.py
        name = f"repro_{slug}.py"
        n = 2
        while name in used:
            name = f"repro_{slug}_{n}.py"
            n += 1
        used.add(name)
        _write(os.path.join(out_dir, name), m["payload"])
        repros.append((str(key), name))
        have.add(key)
    fallbacks: list[tuple[str, str]] = []
    for key, stages in graphs.items():
        if key in have:
            continue
        aot = stages.get("aot") or {}
        post = aot.get("post_grad") if isinstance(aot.get("post_grad"), dict) else {}
        code = post.get("code") if isinstance(post, dict) else None
        if not code:
            continue
        name = f"graph_{cid_slug(key.compile_id)}_{_slug(key)}.txt"
        banner = (
            f"# NOT RUNNABLE: the post-grad FX graph of {key}, as inductor-step recorded it.\n"
            "# The session holds no fx_graph_runnable for this graph (Inductor's standalone repro),\n"
            "# so this is the graph Inductor lowered, for reading only: it has no inputs and no imports.\n"
            "# To get a runnable repro, record the session again with a newer inductor-step, or run the\n"
            "# script with TORCH_TRACE=<dir> and look for fx_graph_runnable in `tlparse <dir>/*.log`.\n\n"
        )
        _write(os.path.join(out_dir, name), banner + code.rstrip() + "\n")
        fallbacks.append((str(key), name))
    return repros, fallbacks


def _render(msgs: list[dict[str, Any]], graphs: dict, *, session_name: str, scrub: PathScrubber,
            stood: dict | None, repros: list[tuple[str, str]], fallbacks: list[tuple[str, str]],
            shots: list[str], include_paths: bool) -> str:
    """REPORT.md's text up to the kernels' section: its sections (:mod:`inductor_step.session.report.sections`)
    in order, each from ``msgs`` (the session, header first) and ``graphs`` (graph key -> stage -> stop)."""
    facts = ReportFacts.of(msgs, graphs)
    h = facts.header
    L = title_lines(facts, graphs, session_name, scrub)
    L += environment_lines(h, scrub)
    L += command_lines(h, scrub)
    L += stood_lines(stood, scrub)
    L += error_lines(facts, scrub)
    L += graphs_lines(facts, graphs, scrub)
    L += how_compiled_section(graphs)
    L += why_lines(graphs, scrub, facts.done)
    L += run_timings_lines(facts)
    L += compile_time_memory_lines(msgs, scrub)
    L += repro_lines(repros, fallbacks)
    L += files_lines(session_name, repros, fallbacks, shots, include_paths)
    return "\n".join(L)


def build_report(session_path: str, out_dir: str | None = None, *, screenshots: list[str] | None = None,
                 stood: dict | None = None, include_paths: bool = False, archive: bool = False,
                 diff_with: str | None = None, session_ref: str | None = None) -> str:
    """Write a bug-report bundle for ``session_path``; return the directory (or, with ``archive``,
    the ``<dir>.tar.gz`` written next to it).

    ``screenshots``: image files to copy into ``screenshots/``; ``stood``: where the user stood
    (``{"graph": "[0/0] forward", "stage": "lowering", "selection": "buf3"}``); ``diff_with``: another
    session whose level-by-level diff against this one (:func:`inductor_step.session.diff.diff_files`)
    is added to REPORT.md and written whole to ``DIFF.txt``; ``session_ref``: where the bundle already
    holds the session, relative to ``out_dir`` (a job's bundle: ``../x.rank0.jsonl``), instead of a copy.
    Raises OSError (unreadable session, unwritable output) or ValueError (not a session; an
    ``out_dir`` that holds something other than an earlier report).
    """
    msgs = load_session(session_path)
    out_dir = out_dir or _default_out_dir(session_path)
    _prepare_dir(out_dir)
    graphs = _graphs(msgs)
    session_name = session_ref or os.path.basename(session_path)
    if session_ref is None:
        shutil.copyfile(session_path, os.path.join(out_dir, session_name))
    repros, fallbacks = _write_repros(msgs, graphs, out_dir)
    shots: list[str] = []
    if screenshots:
        os.makedirs(os.path.join(out_dir, "screenshots"), exist_ok=True)
        for src in screenshots:
            name = os.path.basename(src)
            if name in shots or not os.path.isfile(src):
                continue
            shutil.copyfile(src, os.path.join(out_dir, "screenshots", name))
            shots.append(name)
    scrub = PathScrubber(keep=include_paths)
    text = _render(msgs, graphs, session_name=session_name, scrub=scrub, stood=stood, repros=repros,
                   fallbacks=fallbacks, shots=shots, include_paths=include_paths)
    from inductor_step.session.kernel_bundle import add_kernels  # noqa: PLC0415
    from inductor_step.session.ledger import report_markdown  # noqa: PLC0415
    from inductor_step.session.store import Store  # noqa: PLC0415

    text += scrub.text(add_kernels(session_path, msgs, out_dir, stood))  # repros, TTGIR/PTX/SASS
    ledger_md = report_markdown(Store.of(msgs))  # top ten of each ledger, when timed
    if ledger_md:
        text += "\n" + scrub.text(ledger_md)
    from inductor_step.session.numerics import report_markdown as numerics_md  # noqa: PLC0415
    num_md = numerics_md(Store.of(msgs))
    if num_md:
        text += "\n" + scrub.text(num_md)
    from inductor_step.session.blame import report_markdown as blame_md  # noqa: PLC0415

    blame_text = blame_md(msgs, Store.of(msgs))  # the verdicts, their steps and repro (session.blame)
    if blame_text:
        text += "\n" + scrub.text(blame_text)
    if diff_with:
        from inductor_step.session.diff import diff_files  # noqa: PLC0415

        full = scrub.text(diff_files(diff_with, session_path))
        _write(os.path.join(out_dir, "DIFF.txt"), full + "\n")
        short = scrub.text(diff_files(diff_with, session_path, diffs=False))
        text += (f"\n## Diff against {os.path.basename(diff_with)}\n\nLevel by level (`inductor-step diff`); the "
                 "kernels' source diffs are in DIFF.txt.\n\n```text\n" + short + "\n```\n")
    _write(os.path.join(out_dir, REPORT_NAME), text)
    if not archive:
        return out_dir
    tar_path = out_dir.rstrip(os.sep) + ".tar.gz"
    with tarfile.open(tar_path, "w:gz") as tar:
        tar.add(out_dir, arcname=os.path.basename(out_dir.rstrip(os.sep)))
    return tar_path
