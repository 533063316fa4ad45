"""The diff's "why" level: Dynamo's guards parsed, the one that failed for a recompile and its user line."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence


# --------------------------------------------------------------------------- guards

_GUARD = re.compile(r"^(?P<indent>[| ]*)\+- (?P<kind>[A-Z_]+)(?::\s*(?P<rest>.*))?$")
_MANAGER = re.compile(r"^(?P<indent>[| ]*)\+- GuardManager: source=(?P<source>.*?), accessed_by=")
_WHERE = re.compile(r"#\s+(?P<where>[^#]*?\S+\.py:\d+ in [\w<>.]+)(?P<extra>.*)$")
_REASON = re.compile(r"^\s*(?P<cid>\d+/\d+(?:_\d+)?):\s*(?P<text>.*)$", re.S)


@dataclass
class Guard:
    """One guard of ``dynamo_cpp_guards_str``: ``kind`` (``TENSOR_MATCH``), ``expr`` (the check),
    ``source`` (what it guards, ``L['x']``, from its GuardManager), ``code`` (the user's code Dynamo
    wrote after it), ``where`` (``path:line in fn``; empty when Dynamo wrote none), ``line``
    (1-based, in the guards text)."""

    kind: str
    expr: str
    source: str
    code: str
    where: str
    line: int

    @property
    def user_line(self) -> str:
        """``where`` and the code, as one line (``path:8 in f: return x * w``)."""
        if not self.where:
            return ""
        return self.where + (f": {self.code}" if self.code else "")


def parse_guards(text: str | None) -> list[Guard]:
    """The guards of a ``guards`` message's text (one per ``+- KIND: ...`` line; GuardManager lines
    give the source of the guards under them)."""
    out: list[Guard] = []
    sources: list[tuple[int, str]] = []
    comments: dict[str, tuple[str, str]] = {}
    for i, line in enumerate((text or "").split("\n")):
        m = _MANAGER.match(line)
        if m:
            depth = len(m.group("indent"))
            while sources and sources[-1][0] >= depth:
                sources.pop()
            sources.append((depth, m.group("source")))
            continue
        m = _GUARD.match(line)
        if not m or m.group("kind") in ("RootGuardManager",):
            continue
        depth = len(m.group("indent"))
        while sources and sources[-1][0] >= depth:
            sources.pop()
        rest = m.group("rest") or ""
        expr, code, where = rest, "", ""
        if "#" in rest:
            expr, _, comment = rest.partition("  #")
            if not _ and "#" in rest:  # a single space before the comment
                expr, _, comment = rest.partition(" #")
            comment = "#" + comment
            if comment not in comments:  # guards installed by one user line share its comment: read it once
                comments[comment] = _code_where(comment)
            code, where = comments[comment]
        out.append(Guard(m.group("kind"), expr.strip(), sources[-1][1] if sources else "", code, where, i + 1))
    return out


def _code_where(comment: str) -> tuple[str, str]:
    """A guard's comment (``# code  # path.py:8 in f``) -> (the user's code, where)."""
    w = _WHERE.search(comment)
    if not w:
        return comment.lstrip("#").strip(), ""
    where = w.group("where").strip()
    code = comment[:w.start()].strip().lstrip("#").strip()
    if "#" in where:  # '# code  # where': the first part is the code
        code, where = where.rsplit("#", 1)
        code, where = code.strip(), where.strip()
    return code, where


def split_reason(reason: str) -> tuple[str | None, str]:
    """A recompile reason as Dynamo writes it (``"0/0: tensor 'x' size mismatch ..."``): the compile
    id whose guards failed (``"[0/0]"``) and the reason's text; (None, reason) when it names none."""
    m = _REASON.match(str(reason))
    if not m:
        return None, str(reason).strip()
    return f"[{m.group('cid')}]", m.group("text").strip()


