"""The typed objects of a recorded graph: FX nodes, IR buffers, scheduler and fused nodes, kernels, their calls and runs.

Each object is a frozen dataclass over one entry of a stop (the session format's TypedDicts, kept whole in
``raw``) with a reference to its :class:`inductor_step.session.graph.Graph`, through which it navigates:
a buffer to its FX nodes, scheduler node, fused node, kernels, call, kernel lines and user lines, and each
of those back.  The navigation follows the graph's links (the codegen stop's ``links``, built by
``tracer.links`` from Inductor's provenance and the wrapper's call arguments); before codegen, what the
lowering, scheduling and loopbody stops tell (``partial``).  No Textual, no torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from inductor_step.session.links import entry

if TYPE_CHECKING:
    from inductor_step.session.graph import Graph
    from inductor_step.session.ledger.rows import LineRow, RooflineRow


def _names(xs: Any) -> list[str]:
    return [str(x) for x in xs or []]


@dataclass(frozen=True)
class _Item:
    graph: "Graph" = field(repr=False, compare=False)
    name: str
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from inductor_step.session.rich_views import render  # noqa: PLC0415 - Rich only when rendered

        yield render(self)


@dataclass(frozen=True)
class FxNode(_Item):
    """One torch.fx node of the Dynamo graph (``stage == "dynamo"``, Dynamo's ``OutputGraph`` as the backend
    got it) or of the post-grad graph (``"post_grad"``, the graph ``GraphLowering.run`` lowered after every
    post-grad pass; tracer.adapter.fx_graph).  ``op``: placeholder, call_function, call_method,
    call_module, get_attr or output; ``target`` as torch prints it (``aten.mm.default``); ``shape``: the
    symbolic sizes as text (a list per tensor for tuples); ``user_line``: ``"file.py:22"``, the innermost
    user frame of ``meta["stack_trace"]`` (None when torch recorded none)."""

    stage: str = "post_grad"
    op: str = ""
    target: str = ""
    shape: list[Any] = field(default_factory=list, repr=False, compare=False)
    dtype: str | None = None
    user_line: str | None = None

    def buffers(self) -> list["Buffer"]:
        """The IR buffers this node was lowered into (a post-grad node), or that its post-grad nodes were
        (a Dynamo node); [] when none (a view, a placeholder) or before lowering."""
        links = self.graph.links()
        if self.stage == "dynamo":
            names = _names(entry(links, "dynamo_nodes", self.name).get("buffers"))
        else:
            names = _names(entry(links, "fx_nodes", self.name).get("buffers"))
        return [b for b in (self.graph.buffer(n) for n in names) if b is not None]

    def dynamo_nodes(self) -> list["FxNode"]:
        """A post-grad node's Dynamo nodes (torch's provenance, ``from_node``); [] for a Dynamo node."""
        if self.stage == "dynamo":
            return []
        names = _names(entry(self.graph.links(), "fx_nodes", self.name).get("dynamo_nodes")
                       or self.raw.get("from_node"))
        return [n for n in (self.graph.fx_node(x, "dynamo") for x in names) if n is not None]

    def post_grad_nodes(self) -> list["FxNode"]:
        """A Dynamo node's post-grad nodes: the links' ``dynamo_nodes[n].post_grad`` and every post-grad node whose
        provenance names it (a multi-output op's ``getitem``, a backward graph's saved values); [] for a
        post-grad node.  In post-grad graph order."""
        if self.stage != "dynamo":
            return []
        names = set(_names(entry(self.graph.links(), "dynamo_nodes", self.name).get("post_grad")))
        return [n for n in self.graph.post_grad_nodes
                if n.name in names or self.name in [d.name for d in n.dynamo_nodes()]]

    def kernels(self) -> list["Kernel"]:
        """The kernels computing this node's buffers, each once, in the order of its buffers."""
        out: dict[str, Kernel] = {}
        for b in self.buffers():
            for k in b.kernels():
                out.setdefault(k.name, k)
        return list(out.values())


