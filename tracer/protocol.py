"""The session format: every message of the stream, typed, and how a line is written and read back.

Standard library only; imported by both processes (the agent in ``tracer/``, the UI in ``tui/``).

The agent writes one JSON object per line on its message pipe; the UI appends every line, as it
arrives, to the session file, so a session file is the stream (format :data:`FORMAT`).  The UI
writes :class:`Command` lines to the agent's control pipe in the same framing.

Every message is a ``TypedDict`` below, dispatched on ``type`` (and a stop's ``stage``) by
:data:`MESSAGES` and :data:`STOPS`; :func:`validate` checks a decoded message against them.

Framing (``inductor-step/2``): a line is a JSON object.  The session writer stores a long line as
a *packed* line (:class:`Packed`): the message's head keys in the clear, ``size`` (bytes of the
message's JSON) and ``zlib``: base64 of the zlib-compressed JSON of the whole message.  A stop's
head is :data:`STOP_HEAD_KEYS` in that order, first on its line, so :func:`read_session` can yield
a large stop as its head without decoding the rest (:func:`load_lazy` decodes it when first
shown).  :func:`decode` turns a packed line back into its message, so no reader sees the packing.
``inductor-step/1`` files (no packed lines) are read the same way.
"""

from __future__ import annotations

import base64
import json
import os
import re
import sys
import types
import typing
import zlib
from typing import Any, Iterator, Literal, TypedDict, Union

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
    # issue 27: a kernel generated from a template (tracer.adapter.template_nodes)
    template: str  # the template buffer's IR type: CppTemplateBuffer, TritonTemplateBuffer, ...
    template_node: str  # its scheduler node (opN)
    epilogue: list[str]  # the scheduler nodes fused after the template (its epilogue), opN
    prologue: list[str]  # those fused before it


# ----------------------------------------------------------------------------- how a graph was compiled (issue 27)

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
    subgraph: str  # a higher-order op's subgraph of the graph (issue 27, see graph_key): "true_graph_0"
    variant: str  # a what-if recompile of the graph (issue 22): its settings, "max_autotune=True"
    unavailable: str  # the whole snapshot failed (tracer.adapter.safe)
    traceback: str
    compile_ms: dict[str, float]  # issue 30: the compile's own time so far per stage (COMPILE_STAGES), pauses out


class DynamoStop(StopBase, total=False):
    graph: FxGraph | Unavailable
    graph_breaks: list[str]
    recompile_reasons: list[str]
    #: why Dynamo restarted this frame's analysis (attempt >= 1): torch's RestartAnalysis reasons
    restart_reasons: list[str]
    resume: str | None  # this frame is Dynamo's continuation after a graph break
    note: str | None
    #: this graph's dynamo stop sent again under the kind AOTAutograd chose: the kind the agent had
    #: guessed at the dynamo stop ("forward": an input requires grad), whose graph had no other stop;
    #: readers drop that graph (tui.session.Session.add)
    corrects: str
    compiled_with: CompiledWith | Unavailable  # issue 27: how this graph was compiled
    symbols: list[Symbol] | Unavailable  # issue 27: the dynamic symbols, what each stands for, its range
    #: issue 27.10: the backend Dynamo handed this graph to when it is not Inductor ("aot_eager",
    #: "eager", a custom backend's name): the graph's stops end at dynamo (or aot, where AOTAutograd ran)
    backend: str


class AotStop(StopBase, total=False):
    aot_graphs: dict[str, str]  # joint / forward / backward / inference -> readable code
    post_grad: FxGraph | Unavailable
    backend: str  # issue 27.10: not Inductor (DynamoStop.backend)


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
    """Where an AOTInductor graph's code came from (issue 27; tracer.capture_aoti)."""
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
    function: str  # a subgraph's (issue 27): its function in the parent's output module, "true_graph_0"
    function_lines: list[int]  # that function's [first, last] 1-based lines in ``wrapper``
    autotune: list[Autotune]  # issue 27: Inductor's autotuning selections while lowering this graph


Stop = Union[DynamoStop, AotStop, LoweringStop, SchedulingStop, LoopBodyStop, CodegenStop]

#: stage -> the type of its stop.
STOPS: dict[str, type] = {"dynamo": DynamoStop, "aot": AotStop, "lowering": LoweringStop,
                          "scheduling": SchedulingStop, "loopbody": LoopBodyStop, "codegen": CodegenStop}


# ----------------------------------------------------------------------------- other messages

class _Header(TypedDict):
    type: Literal["header"]
    format: str  # "inductor-step/N"
    torch: str | None
    triton: str | None
    python: str | None
    device: str | None  # "cpu" | "cuda"


class Header(_Header, total=False):
    device_name: str | None
    cuda: str | None
    script: str | None
    argv: list[str]
    cwd: str
    pid: int
    time: float
    settings: dict[str, Any]  # torch config values the agent set
    # the what-if form's settings (tracer.adapter.WHAT_IF_SETTINGS) read when the agent started, before the
    # script ran: not what a graph compiled with (torch.compile's mode/options patch them per compile); each
    # graph's own are its dynamo stop's compiled_with.config (issue 27)
    inductor_settings: dict[str, Any]
    hooks: list[str]
    note: str
    t: float
    distributed: "Distributed"  # the agent runs in one rank of a torchrun job (issue 23)


class Distributed(TypedDict, total=False):
    """A rank's place in its job, from the environment torchrun sets (``RANK``, ``LOCAL_RANK``,
    ``WORLD_SIZE``, ``GROUP_RANK``, ``TORCHELASTIC_RESTART_COUNT``, ``TORCHELASTIC_RUN_ID``).
    ``stepped_rank``: the rank the UI steps (``None``: no rank pauses, e.g. ``--headless``);
    ``collective_timeout_s``: what the agent raises every process group's timeout to while a rank
    may pause (``None``: left as the script sets it); ``note`` says so in words."""
    rank: int
    local_rank: int
    world_size: int
    group_rank: int
    restart_count: int
    run_id: str
    stepped_rank: int | None
    collective_timeout_s: float | None
    note: str


