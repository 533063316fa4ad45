"""Pane 6's line numberings and what it marks: a kernel's source lines, the wrapper's, the lines as shown, lower stages'.

Four numberings meet in the codegen pane, all 1-based:

- a kernel's **source line** (Triton or C++ source as Inductor generated it; the links'
  ``buffers[b].kernel_lines`` count in it, tracer.kernel_lines);
- the **wrapper line** (Inductor's output code; a kernel's ``KernelSpan``: ``body`` is the wrapper
  line of its source's first line, ``def`` its ``async_compile`` definition, ``call`` an extern
  call's line; store.Store.kernel_spans);
- the **shown line**: the wrapper as the pane shows it, under ``offset`` head lines (the codegen
  error, how the graph was compiled) and with notes inserted above some kernels (``inserts``,
  session.modes.annotate);
- a **stage line** of a lower stage (TTIR ... SASS, x86 asm): ``lines[i]`` is the source line that
  stage line ``i + 1`` came from (tracer.stage_lines), ``counts[source line][kind]`` its instructions.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from inductor_step.session.links import buffer_lines, entry
from inductor_step.session.modes import shown_line, wrapper_line


@dataclass(frozen=True)
class ShownWrapper:
    """How the wrapper's lines map to the lines shown: ``offset`` lines above it, ``inserts`` the
    ``(wrapper line, lines inserted before it)`` of the notes (session.modes.annotate), ``spans``
    the kernels' spans (kernel name -> ``KernelSpan``)."""

    offset: int = 0
    inserts: list[tuple[int, int]] = field(default_factory=list)
    spans: dict[str, dict[str, Any]] = field(default_factory=dict)

    def shown(self, line: int) -> int:
        """Wrapper line ``line`` -> its shown line."""
        return shown_line(line, self.inserts) + self.offset

    def wrapper(self, shown: int) -> int | None:
        """Shown line ``shown`` -> its wrapper line; None on a head or note line."""
        if shown <= self.offset:
            return None
        return wrapper_line(shown - self.offset, self.inserts)

    def marks_for(self, links: dict[str, Any] | None, kernel: str, buffer: str | None) -> list[tuple[int, int]]:
        """The shown [first, last] line ranges of ``buffer``'s lines in ``kernel``'s source
        (:func:`inductor_step.session.links.buffer_lines`); else the whole kernel from its notes to its
        last line (an extern call: its call line); [] when the wrapper does not hold ``kernel``."""
        span = self.spans.get(kernel) or {}
        first = span.get("body") or span.get("call")
        ranges = buffer_lines(links, buffer, kernel)
        if first and ranges:
            return [(self.shown(first + a - 1), self.shown(first + e - 1)) for a, e in ranges]
        whole = span.get("def") or ([span["call"], span["call"]] if span.get("call") else None)
        if not whole:
            return []
        top = shown_line(whole[0], self.inserts) - sum(n for at, n in self.inserts if at == whole[0]) + self.offset
        return [(top, self.shown(whole[1]))]

    def kernel_line_at(self, shown: int) -> tuple[str, int] | None:
        """The kernel and its source line at shown line ``shown``, None outside every kernel's source."""
        line = self.wrapper(shown)
        if line is None:
            return None
        starts, items = kernel_starts(self.spans)
        i = bisect.bisect_right(starts, line) - 1
        if i < 0 or not items[i][0] <= line <= items[i][1]:
            return None
        _a, _e, kernel, body = items[i]
        return kernel, line - body + 1


def kernel_starts(spans: dict[str, dict[str, Any]]) -> tuple[list[int], list[tuple[int, int, str, int]]]:
    """The kernels' spans sorted by first wrapper line: (first lines, [(first, last, kernel, body line)])."""
    items = []
    for name, s in spans.items():
        if s.get("def"):
            items.append((s["def"][0], s["def"][1], name, s.get("body") or s["def"][0]))
        elif s.get("call"):
            items.append((s["call"], s["call"], name, s["call"]))
    items.sort()
    return [i[0] for i in items], items


def stage_marks(lines: list[int | None], wanted: set[int], top: int) -> list[tuple[int, int]]:
    """The shown line ranges of a lower stage's lines that came from source lines ``wanted``, the
    stage's text shown under ``top`` head lines; adjacent lines join into one range."""
    marks: list[tuple[int, int]] = []
    for r in (i + top + 1 for i, ln in enumerate(lines) if ln is not None and ln in wanted):
        if marks and r == marks[-1][1] + 1:
            marks[-1] = (marks[-1][0], r)
        else:
            marks.append((r, r))
    return marks


def buffer_source_lines(links: dict[str, Any] | None, buffer: str | None, kernel: str) -> set[int]:
    """Every source line of ``kernel`` the links give to ``buffer`` (its ``kernel_lines``; the kernel
    need not list the buffer as computed: a load of an input counts)."""
    ranges = (entry(links, "buffers", buffer).get("kernel_lines") or {}).get(kernel) or []
    return {n for a, e in ranges for n in range(a, e + 1)}


def instruction_summary(stages: dict[str, Any], view: str, source: str) -> list[str]:
    """For PTX, SASS and x86 asm (``view``): one comment line per source line that became memory,
    spill or branch instructions, with their counts by kind (x86 asm: every kind), after, for SASS,
    the registers and spills ``ptxas -v`` reported.  ``stages``: a kernel's recorded lower stages
    (the run message's ``kernels[].stages`` or ``inductor-step lower``'s answer); ``source`` its
    source.  [] for another view."""
    if view not in ("ptx", "sass", "asm"):
        return []
    counts = ((stages.get("maps") or {}).get("counts") or {}).get(view) or {}
    src = source.split("\n")
    out = []
    info = stages.get("sass_info") or {}
    if view == "sass" and info.get("n_regs") is not None:
        out.append(f"// {info['n_regs']} registers/thread, spills {info.get('spill_store_bytes', '?')} B stored / "
                   f"{info.get('spill_load_bytes', '?')} B loaded (ptxas -v); line markers from "
                   f"{info.get('lines_from', '?')}")
    for kl in sorted(counts, key=int):
        kinds = dict(counts[kl]) if view == "asm" else {k: n for k, n in counts[kl].items() if k not in ("other", "math")}
        if not kinds:
            continue
        n = int(kl)
        text = src[n - 1].strip() if 0 < n <= len(src) else ""
        out.append(f"// line {n:>3} {text[:60]:<60} " + ", ".join(f"{k} x{v}" for k, v in sorted(kinds.items())))
    return out


def instruction_counts(stages: dict[str, Any], view: str, source_line: int) -> dict[str, int]:
    """The instructions of stage ``view`` that source line ``source_line`` became, by kind."""
    return (((stages.get("maps") or {}).get("counts") or {}).get(view) or {}).get(str(source_line)) or {}


def stage_lines(stages: dict[str, Any], view: str) -> list[int | None]:
    """Stage ``view``'s line -> the source line it came from (None: none), by 0-based stage line."""
    return ((stages.get("maps") or {}).get("lines") or {}).get(view) or []