@dataclass(frozen=True)
class Buffer(_Item):
    """One Inductor IR buffer at lowering (``bufN``; tracer.adapter.ir_buffers from ``GraphLowering.buffers``).
    ``operation``: its ``opN``; ``ir_type``: ComputedBuffer, ExternKernelOut, ...; ``kind``: Pointwise,
    Reduction, ... (a ComputedBuffer's data), else the IR type; ``size``: sizes as text; ``origins``: the
    post-grad FX node names Inductor records as its origins."""

    operation: str | None = None
    ir_type: str = ""
    kind: str = ""
    size: list[str] = field(default_factory=list, repr=False, compare=False)
    dtype: str | None = None
    device: str | None = None

    @property
    def link(self) -> dict[str, Any]:
        """The buffer's entry of the graph's links (``LinkBuffer``), {} when it has none."""
        return entry(self.graph.links(), "buffers", self.name)

    def fx_nodes(self) -> list[FxNode]:
        """The post-grad FX nodes it computes (the links' ``fx_nodes``; before codegen its ``origins``)."""
        names = _names(self.link.get("fx_nodes") or self.raw.get("origins"))
        return [n for n in (self.graph.fx_node(x, "post_grad") for x in names) if n is not None]

    def dynamo_nodes(self) -> list[FxNode]:
        """The Dynamo graph's nodes it comes from (torch's provenance through the post-grad nodes)."""
        return [n for n in (self.graph.fx_node(x, "dynamo") for x in _names(self.link.get("dynamo_nodes")))
                if n is not None]

    def scheduler_node(self) -> "SchedulerNode | None":
        """Its scheduler node (``opN``, before fusion), None when not known."""
        name = self.link.get("scheduler_node") or self.operation
        return self.graph.scheduler_node(name) if name else None

    def fused_node(self) -> "SchedulerNode | None":
        """The node it ended in after fusion (a ``FusedSchedulerNode`` ``op3_op4``, or its own node when
        not fused), None when not known."""
        name = self.link.get("fused_node")
        return self.graph.scheduler_node(name, fused=True) if name else None

    def kernels(self) -> list["Kernel"]:
        """The kernels that compute it (usually one; an in-place chain or a template can give more)."""
        return [k for k in (self.graph.kernel(n) for n in _names(self.link.get("kernels"))) if k is not None]

    def kernel(self) -> "Kernel | None":
        """Its first kernel, None before codegen or when the links name none."""
        ks = self.kernels()
        return ks[0] if ks else None

    def call(self) -> "Call | None":
        """The call in the wrapper's ``call()`` that computes it: the links' ``call`` for a kernel called more
        than once, else the first call of its kernel that lists it; None when not known."""
        ref = self.link.get("call")
        if ref and ref.get("kernel"):
            k = self.graph.kernel(ref["kernel"])
            if k is not None:
                for c in k.calls():
                    if c.index == ref.get("index", 0):
                        return c
        k = self.kernel()
        if k is None:
            return None
        calls = k.calls()
        for c in calls:
            if self.name in c.buffer_names:
                return c
        return calls[0] if calls else None

    def kernel_lines(self) -> dict[str, list[tuple[int, int]]]:
        """Kernel name -> the [first, last] 1-based line ranges of the kernel's source that are this
        buffer's (tracer.kernel_lines: its pointers, loads and stores, in-place chains)."""
        return {k: [(int(a), int(b)) for a, b in rs or []] for k, rs in (self.link.get("kernel_lines") or {}).items()}

    def source_lines(self, kernel: str | None = None) -> list[tuple[int, str]]:
        """(1-based line number, text) of the lines of ``kernel``'s source (default: its first kernel) that
        are this buffer's; [] when the links mark none."""
        k = self.graph.kernel(kernel) if kernel else self.kernel()
        if k is None:
            return []
        src = k.source.split("\n")
        out = []
        for a, b in self.kernel_lines().get(k.name, []):
            out += [(i, src[i - 1]) for i in range(a, b + 1) if 0 < i <= len(src)]
        return out

    def user_lines(self) -> list[str]:
        """The user's source lines it comes from (``"file.py:22"``), through its FX nodes' stack traces."""
        return _names(self.link.get("user_lines"))

    def notes(self) -> list[str]:
        """What the links could not settle for this buffer, in words."""
        return _names(self.link.get("notes"))


