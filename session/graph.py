"""One compiled graph of a recorded session: its stages' data as typed objects, lookups by name, subgraphs and parts."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from inductor_step.session.format import STAGES, GraphKey
from inductor_step.session.objects import Buffer, FxNode, Kernel, KernelRun, LoopBody, SchedulerNode

if TYPE_CHECKING:
    from inductor_step.session.api import Session


class Graph:
    """One graph Inductor compiled, as recorded: ``key`` as the UI shows it (``"[0/0] forward"``,
    ``"[4/0] forward #2"`` for a part, ``"[0/0] inference › true_graph_0"`` for a higher-order op's
    subgraph, ``"... · max_autotune=True"`` for a what-if variant; session.format.graph_key).

    Each stage's stop is the message the tracer sent at that stage (``stop(stage)``, the format's TypedDicts:
    session.format.DynamoStop ... CodegenStop) and, typed, ``dynamo_nodes`` / ``post_grad_nodes``
    (:class:`FxNode`), ``buffers`` (:class:`Buffer`), ``scheduler_nodes`` / ``fused_nodes``
    (:class:`SchedulerNode`), ``kernels`` (:class:`Kernel`), ``run`` (the ``run`` message) and its
    ``kernel_runs()`` (:class:`KernelRun`).  Lists are [] for a stage the compile did not reach.
    Not built directly: :meth:`inductor_step.session.api.Session.graph`."""

    def __init__(self, session: "Session", key: str) -> None:
        self.session = session
        self.key = key

    def __repr__(self) -> str:
        return f"<Graph {self.key}: {', '.join(self.stages) or 'no stage'}>"

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from inductor_step.session.rich_views import render  # noqa: PLC0415 - Rich only when rendered

        yield render(self)

    # ------------------------------------------------------------------ identity

    @cached_property
    def graph_key(self) -> GraphKey:
        """The key's parts (:class:`inductor_step.session.format.GraphKey`)."""
        return GraphKey.parse(self.key)

    @property
    def compile_id(self) -> str:
        """Dynamo's compile id, ``"[0/1]"`` (frame 0, its second compile: a recompile)."""
        return self.graph_key.compile_id

    @property
    def kind(self) -> str:
        """``inference``, ``forward`` or ``backward`` (as AOTAutograd names the graph)."""
        return self.graph_key.kind

    @property
    def part(self) -> int | None:
        """Which of several graphs Inductor compiled for one compile id and kind (DDPOptimizer's split), None
        when it is the only one."""
        return self.graph_key.part

    @property
    def subgraph(self) -> str | None:
        """The higher-order op's subgraph this graph is (``"true_graph_0"``), None for a top-level graph."""
        return self.graph_key.subgraph

    @property
    def variant(self) -> str | None:
        """The what-if settings this graph was recompiled with (``"max_autotune=True"``), None for the original."""
        return self.graph_key.variant

    @property
    def parent(self) -> "Graph | None":
        """The graph a subgraph belongs to (None for a top-level graph or when not recorded)."""
        parent = self.graph_key.parent
        return None if parent is None else self.session.graph(str(parent), None)

    @property
    def subgraphs(self) -> list["Graph"]:
        """This graph's higher-order-op subgraphs (``cond``, ``while_loop``, flex attention's ...), in order."""
        return [g for g in self.session.graphs if g.graph_key.parent == self.graph_key]

    @property
    def parts(self) -> list["Graph"]:
        """Every part of this graph's compile id and kind (itself included), in order; [itself] when not split."""
        whole = self.graph_key.whole
        return [g for g in self.session.graphs if g.graph_key.whole == whole and g.subgraph is None]

    @property
    def stages(self) -> list[str]:
        """The stages recorded for this graph, in compile order (``run`` last once timed without error)."""
        return self.session.store.stages_done(self.key)

    # ------------------------------------------------------------------ stops, raw

    def stop(self, stage: str) -> dict[str, Any] | None:
        """The stop message of ``stage`` (one of session.format.STAGES), parsed on first use; None when the
        compile did not reach it.  Raises ValueError for an unknown stage."""
        if stage not in STAGES:
            raise ValueError(f"unknown stage {stage!r}: one of {', '.join(STAGES)}")
        return self.session.store.stop_for(self.key, stage)

    def links(self) -> dict[str, Any]:
        """The cross-level index (session.format.Links: ``buffers``, ``kernels``, ``fx_nodes``, ...): the
        codegen stop's, or before codegen what lowering, scheduling and loopbody tell (``partial``)."""
        return self.session.store.stage_links(self.key)

    def kernel_spans(self) -> dict[str, dict[str, Any]]:
        """Kernel name -> where it lies in the wrapper (1-based lines, session.format.KernelSpan)."""
        return self.session.store.kernel_spans(self.key)

    def line_buffers(self) -> dict[str, dict[int, str]]:
        """Kernel name -> 1-based line of its source -> the buffer whose lines include it."""
        return self.session.store.line_buffers(self.key)

    @property
    def wrapper(self) -> str:
        """Inductor's output module (the generated wrapper's source; C++ for AOTInductor), "" before codegen."""
        return (self.stop("codegen") or {}).get("wrapper") or ""

    @property
    def run(self) -> dict[str, Any] | None:
        """The graph's latest ``run`` message (session.format.Run: ``compiled_ms``, ``eager_ms``,
        ``kernel_sum_ms`` in ms, ``reliable``, ``kernels``...), None when not timed."""
        return self.session.store.runs.get(self.key)

    @property
    def guards(self) -> str | None:
        """Dynamo's guards of this compile (``dynamo_cpp_guards_str``), None when not recorded."""
        return self.session.store.guards.get(self.compile_id)

    @property
    def note(self) -> str:
        """Why this graph exists, in words: recompile reasons, the graph break that ended it, what it resumes."""
        return self.session.store.graph_note(self.key)

    # ------------------------------------------------------------------ typed

    def _fx(self, stage: str) -> list[FxNode]:
        if stage == "dynamo":
            g = (self.stop("dynamo") or {}).get("graph") or {}
        else:
            g = (self.stop("aot") or {}).get("post_grad") or {}
        return [FxNode(self, n.get("name", ""), n, stage=stage, op=n.get("op", ""), target=str(n.get("target", "")),
                       shape=list(n.get("shape") or []), dtype=n.get("dtype"), user_line=n.get("user_line"))
                for n in g.get("nodes") or []]

    @cached_property
    def dynamo_nodes(self) -> list[FxNode]:
        """The Dynamo FX graph's nodes (dynamo stop's ``graph.nodes``)."""
        return self._fx("dynamo")

    @cached_property
    def post_grad_nodes(self) -> list[FxNode]:
        """The post-grad FX graph's nodes (aot stop's ``post_grad.nodes``)."""
        return self._fx("post_grad")

    @cached_property
    def buffers(self) -> list[Buffer]:
        """The IR buffers at lowering (lowering stop's ``buffers``)."""
        return [Buffer(self, b.get("name", ""), b, operation=b.get("operation"), ir_type=b.get("ir_type", ""),
                       kind=b.get("kind", ""), size=list(b.get("size") or []), dtype=b.get("dtype"),
                       device=b.get("device"))
                for b in (self.stop("lowering") or {}).get("buffers") or []]

    def _sched(self, which: str) -> list[SchedulerNode]:
        nodes = (self.stop("scheduling") or {}).get(which)
        if not isinstance(nodes, list):
            return []
        fused = which == "after"
        return [SchedulerNode(self, n.get("name", ""), n, type=n.get("type", ""), fused=fused,
                              members=list(n.get("members") or [n.get("name", "")])) for n in nodes]

    @cached_property
    def scheduler_nodes(self) -> list[SchedulerNode]:
        """The scheduler's nodes before fusion (scheduling stop's ``before``: ``opN``)."""
        return self._sched("before")

    @cached_property
    def fused_nodes(self) -> list[SchedulerNode]:
        """The scheduler's nodes after fusion (scheduling stop's ``after``: ``FusedSchedulerNode`` and nodes left
        alone), in the order Inductor generated code."""
        return self._sched("after")

    @cached_property
    def loop_bodies(self) -> list[LoopBody]:
        """Each scheduler node's ``LoopBody`` (loopbody stop's ``bodies``), in scheduler order."""
        bodies = (self.stop("loopbody") or {}).get("bodies")
        return [LoopBody(self, b.get("node", ""), b, fused_node_name=b.get("fused_node"),
                         var_ranges=dict(b.get("var_ranges") or {}), indexing_exprs=dict(b.get("indexing_exprs") or {}),
                         body=b.get("body") or "", none=b.get("none"))
                for b in bodies if isinstance(b, dict)] if isinstance(bodies, list) else []

    @property
    def aot_graphs(self) -> dict[str, str]:
        """AOTAutograd's graphs as readable code (aot stop's ``aot_graphs``): ``joint``, ``forward``,
        ``backward`` or ``inference`` -> ``print_readable()`` text; {} before the aot stage."""
        return dict((self.stop("aot") or {}).get("aot_graphs") or {})

    def code(self, stage: str = "post_grad") -> str:
        """The readable code of the Dynamo graph (``"dynamo"``: the GraphModule Dynamo handed the backend), the
        post-grad graph (``"post_grad"``) or the generated wrapper (``"codegen"``); "" when not recorded.
        Raises ValueError for another ``stage``."""
        if stage == "dynamo":
            return ((self.stop("dynamo") or {}).get("graph") or {}).get("code") or ""
        if stage == "post_grad":
            return ((self.stop("aot") or {}).get("post_grad") or {}).get("code") or ""
        if stage == "codegen":
            return self.wrapper
        raise ValueError(f"no code for {stage!r}: one of dynamo, post_grad, codegen")

    @cached_property
    def kernels(self) -> list[Kernel]:
        """The generated wrapper's kernels (codegen stop's ``kernels``), in definition order."""
        return [Kernel(self, k.get("name", ""), k, backend=k.get("backend"), source=k.get("source") or "")
                for k in (self.stop("codegen") or {}).get("kernels") or []]

    def kernel_runs(self) -> list[KernelRun]:
        """Every kernel call timed with the graph (``run["kernels"]``), [] when not timed."""
        from inductor_step.session.trust import unreliable  # noqa: PLC0415

        run = self.run or {}
        why = unreliable(run) if run else None
        return [KernelRun(self, k.get("name", ""), k, call=int(k.get("call", 1)), backend=k.get("backend"),
                          median_ms=k.get("median_ms"), p20_ms=k.get("p20_ms"), p80_ms=k.get("p80_ms"), gb=k.get("gb"),
                          share=k.get("share"), not_timed=k.get("not_timed"), unreliable=why)
                for k in run.get("kernels") or []]

    # ------------------------------------------------------------------ lookups

    @cached_property
    def _index(self) -> dict[str, dict[str, Any]]:
        return {"dynamo": {n.name: n for n in self.dynamo_nodes}, "post_grad": {n.name: n for n in self.post_grad_nodes},
                "buffer": {b.name: b for b in self.buffers}, "kernel": {k.name: k for k in self.kernels},
                "before": {n.name: n for n in self.scheduler_nodes}, "after": {n.name: n for n in self.fused_nodes}}

    def fx_node(self, name: str, stage: str = "post_grad") -> FxNode | None:
        """The FX node ``name`` of the post-grad graph (``stage="post_grad"``) or the Dynamo graph
        (``"dynamo"``), None when there is none."""
        return self._index["dynamo" if stage == "dynamo" else "post_grad"].get(name)

    def buffer(self, name: str) -> Buffer | None:
        """IR buffer ``name`` (``"buf3"``), None when there is none."""
        return self._index["buffer"].get(name)

    def kernel(self, name: str) -> Kernel | None:
        """Kernel ``name`` as generated (``"triton_poi_fused_add_0"``, ``"extern_kernels.mm#0"``), None when none."""
        return self._index["kernel"].get(name)

    def scheduler_node(self, name: str, fused: bool = False) -> SchedulerNode | None:
        """Scheduler node ``name``: before fusion (``"op3"``) or, ``fused``, after (``"op3_op4"``); a node after
        fusion is also found by its name alone when no node before fusion has it.  None when none."""
        idx = self._index
        if fused:
            return idx["after"].get(name) or idx["before"].get(name)
        return idx["before"].get(name) or idx["after"].get(name)

    def buffers_at_user_line(self, line: str) -> list[Buffer]:
        """The buffers computed for user line ``line`` (``"file.py:22"``; a path ending is enough: ``"x.py:22"``)."""
        return [b for b in self.buffers if any(u == line or u.endswith("/" + line) for u in b.user_lines())]

    def fusion_pair(self, a: str, b: str) -> str:
        """The ``f`` answer of pane 4 for scheduler nodes ``a`` and ``b`` (names after fusion, ``op3_op4``): fused
        or not, the lines of Inductor's fusion log naming both, or why there are none (session.fusion).
        ``Scheduler.can_fuse`` is asked live only in the app, while the compile is paused."""
        from inductor_step.session.fusion import fusion_pair_text  # noqa: PLC0415

        return fusion_pair_text(self.stop("scheduling") or {}, a, b, None, None,
                                "can_fuse is asked live only in the app, while the compile is paused at this graph",
                                (self.stop("dynamo") or {}).get("compiled_with"))

    def memory(self) -> Any:
        """Where the bytes go: a session.memory_text.GraphMemory, ``plan`` (session.memory.Plan: each
        buffer's bytes and lifetime from the wrapper's empty_strided / del / # reuse, the live bytes per statement,
        the peak, its kernel and the buffers live there; None without a Python wrapper) and, for a forward,
        ``saved`` (session.memory_saved.Saved: what it saves for the backward, what the backward recomputes).
        Bytes, planned from the recorded wrapper and layouts; not measured.  Computed once."""
        from inductor_step.session.memory_text import graph_memory  # noqa: PLC0415

        store = self.session.store
        return store.cache.get(("api_memory", self.key), (store.stop_for(self.key, "codegen"),),
                               lambda: graph_memory(store, self.key))

    def diff(self, other: "Graph") -> Any:
        """This graph against ``other`` level by level, top-down (session.diff.diff_graphs): a
        session.diff.GraphDiff, ``levels`` each ``changed`` with its ``changes``; ``render(d)`` prints it."""
        from inductor_step.session.diff import DiffSide, diff_graphs  # noqa: PLC0415

        same = other.session is self.session
        return diff_graphs(DiffSide.from_session(self.session.store, self.key, self.session.label),
                           DiffSide.from_session(other.session.store, other.key, other.session.label), same_session=same)
