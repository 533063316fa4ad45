"""The report bundle of one session: REPORT.md with its sections, the repro scripts and graphs beside it."""

from __future__ import annotations

import os
import shlex
import shutil
import tarfile
from typing import Any

from inductor_step.session.format import ALL_STAGES, VARIANT_SEP
from inductor_step.session import trust
from inductor_step.session.modes import how_compiled_section
from inductor_step.session.store import fmt_ms as _ms, load_session
from inductor_step.session.text import break_reasons
from inductor_step.session.report.common import PathScrubber, REPORT_NAME, _cell, _fence, _graphs, _kind_of, _one_line, _slug, cid_slug, shorten_traceback


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
    have: set[tuple[str, str]] = set()
    used: set[str] = set()
    for m in msgs:
        if m.get("type") != "artifact" or m.get("name") != "fx_graph_runnable" or not isinstance(m.get("payload"), str):
            continue
        cid, kind = str(m.get("compile_id", "[?]")), _kind_of(m, "graph")
        slug = _slug(kind)  # "forward #2" -> repro_4-0_forward_2.py
        name = f"repro_{cid_slug(cid)}_{slug}.py"
        n = 2
        while name in used:
            name = f"repro_{cid_slug(cid)}_{slug}_{n}.py"
            n += 1
        used.add(name)
        _write(os.path.join(out_dir, name), m["payload"])
        repros.append((f"{cid} {kind}", name))
        have.add((cid, kind))
    fallbacks: list[tuple[str, str]] = []
    for (cid, kind), stages in graphs.items():
        if (cid, kind) in have:
            continue
        aot = stages.get("aot") or {}
        post = aot.get("post_grad") if isinstance(aot.get("post_grad"), dict) else {}
        code = post.get("code") if isinstance(post, dict) else None
        if not code:
            continue
        name = f"graph_{cid_slug(cid)}_{_slug(kind)}.txt"
        banner = (
            f"# NOT RUNNABLE: the post-grad FX graph of {cid} {kind}, as inductor-step recorded it.\n"
            "# The session holds no fx_graph_runnable for this graph (Inductor's standalone repro),\n"
            "# so this is the graph Inductor lowered, for reading only: it has no inputs and no imports.\n"
            "# To get a runnable repro, record the session again with a newer inductor-step, or run the\n"
            "# script with TORCH_TRACE=<dir> and look for fx_graph_runnable in `tlparse <dir>/*.log`.\n\n"
        )
        _write(os.path.join(out_dir, name), banner + code.rstrip() + "\n")
        fallbacks.append((f"{cid} {kind}", name))
    return repros, fallbacks