@dataclass(frozen=True)
class SchedulerNode(_Item):
    """A node of Inductor's scheduler (tracer.adapter.scheduler_nodes from ``Scheduler.nodes``): before fusion
    (``fused`` False: ``opN``) or after (``fused`` True: the ``FusedSchedulerNode`` ``op3_op4``, or a node
    left alone).  ``type``: SchedulerNode, FusedSchedulerNode, ExternKernelSchedulerNode, ...;
    ``members``: the ``opN`` it holds (itself when not fused)."""

    type: str = ""
    fused: bool = False
    members: list[str] = field(default_factory=list, repr=False, compare=False)

    def buffers(self) -> list[Buffer]:
        """The buffers it computes."""
        names = _names(self.raw.get("buffers"))
        if not names:
            where = "fused_nodes" if self.fused else "scheduler_nodes"
            names = _names(entry(self.graph.links(), where, self.name).get("buffers"))
        return [b for b in (self.graph.buffer(n) for n in names) if b is not None]

    def member_nodes(self) -> list["SchedulerNode"]:
        """A fused node's members, as nodes before fusion."""
        return [n for n in (self.graph.scheduler_node(m) for m in self.members) if n is not None]

    def fused_node(self) -> "SchedulerNode | None":
        """The node after fusion that holds this one (itself for a node after fusion)."""
        if self.fused:
            return self
        name = entry(self.graph.links(), "scheduler_nodes", self.name).get("fused_node")
        return self.graph.scheduler_node(name, fused=True) if name else None

    def fused_with(self, other: "SchedulerNode | str") -> bool:
        """Whether Inductor put this node and ``other`` (a node or its name) into one node after fusion."""
        from inductor_step.session.fusion import fused_together  # noqa: PLC0415

        a = (self.fused_node() or self).name
        o = other if isinstance(other, SchedulerNode) else self.graph.scheduler_node(other)
        b = (o.fused_node() or o).name if o is not None else str(other)
        return fused_together(self.graph.stop("scheduling") or {}, a, b)

    def kernels(self) -> list["Kernel"]:
        """The kernels generated for it."""
        where = "fused_nodes" if self.fused else "scheduler_nodes"
        names = _names(entry(self.graph.links(), where, self.name).get("kernels"))
        return [k for k in (self.graph.kernel(n) for n in names) if k is not None]


@dataclass(frozen=True)
class LoopBody(_Item):
    """One scheduler node's ``LoopBody`` (tracer.adapter.loop_bodies, from each member node's ``_body``): ``name`` is
    the member node (``opN``); ``var_ranges`` iteration variable -> its range, ``indexing_exprs`` name -> the
    index expression, both as sympy prints them; ``body`` ``LoopBody.debug_str()``; ``none`` why the node has
    no LoopBody (an extern kernel, a template), else None."""

    fused_node_name: str | None = None
    var_ranges: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    indexing_exprs: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    body: str = field(default="", repr=False, compare=False)
    none: str | None = None

    def scheduler_node(self) -> "SchedulerNode | None":
        """The scheduler node (before fusion) this LoopBody belongs to."""
        return self.graph.scheduler_node(self.name)

    def buffers(self) -> list["Buffer"]:
        """The buffers its node computes."""
        return [b for b in (self.graph.buffer(n) for n in _names(self.raw.get("buffers"))) if b is not None]


