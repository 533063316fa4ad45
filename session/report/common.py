"""The report's shared pieces: graph slugs, the path scrubber, markdown helpers, traceback shortening."""

from __future__ import annotations

import os
import re
from typing import Any

from inductor_step.session.format import GraphKey
from inductor_step.session.store import Store


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


def report_key(m: dict[str, Any], default: str = "None") -> GraphKey:
    """The graph a message belongs to (:meth:`GraphKey.of`: compile id, kind, part, subgraph, what-if variant;
    a variant is a graph of its own in the report, never its original); a message without a ``graph_kind``
    gets kind ``default``."""
    return GraphKey.of(m) if "graph_kind" in m else GraphKey.of(m).replace(kind=default)


def error_graph(e: dict[str, Any]) -> str | None:
    """The graph an error message names, as its label (``"[0/0] forward #2"``), its compile id alone when it names
    no kind; None when it names no compile."""
    if not e.get("compile_id"):
        return None
    return str(report_key(e)) if e.get("graph_kind") else str(e["compile_id"]).strip()


def _slug(key: GraphKey) -> str:
    """A graph's kind for a file name: ``forward #2`` -> ``forward_2``, a subgraph ``inference › true_graph_0``
    -> ``inference__true_graph_0``, a variant ``inference · max_autotune=True`` -> ``inference_whatif_max_autotune-True``."""
    out = key.kind + (f"_{key.part}" if key.part else "") + "".join(f"__{s}" for s in key.subgraphs)
    return out + ("_whatif_" + re.sub(r"[^0-9A-Za-z_.]+", "-", key.variant).strip("-") if key.variant else "")


def _graphs(msgs: list[dict[str, Any]]) -> dict[GraphKey, dict[str, dict[str, Any]]]:
    """Graph key -> stage -> stop, graphs in the order their first stop came (the session index the app uses,
    :class:`inductor_step.session.store.Store`)."""
    session = Store.of(msgs)
    return {report_key(st): stages for stages in session.by_graph.values() for st in list(stages.values())[:1]}


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
                # installed code from the package down, as torch's traces and tlparse show it
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
