"""The session format's version, stages, and a stop's typed pieces: FX nodes, buffers, kernels, links, stops."""

from __future__ import annotations

import typing
from typing import Any, Literal, TypedDict, Union


FORMAT = "inductor-step/2"
#: Formats :func:`read_session` reads (``/1``: the same messages, never packed).
FORMATS_READ: tuple[str, ...] = ("inductor-step/1", "inductor-step/2")

Stage = Literal["dynamo", "aot", "lowering", "scheduling", "loopbody", "codegen"]
GraphKind = Literal["inference", "forward", "backward"]  # as AOTAutograd names the graphs

#: The compile stages, in the order a compile passes them, then the run stage.
STAGES: tuple[str, ...] = typing.get_args(Stage)
ALL_STAGES: tuple[str, ...] = STAGES + ("run",)


# ----------------------------------------------------------------------------- shared pieces

class Unavailable(TypedDict, total=False):
    """Stands in for a capture that this torch version does not support or that failed."""
    unavailable: str  # "<what>: not available on torch X (<error>)"
    traceback: str


class FxNode(TypedDict, total=False):
    """One torch.fx node (tracer.adapter.fx_graph)."""
    name: str
    op: str  # placeholder, call_function, call_method, call_module, get_attr, output
    target: str
    user_line: str | None  # "file.py:22" from meta["stack_trace"]: its innermost user frame
    torch_line: str  # only where the innermost frame is torch's own ("torch/nn/functional.py:5849"), as torch shows it
    args: list[str]  # names of input nodes
    shape: list[str] | list[list[str]]  # symbolic sizes as text; a list per tensor for tuples
    dtype: str
    device: str
    stride: list[str] | None
    value: str  # a SymInt / scalar's value
    from_node: list[str]  # post-grad: the Dynamo nodes it came from (torch's provenance postToPre)


class _FxGraph(TypedDict):
    code: str  # print_readable()
    nodes: list[FxNode]


class FxGraph(_FxGraph, total=False):
    when: str  # which graph this is ("lowered: the graph GraphLowering.run lowered, after every post-grad pass")


class IrBuffer(TypedDict, total=False):
    """One Inductor IR buffer at lowering (tracer.adapter.ir_buffers)."""
    name: str  # buf3
    operation: str | None  # op3
    ir_type: str  # ComputedBuffer, ExternKernelOut, ...
    kind: str  # Pointwise, Reduction, ... (ComputedBuffer), else the IR type
    ranges: list[str] | None
    reduction_ranges: list[str] | None
    reduction_type: str | None
    dtype: str
    device: str
    size: list[str]
    stride: list[str] | None
    layout: str
    origins: list[str]  # post-grad FX node names
    origin_node: str | None  # the post-grad node whose output this buffer is (tracer.links: producer first)
    text: str  # Inductor's str(buf)


class GraphInput(TypedDict, total=False):
    name: str
    size: list[str]
    dtype: str


class SchedulerNode(TypedDict, total=False):
    """A scheduler node before or after fusion (tracer.adapter.scheduler_nodes)."""
    name: str  # op3, or op3_op4 when fused
    type: str  # SchedulerNode, FusedSchedulerNode, ExternKernelSchedulerNode, ...
    members: list[str]
    buffers: list[str]
    device: str
    group: str
    kernel: str  # an ExternKernelSchedulerNode's call, as the wrapper spells it (python_kernel_name): extern_kernels.mm
    text: str  # debug_str()


class LoopBodyEntry(TypedDict, total=False):
    """One member node's LoopBody, or ``none`` with why it has none (tracer.adapter.loop_bodies)."""
    node: str
    fused_node: str
    type: str
    buffers: list[str]
    var_ranges: dict[str, str]
    indexing_exprs: dict[str, str]
    body: str  # LoopBody.debug_str()
    none: str