def _render(msgs: list[dict[str, Any]], graphs: dict, *, session_name: str, scrub: PathScrubber,
            stood: dict | None, repros: list[tuple[str, str]], fallbacks: list[tuple[str, str]],
            shots: list[str], include_paths: bool) -> str:
    h = msgs[0]
    errors = [m for m in msgs if m.get("type") == "error"]
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    for m in msgs:
        if m.get("type") == "run":
            runs[(str(m.get("compile_id")), _kind_of(m))] = m
    done = next((m for m in msgs if m.get("type") == "done"), None)
    breaks: dict[str, int] = {}
    recompiles: dict[str, int] = {}
    for (cid, kind), stages in graphs.items():
        dyn = stages.get("dynamo") or {}
        if VARIANT_SEP in kind:  # a what-if variant's dynamo stop is its original's, without the reasons
            continue
        if isinstance(dyn.get("graph_breaks"), list):
            breaks[cid] = max(breaks.get(cid, 0), len(dyn["graph_breaks"]))
        if isinstance(dyn.get("recompile_reasons"), list):
            recompiles[cid] = max(recompiles.get(cid, 0), len(dyn["recompile_reasons"]))

    L: list[str] = []
    err = errors[0] if errors else None
    if err:
        where = f" in {err.get('stage')}" + (f" of {err.get('compile_id')} {_kind_of(err) if err.get('graph_kind') else ''}".rstrip() if err.get("compile_id") else "")
        title = f"torch.compile: {_one_line(scrub.text(str(err.get('message', 'error'))), 160)}{where}"
    else:
        title = f"torch.compile: {len(graphs)} graph(s) compiled" + (", timed" if runs else "")
    L.append(f"### {title}")
    L.append("")
    L.append(f"Made with `inductor-step report` from the recorded session `{session_name}` "
             f"(format `{h.get('format')}`).")
    L.append("")

    # environment
    L.append("#### Versions and device")
    L.append("")
    L.append("| | |")
    L.append("|---|---|")
    for label, key in (("torch", "torch"), ("triton", "triton"), ("python", "python"), ("CUDA (torch build)", "cuda")):
        v = h.get(key) if h.get(key) is not None else 'not installed' if key == 'triton' else '-'
        if key == "triton" and h.get("triton") and not h.get("cuda") and h.get("device") == "cpu":
            v = f"{v} (installed, unused: torch is a CPU build)"  # issue 40.12: not what compiled these kernels
        L.append(f"| {label} | {_cell(v)} |")
    dev = h.get("device") or "?"
    L.append(f"| device | {_cell(dev)} |")
    L.append(f"| device_name | {_cell(h.get('device_name') or '-')} |")
    dist = h.get("distributed")
    if isinstance(dist, dict):  # one rank of a torchrun job (issue 23)
        L.append(f"| torchrun rank | {_cell(dist.get('rank', '?'))} of world size {_cell(dist.get('world_size', '?'))}"
                 f" (local rank {_cell(dist.get('local_rank', '?'))}) |")
        if dist.get("note"):
            L.append(f"| collective timeout | {_cell(_one_line(scrub.text(str(dist['note']))))} |")
    settings = h.get("settings")
    if isinstance(settings, dict) and settings:
        L.append("| settings (set by inductor-step) | " + _cell(", ".join(f"`{k}={v}`" for k, v in settings.items())) + " |")
    L.append("")

    # command line
    script = h.get("script")
    argv = h.get("argv") if isinstance(h.get("argv"), list) else []
    L.append("#### Command")
    L.append("")
    if script:
        cmd = scrub.text(shlex.join(["python", str(script)] + [str(a) for a in argv]))
        L.append(_fence(cmd, "bash"))
        L.append("")
        note = f": {_one_line(h['note'])}" if h.get("note") else ""
        L.append(f"(run under `inductor-step`{note})")
    else:
        L.append("(the session header names no script)")
    L.append("")

    # where the user stood
    if stood:
        L.append("#### Where I stood")
        L.append("")
        parts = []
        if stood.get("graph"):
            parts.append(f"graph `{stood['graph']}`")
        if stood.get("stage"):
            parts.append(f"stage `{stood['stage']}`")
        if stood.get("selection"):
            parts.append(f"selection `{scrub.text(str(stood['selection']))}`")
        L.append(", ".join(parts) if parts else "(nothing selected)")
        L.append("")

    # error
    L.append("#### Error")
    L.append("")
    if not errors:
        rc = done.get("returncode") if done else None
        L.append("None recorded" + (f" (the script exited with status {rc})." if rc is not None else "."))
        L.append("")
    for e in errors:
        graph = f"{e.get('compile_id')} {_kind_of(e) if e.get('graph_kind') else ''}".strip() if e.get("compile_id") else "-"
        L.append(f"- stage: **{e.get('stage', '?')}**")
        L.append(f"- compile id: **{e.get('compile_id') or '-'}** (graph: {graph})")
        L.append(f"- message: `{_one_line(scrub.text(str(e.get('message', ''))), 300).replace('`', chr(39))}`")
        L.append("")
        tb = e.get("traceback")
        if isinstance(tb, str) and tb.strip():
            short, truncated = shorten_traceback(scrub.text(tb))
            L.append("<details><summary>Traceback" + (" (shortened; the full one is in the session file)" if truncated else "")
                     + "</summary>")
            L.append("")
            L.append(_fence(short, "text"))
            L.append("")
            L.append("</details>")
            L.append("")

    # graphs
    L.append("#### Graphs compiled")
    L.append("")
    if graphs:
        L.append("| graph | stages reached | kernels | graph breaks | recompile reasons |")
        L.append("|---|---|---|---|---|")
        for (cid, kind), stages in graphs.items():
            reached = [s for s in ALL_STAGES if s in stages]
            if (cid, kind) in runs:
                reached.append("run")
            failed = next((e for e in errors if e.get("compile_id") == cid and (e.get("graph_kind") is None or _kind_of(e) == kind)), None)
            if failed and reached and reached[-1] == failed.get("stage"):
                reached[-1] = f"**{reached[-1]} (failed)**"
            elif failed:
                reached.append(f"**{failed.get('stage')} (failed)**")
            stages_txt = " → ".join(reached)
            cg = stages.get("codegen") or {}
            kernels = cg.get("kernels")
            n_k = str(len(kernels)) if isinstance(kernels, list) else "-"
            base, _sep, variant = kind.partition(VARIANT_SEP)
            if variant:  # issue 32: a what-if variant is its own row, named as one
                L.append(f"| `{cid} {kind}` (what-if variant of `{cid} {base}`: its post-grad graph recompiled with "
                         f"`{variant}`) | {stages_txt} | {n_k} | - | - |")
                continue
            L.append(f"| `{cid} {kind}` | {stages_txt} | {n_k} | {breaks.get(cid, 0)} | {recompiles.get(cid, 0)} |")
    else:
        msg = (done or {}).get("message")
        L.append(_one_line(scrub.text(msg)) if msg else "No graph was compiled.")
    L.append("")

    L += how_compiled_section(graphs)  # issue 27

    # why each graph break and recompile happened, in Dynamo's words
    why: list[str] = []
    seen_cids: set[str] = set()
    for (cid, _kind), stages in graphs.items():
        dyn = stages.get("dynamo") or {}
        if cid in seen_cids or VARIANT_SEP in _kind:
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
        reasons = next((st.get("dynamo", {}).get("recompile_reasons") for (c, k), st in graphs.items()
                        if c == cid and VARIANT_SEP not in k and (st.get("dynamo") or {}).get("recompile_reasons")), [])
        for r in reasons or []:
            why.append(f"- recompile `{cid}`: {_one_line(scrub.text(str(r)), 600)}")
    if why:
        L.append("#### Graph breaks and recompiles")
        L.append("")
        L.extend(why)
        L.append("")

    # run timings
    if runs:
        L.append("#### Run timings")
        L.append("")
        methods = sorted({str(r.get("method")) for r in runs.values() if r.get("method")})
        L.append("| graph | compiled ms | eager ms | speedup | kernel sum ms | slowest kernel | verdict |")
        L.append("|---|---|---|---|---|---|---|")
        for (cid, kind), r in runs.items():
            c, e_ = r.get("compiled_ms"), r.get("eager_ms")
            sp = f"{e_ / c:.2f}x" if isinstance(c, (int, float)) and isinstance(e_, (int, float)) and c > 0 else "-"
            ks = [k for k in (r.get("kernels") or []) if isinstance(k, dict) and isinstance(k.get("median_ms"), (int, float))]
            slow = max(ks, key=lambda k: k["median_ms"], default=None)
            slow_txt = f"`{slow.get('name')}` {slow['median_ms']:.4f} ms" if slow else "-"
            variant = " (what-if variant)" if VARIANT_SEP in kind else ""
            verdict = "failed: " + _one_line(str(r["error"]), 120) if r.get("error") else trust.verdict_word(r)
            L.append(f"| `{cid} {kind}`{variant} | {_ms(c)} | {_ms(e_)} | {sp} | {_ms(r.get('kernel_sum_ms'))} | "
                     f"{slow_txt} | {'**' + verdict + '**' if verdict == 'NOT RELIABLE' else verdict} |")
        L.append("")
        L.extend(_one_line(x, 600) if x else x
                 for x in trust.report_lines({f"{cid} {kind}": r for (cid, kind), r in runs.items()}))  # issue 32
        colls = [f"`{cid} {kind}`" for (cid, kind), r in runs.items() if r.get("collectives_stubbed")]
        if colls:  # issue 23
            L.append(f"Collectives, not timed: the times of {', '.join(colls)} exclude their collective calls (each ran "
                     "as a local stand-in; timing a collective needs every rank running it together).")
            L.append("")
        L.append(f"Device `{next(iter(runs.values())).get('device', dev)}`; method: {', '.join(methods) or '?'}.")
        L.append("")

    from inductor_step.session.compile_time import report_section  # noqa: PLC0415 - issue 30
    from inductor_step.session.store import Session  # noqa: PLC0415

    ctime = report_section(Session.of([m for m in msgs if m.get("type") in ("compile_time", "stop")]))
    if ctime:
        L.append(scrub.text(ctime.replace("## Compile time", "#### Compile time", 1)))
    from inductor_step.session.memory_text import report_section as memory_section  # noqa: PLC0415 - issue 42

    memory = memory_section(Session.of([m for m in msgs if m.get("type") == "stop"]))
    if memory:
        L.append(scrub.text(memory.replace("## Memory", "#### Memory", 1)))

    # repro
    L.append("#### Minimal repro")
    L.append("")
    if repros:
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

    # files
    L.append("#### Files in this bundle")
    L.append("")
    L.append(f"- `{REPORT_NAME}`: this text")
    L.append(f"- `{session_name}`: the whole recorded session (JSON lines, `inductor-step --open {session_name}` "
             "views it without torch)")
    for _label, name in repros:
        L.append(f"- `{name}`")
    for _label, name in fallbacks:
        L.append(f"- `{name}` (not runnable)")
    for s in shots:
        L.append(f"- `screenshots/{s}`")
    L.append("")
    if shots:
        L.append("Screenshots: drag the files in `screenshots/` into the issue to attach them.")
        L.append("")
    if not include_paths:
        L.append(f"_Paths outside the working directory are shown as `<path>/name` above. `{session_name}` "
                 "and the repro files are included as recorded and contain absolute paths "
                 "(script, Inductor cache); review them before attaching. No environment variables are included._")
    else:
        L.append("_Absolute paths are included as recorded. No environment variables are included._")
    L.append("")
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
    from inductor_step.session.store import Session  # noqa: PLC0415

    text += scrub.text(add_kernels(session_path, msgs, out_dir, stood))  # issue 28.5: repros, TTGIR/PTX/SASS
    ledger_md = report_markdown(Session.of(msgs))  # issue 20: top ten of each ledger, when timed
    if ledger_md:
        text += "\n" + scrub.text(ledger_md)
    from inductor_step.session.numerics import report_markdown as numerics_md  # noqa: PLC0415 - issue 29

    num_md = numerics_md(Session.of(msgs))
    if num_md:
        text += "\n" + scrub.text(num_md)
    from inductor_step.session.blame import report_markdown as blame_md  # noqa: PLC0415

    blame_text = blame_md(msgs, Session.of(msgs))  # the verdicts, their steps and repro (session.blame)
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