class ProcessGroup(TypedDict, total=False):
    """The script made a process group (``torch.distributed.init_process_group`` or ``new_group``,
    seen by the agent's wrapper of them): its backend, size and this rank in it, the timeout the
    script asked for (``None``: torch's default for the backend, ``default_s``) and the one it got
    (``timeout_s``: raised to the job's ``collective_timeout_s`` while a rank may pause)."""
    type: Literal["process_group"]
    call: str  # "init_process_group" | "new_group"
    backend: str | None
    world_size: int | None
    rank: int | None
    timeout_asked_s: float | None
    default_s: float | None
    timeout_s: float | None
    t: float


class Output(TypedDict):
    """One line the script printed (added by the UI, not the agent)."""
    type: Literal["output"]
    stream: Literal["stdout", "stderr"]
    text: str


class _Error(TypedDict):
    type: Literal["error"]
    stage: str  # a Stage, or "script"
    message: str  # one line


class Error(_Error, total=False):
    part: int  # the graph's part (see graph_key), as its stops carry it
    subgraph: str  # the graph's higher-order-op subgraph (see graph_key), as its stops carry it
    variant: str  # the failed compile was a what-if variant (see WhatIf)
    full_message: str
    traceback: str
    compile_id: str | None
    graph_kind: GraphKind | None
    t: float


class _Done(TypedDict):
    type: Literal["done"]
    returncode: int
    graphs: int


class Done(_Done, total=False):
    message: str | None
    t: float
    # issue 27.10: graphs no Inductor compile got -- {"[0/0] inference": "aot_eager"} -- and, when no
    # graph reached Inductor, Dynamo's reasons (graph breaks, skipped or failed frames), one line each
    other_backends: dict[str, str]
    inductor_graphs: int
    break_reasons: list[str]


class AgentExit(TypedDict):
    """The agent process ended (added by the UI)."""
    type: Literal["agent_exit"]
    returncode: int


class Quit(TypedDict, total=False):
    type: Literal["quit"]
    t: float


class Guards(TypedDict, total=False):
    type: Literal["guards"]
    compile_id: str
    text: str  # dynamo_cpp_guards_str
    t: float


class Provenance(TypedDict, total=False):
    type: Literal["provenance"]
    compile_id: str
    graph_kind: GraphKind
    mappings: str  # inductor_provenance_tracking_node_mappings JSON
    part: int  # the graph's part (see graph_key), as its stops carry it
    subgraph: str  # the graph's higher-order-op subgraph (see graph_key), as its stops carry it
    variant: str
    t: float


class Artifact(TypedDict, total=False):
    type: Literal["artifact"]
    name: str  # "fx_graph_runnable"; "aoti_package": the .pt2 or .so an AOTInductor compile made (payload: its path)
    compile_id: str
    graph_kind: GraphKind
    part: int  # the graph's part (see graph_key), as its stops carry it
    subgraph: str  # the graph's higher-order-op subgraph (see graph_key), as its stops carry it
    variant: str
    payload: str
    note: str  # aoti_package: whether the run stage times it, or why not
    t: float


class RunStatus(TypedDict, total=False):
    type: Literal["run_status"]
    message: str
    done: bool
    timed: int  # graphs timed
    failed: list[str]  # graphs whose timing failed ("[1/0] backward")
    of: int  # graphs asked for
    cancelled: bool
    limit_s: float  # issue 32.4: the per-graph time limit the timing runs under (--timing-limit)
    t: float


class FusionQuery(TypedDict, total=False):
    """The answer to a ``can_fuse`` command."""
    type: Literal["fusion_query"]
    a: str
    b: str
    compile_id: str
    graph_kind: str
    part: int
    subgraph: str
    verdict: str  # "can fuse" | "cannot fuse" | "not available: ..."
    reasons: list[str]  # Inductor's fusion log while it decided
    t: float


class Peak(TypedDict, total=False):
    bw_gbps: float | None
    bw_source: str
    tflops: dict[str, float]  # dtype -> peak TFLOP/s
    tflops_source: str
    float32_mode: str | dict[str, bool]  # matmul_tf32 / conv_tf32
    bw_datasheet_gbps: float
    copy_gbps: float  # the measured device-to-device copy bandwidth (what bw_gbps is, on CUDA)


class GraphRounds(TypedDict, total=False):
    compiled_rounds_ms: list[float]
    eager_rounds_ms: list[float]
    rounds_stable: bool
    load: dict[str, float | int | None]  # loadavg_1m_before / loadavg_1m_after / cpus while timing (CPU)
    compiled_wait_shares: list[float]  # issue 32, CPU: each round's share of time its threads waited for a core
    eager_wait_shares: list[float]
    compiled_wait: dict[str, Any]  # the last rounds together (tracer.timing.contention.combine)
    eager_wait: dict[str, Any]


class Roof(TypedDict):
    """One roof (tracer.timing.machine): ``value`` (GB/s or TFLOP/s), None with the reason in ``source``."""
    value: float | None
    source: str


class LadderRoof(TypedDict):
    """A CPU copy bandwidth at one size (tracer.timing.machine.measure_cpu): ``bytes`` read + written."""
    bytes: int
    value: float
    source: str


class Roofs(TypedDict, total=False):
    """The device's roofs (tracer.timing.machine.device_roofs): kind ("datasheet", "theoretical",
    "measured") -> Roof; compute per dtype ("float32", "tf32", "bfloat16", "float16")."""
    device: str
    memory_gbps: dict[str, Roof]
    compute_tflops: dict[str, dict[str, Roof]]
    memory_ladder: list[LadderRoof]  # CPU: copy bandwidth by size (cache-resident ... DRAM)
    load: float | None  # CPU: 1-minute load average when measured
    cpus: int | None
    cache: str  # where measured roofs are kept (~/.cache/inductor-step/roofs.json)
    cached: bool  # read from the cache, not measured in this run
    missing: str