class Kernel(TypedDict, total=False):
    """One kernel of the generated wrapper (tracer.codeparse.parse_wrapper, then the agent)."""
    name: str  # triton_poi_fused_add_0, cpp_fused_gelu_1, extern_kernels.mm#0
    backend: Literal["cpp", "triton", "extern"]
    source: str
    calls: list[list[str]]  # argument texts of each call in call()
    reuses: dict[str, str]  # buffer written -> the buffer whose storage it reuses
    buffers: list[str]
    fused_nodes: list[str]
    scheduler_nodes: list[str]
    num_gb: float  # Inductor's estimate_kernel_num_bytes / 1e9 (Triton)
    call_lines: list[int]  # each call's 1-based line in the wrapper
    collective: str  # a collective's op (torch.ops._c10d_functional.X.default): all_reduce_, wait_tensor, ...
    # a kernel generated from a template (tracer.adapter.template_nodes)
    template: str  # the template buffer's IR type: CppTemplateBuffer, TritonTemplateBuffer, ...
    template_node: str  # its scheduler node (opN)
    epilogue: list[str]  # the scheduler nodes fused after the template (its epilogue), opN
    prologue: list[str]  # those fused before it


# ----------------------------------------------------------------------------- how a graph was compiled

class CompiledWith(TypedDict, total=False):
    """How a graph was compiled (tracer.adapter.compiled_with): torch.compile's arguments as given
    (None where the compile did not come through torch.compile) and Inductor's config at the compile."""
    backend: str | None  # "inductor", or the backend's name
    mode: str | None  # "default", "max-autotune", ...
    options: dict[str, Any]
    dynamic: bool | None
    fullgraph: bool | None
    config: dict[str, Any]  # torch._inductor.config entries that differ from default during this compile
    config_unavailable: str
    note: str


class Symbol(TypedDict, total=False):
    """One ShapeEnv symbol of a dynamic graph (tracer.adapter.dynamic_symbols)."""
    name: str  # s27
    source: str | None  # what it stands for: "L['input_ids'].size()[1]"
    sources: list[str]
    range: list[str]  # [lo, hi] as the ShapeEnv prints them: ["2", "int_oo"]
    hint: int | str  # its value at this compile
    replaced_by: str  # what the graphs write instead, where a guard replaced it (ShapeEnv.replacements): "s13"


class AutotuneChoice(TypedDict, total=False):
    name: str  # cpp_CppMicroGemmFP32Vec_0, _mkl_linear, triton_mm_3, ...
    kind: str  # template, extern, or the caller's class
    description: str
    ms: float | None  # its benchmark time (select_algorithm's feedback); None: failed
    failed: str


class Autotune(TypedDict, total=False):
    """One select_algorithm selection of a graph (tracer.adapter.install_autotune_hook)."""
    op: str  # mm, addmm, packed_linear, flex_attention, ...
    input_sizes: list[str]  # "8x16 float32"
    choices: list[AutotuneChoice]
    winner: str
    buffer: str | None  # the buffer the winner computes (bufN): its kernel is the chosen kernel
    benchmarked: bool
    note: str
    # GPU, benchmark_epilogue_fusion: the times the scheduler kept after timing choices with the epilogue fused
    # (choice name -> ms; the winner is the fastest of them where torch does not say which it finalized)
    fused_ms: dict[str, float]


class LinkBuffer(TypedDict, total=False):
    fx_nodes: list[str]
    dynamo_nodes: list[str]
    scheduler_node: str | None
    fused_node: str | None
    kernels: list[str]
    kernel_lines: dict[str, list[list[int]]]  # kernel -> [[first, last]] 1-based lines in its source
    call: LinkCallRef  # the call that computes it, for a kernel called more than once
    storage_of: str  # it is written into this buffer's storage (in place, or a scatter's mutation)
    user_lines: list[str]
    notes: list[str]


class LinkCall(TypedDict, total=False):
    """One call of a kernel in the wrapper's ``call()`` (tracer.links, per call)."""
    index: int  # 0 for the kernel's first call
    line: int  # 1-based wrapper line
    buffers: list[str]  # the buffers this call computes
    pointers: str  # where the buffer <-> pointer binding came from ("kernel args", "call args")
    post_grad_nodes: list[str]


