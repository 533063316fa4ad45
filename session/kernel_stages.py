"""A kernel's lower stages (TTIR ... SASS, x86 asm) as pane 6's ``t`` shows them: texts, line maps, instruction counts.

No Textual, no torch: :class:`KernelStages` is read from a run message's ``kernels[].stages`` (recorded live by the
run stage: tracer.triton_stages.live_stages, tracer.cpu_disasm) or from ``inductor-step lower``'s JSON answer
(tracer.lower: the kernel compiled again with the installed Triton); :func:`stage_line` says what one shown stage
line came from (Triton line, its instructions by kind, buffer, FX nodes, user line).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from inductor_step.session.code_lines import instruction_counts, instruction_summary, stage_lines


@dataclass(frozen=True)
class KernelStages:
    """One kernel's lower stages, or why there are none.

    - ``texts``: stage -> its text (``"ttir"``, ``"ttgir"``, ``"llir"``, ``"ptx"``, ``"sass"``; a C++ kernel's
      ``"asm"``, objdump's disassembly of its compiled function); {} when none.
    - ``error``: why the stages could not be made (``inductor-step lower`` failed, no session file); "" when they were.
    - ``missing``: why a stage is absent from the recording (the tracer's ``missing``); "" when it said nothing.
    - ``source``: where they were recorded (the tracer's ``source``: "recorded live ..."); "" for an offline
      lowering, which ``triton`` (the installed Triton's version) and ``target`` (``cuda:90``, the recorded
      target) describe instead.
    - ``raw``: the dict they were read from (``{"stages", "maps": {"lines", "counts"}, "sass_info", ...}``), which
      :mod:`inductor_step.session.code_lines` reads for line maps and instruction counts.
    """

    texts: Mapping[str, str] = field(default_factory=dict)
    error: str = ""
    missing: str = ""
    source: str = ""
    triton: str | None = None
    target: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, d: Mapping[str, Any]) -> "KernelStages":
        """Read from a run kernel's ``stages`` or one row of ``inductor-step lower --json``'s answer."""
        return cls(texts=dict(d.get("stages") or {}), error=str(d.get("error") or ""),
                   missing=str(d.get("missing") or ""), source=str(d.get("source") or ""),
                   triton=d.get("triton"), target=d.get("target"), raw=d)

    @classmethod
    def failed(cls, why: str) -> "KernelStages":
        """No stages, for the one-line reason ``why``."""
        return cls(error=why)

    @property
    def where(self) -> str:
        """Where the stages come from, for the stage's head line."""
        return self.source or f"compiled here with Triton {self.triton} for {self.target}"

    def lines(self, view: str) -> list[int | None]:
        """Stage ``view``'s 0-based line -> the 1-based source line it came from (None: none)."""
        return stage_lines(self.raw, view)

    def summary(self, view: str, source: str) -> list[str]:
        """For PTX, SASS and x86 asm: one comment line per source line that became memory, spill or branch
        instructions, with their counts by kind, after SASS's registers and spills
        (:func:`inductor_step.session.code_lines.instruction_summary`); [] for another view."""
        return instruction_summary(self.raw, view, source)

    def head(self, label: str, kernel: str, view: str, source: str) -> str:
        """The lines above stage ``view``'s text (called ``label``): what and where from, then :meth:`summary`."""
        out = self.summary(view, source)
        return f"// {label} of {kernel} ({self.where}; t: next stage)\n" + "\n".join(out) + ("\n" if out else "")

    def counts(self, view: str, source_line: int) -> dict[str, int]:
        """The instructions of stage ``view`` that source line ``source_line`` (1-based) became, by kind."""
        return instruction_counts(self.raw, view, source_line)


def recorded_stages(run: Any, kernel: str) -> KernelStages | None:
    """Kernel ``kernel``'s stages as the run stage recorded them in ``run`` (a run message's record), None when it
    recorded none (no run, no ``stages``, or only why they are missing)."""
    for k in (run.kernels if run is not None else None) or []:
        st = k.stages
        if k.name == kernel and isinstance(st, dict) and st.get("stages"):
            return KernelStages.of(st)
    return None


def lowered_stages(rows: Sequence[Mapping[str, Any]], kernel: str) -> KernelStages | None:
    """Kernel ``kernel``'s row of ``inductor-step lower --json``'s answer (``[{"graph", "kernel", "stages",
    "maps", "triton", "target"} | {"kernel", "error"}]``), None when it has none."""
    hit = next((r for r in rows if r.get("kernel") == kernel), None)
    return KernelStages.of(hit) if hit is not None else None


@dataclass(frozen=True)
class StageLine:
    """What one shown line of a lower stage came from (:func:`stage_line`).

    - ``label``: the stage's name (``"PTX"``); ``line``: the 1-based line in the stage's text.
    - ``source_line``: the kernel's 1-based source line it came from (Triton or C++); ``text``: that line, stripped.
    - ``counts``: the instructions that source line became in this stage, by kind (``{"ld.global.v4": 2}``;
      tracer.stage_lines; ``"other"`` left out).
    - ``buffer``: the IR buffer that source line loads or stores (``buf3``; session.store.Store.line_buffers), None.
    - ``fx_nodes``: that buffer's post-grad FX nodes; ``user_line``: its first user line (``model.py:12``), "".
    """

    label: str
    line: int
    source_line: int
    text: str
    counts: Mapping[str, int]
    buffer: str | None
    fx_nodes: Sequence[str]
    user_line: str

    @property
    def said(self) -> str:
        """The status line's sentence: ``PTX line 7 <- Triton line 12: tmp0 = ... [ld.global x1] · buf3 · FX ...``."""
        out = f"{self.label} line {self.line} <- Triton line {self.source_line}: {self.text}"
        kinds = ", ".join(f"{k} x{n}" for k, n in sorted(self.counts.items()))
        if kinds:
            out += f" [{kinds}]"
        if self.buffer:
            out += f" · {self.buffer}"
        if self.fx_nodes:
            out += f" · FX {', '.join(self.fx_nodes[:3])}"
        if self.user_line:
            out += f" · {self.user_line}"
        return out


def stage_line(stages: KernelStages, view: str, label: str, shown: int, source: str,
               line_buffers: Mapping[int, str], links: Any) -> StageLine | None:
    """What shown line ``shown`` (1-based, in the text :meth:`KernelStages.head` tops) of stage ``view`` came from;
    None on a head line or a stage line no source line made.  ``source``: the kernel's source; ``line_buffers``:
    its source line -> buffer (session.store.Store.line_buffers of the kernel); ``links``: the graph's links
    (a ``Links`` record)."""
    lines = stages.lines(view)
    i = shown - 1 - stages.head(label, "", view, source).count("\n")
    if not 0 <= i < len(lines) or lines[i] is None:
        return None
    kl = lines[i]
    src = source.split("\n")
    buf = line_buffers.get(kl)
    b = (links.buffers or {}).get(buf or "") if links else None
    users = (b.user_lines if b else None) or []
    counts = {k: n for k, n in stages.counts(view, kl).items() if k != "other"}
    return StageLine(label=label, line=i + 1, source_line=kl, text=src[kl - 1].strip() if 0 < kl <= len(src) else "",
                     counts=counts, buffer=buf, fx_nodes=tuple((b.fx_nodes if b else None) or []),
                     user_line=users[0] if users else "")