class KernelResources(TypedDict, total=False):
    """A Triton kernel's compiled binary and launch (tracer.timing.machine.kernel_resources; GPU)."""
    config: dict[str, int]  # block sizes: XBLOCK, R0_BLOCK, ...
    num_warps: int
    num_stages: int
    n_regs: int  # registers per thread
    n_spills: int
    shared: int  # bytes of shared memory per block
    blocks_per_sm: int
    occupancy: float  # resident warps / the SM's most warps
    limiter: str  # "threads" | "registers" | "shared memory" | "blocks"
    blocks_by: dict[str, int]
    grid: list[int]
    blocks: int
    waves: float  # blocks / (blocks per SM x SMs)
    grid_source: str
    source: str
    missing: str


class RunKernel(TypedDict, total=False):
    """One kernel call timed (tracer.timing.time_graph); times in ms, sizes in GB (1e9 bytes).  A collective
    (issue 23: ``torch.ops._c10d_functional.all_reduce_.default#0``) is listed but not timed: ``median_ms``,
    ``p20_ms``, ``p80_ms`` and ``share`` are None, ``not_timed`` says why, ``stand_in`` what ran in its place."""
    name: str
    call: int  # 1 for the kernel's first call in call(), 2 for its second, ...
    backend: str
    median_ms: float | None  # None: not timed (a collective)
    collective: str  # the collective's op ("all_reduce_", "wait_tensor", "all_gather_into_tensor", ...)
    not_timed: str  # why there is no time ("a collective: timing it alone needs every rank running it together; not timed")
    stand_in: str  # what ran in the collective's place while the graph was timed, in words
    stand_in_ms: float | None  # that stand-in's own median time alone (inside compiled_ms)
    p20_ms: float | None
    p80_ms: float | None
    in_graph_ms: float | None
    in_graph_source: Literal["cupti", "events"]
    in_graph_events_ms: float | None
    in_script_ms: float | None
    in_script_calls: int
    warm_ms: float | None
    config: str
    configs_tried: int
    config_pinned: bool
    gb: float
    gb_source: str
    gbps: float
    pct_peak_bw: float
    tflops: float
    pct_peak_tflops: float
    dtype: str
    flops: float  # torch.utils.flop_counter's count for the op
    flops_op: str
    peak_tflops: float
    peak_tflops_which: str  # which peak: "tf32 tensor cores (TF32 on)", ...
    bound: Literal["memory", "compute"] | None
    bound_source: str
    flops_source: str  # a Triton template's FLOPs: how (tracer.timing.template_flops)
    user_kernel: bool  # a user's @triton.jit kernel (tracer.user_kernels)
    launch: dict[str, Any]  # its launch config: grid, constants, num_warps, num_stages, def_name
    share: float | None  # of the kernel sum; None for a call with no time (a collective)
    resources: KernelResources


class Run(TypedDict, total=False):
    """A compiled graph timed (tracer.timing.time_graph); ``error`` instead when timing failed."""
    type: Literal["run"]
    compile_id: str
    graph_kind: GraphKind
    device: str
    cupti: str
    compiled_ms: float | None
    eager_ms: float | None
    kernel_sum_ms: float | None  # None with kernels_note: the kernels are not timed one by one
    # issue 27: a C++ wrapper (cpp_wrapper=True) or an AOTInductor package runs its kernels inside compiled code
    kernels_note: str  # why ``kernels`` is empty and there is no kernel sum
    aoti: AotiRun  # an AOTInductor graph: the package timed and how it was loaded
    in_graph_sum_ms: float
    in_graph: str
    in_graph_cupti: str
    in_script: str
    inputs: str
    input_sizes: list[str]  # issue 27: the sizes timed at, one per graph input ("2x5x8 float32", "5")
    configs: str
    graph_rounds: GraphRounds
    peak: Peak
    roofs: Roofs
    eager_nodes_ms: dict[str, float]  # post-grad FX node -> its eager time alone (tracer.timing.eager_nodes)
    eager_nodes: str  # how eager_nodes_ms was measured, or why it was not
    # issue 23: a graph with collectives is timed with each collective replaced by a local stand-in
    # (tracer.adapter.collectives); compiled_ms, eager_ms, kernel_sum_ms and the shares exclude them
    collectives_stubbed: list[str]  # the collective calls' kernel names, in call order
    collectives_stand_in_ms: float | None  # the stand-ins' own times summed (inside compiled_ms)
    collectives_note: str  # what the graph's times exclude, and why
    eager_nodes_stubbed: list[str]  # post-grad FX nodes (as timed: re-traced names) run as stand-ins, no eager time
    cancelled: bool
    method: str
    threads: int
    pid: int
    kernels: list[RunKernel]
    part: int  # the graph's part (see graph_key), as its stops carry it
    subgraph: str  # the graph's higher-order-op subgraph (see graph_key), as its stops carry it
    variant: str  # a what-if variant's timing
    not_timed: str  # why this graph has no time of its own, by design (a subgraph lowered inline); not a failure
    numerics: Numerics  # a variant's outputs against the original compiled graph's and eager's
    error: str
    traceback: str
    failed: bool
    crashed: bool
    signal: str | int
    isolated: str  # "timed in a process of its own (pid N) ..."
    # issue 27.9: timing never needs a re-trace that fails; where a part cannot be timed, which and why
    eager_error: str  # eager_ms is None: why the post-grad graph could not be run eagerly
    eager_note: str  # the eager baseline came from elsewhere or was left out (e.g. not sendable to a worker)
    eager_fixes: str  # what was rewritten so the post-grad graph runs eagerly (in-place foreach getitems)
    in_process: str  # timed in the agent's own process instead of a worker, and why (custom ops, frozen weights)
    timed_out: bool  # the per-graph limit ran out (error says at which step)
    limit_s: float  # the per-graph limit it ran under (s)
    settled: bool  # the graph time settled (rounds agreed, no contention)
    contended: bool  # the timing threads waited for a core (measured per round; before issue 32: the load average)
    sum_vs_graph: float | None  # kernel sum / compiled graph time
    gap_cause: Literal["overhead", "kernels_alone", "unsettled"]
    warnings: list[str]
    eager_note: str  # why eager_ms is None, where the timing says
    # issue 27 points 6-7 (CUDA): tracer.cudagraph_record.CudagraphRecord.cudagraphs_run_info, the whole graph
    # replayed as one CUDA graph (tracer.timing.ingraph.replay_time), user kernels not restored for eager
    cudagraphs: dict[str, Any]
    cudagraph_replay: dict[str, Any]
    eager_user_kernels: str
    # issue 32: every CPU figure judged on its measured contention (tracer.timing.contention)
    reliable: bool  # False when any figure (compiled, eager, kernels) is not reliable
    unreliable: str  # which figures are not, and why, in one line ending "press r to time again"
    verdicts: dict[str, Verdict]  # "compiled" | "eager" | "kernels" -> its verdict (CPU)
    interleaved: Interleaved  # a what-if variant: it, the original and eager timed round by round
    t: float