@dataclass(frozen=True)
class Call(_Item):
    """One call of a kernel in the wrapper's ``call()`` (tracer.links, per call): ``index`` 0 for the kernel's
    first call; ``line`` its 1-based line in the wrapper (None when not found); ``buffer_names`` the
    buffers this call computes.  ``name`` is the kernel's."""

    index: int = 0
    line: int | None = None
    buffer_names: list[str] = field(default_factory=list, repr=False, compare=False)

    def kernel(self) -> "Kernel | None":
        """The kernel called."""
        return self.graph.kernel(self.name)

    def buffers(self) -> list[Buffer]:
        """The buffers this call computes."""
        return [b for b in (self.graph.buffer(n) for n in self.buffer_names) if b is not None]

    def fx_nodes(self) -> list[FxNode]:
        """The post-grad FX nodes this call computes."""
        names = _names(self.raw.get("post_grad_nodes"))
        return [n for n in (self.graph.fx_node(x, "post_grad") for x in names) if n is not None]

    def run(self) -> "KernelRun | None":
        """This call's timing (the graph's ``run``, ``kernels[]`` entry of this kernel and call), None when the
        graph was not timed or the call has no entry."""
        for r in self.graph.kernel_runs():
            if r.name == self.name and r.call == self.index + 1:
                return r
        return None


@dataclass(frozen=True)
class KernelRun(_Item):
    """One kernel call timed with the graph (tracer.timing.time_graph; the ``run`` message's ``kernels[]``).
    Times in ms: ``median_ms`` the call alone, median of repeated calls (GPU: L2 flushed; None for a
    collective, with ``not_timed`` saying why), ``p20_ms``/``p80_ms`` its spread; ``gb``: bytes moved in GB
    (1e9 bytes, ``gb_source`` says how counted); ``share``: of the kernel sum (0-1).  ``call`` is 1-based;
    ``unreliable``: why the graph's timing cannot be trusted (session.trust.unreliable: rounds that did not
    agree, a contended CPU), None when it can."""

    call: int = 1
    backend: str | None = None
    median_ms: float | None = None
    p20_ms: float | None = None
    p80_ms: float | None = None
    gb: float | None = None
    share: float | None = None
    not_timed: str | None = None
    unreliable: str | None = None

    @property
    def reliable(self) -> bool:
        """Whether this time can be trusted (no :attr:`unreliable` verdict on its graph's run)."""
        return self.unreliable is None

    def kernel(self) -> "Kernel | None":
        """The kernel timed."""
        return self.graph.kernel(self.name)


