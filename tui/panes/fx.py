"""What panes 1 (Dynamo) and 2 (AOT) share: a table of FX nodes over the graph's code."""

from __future__ import annotations

import re
from typing import Any, Callable, ClassVar, Sequence

from inductor_step.tui.codeview import lines_of, search_word
from inductor_step.tui.panes.base import Detail, StagePane, T, dtype_cell, text_of
from inductor_step.tui.table import Cell, Exact, NameColumn, PathName
from inductor_step.session.fx_names import dynamo_input_path
from inductor_step.session.text import short_user_line
from inductor_step.session.links import entry, related

# an FX node's defining line in a graph's code: `    add: "f32[8]" = ...` or `    add = ...`
_DEFINES = re.compile(r"^[^\S\n]*(\w+)[^\S\n]*(?::|=)", re.M)
#: FX's node ops in fewer cells, for a narrow op column (every FX graph's placeholders are its inputs)
OP_SHORT = {"call_function": "function", "call_method": "method", "call_module": "module", "placeholder": "input"}
#: namespaces of torch's operator overloads as the tracer records them (``str(OpOverload)``: ns.op.overload)
_OP_NAMESPACES = ("aten.", "prims.", "quantized.", "_c10d_functional.", "c10d_functional.", "inductor.",
                  "_quantized.", "_inductor_test.", "mkldnn.", "onednn.", "fbgemm.", "higher_order.")
_BUILTIN = re.compile(r"^<built-in (?:function|method) (\w+)")


def target_forms(target: str | None) -> tuple[str, ...]:
    """Shorter forms of an FX node's target, longest first, for a narrow target column: an operator
    overload (``aten.sum.dim_IntList``) without its overload (``aten.sum``), then the op's short
    name (``sum``); a Python function's qualified name (``torch._C._nn.linear``,
    ``_operator.getitem``, ``torch.ops.higher_order.flex_attention``) its last name."""
    t = target or ""
    m = _BUILTIN.match(t)
    if m:
        return (m.group(1),)
    parts = t.split(".")
    if len(parts) < 2 or not all(parts):
        return ()
    if len(parts) == 3 and t.startswith(_OP_NAMESPACES):
        return (f"{parts[0]}.{parts[1]}", parts[1])
    return (parts[-1],)


def _module_path(node: Any) -> tuple[str, ...]:
    """The module path a Dynamo graph input's name spells (``model``, ``layers``, ``0``, ..., ``weight`` for
    ``L_self_modules_model_modules_layers_modules_0_..._parameters_weight_``: :func:`dynamo_input_path`), () for
    any other node (an AOT graph's ``primals_1``, a script input ``L_x_``)."""
    target = str(node.target or "")
    held = dynamo_input_path(target)
    return tuple(held.split(".")) if held != target else ()


def _name_cell(node: Any, shown: dict[str, str]) -> Cell:
    """Node ``node``'s cell in the node column: the name the code shows for it (``shown``), cut along its module
    path where it is a Dynamo graph input that spells one (:class:`PathName`), else in the middle as written."""
    path = _module_path(node) if node.op == "placeholder" else ()
    name = shown.get(node.name, node.name)
    return PathName(name, "bold", (), path) if path else T(name, "bold", kind=Exact)


def _target_cell(node: Any, shown: dict[str, str], holds: dict[str, str]) -> Cell:
    """Node ``node``'s cell in the target column: for a graph input what it holds (``holds``: ``fc1.weight``) or
    the name it comes in by (``shown``: ``L_self_fc1_weight_``, cut along its module path), else its target with
    shorter forms (:func:`target_forms`)."""
    target = shown.get(node.target, node.target)
    held = holds.get(node.name) if node.op == "placeholder" else None
    path = _module_path(node) if node.op == "placeholder" else ()
    if held:  # at 80 columns: its last parts (query.weight), never weight alone nor without its layer index
        parts = held.split(".")
        digits = [i for i, p in enumerate(parts[:-1]) if p.isdigit()]
        forms = [".".join(parts[-k:]) for k in range(len(parts) - 1, 1, -1)
                 if not digits or len(parts) - k <= digits[-1]]
        return PathName(held, "green", forms, parts)
    if path:
        return PathName(target, "", target_forms(target), path)
    return T(target, short=target_forms(target), kind=Exact if node.op == "placeholder" else Cell)