class Blocked(TypedDict, total=False):
    """A rank's script has sat inside a torch.distributed collective for a while (tracer.rank_watch):
    ``collective`` (``all_reduce``, ``barrier``...; None: it has left it), ``where`` (the script's
    line), ``since_s``."""
    type: Literal["blocked"]
    collective: str | None
    where: str
    since_s: float
    t: float


class Verdict(TypedDict, total=False):
    """Whether one CPU figure can be trusted (tracer.timing.contention.judge): ``wait_share`` is the share of
    the time its threads wanted a core that they waited for one (schedstat run-queue wait) in the rounds the
    figure came from; ``reliable`` None where it could not be measured."""
    reliable: bool | None
    wait_share: float
    source: Literal["schedstat", "thread_cpu"]
    text: str


class Interleaved(TypedDict, total=False):
    """A what-if variant, its original and the original's eager graph timed in one process, round by round
    (tracer.whatif.interleaved_rounds): medians over rounds in ms, each round's time, the setting's effect
    (``speedup_vs_original`` = original / variant, both from the same rounds) and the verdict on the rounds."""
    rounds: int
    variant_ms: float
    original_ms: float
    eager_ms: float | None
    variant_rounds_ms: list[float]
    original_rounds_ms: list[float]
    eager_rounds_ms: list[float]
    speedup_vs_original: float
    reliable: bool
    wait_share: float
    why: str
    shapes: str  # the variant was compiled static at the original's size hints (a dynamic original)
    unavailable: str


class OutputError(TypedDict, total=False):
    """One output of a graph compared with a reference on the same inputs: ``max_abs`` = max |x - ref|,
    ``max_rel`` = max_abs / max |ref| (0 when both are 0); ``error`` where it could not be compared."""
    output: int
    shape: str
    dtype: str
    max_abs: float | None
    max_rel: float | None
    error: str


class Numerics(TypedDict, total=False):
    """A what-if variant's outputs against the original compiled graph (``vs_original``) and the
    post-grad graph run eagerly (``vs_eager``), on the same inputs (``inputs`` says which);
    ``unavailable`` where they could not be compared (tracer.whatif.compare_outputs)."""
    inputs: str
    vs_original: list[OutputError]
    vs_eager: list[OutputError]
    note: str  # why vs_eager may differ by design (random ops)
    unavailable: str


class WhatIf(TypedDict, total=False):
    """A what-if recompile of a graph (issue 22): ``status`` "compiling", then "done" (the variant's
    stops were sent; its graph key is ``"[0/0] forward · max_autotune=True"``) or "failed" (``message``;
    an ``error`` message names the stage)."""
    type: Literal["what_if"]
    compile_id: str
    graph_kind: GraphKind
    part: int  # the graph's part (see graph_key), as its stops carry it
    subgraph: str  # the graph's higher-order-op subgraph (see graph_key), as its stops carry it
    variant: str
    settings: dict[str, Any]
    status: Literal["compiling", "done", "failed"]
    message: str
    t: float


# ----------------------------------------------------------------------------- compile time (issue 30)

