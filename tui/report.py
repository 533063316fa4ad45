"""``inductor-step report``: a bug-report bundle from a recorded session (standard library only).

``build_report`` writes a directory (optionally also a ``.tar.gz``) holding:

- ``REPORT.md``: a paste-ready GitHub issue body: versions, device, command line, the graphs
  compiled and the stages each reached, where the user stood, the error (one line, traceback in a
  collapsible block), run timings, and the list of files in the bundle;
- ``repro_<cid>_<kind>.py``: Inductor's own ``fx_graph_runnable`` for each graph (``cid`` written
  ``0-0``); for a graph without one, ``graph_<cid>_<kind>.txt``: its post-grad graph, labelled
  as not runnable;
- a copy of the session file, and ``screenshots/`` with copies of the given screenshots.

Privacy: REPORT.md never holds environment variables, and absolute paths outside the current
working directory become ``<path>/basename`` (``torch/...``, from the package down, for installed
packages) unless ``include_paths=True``.  The copied session file and the repro files are
included as recorded; REPORT.md says that they contain paths.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import sys
import tarfile
from typing import Any

from inductor_step.tracer.protocol import ALL_STAGES, VARIANT_SEP, with_part, with_subgraph
from inductor_step.tui import trust
from inductor_step.tui.modes import how_compiled_section
from inductor_step.tui.text import break_reasons
from inductor_step.tui.session import Session, fmt_ms as _ms, load_session, session_command, session_parser

REPORT_NAME = "REPORT.md"
#: Longest traceback REPORT.md carries (GitHub caps an issue body at 65,536 characters).
_TB_MAX_CHARS = 24_000
_TB_HEAD_LINES = 80
_TB_TAIL_LINES = 25
_TB_LINE_CHARS = 400


# --------------------------------------------------------------------------- session summary

def cid_slug(compile_id: str | None) -> str:
    """``"[0/1]"`` -> ``"0-1"`` (for file names)."""
    s = str(compile_id or "unknown").strip("[]")
    return re.sub(r"[^0-9A-Za-z_]+", "-", s).strip("-") or "unknown"


def _kind_of(m: dict[str, Any], default: str = "None") -> str:
    """A message's graph kind with its part and subgraph, as graph keys end: ``"forward #2"``,
    ``"inference › true_graph_0"`` (protocol.graph_key); a what-if variant's with its settings
    (``"forward · max_autotune=True"``, issue 32: a variant is a graph of its own in the report, never its original)."""
    kind = with_subgraph(with_part(str(m.get("graph_kind", default)), m.get("part")), m.get("subgraph"))
    return f"{kind}{VARIANT_SEP}{m['variant']}" if m.get("variant") and VARIANT_SEP not in kind else kind


def _slug(kind: str) -> str:
    """A graph kind for a file name: ``"forward #2"`` -> ``forward_2``, a subgraph ``"inference › true_graph_0"``
    -> ``inference__true_graph_0``, ``"inference · max_autotune=True"`` -> ``inference_whatif_max_autotune-True``."""
    base, _sep, variant = kind.partition(VARIANT_SEP)
    out = base.replace(" #", "_").replace(" › ", "__")
    return out + ("_whatif_" + re.sub(r"[^0-9A-Za-z_.]+", "-", variant).strip("-") if variant else "")


def _graphs(msgs: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, dict[str, Any]]]:
    """(compile_id, graph_kind) -> stage -> stop, graphs in the order their first stop came (the
    session index the app uses, :class:`inductor_step.tui.session.Session`); a kind carries its
    part (``"forward #2"``)."""
    session = Session.of(msgs)
    return {(str(st["compile_id"]), _kind_of(st)): stages
            for stages in session.by_graph.values() for st in list(stages.values())[:1]}


# --------------------------------------------------------------------------- privacy

# An absolute POSIX path: starts at a "/" that does not follow a word character, ":" (URLs),
# "/" or "." -- except right after a compiler flag such as -I/usr/include.
_PATH_RE = re.compile(
    r"(?:(?<=-I)|(?<=-L)|(?<=-B)|(?<![\w:/.\])}>~-]))"
    r"/(?:[\w.+@~%=-]+/)*[\w.+@~%=-]+/?"
)
_PKG_DIRS = ("site-packages", "dist-packages")


class PathScrubber:
    """Rewrites absolute paths in text: ``<path>/basename`` unless under ``cwd``.

    Paths under ``cwd`` become relative to it, except paths in torch's Inductor cache
    (``torchinductor_<user>``) and installed packages, which are always rewritten.
    """

    def __init__(self, cwd: str | None = None, *, keep: bool = False) -> None:
        self.keep = keep
        cwd = os.path.realpath(cwd or os.getcwd())
        self.cwd = None if cwd == os.sep else cwd.rstrip(os.sep)

    def path(self, p: str) -> str:
        if self.keep or not p.startswith("/"):
            return p
        trail = "/" if p.endswith("/") and len(p) > 1 else ""
        core = p.rstrip("/") or "/"
        parts = core.split("/")
        for pkg in _PKG_DIRS:
            if pkg in parts:
                rest = parts[len(parts) - parts[::-1].index(pkg):]
                # installed code from the package down, as torch's traces and tlparse show it (issue 33.3)
                return "/".join(rest) + trail if rest else "<site-packages>" + trail
        in_cache = any(seg.startswith("torchinductor_") for seg in parts)
        if self.cwd and not in_cache and (core == self.cwd or core.startswith(self.cwd + "/")):
            rel = os.path.relpath(core, self.cwd)
            return rel + trail
        base = os.path.basename(core)
        return f"<path>/{base}{trail}" if base else "<path>"

    def text(self, s: str) -> str:
        if self.keep or not s:
            return s
        return _PATH_RE.sub(lambda m: self.path(m.group(0)), s)


# --------------------------------------------------------------------------- markdown helpers

def _fence(text: str, lang: str = "") -> str:
    """A fenced code block that survives backticks inside ``text``."""
    longest = max((len(r) for r in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def _cell(s: Any) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def _one_line(s: Any, limit: int = 300) -> str:
    line = " ".join(str(s or "").split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def shorten_traceback(tb: str) -> tuple[str, bool]:
    """A traceback short enough for an issue body: head, compiler ``error:`` lines, tail.

    Returns (text, truncated).
    """
    lines = [ln if len(ln) <= _TB_LINE_CHARS else ln[: _TB_LINE_CHARS - 1] + "…" for ln in tb.rstrip().splitlines()]
    text = "\n".join(lines)
    if len(lines) <= _TB_HEAD_LINES + _TB_TAIL_LINES and len(text) <= _TB_MAX_CHARS:
        return text, text != tb.rstrip()
    head = lines[:_TB_HEAD_LINES]
    tail = lines[-_TB_TAIL_LINES:]
    middle = lines[_TB_HEAD_LINES:-_TB_TAIL_LINES]
    # the lines a compiler or Triton error is really about, with one line of context
    keep: list[str] = []
    for i, ln in enumerate(middle):
        if re.search(r"\berror\b\s*:|\bError\b:", ln) and len(keep) < 40:
            keep.extend(middle[i:i + 2])
    out = head[:]
    if keep:
        out.append(f"... [{len(middle)} lines omitted; the error lines among them:] ...")
        out.extend(keep)
        out.append("...")
    else:
        out.append(f"... [{len(middle)} lines omitted] ...")
    out.extend(tail)
    text = "\n".join(out)
    if len(text) > _TB_MAX_CHARS:
        text = text[: _TB_MAX_CHARS // 2] + "\n...\n" + text[-_TB_MAX_CHARS // 2:]
    return text, True


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
        L.append(f"| {label} | {_cell(h.get(key) if h.get(key) is not None else 'not installed' if key == 'triton' else '-')} |")
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

    from inductor_step.tui.compile_time import report_section  # noqa: PLC0415 - issue 30
    from inductor_step.tui.session import Session  # noqa: PLC0415

    ctime = report_section(Session.of([m for m in msgs if m.get("type") in ("compile_time", "stop")]))
    if ctime:
        L.append(scrub.text(ctime.replace("## Compile time", "#### Compile time", 1)))

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
    session whose level-by-level diff against this one (:func:`inductor_step.tui.diff.diff_files`)
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
    from inductor_step.tui.ledger import report_markdown  # noqa: PLC0415
    from inductor_step.tui.session import Session  # noqa: PLC0415

    ledger_md = report_markdown(Session.of(msgs))  # issue 20: top ten of each ledger, when timed
    if ledger_md:
        text += "\n" + scrub.text(ledger_md)
    if diff_with:
        from inductor_step.tui.diff import diff_files  # noqa: PLC0415

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
        from inductor_step.tui.export import collective_schedule  # noqa: PLC0415

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
    """The ranks' comparison (:func:`inductor_step.tui.ranks.compare_ranks`, what pane 0 shows) of
    the ranks whose sessions could be read, with the job file's states and messages."""
    from inductor_step.tui.ranks import compare_ranks  # noqa: PLC0415
    from inductor_step.tui.session import Session  # noqa: PLC0415

    sessions = {v.rank: Session.of(v.msgs) if v.msgs is not None else None for v in views}
    return compare_ranks(sessions, states={v.rank: v.entry.get("state") for v in views if v.entry.get("state")},
                         messages={v.rank: v.entry.get("message") for v in views if v.entry.get("message")})


