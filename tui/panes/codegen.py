"""Pane 6: the generated kernels (Triton on GPU, C++ on CPU, extern calls) in Inductor's wrapper, the
selected buffer's loads and stores marked in its kernel."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from textual import on

from inductor_step.tui.codeview import CodeView
from inductor_step.tui.panes.base import Detail, StagePane, T
from inductor_step.tui.keys import CODEGEN_BINDINGS
from inductor_step.session.format.messages import InputsSaved
from inductor_step.session.format.records import Record
from inductor_step.tui.panes.triton_view import TritonStages, views_for
from inductor_step.session.code_lines import ShownWrapper
from inductor_step.session.modes import annotate, codegen_head, kernel_backend, kernel_notes
from inductor_step.session.text import joined
from inductor_step.session.links import related


def error_head(err: dict[str, Any] | None) -> str:
    """The failing compile's error, for the top of the pane: its message and, for a C++ compile,
    the compiler's first ``error:`` lines (they sit under pages of warnings in the log)."""
    if not err:
        return ""
    lines = [f"# codegen failed: {err.message}"]
    tb = str(err.traceback or "")
    errors = [ln.strip() for ln in tb.splitlines() if " error: " in ln or ln.strip().startswith("error:")][:6]
    lines += [f"#   {ln}" for ln in errors]
    lines.append("# (the whole log is in the session's error message; the generated code follows)")
    return "\n".join(lines) + "\n\n"


class CodegenPane(StagePane):
    BINDINGS = CODEGEN_BINDINGS  # t, x: Textual reads BINDINGS only from widget classes
    stage = "codegen"
    title = "6 Code"
    columns = ("kernel", "backend", "buffers", "fused nodes")
    #: the kernel's name gives up cells, cut in the middle: at 80 columns nanoGPT's
    #: ``torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default#0`` pushed backend and buffers off screen
    fit = ((0,), 2)
    name_columns = (0,)

    #: the graph whose kernels ``t`` last showed: another graph's kernels open at their source (t's asm or PTX
    #: stayed on, so the next stop's kernels read "x86 asm ... not recorded", or lowered a Triton kernel unasked)
    _t_graph: Any = None

    def __init__(self) -> None:
        super().__init__()
        #: the kernel's lower stages that t shows, and x and X (tui.panes.triton_view)
        self.triton = TritonStages(self)

    def show(self, force: bool = False, detail: bool = True) -> None:
        graph = self.app.view.graph
        if graph != self._t_graph:
            self._t_graph, self.triton.view = graph, "source"
        super().show(force, detail)

    def action_triton_stage(self) -> None:
        """t: the kernel's next lower stage (:meth:`TritonStages.next_stage`)."""
        self.triton.next_stage()

    def action_kernel_repro(self) -> None:
        """x: the kernel's standalone repro (:meth:`TritonStages.kernel_repro`)."""
        self.triton.kernel_repro()

    def action_save_inputs(self) -> None:
        """X: the kernel's real arguments saved by the live agent (:meth:`TritonStages.save_inputs`)."""
        self.triton.save_inputs()

    def session_message(self, msg: Record) -> None:
        """``inputs_saved`` (X's answer): the repro that loads the saved arguments (:meth:`TritonStages.inputs_saved`)."""
        if msg.SCHEMA is InputsSaved:
            self.triton.inputs_saved(msg)

    def rows(self, data: dict[str, Any]) -> tuple[Sequence[str], Callable[[int], tuple]]:
        ks = data.kernels or []
        return [k.name for k in ks], \
            lambda i: (T(ks[i].name, "bold"), T(kernel_backend(ks[i]), "magenta"),
                       T(joined(ks[i].buffers)), T(joined(ks[i].fused_nodes)))

    def _text(self, data: dict[str, Any]) -> tuple[str, int]:
        """The pane's text (the wrapper, under the error when codegen failed) and how many lines
        the error adds above the wrapper."""
        return self._annotated(data)[:2]

    def _annotated(self, data: dict[str, Any]) -> tuple[str, int, list[tuple[int, int]]]:
        """:meth:`_text`, and where notes went into the wrapper (a template kernel's epilogue
        and the autotuning choices above the kernel they chose, session.modes.annotate)."""
        err = self.app.session.error_for(self.app.view.graph)
        err = err if err and err.stage == "codegen" else None

        def build() -> tuple[str, int, list[tuple[int, int]]]:
            head = error_head(err) + codegen_head(data)
            notes = kernel_notes(data)
            wrapper, inserts = annotate(data.wrapper or "", self.app.session.kernel_spans(self.app.view.graph), notes) \
                if notes else (data.wrapper or "", [])
            return head + wrapper, head.count("\n"), inserts
        return self.app.session.cache.get(("codegen_text", id(data)), (data, err), build)

    def empty(self, data: dict[str, Any]) -> Detail:
        return Detail(self._text(data)[0] or "# no kernels")

    def detail(self, data: dict[str, Any], row: int) -> Detail | None:
        text, off, ins = self._annotated(data)
        ks = data.kernels or []
        if not 0 <= row < len(ks):
            return Detail(text)
        name = ks[row].name
        if self.triton.view in views_for(ks[row].backend)[1:]:  # t shows a lower stage
            staged = self.triton.stage_detail(name, ks[row].source or "")
            if staged is not None:
                return staged
        marks = self._shown_wrapper(off, ins).marks_for(self.links, name, self.app.view.selected)
        return Detail(text, marks=marks, goto=marks[0][0]) if marks else Detail(text)

    def _shown_wrapper(self, off: int, ins: list[tuple[int, int]]) -> ShownWrapper:
        """How the shown text's lines map to the wrapper's and the kernels' (session.code_lines)."""
        return ShownWrapper(off, ins, self.app.session.kernel_spans(self.app.view.graph))

    def current_kernel(self) -> dict[str, Any] | None:
        """The kernel of the table's cursor row (t and x act on it)."""
        data = self.data()
        ks = (data.kernels if data is not None else None) or []
        row = self.table.cursor_row
        return ks[row] if 0 <= row < len(ks) else None

    def row_for(self, data: dict[str, Any], buffer: str) -> int | None:
        """The row of the kernel that computes ``buffer`` (the links list it first)."""
        kernels = related(self.links, "buffers", buffer, "kernels")
        return next((r for r in (self.row_of_key(data, k) for k in kernels) if r is not None), None)

    def buffers_of(self, data: dict[str, Any], row: int) -> list[str]:
        key = self.key_of_row(data, row)
        return related(self.links, "kernels", key, "buffers")

    @on(CodeView.CursorMoved, "#code-codegen")
    def _code_line(self, event: CodeView.CursorMoved) -> None:
        """Reverse link: the kernel line under a person's cursor selects the buffer it loads or stores."""
        if not event.view.has_focus:
            return  # moves made for a selection never select back
        data = self.data()
        if data is None:
            return
        kernel = self.current_kernel()
        if kernel is not None and self.triton.view in views_for(kernel.backend)[1:]:
            said = self.triton.stage_cursor(kernel.name, event.line, kernel.source or "")
            if said:
                self.app.say(said[0])
                if said[1] and said[1] != self.app.view.selected:
                    self.app.select(said[1], said[0])
            return
        _text, off, ins = self._annotated(data)
        at = self._shown_wrapper(off, ins).kernel_line_at(event.line)
        if at is None:
            return  # a head or note line, or no kernel's source
        kernel, kernel_line = at
        name = self.app.session.line_buffers(self.app.view.graph).get(kernel, {}).get(kernel_line)
        if name and name != self.app.view.selected:
            self.app.select(name, f"line {event.line} of {kernel} touches {name}")