#: the compile's stages in pipeline order, with what each covers (tracer.compile_time names them from
#: torch's events; the UI's and the report's labels)
COMPILE_STAGES: tuple[tuple[str, str], ...] = (
    ("dynamo", "Dynamo: bytecode tracing"), ("guards", "Dynamo: building guards"),
    ("pre_grad", "Inductor pre-grad passes"), ("aot", "AOTAutograd: metadata, joint trace, joint passes"),
    ("partition", "AOTAutograd: partitioning"), ("post_grad", "post-grad passes"),
    ("lowering", "lowering (GraphLowering.run)"), ("scheduling", "scheduling and fusion (Scheduler.__init__)"),
    ("codegen", "Python/C++ codegen"), ("kernels", "kernels' compile (waiting for the compile workers)"),
    ("autotune", "autotuning benchmarks"), ("load", "loading the output module"),
    ("cache", "caches: keys, lookups, saves, loads"),
    ("inductor", "Inductor around its timed stages (cache key, repro artifact, bookkeeping)"),
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
    """The compile's own time of one finished compile (a frame's Dynamo + forward/inference compile, a
    lazy backward, or a late event such as runtime autotuning): ms per stage (tracer.compile_time.STAGE_ORDER),
    pauses at our stops and our hooks taken out.  A graph's messages add up (session.compile_time)."""
    type: Literal["compile_time"]
    compile_id: str
    graph_kind: GraphKind
    root: str  # torch's outermost event ("dynamo", "entire_backward_compile", ...)
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


Message = Union[Header, Stop, Output, Error, Done, AgentExit, Quit, Guards, Provenance, Artifact,
                RunStatus, FusionQuery, Run, WhatIf, ProcessGroup, Blocked, CompileTime]

#: ``type`` -> the message's type (a stop's type is then :data:`STOPS` by its stage).
MESSAGES: dict[str, type] = {
    "header": Header, "stop": StopBase, "output": Output, "error": Error, "done": Done,
    "agent_exit": AgentExit, "quit": Quit, "guards": Guards, "provenance": Provenance,
    "artifact": Artifact, "run_status": RunStatus, "fusion_query": FusionQuery, "run": Run,
    "what_if": WhatIf, "process_group": ProcessGroup, "blocked": Blocked,
    "compile_time": CompileTime,
}


# ----------------------------------------------------------------------------- control: UI -> agent

CMD_CONTINUE = "continue"   # leave the current stop
CMD_CAN_FUSE = "can_fuse"   # ask can_fuse(a, b) while paused; answered by a fusion_query message
CMD_RUN = "run"             # time the compiled graphs (all, or the one named in "graph")
CMD_CANCEL_RUN = "cancel_run"
CMD_QUIT = "quit"           # end the agent
CMD_WHAT_IF = "what_if"     # recompile one graph with Inductor settings changed (issue 22)


class Command(TypedDict, total=False):
    cmd: Literal["continue", "can_fuse", "run", "cancel_run", "quit", "what_if"]
    a: str  # can_fuse: scheduler node names
    b: str
    graph: str | None  # run: "[0/0] forward", or all graphs
    compile_id: str  # what_if: the graph to recompile, with these torch._inductor.config settings
    graph_kind: str
    part: int  # what_if: the graph's part (see graph_key), if it has one
    subgraph: str  # what_if: the graph's subgraph (see graph_key), if it is one
    settings: dict[str, Any]
    run: bool  # what_if: then time the original and the variant (with numerics)


def split_at_script(argv: list[str], value_options: frozenset[str] | set[str]) -> tuple[list[str], list[str]]:
    """``(options and SCRIPT, the script's arguments)`` for a command line ``[OPTS] SCRIPT ARGS`` (the
    CLI's and the agent's): SCRIPT is the first argument that is neither an option nor the value of one
    of ``value_options`` (``--`` marks it too, and is dropped); everything after SCRIPT is the script's,
    verbatim (``--n 32``, ``--h``, ``--help``, ``-m x``: never read as abbreviations of our options)."""
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            return (argv[:i] + argv[i + 1:i + 2]), argv[i + 2:]
        if a in value_options:
            i += 2
        elif a.startswith("-") and a != "-":
            i += 1
        else:
            return argv[:i + 1], argv[i + 1:]
    return list(argv), []


# ----------------------------------------------------------------------------- framing

#: A stop's head keys, in the order they start its line.
STOP_HEAD_KEYS: tuple[str, ...] = tuple(StopHead.__annotations__)
#: Head keys kept in the clear on a packed line, by message type (besides ``type``).
PACKED_HEAD_KEYS: dict[str, tuple[str, ...]] = {"stop": (*STOP_HEAD_KEYS[1:], "part", "subgraph", "variant")}
_OTHER_HEAD_KEYS = ("compile_id", "graph_kind", "part", "subgraph", "name")
#: Lines at least this long (bytes) are packed by the session writer.
PACK_OVER = 2048


class Packed(TypedDict, total=False):
    """A message as the session writer stores a long one: its head, then the whole message's JSON
    (``size`` bytes), zlib-compressed and base64-encoded in ``zlib``."""
    type: str
    size: int
    zlib: str


def stop_head(seq: int, compile_id: str, graph_kind: str, stage: str, paused: bool) -> dict[str, Any]:
    """The start of a stop message, keys in :data:`STOP_HEAD_KEYS` order; the agent adds the
    stage's fields after them.  The lazy reader relies on this order."""
    return {"type": "stop", "seq": seq, "compile_id": compile_id, "graph_kind": graph_kind, "stage": stage,
            "paused": paused}


def encode(msg: dict[str, Any]) -> bytes:
    """One message as a JSON line (UTF-8, newline-terminated).

    Raises TypeError if ``msg`` holds something JSON cannot encode; callers pass plain data.
    """
    return (json.dumps(msg, separators=(",", ":"), default=str) + "\n").encode("utf-8")


def pack(line: bytes, msg: dict[str, Any] | None = None, level: int = 6) -> bytes:
    """``line`` (one encoded message, without its newline) as a packed line when that is shorter,
    else ``line`` unchanged (an already packed line too, and the session's header: the first line,
    which readers of the file and job tools take as plain JSON); newline not added.  ``msg`` is the decoded message, if the caller has
    it (its head keys are copied from it)."""
    if len(line) < PACK_OVER or line.startswith(b'{"type":"header"'):  # the header stays readable as is
        return line
    if b'"zlib":"' in line[:1024] and _is_packed(line):
        return line
    if msg is None:
        msg = decode(line)
        if msg is None:
            return line
    kind = msg.get("type")
    head: dict[str, Any] = {"type": kind}
    for k in PACKED_HEAD_KEYS.get(str(kind), _OTHER_HEAD_KEYS):
        if k in msg:
            head[k] = msg[k]
    body = base64.b64encode(zlib.compress(line, level)).decode("ascii")
    out = json.dumps({**head, "size": len(line)}, separators=(",", ":"))[:-1] + ',"zlib":"' + body + '"}'
    data = out.encode("utf-8")
    return data if len(data) < len(line) else line


def _is_packed(line: bytes) -> bool:
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    return isinstance(obj, dict) and "zlib" in obj and "size" in obj


def _unpack(obj: dict[str, Any]) -> dict[str, Any] | None:
    try:
        full = json.loads(zlib.decompress(base64.b64decode(obj["zlib"])))
    except (ValueError, TypeError, zlib.error):
        return None
    return full if isinstance(full, dict) else None


def decode(line: bytes | str) -> dict[str, Any] | None:
    """Parse one line of the stream (a packed line gives the message it holds); ``None`` for a
    blank or torn (partly written) line."""
    if isinstance(line, (bytes, bytearray, memoryview)):
        line = bytes(line).decode("utf-8", errors="replace")
    line = line.strip()
    if not line:
        return None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(obj, dict):
        return None
    if "zlib" in obj and "size" in obj:
        return _unpack(obj)
    return obj


# The head of a stop line as the agent writes it (stop_head), then, on a packed line, its size.
_STR = rb'"(?:[^"\\]|\\.)*"'
_STOP_HEAD = re.compile(rb'\{"type":"stop","seq":(\d+),"compile_id":(' + _STR + rb'),"graph_kind":(' + _STR
                        + rb'),"stage":("[a-z_]+"),"paused":(true|false)(?:,"part":(\d+))?(?:,"subgraph":(' + _STR
                        + rb'))?(?:,"variant":(' + _STR + rb'))?(?:,"size":(\d+),"zlib":")?')
LAZY = "_raw"  # key of a stop whose body is not parsed yet (see read_session's lazy_over)


def load_lazy(msg: dict[str, Any]) -> dict[str, Any]:
    """Parse the body of a stop that ``read_session(..., lazy_over=N)`` left unparsed, in place
    (the same dict object then holds every field); a no-op for any other message.  The body is
    read back from the session file; a body that cannot be read or parsed leaves the head and an
    ``unreadable`` note."""
    where = msg.pop(LAZY, None)
    if where is not None:
        path, offset, length = where
        try:
            with open(path, "rb") as f:
                f.seek(offset)
                full = decode(f.read(length))
        except OSError as e:
            full = None
            msg["unreadable"] = f"cannot read this stop back from {path}: {e}"
        if full is None:
            msg.setdefault("unreadable", "this stop's line in the session file is not valid JSON")
        else:
            msg.clear()
            msg.update(full)
    return msg


#: Lines shorter than this are always parsed at once by read_session (a head costs as much).
_LAZY_MIN = 1024


def read_session(path: str, lazy_over: int | None = None) -> Iterator[dict[str, Any]]:
    """Yield the messages of a session file (any of :data:`FORMATS_READ`) in order.

    With ``lazy_over`` (bytes), a stop whose JSON is longer than that (packed or not) is yielded
    as its head only (``type, seq, compile_id, graph_kind, stage, paused``) plus where its line
    lies in the file (``"_raw": (path, offset, length)``); :func:`load_lazy` reads and parses it
    when it is first looked at.  Opening a 180 MB session then costs one scan for newlines instead
    of parsing (or even copying) every IR dump.
    Raises OSError if the file cannot be read and ValueError if its first message is not an
    ``inductor-step/*`` header of a format in :data:`FORMATS_READ`.  A torn last line (the writer died
    mid-line) is skipped.
    """
    import mmap  # noqa: PLC0415

    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            raise ValueError(f"{path}: empty session file")
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            first = True
            pos = 0
            while pos < size:
                end = mm.find(b"\n", pos)
                end = size if end < 0 else end + 1
                start, pos = pos, end
                if lazy_over is not None and not first and end - start > min(lazy_over, _LAZY_MIN):
                    m = _STOP_HEAD.match(mm[start:start + 512])
                    if m and (int(m.group(9)) if m.group(9) else end - start) > lazy_over \
                            and mm[end - 4:end].rstrip().endswith(b"}"):  # a whole line, not a torn one
                        head = {"type": "stop", "seq": int(m.group(1)), "compile_id": json.loads(m.group(2)),
                                "graph_kind": json.loads(m.group(3)), "stage": json.loads(m.group(4)),
                                "paused": m.group(5) == b"true", LAZY: (path, start, end - start)}
                        if m.group(6):  # one of several graphs of its compile id and kind (see graph_key)
                            head["part"] = int(m.group(6))
                        if m.group(7):  # a higher-order op's subgraph (see graph_key)
                            head["subgraph"] = json.loads(m.group(7))
                        if m.group(8):  # a what-if variant's stop (its variant follows the head)
                            head["variant"] = json.loads(m.group(8))
                        yield head
                        continue
                msg = decode(mm[start:end])
                if msg is None:
                    continue
                if first:
                    fmt = str(msg.get("format", ""))
                    if msg.get("type") != "header" or not fmt.startswith("inductor-step/"):
                        raise ValueError(f"{path}: not an inductor-step session (no header line)")
                    if fmt not in FORMATS_READ:
                        raise ValueError(f"{path}: session format {fmt} is not one this inductor-step reads "
                                         f"({', '.join(FORMATS_READ)}): a newer version wrote it")
                    first = False
                yield msg
    if first:
        raise ValueError(f"{path}: empty session file")


def graph_key(msg: dict[str, Any]) -> str:
    """The graph a message belongs to, as shown to users: ``"[0/0] forward"``; a what-if variant's:
    ``"[0/0] forward · max_autotune=True"``.

    One compile id can hand Inductor several graphs of one kind: Dynamo's DDPOptimizer splits a
    DistributedDataParallel model's graph at DDP's bucket boundaries and compiles each submodule on
    its own (``compile_fx`` once per submodule, all under the frame's compile id).  Each is a graph
    of its own, told apart by its message's ``part`` (1-based, in compile order; a forward's backward
    has its forward's part): ``"[4/0] forward #2"``, ``"[4/0] backward #2"``.  Ordinary compiles have
    no ``part`` and keep their keys.

    A higher-order op's subgraph (a ``torch.cond`` branch, an ``invoke_subgraph`` / nested compile
    region, a ``while_loop`` body, flex attention's score and mask mods) is a graph of its own under its
    parent, named as the parent's post-grad module names it (``subgraph``; a subgraph of a subgraph
    joins the names with :data:`SUBGRAPH_SEP`): ``"[0/0] inference › true_graph_0"``."""
    key = f"{msg.get('compile_id', '[?]')} {msg.get('graph_kind', '?')}"
    if msg.get("part"):
        key += f"{PART_SEP}{msg['part']}"
    if msg.get("subgraph"):
        key += f"{SUBGRAPH_SEP}{msg['subgraph']}"
    return f"{key}{VARIANT_SEP}{msg['variant']}" if msg.get("variant") else key


PART_SEP = " #"  # between a graph's kind and its part: "[4/0] forward #2" (graph_key)
RESET_SEP = "@reset"  # in a compile id after the script's Nth torch._dynamo.reset(): "[0/0]@reset1" (issue 27.10)


def split_part(kind: str) -> tuple[str, int | None]:
    """``"forward #2"`` (a kind as a graph key ends) -> ``("forward", 2)``; ``"forward"`` -> ``("forward", None)``."""
    base, sep, part = str(kind).rpartition(PART_SEP)
    return (base, int(part)) if sep and part.isdigit() else (str(kind), None)


def with_part(kind: str, part: int | None) -> str:
    """``("forward", 2)`` -> ``"forward #2"``; no part -> ``kind`` (the inverse of :func:`split_part`)."""
    return f"{kind}{PART_SEP}{part}" if part else kind


SUBGRAPH_SEP = " › "  # between a graph's kind (and part) and its subgraph: "[0/0] inference › true_graph_0"


def split_subgraph(kind: str) -> tuple[str, str | None]:
    """``"inference › true_graph_0"`` (a kind as a graph key ends, no variant) -> ``("inference", "true_graph_0")``;
    ``"inference"`` -> ``("inference", None)``.  A nested subgraph keeps its whole path: ``"a › b"``."""
    base, sep, sub = str(kind).partition(SUBGRAPH_SEP)
    return (base, sub) if sep and sub else (str(kind), None)


def kind_of(msg: dict[str, Any]) -> str:
    """A message's graph kind as its graph key ends (without the variant): ``"forward #2"``,
    ``"inference › true_graph_0"`` (:func:`graph_key` less the compile id)."""
    return with_subgraph(with_part(str(msg.get("graph_kind")), msg.get("part")), msg.get("subgraph"))


def with_subgraph(kind: str, subgraph: str | None) -> str:
    """``("inference", "true_graph_0")`` -> ``"inference › true_graph_0"`` (the inverse of :func:`split_subgraph`)."""
    return f"{kind}{SUBGRAPH_SEP}{subgraph}" if subgraph else kind


# ----------------------------------------------------------------------------- what if (issue 22)

VARIANT_SEP = " · "  # between a graph's key and its what-if variant's settings


def parse_settings(text: str) -> dict[str, Any]:
    """``"max_autotune=True, realize_opcount_threshold=1"`` -> ``{"max_autotune": True, ...}``: each
    value a Python literal (``True``, ``1``, ``0.5``, ``'x'``), else the text itself.  Raises
    ValueError with a one-line reason on an item without ``=`` or a bad name (whether torch has
    the setting is checked by the agent)."""
    import ast  # noqa: PLC0415

    out: dict[str, Any] = {}
    for item in (p.strip() for p in re.split(r",(?![^\[\](){}]*[\])}])", text)):
        if not item:
            continue
        name, eq, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not eq or not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", name):
            raise ValueError(f"not a setting: {item!r} (want name=value, e.g. max_autotune=True)")
        try:
            out[name] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            out[name] = value
    if not out:
        raise ValueError(f"no setting given in {text!r} (want name=value, e.g. max_autotune=True)")
    return out


def settings_label(settings: dict[str, Any]) -> str:
    """A variant's name from its settings: ``"max_autotune=True,realize_opcount_threshold=1"``."""
    return ",".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in settings.items())