class LinkCallRef(TypedDict, total=False):
    kernel: str
    index: int
    line: int


class LinkKernel(TypedDict, total=False):
    backend: str | None
    buffers: list[str]
    fused_nodes: list[str]
    scheduler_nodes: list[str]
    post_grad_nodes: list[str]
    source: str  # "provenance+call-args" | "call-args"
    calls: list[LinkCall]  # each call of the kernel in call(), with what that call computes


class LinkFxNode(TypedDict, total=False):
    buffers: list[str]
    dynamo_nodes: list[str]
    user_line: str | None
    torch_line: str  # the node's innermost frame where it is inside torch (FxNode.torch_line)


class LinkDynamoNode(TypedDict, total=False):
    post_grad: list[str]
    buffers: list[str]


class LinkSchedulerNode(TypedDict, total=False):
    buffers: list[str]
    fused_node: str | None
    kernels: list[str]


class LinkFusedNode(TypedDict, total=False):
    members: list[str]
    buffers: list[str]
    kernels: list[str]


class Links(TypedDict, total=False):
    """A graph's cross-level index (tracer.links.build_links), carried by its codegen stop."""
    buffers: dict[str, LinkBuffer]
    kernels: dict[str, LinkKernel]
    fx_nodes: dict[str, LinkFxNode]
    dynamo_nodes: dict[str, LinkDynamoNode]
    scheduler_nodes: dict[str, LinkSchedulerNode]
    fused_nodes: dict[str, LinkFusedNode]
    user_source: dict[str, str]  # "file.py:22" -> numbered lines around it
    sources: list[str]
    notes: list[str]
    provenance_map: str  # what torch's provenance map held for this graph: "written", "empty: ...", ...
    partial: str  # before codegen (session.prelinks): the last stage the links were read from; no kernels yet


# ----------------------------------------------------------------------------- stops

class StopHead(TypedDict):
    """The keys every stop starts with, in this order (:func:`stop_head` builds them)."""
    type: Literal["stop"]
    seq: int
    compile_id: str  # "[0/0]"
    graph_kind: GraphKind
    stage: Stage
    paused: bool


class StopBase(StopHead, total=False):
    """What every stop may carry besides its head; each stage's stop adds its fields."""
    t: float  # seconds since the agent started
    attempt: int  # Dynamo restarted this frame's analysis: torch names the compile [0/0_1]
    trace_id: str  # "[0/0_1]"
    part: int  # one of several graphs Inductor compiled for this compile id and kind (see graph_key)
    subgraph: str  # a higher-order op's subgraph of the graph (see graph_key): "true_graph_0"
    variant: str  # a what-if recompile of the graph: its settings, "max_autotune=True"
    unavailable: str  # the whole snapshot failed (tracer.adapter.safe)
    traceback: str
    compile_ms: dict[str, float]  # the compile's own time so far per stage (COMPILE_STAGES), pauses out


class DynamoStop(StopBase, total=False):
    graph: FxGraph | Unavailable
    graph_breaks: list[str]
    recompile_reasons: list[str]
    #: why Dynamo restarted this frame's analysis (attempt >= 1): torch's RestartAnalysis reasons
    restart_reasons: list[str]
    resume: str | None  # this frame is Dynamo's continuation after a graph break
    #: graph breaks in frames that gave no graph (Dynamo broke off before any op it could keep; their ops ran
    #: eagerly), sent with the next graph's dynamo stop: each {"compile_id": the frame's, "text": Dynamo's reason}
    breaks_before: list[dict[str, str]]
    note: str | None
    #: this graph's dynamo stop sent again under the kind AOTAutograd chose: the kind the agent had
    #: guessed at the dynamo stop ("forward": an input requires grad), whose graph had no other stop;
    #: readers drop that graph (session.store.Store.add)
    corrects: str
    compiled_with: CompiledWith | Unavailable  # how this graph was compiled
    symbols: list[Symbol] | Unavailable  # the dynamic symbols, what each stands for, its range
    #: the backend Dynamo handed this graph to when it is not Inductor ("aot_eager",
    #: "eager", a custom backend's name): the graph's stops end at dynamo (or aot, where AOTAutograd ran)
    backend: str


