"""The session format's compile-time messages: the compile's own time per stage, kernel and FX node."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from inductor_step.session.format.types import GraphKind

#: the compile's stages in pipeline order, with what each covers (tracer.compile_time names them from
#: torch's events; the UI's and the report's labels)
COMPILE_STAGES: tuple[tuple[str, str], ...] = (
    ("dynamo", "Dynamo: bytecode tracing"), ("guards", "Dynamo: building guards"),
    ("pre_grad", "Inductor pre-grad passes"), ("aot", "AOTAutograd: metadata, joint trace, joint passes"),
    ("partition", "AOTAutograd: partitioning"), ("post_grad", "post-grad passes"),
    ("lowering", "lowering (GraphLowering.run)"), ("scheduling", "scheduling and fusion (Scheduler.__init__)"),
    ("codegen", "Python/C++ codegen"), ("kernels", "kernels' compile: C++/Triton compilers, waiting for the compile workers, the C++ ISA probe"),
    ("autotune", "autotuning benchmarks"), ("load", "loading the output module"),
    ("cache", "caches: keys, lookups, saves, loads"),
    ("inductor", "the backend (compile_fx) around its timed stages: cache keys, repro artifact, bookkeeping"),
    ("other", "other (under no timed stage)"),
)


class CompileTimeKernel(TypedDict, total=False):
    """One kernel's compile in the compile workers (tracer.compile_time)."""
    name: str  # as generated ("cpp_fused_add_0", "triton_poi_fused_0"); an autotuning: its op or kernel
    kind: Literal["cpp", "triton", "autotune"]
    compile_ms: float | None  # the worker's build (C++), torch's compile_time_us (Triton), the autotuning's time
    missing: str  # why compile_ms is None
    cache: Literal["hit", "miss"]
    cache_note: str
    autotune_cache: str  # Triton: torch's autotune_cache_state
    source: str  # where compile_ms came from


class CompileTime(TypedDict, total=False):
    """The compile's own time of one graph in one finished compile (a frame's Dynamo + forward/inference compile, a
    lazy backward, or a late event such as runtime autotuning): ms per stage (tracer.compile_time.STAGE_ORDER),
    pauses at our stops and our hooks taken out.  A graph's messages add up (session.compile_time).  A compile
    that holds several graphs (DDPOptimizer's parts, a higher-order op's subgraphs) sends one message per graph,
    each with its own events' time (``part``, ``subgraph``), and for parts one ``frame_own``: they add up to
    the compile."""
    type: Literal["compile_time"]
    compile_id: str
    graph_kind: GraphKind
    part: int  # the graph's part, subgraph and what-if variant, as its stops carry them (see graph_key)
    subgraph: str
    variant: str
    root: str  # torch's outermost event ("dynamo", "entire_backward_compile", ...)
    frame_own: bool  # a frame compiled in parts (DDPOptimizer): its own time outside them (Dynamo, guards)
    total_ms: float  # wall_ms - paused_ms - ours_ms: the sum of stages
    wall_ms: float
    paused_ms: float  # waiting at our stops for the UI
    ours_ms: float  # in our capture hooks
    stages: dict[str, float]
    events: dict[str, list[list[Any]]]  # stage -> [[torch's event name, ms], ...] (its own time, top 6)
    kernels: list[CompileTimeKernel]
    lowering_nodes: dict[str, float]  # post-grad FX node -> ms in GraphLowering.run_node
    frame: dict[str, Any]  # function, file, line, tracing_ms: the frame Dynamo traced
    cache: dict[str, dict[str, str]]  # "fx_graph" / "aot_autograd" (" (backward)") -> status, reason
    metrics: dict[str, Any]  # torch's compilation metrics (counts, _s, _us)
    source: str
    t: float