class FxPane(StagePane):
    """A table of an FX graph's nodes (name, op, target, shape, dtype, the user's line) above the
    graph's code, the node's defining line marked."""

    #: the stop field holding ``{code, nodes}``; the links' name map for these nodes
    graph_field: ClassVar[str] = ""
    links_field: ClassVar[str] = ""
    fit = ((0, 1, 2), 5)
    fit_last = (5,)  # then the user line: cut keeping its file and line (table.cut_middle), not cropped
    fit_min = 10

    def nodes(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        graph = getattr(data, self.graph_field)  # FxGraph | Unavailable
        return (graph.nodes if graph is not None else None) or []

    def text(self, data: dict[str, Any]) -> str:
        raise NotImplementedError

    def user_lines(self, data: dict[str, Any]) -> dict[str, str]:
        """Node name -> the user's line to show where it is not the node's recorded ``user_line`` (none here)."""
        return {}

    def shown_names(self, data: dict[str, Any]) -> dict[str, str]:
        """Node name (or target) -> the name the table and :meth:`text` show for it, where they show another
        (none: both show FX's names)."""
        return {}

    def input_names(self, data: dict[str, Any]) -> dict[str, str]:
        """Input (placeholder) name -> what it holds, shown in the target column in place of the name again
        (none here)."""
        return {}

    #: where in :meth:`text` the node definitions start (0: the top)
    def text_start(self, text: str) -> int:
        return 0

    def rows(self, data: dict[str, Any]) -> tuple[Sequence[str], Callable[[int], tuple]]:
        nodes = self.nodes(data)
        script_dir = self.app.session.script_dir
        shown = self.shown_names(data)
        inner = self.user_lines(data)
        holds = self.input_names(data)

        def row(i: int) -> tuple:
            n = nodes[i]
            where = short_user_line(inner.get(n.name) or n.user_line, script_dir)
            mine = (where,) if where else ()
            if where and "/" in where:  # then the file and line alone (transformers/.../loss_utils.py:66)
                mine = (*mine, where.rsplit("/", 1)[1])
            via_torch = bool(n.torch_line) and n.name not in inner
            if via_torch:  # torch's own frame innermost (F.pad's constant_pad_nd): the user's, then torch's
                where = f"{where} -> {short_user_line(n.torch_line, script_dir)}"
            return (_name_cell(n, shown),
                    T(n.op, short=[OP_SHORT[n.op]] if n.op in OP_SHORT else ()),
                    _target_cell(n, shown, holds),
                    T(n.shape), dtype_cell(n.dtype), T(where, "cyan", short=mine if via_torch else mine[1:]))
        return [str(i) for i in range(len(nodes))], row

    def names(self, data: dict[str, Any], keys: tuple[str, ...]) -> dict[int, NameColumn]:
        """The node column and, of the target column, the graph inputs' rows (:meth:`StagePane.names`; an
        operator's target keeps its shorter forms): each cell without the rest of the row."""
        nodes = self.nodes(data)
        shown = self.shown_names(data)
        holds = self.input_names(data)

        def targets() -> list[str]:
            return [text_of(holds.get(n.name) or shown.get(n.target, n.target)) if n.op == "placeholder" else ""
                    for n in nodes]
        return {0: NameColumn(lambda: [shown.get(n.name, n.name) for n in nodes],
                              lambda i: _name_cell(nodes[i], shown)),
                2: NameColumn(targets, lambda i: _target_cell(nodes[i], shown, holds))}

    def _rows_by_name(self, data: dict[str, Any]) -> dict[str, int]:
        def build() -> dict[str, int]:
            index: dict[str, int] = {}
            for i, n in enumerate(self.nodes(data)):
                index.setdefault(n["name"], i)
            return index
        return self.cached_index(data, "node_rows", build)

    def _lines_by_name(self, data: dict[str, Any], text: str) -> dict[str, int]:
        """Node name -> 0-based line defining it in ``text`` (one pass, kept per stop)."""
        def build() -> dict[str, int]:
            start = self.text_start(text)
            pos = 0
            index: dict[str, int] = {}
            for i, line in enumerate(text.split("\n")):
                if i >= start:
                    m = _DEFINES.match(line)
                    if m:
                        index.setdefault(m.group(1), i)
                pos += 1
            return index
        return self.cached_index(data, "node_lines", build)

    def row_named(self, data: dict[str, Any], name: str) -> int | None:
        """The row of FX node ``name`` (rows are keyed by index)."""
        return self._rows_by_name(data).get(name)

    def detail(self, data: dict[str, Any], row: int) -> Detail | None:
        text = self.text(data)
        nodes = self.nodes(data)
        if not 0 <= row < len(nodes):
            return Detail(text)
        shown = self.shown_names(data)
        name = shown.get(nodes[row]["name"], nodes[row]["name"])
        line = self._lines_by_name(data, text).get(name)
        if line is None:  # a placeholder named on the def line: the first line naming it
            line = search_word(lines_of(text), name, self.text_start(text))
        if line is None:
            return Detail(text)
        marks = {(line + 1, line + 1)}
        lines = self._lines_by_name(data, text)
        # the selected buffer's other origin nodes at this level: marked too (the cursor stays on this one)
        others = [shown.get(n, n) for n in self._origins(nodes[row]["name"])]
        marks |= {(lines[n] + 1, lines[n] + 1) for n in others if n in lines}
        return Detail(text, marks=sorted(marks), goto=line + 1)

    def _origins(self, name: str) -> list[str]:
        """The FX nodes at this level that the selected buffer comes from, when node ``name`` is one of them
        (else none: a row of another buffer's node marks only itself)."""
        sel = self.app.view.selected
        b = entry(self.links, "buffers", sel) if sel else None
        names = self.node_names(b) if b else []
        return names if name in names else []

    def show_row(self, data: dict[str, Any], row: int) -> None:
        """The row's detail, and in the table every FX node the selected buffer comes from marked."""
        super().show_row(data, row)
        nodes = self.nodes(data)
        index = self._rows_by_name(data)
        names = self._origins(nodes[row]["name"]) if 0 <= row < len(nodes) else []
        self.table.mark_rows([index[n] for n in names if n in index and index[n] != row])

    def buffers_of(self, data: dict[str, Any], row: int) -> list[str]:
        nodes = self.nodes(data)
        if not 0 <= row < len(nodes):
            return []
        return related(self.links, self.links_field, nodes[row]["name"], "buffers")

    def node_names(self, b: dict[str, Any]) -> list[str]:
        """The FX nodes of this level that buffer ``b`` (a links entry) comes from."""
        raise NotImplementedError

    def row_for(self, data: dict[str, Any], buffer: str) -> int | None:
        """The row of the node that produces ``buffer``: of its nodes at this level, the last in
        graph order (the others feed it)."""
        b = entry(self.links, "buffers", buffer)
        if not b:
            return None
        index = self._rows_by_name(data)
        return max((index[n] for n in self.node_names(b) if n in index), default=None)