def split_variant(key: str) -> tuple[str, str | None]:
    """``"[0/0] forward · max_autotune=True"`` -> ``("[0/0] forward", "max_autotune=True")``."""
    base, sep, variant = key.partition(VARIANT_SEP)
    return base, (variant if sep else None)


# ----------------------------------------------------------------------------- validation

def _is_typeddict(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, dict) and hasattr(t, "__required_keys__")


def _check(value: Any, t: Any, where: str, out: list[str]) -> None:
    """Append to ``out`` what in ``value`` does not fit annotation ``t`` (``where``: its path)."""
    if t is Any:
        return
    origin = typing.get_origin(t)
    if origin is Union or (sys.version_info >= (3, 10) and origin is types.UnionType):
        options = typing.get_args(t)
        best: list[str] | None = None
        for opt in options:
            found: list[str] = []
            _check(value, opt, where, found)
            if not found:
                return
            if best is None or len(found) < len(best):
                best = found
        if best and len(best) == 1 and not any(_is_typeddict(o) or typing.get_origin(o) in (list, dict)
                                               for o in options):
            out.append(f"{where}: {value!r:.60} is not {_name(t)}")
        else:
            out.extend(best or [])
        return
    if origin is Literal:
        if value not in typing.get_args(t):
            out.append(f"{where}: {value!r:.60} is not one of {typing.get_args(t)}")
        return
    if t is None or t is type(None):
        if value is not None:
            out.append(f"{where}: {value!r:.60} is not null")
        return
    if _is_typeddict(t):
        if not isinstance(value, dict):
            out.append(f"{where}: expected an object ({t.__name__}), got {type(value).__name__}")
            return
        _check_typeddict(value, t, where, out)
        return
    if origin is list:
        if not isinstance(value, list):
            out.append(f"{where}: expected a list, got {type(value).__name__}")
            return
        (item,) = typing.get_args(t) or (Any,)
        for i, x in enumerate(value):
            _check(x, item, f"{where}[{i}]", out)
        return
    if origin is dict:
        if not isinstance(value, dict):
            out.append(f"{where}: expected an object, got {type(value).__name__}")
            return
        _, item = typing.get_args(t) or (str, Any)
        for k, x in value.items():
            _check(x, item, f"{where}[{k!r}]", out)
        return
    if t is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif t is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, t)
    if not ok:
        out.append(f"{where}: {value!r:.60} is not {_name(t)}")