def _times_cell(g: Any) -> str:
    """Whether one graph's kernel times agree across ranks (pane 0's rule: tui.ranks.TIME_RATIO)."""
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
        L += ["", "Compared level by level as pane 0 compares them (`tui/ranks.py`): Dynamo graph, post-grad graph, "
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
    from inductor_step.tracer.protocol import job_paths, read_job, write_job  # noqa: PLC0415

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
    from inductor_step.tui.diff import diff_files  # noqa: PLC0415

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


# --------------------------------------------------------------------------- CLI

def collect_screenshots(items: list[str], session_path: str) -> list[str]:
    """Screenshot files from ``items``: files as given; in a directory, the files whose names start
    with the session file's stem (the UI names screenshots ``<session stem>_<graph>_<stage>_<time>``)."""
    stem = os.path.splitext(os.path.basename(session_path))[0]
    out: list[str] = []
    for it in items:
        if os.path.isdir(it):
            for name in sorted(os.listdir(it)):
                p = os.path.join(it, name)
                if name.startswith(stem) and os.path.isfile(p):
                    out.append(p)
        elif os.path.isfile(it):
            out.append(it)
        else:
            raise FileNotFoundError(f"no such screenshot file or directory: {it}")
    return out


def build_report_parser() -> argparse.ArgumentParser:
    p = session_parser("inductor-step report",
                       "Make a bug-report bundle from a recorded session: REPORT.md (a GitHub issue body), "
                       "a minimal repro per graph, the session file and screenshots. Given a job file "
                       "(X.job.json), every rank's session, the job file, the launcher log and a REPORT.md "
                       "covering every rank.")
    p.add_argument("--out", metavar="DIR", help="bundle directory (default: inductor-step-sessions/report-<session stem>; "
                                                "for a job file, report-<job stem> beside the job file)")
    p.add_argument("--screenshots", metavar="DIR_OR_FILE", nargs="+", action="extend",
                   help="screenshot files, or directories to take the files named <session stem>* from "
                        "(default: inductor-step-sessions/screenshots, where `s` saves, when it exists)")
    p.add_argument("--archive", action="store_true", help="also write <DIR>.tar.gz and print its path")
    p.add_argument("--include-paths", action="store_true",
                   help="keep absolute paths in REPORT.md (default: <path>/name outside the working directory)")
    p.add_argument("--diff", metavar="OTHER", help="add the level-by-level diff of OTHER (a session, .jsonl) "
                   "against this one: a summary in REPORT.md, the whole in DIFF.txt")
    return p


def main_report(argv: list[str]) -> int:
    """``inductor-step report SESSION [...]`` (``argv``: the arguments after ``report``)."""
    args = build_report_parser().parse_args(argv)
    from inductor_step.tracer.protocol import is_job_file, job_paths  # noqa: PLC0415

    if is_job_file(args.session):
        problems: list[str] = []

        def job_work() -> str:
            if args.diff:
                raise ValueError("--diff compares two sessions; give it one rank's session, not a job file")
            stem = os.path.basename(job_paths(args.session)[1])
            items = args.screenshots or ([DEFAULT_SHOTS] if os.path.isdir(DEFAULT_SHOTS) else [])
            shots = collect_screenshots(items, stem + ".jsonl") if items else []
            path, bad = build_job_report(args.session, args.out, screenshots=shots,
                                         include_paths=args.include_paths, archive=args.archive)
            problems.extend(bad)
            return path

        rc = session_command(args.session, job_work)
        for line in problems:
            print(f"inductor-step: {line}", file=sys.stderr)
        return rc or (2 if problems else 0)

    def work() -> str:
        if args.screenshots:
            shots = collect_screenshots(args.screenshots, args.session)
        elif os.path.isdir(DEFAULT_SHOTS):
            shots = collect_screenshots([DEFAULT_SHOTS], args.session)
        else:
            shots = []
        if args.diff and not os.path.isfile(args.diff):
            raise FileNotFoundError(f"no such session file: {args.diff}")
        return build_report(args.session, args.out, screenshots=shots, include_paths=args.include_paths,
                            archive=args.archive, diff_with=args.diff)

    return session_command(args.session, work)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main_report(sys.argv[1:]))