@dataclass(frozen=True)
class Kernel(_Item):
    """One kernel of the generated wrapper (tracer.codeparse.parse_wrapper over Inductor's output code):
    ``name`` as generated (``triton_poi_fused_add_0``, ``cpp_fused_gelu_1``, ``extern_kernels.mm#0``),
    ``backend`` (cpp, triton, extern), ``source`` its code (an extern call: the call's text)."""

    backend: str | None = None
    source: str = field(default="", repr=False, compare=False)

    @property
    def link(self) -> dict[str, Any]:
        """The kernel's entry of the graph's links (``LinkKernel``), {} when it has none."""
        return entry(self.graph.links(), "kernels", self.name)

    def buffers(self) -> list[Buffer]:
        """The buffers it computes."""
        names = _names(self.link.get("buffers") or self.raw.get("buffers"))
        return [b for b in (self.graph.buffer(n) for n in names) if b is not None]

    def scheduler_nodes(self) -> list[SchedulerNode]:
        """Its scheduler nodes before fusion (``opN``)."""
        names = _names(self.link.get("scheduler_nodes") or self.raw.get("scheduler_nodes"))
        return [n for n in (self.graph.scheduler_node(x) for x in names) if n is not None]

    def fused_nodes(self) -> list[SchedulerNode]:
        """Its nodes after fusion (``FusedSchedulerNode`` or a node left alone)."""
        names = _names(self.link.get("fused_nodes") or self.raw.get("fused_nodes"))
        return [n for n in (self.graph.scheduler_node(x, fused=True) for x in names) if n is not None]

    def fx_nodes(self) -> list[FxNode]:
        """The post-grad FX nodes it computes."""
        return [n for n in (self.graph.fx_node(x, "post_grad") for x in _names(self.link.get("post_grad_nodes")))
                if n is not None]

    def calls(self) -> list[Call]:
        """Its calls in the wrapper's ``call()``, in order (one for most kernels)."""
        out = []
        for i, c in enumerate(self.link.get("calls") or []):
            out.append(Call(self.graph, self.name, c, index=int(c.get("index", i)), line=c.get("line"),
                            buffer_names=_names(c.get("buffers"))))
        if out:
            return out
        # sessions recorded before the links listed calls: the spans' call lines, else the wrapper's lines
        # that call the kernel by name; each call's buffers: the kernel's buffers among its arguments
        span = self.graph.kernel_spans().get(self.name) or {}
        lines = list(span.get("calls") or ([span["call"]] if span.get("call") else []) or self.raw.get("call_lines") or [])
        if not lines and self.backend != "extern":
            head = self.name + "("
            lines = [i + 1 for i, ln in enumerate(self.graph.wrapper.split("\n")) if ln.lstrip().startswith(head)]
        mine = [b.name for b in self.buffers()]
        args = self.raw.get("calls") or []
        for i, line in enumerate(lines):
            used = set(_names(args[i])) if i < len(args) and args[i] else set(mine)
            out.append(Call(self.graph, self.name, {}, index=i, line=line, buffer_names=[b for b in mine if b in used]))
        return out

    def wrapper_lines(self) -> dict[str, Any]:
        """Where it lies in the wrapper (1-based lines, ``KernelSpan``): ``def`` [first, last] of its
        ``async_compile`` definition, ``body`` its source's first line, ``calls``; an extern call ``call``."""
        return dict(self.graph.kernel_spans().get(self.name) or {})

    def buffer_at(self, line: int) -> Buffer | None:
        """The buffer whose lines include 1-based ``line`` of this kernel's source, None when no buffer's do."""
        name = self.graph.line_buffers().get(self.name, {}).get(line)
        return self.graph.buffer(name) if name else None

    def lines_of(self, buffer: str) -> list[int]:
        """The 1-based lines of this kernel's source that are ``buffer``'s."""
        b = self.graph.buffer(buffer)
        rs = b.kernel_lines().get(self.name, []) if b else []
        return [i for a, e in rs for i in range(a, e + 1)]

    def marks_for(self, buffer: str) -> list[tuple[int, int]]:
        """What to mark in this kernel for ``buffer``: the [first, last] 1-based line ranges of its source
        that load or store it (tracer.kernel_lines, through the links); [] when this kernel does not
        compute ``buffer`` or the links mark no line.  The same ranges pane 6 marks
        (session.code_lines.ShownWrapper.marks_for, in the wrapper's shown lines)."""
        from inductor_step.session.links import buffer_lines  # noqa: PLC0415

        return buffer_lines(self.graph.links(), buffer, self.name)

    def user_lines(self) -> dict[str, float]:
        """User line (``"file.py:22"``) -> the share of this kernel's time the ledger gives it (its post-grad
        nodes' user lines, each node weighing the same; shares sum to 1)."""
        from inductor_step.session.ledger import kernel_lines  # noqa: PLC0415

        return kernel_lines(self.graph.links(), self.name)[0]

    def runs(self) -> list[KernelRun]:
        """Its timed calls (the graph's ``run`` message), [] when the graph was not timed."""
        return [r for r in self.graph.kernel_runs() if r.name == self.name]

    def roofline(self) -> list[RooflineRow]:
        """Each timed call's roofline row (:class:`inductor_step.session.ledger.rows.RooflineRow`, with ``graph``,
        ``eager_ms``): ``measured_ms``, ``roofline_ms``, ``bound``, ``pct_of_roof``, ``wasted_ms`` in ms,
        ``gb`` in GB, ``flops``, each figure with its ``*_source``; ``missing`` says why a row has no roofline."""
        return [r for r in self.graph.session.roofline_rows() if r.graph == self.graph.key and r.name == self.name]

    def ledger_rows(self) -> list[LineRow]:
        """The user-line ledger's rows this kernel's time went to (:func:`inductor_step.session.ledger.line_rows`,
        each a :class:`inductor_step.session.ledger.rows.LineRow`)."""
        me = (self.graph.key, self.name)
        return [r for r in self.graph.session.line_rows() if me in r.targets]