def _name(t: Any) -> str:
    return getattr(t, "__name__", None) or str(t).replace("typing.", "")


_HINTS: dict[type, dict[str, Any]] = {}


def _check_typeddict(value: dict[str, Any], td: type, where: str, out: list[str]) -> None:
    hints = _HINTS.get(td)
    if hints is None:
        hints = _HINTS[td] = typing.get_type_hints(td)
    for k in td.__required_keys__:  # type: ignore[attr-defined]
        if k not in value:
            out.append(f"{where}: missing {k!r} ({td.__name__})")
    for k, v in value.items():
        if k not in hints:
            out.append(f"{where}: unknown key {k!r} ({td.__name__})")
            continue
        _check(v, hints[k], f"{where}.{k}", out)


def message_type(msg: dict[str, Any]) -> type | None:
    """The TypedDict a message should match: by ``type``, and a stop's by its ``stage``."""
    if msg.get("type") == "stop":
        return STOPS.get(str(msg.get("stage")))
    return MESSAGES.get(str(msg.get("type")))


def validate(msg: dict[str, Any]) -> list[str]:
    """What in a decoded message does not match its type here: missing required keys, unknown
    keys, values of the wrong type or outside a ``Literal``; ``[]`` when it matches."""
    if not isinstance(msg, dict):
        return [f"not an object: {type(msg).__name__}"]
    if LAZY in msg:
        msg = {k: v for k, v in msg.items() if k != LAZY}
    td = message_type(msg)
    if td is None:
        return [f"unknown message type {msg.get('type')!r}" + (f" (stage {msg.get('stage')!r})"
                                                             if msg.get("type") == "stop" else "")]
    out: list[str] = []
    _check_typeddict(msg, td, str(msg.get("type")), out)
    return out