class AotStop(StopBase, total=False):
    aot_graphs: dict[str, str]  # joint / forward / backward / inference -> readable code
    post_grad: FxGraph | Unavailable
    backend: str  # not Inductor (DynamoStop.backend)


class LoweringStop(StopBase, total=False):
    buffers: list[IrBuffer]
    graph_inputs: list[GraphInput]
    is_inference: bool
    is_backward: bool
    unnamed: list[str]  # buffers Inductor never named (a flex attention mod lowered inline), left out of ``buffers``


class SchedulingStop(StopBase, total=False):
    before: list[SchedulerNode] | Unavailable | None
    after: list[SchedulerNode] | Unavailable
    fusion_log: list[str]  # Inductor's fusion logger, in its words
    order: str  # which order ``after`` is in ("final: the order Inductor generated code in ...")


class LoopBodyStop(StopBase, total=False):
    bodies: list[LoopBodyEntry] | Unavailable


#: Where a kernel lies in the wrapper (1-based lines): ``def`` its ``async_compile`` definition
#: [first, last], ``body`` the line of its source's first line, ``calls`` each call in ``call()``; an
#: extern or fallback call has ``call``, its line.  (``def`` is a keyword: the functional form.)
KernelSpan = TypedDict("KernelSpan", {"def": list[int], "body": int, "calls": list[int], "call": int}, total=False)


class AotiCode(TypedDict, total=False):
    """Where an AOTInductor graph's code came from (tracer.capture_aoti)."""
    api: str | None  # "aoti_compile_and_package" or "aot_compile"
    wrapper_path: str | None  # torch's wrapper .cpp (the inductor_aot_wrapper_code event)
    kernel_path: str | None  # torch's kernel .cpp (inductor_aot_kernel_code)
    package_path: str | None  # the .pt2 asked for, where the script named it
    note: str


class AotiRun(TypedDict, total=False):
    path: str  # the .pt2 package or .so timed
    loaded_with: str  # torch._inductor.aoti_load_package or torch._export.aot_load
    eager: str  # what the eager time ran, or why there is none


class CodegenStop(StopBase, total=False):
    wrapper: str  # the output module's source (AOTInductor: its wrapper .cpp then its kernel .cpp)
    wrapper_language: Literal["cpp"]  # a C++ wrapper (cpp_wrapper=True, AOTInductor); absent: Python
    aoti: AotiCode  # an AOTInductor compile (its package or .so is in output_path once known)
    output_path: str | None
    kernels: list[Kernel]
    links: Links | Unavailable
    kernel_spans: dict[str, KernelSpan]  # kernel (as in links.kernels) -> where it is in the wrapper
    function: str  # a subgraph's: its function in the parent's output module, "true_graph_0"
    function_lines: list[int]  # that function's [first, last] 1-based lines in ``wrapper``
    autotune: list[Autotune]  # Inductor's autotuning selections while lowering this graph
    # compiled with CUDA graphs: {"enabled": True, "partitions": [...], "outside": [statements of call
    # run outside them]} (tracer.cudagraph_record.partitions_of; no "partitions": no Runner, the whole call)
    cudagraphs: dict[str, Any]
    memory_estimate: dict[str, Any]  # {"bytes", "source"}: torch._inductor.memory's peak estimate, or {"unavailable"} / {"not_read"}


Stop = Union[DynamoStop, AotStop, LoweringStop, SchedulingStop, LoopBodyStop, CodegenStop]

#: stage -> the type of its stop.
STOPS: dict[str, type] = {"dynamo": DynamoStop, "aot": AotStop, "lowering": LoweringStop,
                          "scheduling": SchedulingStop, "loopbody": LoopBodyStop, "codegen": CodegenStop}