def failed_guards(reason: str, guards: list[Guard]) -> list[Guard]:
    """The guards a recompile reason's text is about: the guards whose check it quotes, else the
    tensor guards (``TENSOR_MATCH``) of the local it names (``tensor 'x'`` -> ``L['x']``), else
    every guard on that source."""
    text = split_reason(reason)[1]
    quoted = [g for g in guards if g.expr and (g.expr in text or (len(text) > 8 and text in g.expr))]
    if quoted:
        return quoted
    names = re.findall(r"'([^']+)'", text)
    srcs = re.findall(r"([LG]\[[^\]]+\](?:\[[^\]]+\]|\.\w+)*)", text)
    for n in names:
        srcs += [f"L['{n}']", f"G['{n}']"]
    for want in srcs:
        on = [g for g in guards if g.source == want or g.source.startswith(want + ".") or want in g.expr]
        tm = [g for g in on if g.kind == "TENSOR_MATCH"]
        if tm or on:
            return tm or on
    return []


def later_failures(compile_id: str, dynamo_stops: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """(the later compile id, the reason) for every recompile reason of ``dynamo_stops`` that names
    compile ``compile_id``'s guards (``"[0/0]"``)."""
    out = []
    for s in dynamo_stops:
        for r in s.get("recompile_reasons") or []:
            cid, text = split_reason(r)
            if cid == compile_id:
                out.append((str(s.get("compile_id")), text))
    return out


def guard_list(compile_id: str, guards_text: str | None, dynamo_stops: Sequence[dict[str, Any]],
               script_dir: str | None = None, max_chars: int = 1_000_000) -> str:
    """The Dynamo pane's guard list for compile ``compile_id``: each guard (kind, check) with the user
    line that installed it (Dynamo's guard provenance) and, for the ones that failed in a later
    recompile (a later dynamo stop's ``recompile_reasons`` naming this compile), FAILED, where and
    why.  Commented lines (``# ``), failed guards first.  Guards over ``max_chars`` (a large graph's
    run to megabytes) list only the failed ones."""
    failures = later_failures(compile_id, dynamo_stops)
    text = guards_text or ""
    big = len(text) > max_chars
    if big:  # a large graph's guards are megabytes: list only the lines a failure names
        names = {n for _c, r in failures for n in re.findall(r"'([^']+)'", r)}
        keep = [ln if any(f"'{n}'" in ln for n in names) or "GuardManager: source=" in ln else ""
                for ln in text.split("\n")] if names else []
        text = "\n".join(keep)
    guards = parse_guards(text)
    if not guards:
        return (f"# ---- the guards of {compile_id} are {len(guards_text or '') // 1000} KB: listed with their user "
                "lines only when under 1 MB (the tree below has them) ----") if big else ""
    failed: dict[int, list[tuple[str, str]]] = {}
    for cid, why in failures:
        for g in failed_guards(why, guards):
            failed.setdefault(g.line, []).append((cid, why))
    if big:
        guards = [g for g in guards if g.line in failed]
    head = [f"# ---- {len(guards)} {'failed ' if big else ''}guards of {compile_id}, each with the user line "
            "that installed it"
            + (f"; {len(failed)} failed in a later recompile" if failed else "; none failed in a later recompile")
            + " ----"]
    lines: list[str] = []
    shorts: dict[str, str] = {}  # each user line shortened once: a large graph's guards share a few hundred
    for g in sorted(guards, key=lambda g: (g.line not in failed, g.line)):
        if g.where and g.where not in shorts:
            shorts[g.where] = _short_where(g.where, script_dir)
        where = shorts[g.where] if g.where else "(no user line: installed by Dynamo itself)"
        expr = g.expr if len(g.expr) <= 160 else g.expr[:157] + "..."
        if g.line in failed:
            for cid, text in failed[g.line]:
                lines.append(f"# FAILED in {cid}: {g.kind} {expr}")
                lines.append(f"#     why: {text}")
            lines.append(f"#     installed by: {where}" + (f": {g.code}" if g.code else ""))
        else:
            lines.append(f"# {g.kind} {expr}  <- {where}")
    return "\n".join(head + lines)


def _short_where(where: str, script_dir: str | None) -> str:
    from inductor_step.session.paths import short_path  # noqa: PLC0415 - the one path rule

    return short_path(where, script_dir) or where