def validate_command(cmd: dict[str, Any]) -> list[str]:
    """Like :func:`validate`, for a control command (UI -> agent)."""
    out: list[str] = []
    _check_typeddict(cmd, Command, "command", out)
    return out


# ----------------------------------------------------------------------------- distributed jobs (issue 23)
#
# ``inductor-step --nproc-per-node N script.py`` starts ``python -m torch.distributed.run ... -m
# inductor_step.tracer.agent --connect SOCKET --step-rank R -- script.py ...``: torch's launcher
# starts one agent per rank.  Each agent connects to the UI's Unix socket SOCKET and hands over,
# in one message (:func:`send_hello`), a :class:`Hello` line and four file descriptors: the read
# end of its message pipe, the write end of its control pipe and the read ends of its stdout and
# stderr (the agent points its fds 1 and 2 at those pipes).  From then on a rank is read exactly
# like a single agent: the pipes outlive a crash of the rank, so nothing it wrote is lost.

#: The job file's format: one JSON object (:class:`Job`), written whole (temp file + rename).
JOB_FORMAT = "inductor-step-job/1"
#: How many descriptors a hello carries, in this order.
HELLO_FDS = ("msg", "ctl", "stdout", "stderr")


class Hello(TypedDict, total=False):
    """What an agent in a rank says first, on the job's socket (see above)."""
    rank: int
    local_rank: int
    world_size: int
    pid: int
    restart_count: int


class JobRank(TypedDict, total=False):
    """One rank of a job, as the job file names it.  ``session``: the rank's session file, relative
    to the job file's folder; ``state``: ``"waiting"`` (not connected yet), ``"running"``,
    ``"done"`` (the script ended; ``returncode``), ``"died"`` (its stream ended before the script
    did: a crash, a signal, ``os._exit``; ``message`` says where), ``"stopped"`` (the user ended the
    job, q or ctrl+c, while this rank ran)."""
    rank: int
    session: str
    pid: int | None
    state: Literal["waiting", "running", "done", "died", "stopped"]
    returncode: int | None
    message: str | None


class Job(TypedDict, total=False):
    """A torchrun job's recording: one session per rank plus this file that names them.

    ``launcher``: the launcher's arguments as run (after ``python -m torch.distributed.run``);
    ``launcher_log``: the launcher's own output (relative path); ``launcher_returncode``: its exit
    status once it ended (``None`` while it runs)."""
    type: Literal["job"]
    format: str
    script: str
    argv: list[str]
    launcher: list[str]
    nproc_per_node: int
    world_size: int | None
    stepped_rank: int | None
    collective_timeout_s: float | None
    ranks: list[JobRank]
    launcher_log: str
    launcher_returncode: int | None
    time: float


def job_paths(record: str) -> tuple[str, str]:
    """``(job file, base)`` for a job recorded at ``record``: ``runs/x.jsonl`` or ``runs/x.job.json``
    give ``runs/x.job.json`` and base ``runs/x``; rank N's session is ``base + ".rank{N}.jsonl"``."""
    base = record
    for ext in (".job.json", ".jsonl", ".json"):
        if base.endswith(ext):
            base = base[: -len(ext)]
            break
    return base + ".job.json", base


def write_job(path: str, job: dict[str, Any]) -> None:
    """Write the job file whole (a temp file renamed over it: a reader never sees half of it)."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(job, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def is_job_file(path: str) -> bool:
    """Whether ``path`` is a job file (its first bytes name :data:`JOB_FORMAT`'s type)."""
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return False
    return head.lstrip().startswith(b"{") and b'"type": "job"' in head


def read_job(path: str) -> tuple[dict[str, Any], dict[int, str]]:
    """The job file at ``path`` and ``{rank: session path}`` (paths made absolute against the job
    file's folder).  Raises ValueError with a one-line reason if it is not a job file."""
    try:
        with open(path) as f:
            job = json.load(f)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path} is not a job file ({e.msg} at line {e.lineno})") from None
    if not isinstance(job, dict) or job.get("type") != "job" or not str(job.get("format", "")).startswith(
            "inductor-step-job/"):
        raise ValueError(f"{path} is not an inductor-step job file")
    here = os.path.dirname(os.path.abspath(path))
    ranks = {int(r["rank"]): os.path.join(here, r["session"]) for r in job.get("ranks") or []
             if isinstance(r, dict) and r.get("session")}
    return job, ranks


def send_hello(sock: Any, hello: dict[str, Any], fds: list[int]) -> None:
    """Send ``hello`` (one JSON line) with ``fds`` (:data:`HELLO_FDS` order) on a connected Unix
    socket (``SCM_RIGHTS``).  Raises OSError if the socket is gone."""
    import socket  # noqa: PLC0415

    socket.send_fds(sock, [json.dumps(hello).encode() + b"\n"], fds)


def recv_hello(sock: Any) -> tuple[dict[str, Any], list[int]]:
    """Receive what :func:`send_hello` sent: ``(hello, fds)``.  Raises ValueError if the peer sent
    something else (no fds, or not a JSON line), OSError if the socket failed."""
    import socket  # noqa: PLC0415

    data, fds, _flags, _addr = socket.recv_fds(sock, 1 << 16, len(HELLO_FDS))
    try:
        hello = json.loads(data.decode())
    except (UnicodeDecodeError, json.JSONDecodeError):
        hello = None
    if not isinstance(hello, dict) or len(fds) != len(HELLO_FDS):
        for fd in fds:
            os.close(fd)
        raise ValueError("not an inductor-step agent's hello")
    return hello, list(fds)
