"""Pane 8, the linked view: every IR buffer; for the selected one its FX nodes, scheduler and fused
node, the user's source line and LoopBody, and its kernel with the lines that load and store it."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding

from inductor_step.tui.codeview import CodeView
from inductor_step.tui.compat import BlankHorizontal
from inductor_step.tui.panes.base import Detail, StagePane, T, field_columns
from inductor_step.tui.table import NameColumn, Table
from inductor_step.session.text import joined, linked_info
from inductor_step.session.links import related


#: what Enter opens from a line of the detail (its first words, or the heading of its part): (pane stage, its key)
ENTER_OPENS = (("post-grad FX nodes:", "aot", "2"), ("Dynamo FX nodes:", "dynamo", "1"), ("kernel ", "codegen", "6"),
               ("# your code:", "dynamo", "1"), ("# library code:", "dynamo", "1"), ("# LoopBody of", "loopbody", "5"),
               ("# memory:", "memory", "M"))
#: the status line's answer to Enter on a line that opens nothing
ENTER_HELP = ("Enter in pane 8's detail opens the pane of the line's level at this buffer: the first line 4 (scheduler "
              "node), post-grad FX nodes 2, Dynamo FX nodes 1, a kernel 6, your code 1, the LoopBody 5, memory M; "
              "in the kernel's code 6")

#: the kernel view's label: what its line numbers count from; where the view is narrower (beside the table from 130
#: columns, over the detail at 180), its first words
KERNEL_LINES = "lines counted from the kernel's start (pane 6 counts the wrapper's)"
KERNEL_LINES_SHORT = "lines counted from the kernel's start"


class LinkedPane(StagePane):
    stage = "linked"
    title = "8 Linked"
    BINDINGS = [Binding("enter", "open_line", "Open the line's pane", show=False)]
    columns = ("buffer", "node", "fused node", "kernel")
    #: a FusedSchedulerNode's name (timm: ``op33_op34_op132_..._op136``) and the kernel's give up cells, cut in
    #: the middle: the table's edge cropped the kernel to ``cpp_fused__native_ba``, the same for every kernel
    fit = ((2, 3), 3)

    def compose(self) -> ComposeResult:
        with BlankHorizontal(id="linked-row"):
            yield Table(id="table-linked", cursor_type="row", zebra_stripes=True)
            # side by side right of the table; from 180 columns one over the other, each as wide as the table leaves
            with BlankHorizontal(id="linked-detail"):
                yield CodeView(id="code-linkinfo")
                yield CodeView(id="code-linkkernel")

    def on_mount(self) -> None:
        super().on_mount()
        # below 130 columns the kernel's code goes under the table (StepApp.on_resize keeps it so)
        self.query_one("#linked-row").set_class(self.app.size.width < 130, "narrow")

    @property
    def code(self) -> CodeView:
        return self.query_one("#code-linkinfo", CodeView)

    @property
    def kernel_code(self) -> CodeView:
        return self.query_one("#code-linkkernel", CodeView)

    def data(self) -> dict[str, Any] | None:
        links = self.links
        return links or None

    def fill(self, data: dict[str, Any] | None) -> None:
        super().fill(data)
        if data is None:
            self.kernel_code.set_code("", "text")

    def rows(self, data: dict[str, Any]) -> tuple[Sequence[str], Callable[[int], tuple]]:
        bufs = data.buffers
        names = tuple(bufs)
        partial = data.get("partial")  # before codegen: what lowering and scheduling tell, no kernels yet

        def row(i: int) -> tuple:
            b = bufs[names[i]]
            kernels = T(joined(b.kernels, 2)) if not partial else T("after codegen", "dim")
            return (T(names[i], "bold"), T(b.scheduler_node), T(b.fused_node), kernels)
        return names, row

    def names(self, data: dict[str, Any], keys: tuple[str, ...]) -> dict[int, NameColumn]:
        """The buffer, scheduler node and fused node columns (:meth:`StagePane.names`; the kernels are a list)."""
        bufs = data.buffers
        return {0: NameColumn(lambda: keys, lambda i: T(keys[i])),
                **field_columns(len(keys), lambda i: bufs[keys[i]], {1: "scheduler_node", 2: "fused_node"})}

    def detail(self, data: dict[str, Any], row: int) -> Detail | None:
        names = self.cached_rows(data)[0]
        if not 0 <= row < len(names):
            return None
        sel = names[row]
        b = data.buffers[sel]
        graph = self.app.view.graph
        loopbody = self.app.session.stop_for(graph, "loopbody")
        bodies = loopbody.bodies if loopbody is not None and isinstance(loopbody.bodies, list) else []
        lb = next((x for x in bodies if isinstance(x, dict) and x.node == b.scheduler_node), None)
        text = linked_info(sel, b, data.user_source or {}, lb, self.app.session.script_dir, data.get("partial"))
        mline = memory_line(self.app.session, graph, sel)  # its bytes, lifetime, live at the peak
        if mline:  # wrapped to the LoopBody's width: a longer line widened the view and cost pane 8 a row at 80x24
            import textwrap  # noqa: PLC0415

            text += "\n" + "\n".join(textwrap.wrap(mline, 60, subsequent_indent="#   "))
        return Detail(text)

    def kernel_detail(self, data: dict[str, Any], row: int) -> Detail:
        """The right-hand view: the buffer's (first) kernel's source, its lines marked."""
        names = self.cached_rows(data)[0]
        sel = names[row]
        b = data.buffers[sel]
        kernels = b.kernels or []
        stop = self.app.session.stop_for(self.app.view.graph, "codegen")
        k = next((k for k in (stop.kernels if stop is not None else None) or [] if kernels and k.name == kernels[0]), None)
        if k is None and data.get("partial"):
            return Detail(f"# the kernel that computes {sel} comes with codegen\n# (recorded up to "
                          f"{data.get('partial')}; n continues the compile)", "text")
        if k is None:
            return Detail(f"# no kernel computes {sel}", "text")
        ranges = [tuple(r) for r in (b.kernel_lines or {}).get(kernels[0]) or []]
        return Detail(k.source or "", "cpp" if k.backend == "cpp" else "python", marks=ranges,
                      goto=ranges[0][0] if ranges else None)

    def show_row(self, data: dict[str, Any], row: int) -> None:
        super().show_row(data, row)
        if 0 <= row < len(self.cached_rows(data)[0]):
            d = self.kernel_detail(data, row)
            code = self.kernel_code
            if code.text is not d.text and code.text != d.text:
                code.set_code(d.text, d.lexer)
            # in its top border, where the layout gives it one (below 130 columns, from 180): pane 6 numbers the
            # same line from the wrapper's start (702 here, 927 there)
            code.border_title = self._kernel_lines(code) if d.lexer != "text" else ""
            code.mark(d.marks)
            if d.goto is not None:
                code.goto(d.goto)

    def _kernel_lines(self, code: CodeView) -> str:
        """The kernel view's label that its top border holds whole (the border's corners and a cell each side)."""
        return KERNEL_LINES if code.outer_size.width >= len(KERNEL_LINES) + 4 else KERNEL_LINES_SHORT

    def on_resize(self) -> None:
        """A new size: the kernel view's label, once laid out, the one its border now holds whole."""
        self.call_after_refresh(self._relabel)

    def _relabel(self) -> None:
        code = self.query_one("#code-linkkernel", CodeView)
        if code.border_title:
            code.border_title = self._kernel_lines(code)

    def empty(self, data: dict[str, Any]) -> Detail:
        return Detail("# no IR buffers in this graph", "text")

    def row_for(self, data: dict[str, Any], buffer: str) -> int | None:
        return self.row_of_key(data, buffer)

    def buffers_of(self, data: dict[str, Any], row: int) -> list[str]:
        key = self.key_of_row(data, row)
        return [key] if key else []

    @on(Table.RowSelected, "#table-linked")
    def _enter(self, event: Table.RowSelected) -> None:
        """Enter on a buffer's row: its kernel in pane 6 (as Enter in panes 7 and 9)."""
        self.action_open_line(kernel=True)

    def action_open_line(self, kernel: bool = False) -> None:
        """Enter in the detail (``kernel``: on the table): the pane of the line under the cursor, at the
        selected buffer (:data:`ENTER_OPENS`; the first line: pane 4); in the kernel's code, that kernel in pane 6.
        A line that opens nothing (a note, a blank) says what Enter does here (:data:`ENTER_HELP`)."""
        sel, graph = self.app.view.selected, self.app.view.graph
        b = self.links.buffers.get(sel) if sel and self.links else None
        if b is None:
            self.app.set_status("Enter: select a buffer in the table first (codegen's links list each one)")
            return
        if kernel or self.kernel_code.has_focus:
            stage, key, name = "codegen", "6", (b.kernels or [""])[0]
        elif self.code.has_focus:
            opened = self._line_pane(self.code.text.splitlines(), self.code.cursor, b)
            if opened is None:
                self.app.set_status(ENTER_HELP)
                return
            stage, key, name = opened
        else:
            return
        if not name and stage == "codegen":
            self.app.set_status(f"{sel}: no kernel computes it")
            return
        self.app.open_in_pane(graph, stage, name, [sel])
        self.app.set_status(f"pane {key} at {name or sel} (Enter in pane 8)")

    @staticmethod
    def _line_pane(lines: list[str], i: int, b: Any) -> tuple[str, str, str] | None:
        """(pane stage, key, row name) that Enter on line ``i`` of the detail opens; None for a line of none."""
        if not 0 <= i < len(lines):
            return None
        if i == 0:
            return "scheduling", "4", b.fused_node or b.scheduler_node or ""
        for j in range(i, -1, -1):  # the line itself, else the heading of its part (your code, LoopBody)
            line = lines[j]
            if j < i and not line.startswith("# "):
                continue
            for head, stage, key in ENTER_OPENS:
                if line.startswith(head) and (head != "kernel " or ": lines" in line):
                    return stage, key, line[len(head):].split(": lines")[0] if stage == "codegen" else ""
            if j < i or not line.strip() or line.startswith("note:"):
                return None
        return None

    @on(CodeView.CursorMoved, "#code-linkkernel")
    def _kernel_line(self, event: CodeView.CursorMoved) -> None:
        """Reverse link: a kernel line under a person's cursor selects the buffer it loads or stores."""
        if not event.view.has_focus:
            return
        kernel = (related(self.links, "buffers", self.app.view.selected, "kernels") or [None])[0]
        name = self.app.session.line_buffers(self.app.view.graph).get(kernel or "", {}).get(event.line)
        if name and name != self.app.view.selected:
            self.app.select(name, f"line {event.line} of {kernel} touches {name}")
            self.follow_own_pick(name)

    def follow_own_pick(self, name: str) -> None:
        """A kernel line picked buffer ``name``: the table and the buffer's detail follow at once; the
        kernel view keeps the person's place (only its marks change) while the kernel is the same."""
        data = self.data()
        row = self.row_for(data, name) if data is not None else None
        if data is None or row is None:
            return
        table = self.table
        if table.cursor_row != row:
            table.move_cursor(row=row)
        StagePane.show_row(self, data, row)  # the info view; _shown makes the cursor move ours
        d = self.kernel_detail(data, row)
        code = self.kernel_code
        if code.text is d.text or code.text == d.text:
            code.mark(d.marks)
        else:
            code.set_code(d.text, d.lexer)
            code.mark(d.marks)
            if d.goto is not None:
                code.goto(d.goto)


def memory_line(session: Any, graph: str | None, buffer: str) -> str:
    """Buffer ``buffer``'s line from graph ``graph``'s memory plan (session.memory_text.buffer_line), the plan
    computed once per codegen stop."""
    from inductor_step.session import memory as mem  # noqa: PLC0415
    from inductor_step.session.memory_text import buffer_line  # noqa: PLC0415

    cg = session.stop_for(graph, "codegen") if graph else None
    if cg is None:
        return ""
    return buffer_line(session.cache.get(("memory_plan", graph), (cg,), lambda: mem.plan(session, graph)), buffer)
