"""The session format's messages other than stops (TypedDicts): header, errors, guards, runs, roofs, what-if."""

from __future__ import annotations

from typing import Any, Literal, TypedDict, Union

from inductor_step.session.format.compile_time import CompileTime
from inductor_step.session.format.types import AotiRun, GraphKind, Stop, StopBase


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
    # graph's own are its dynamo stop's compiled_with.config
    inductor_settings: dict[str, Any]
    hooks: list[str]
    note: str
    t: float
    distributed: "Distributed"  # the agent runs in one rank of a torchrun job


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
    # graphs no Inductor compile got -- {"[0/0] inference": "aot_eager"} -- and, when no
    # graph reached Inductor, Dynamo's reasons (graph breaks, skipped or failed frames), one line each
    other_backends: dict[str, str]
    inductor_graphs: int
    break_reasons: list[str]
    # the graph breaks of frames after the last graph that gave none, as DynamoStop.breaks_before:
    # {"compile_id": "[3/0]", "text": Dynamo's graph break text}
    breaks_after: list[dict[str, str]]


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
    # loadavg_1m_before / loadavg_1m_after / cpus while timing (CPU); session / launch_session (ints) and autogroup
    # (text, None where autogroups are off): where the scheduler put the timing (tracer.timing.rounds.scheduling_group)
    load: dict[str, float | int | str | None]
    compiled_wait_shares: list[float]  # CPU: each round's share of time its threads waited for a core
    eager_wait_shares: list[float]
    compiled_wait: dict[str, Any]  # the last rounds together (tracer.timing.contention.combine)
    eager_wait: dict[str, Any]
    # the decomposed post-grad graph run op by op, timed in the same rounds (a third figure)
    decomposed_rounds_ms: list[float]
    decomposed_wait_shares: list[float]
    decomposed_wait: dict[str, Any]


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
    (``torch.ops._c10d_functional.all_reduce_.default#0``) is listed but not timed: ``median_ms``,
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
    # Triton's lower stages of the binary (tracer.triton_stages.live_stages; the kernel's first call):
    # {"stages": {ttir, ttgir, llir, ptx, sass}, "maps": {"lines", "counts"}, "sass_info", "source", "target"}
    # or {"missing": why}; a C++ kernel's: {"stages": {"asm"}, "maps", ...} (tracer.cpu_disasm); and the
    # candidates Triton's autotuner benchmarked in the script's first call: {"candidates": [{"config", "ms"}],
    # "winner", "source"} (tracer.adapter.triton_autotune)
    stages: dict[str, Any]
    autotune_candidates: dict[str, Any]


class ScriptCall(TypedDict, total=False):
    """The script's compiled call timed whole (tracer.timing.script_call): the callable torch.compile returned,
    called again with the script's latest arguments, against the same call under
    ``torch.compiler.set_stance("force_eager")``; ``missing`` instead where it was not timed."""
    name: str  # what the script compiled: a module's class name, a function's qualified name
    graphs: list[str]  # the graphs that ran inside the call ("[0/0] forward")
    calls: int  # the script's own calls of it
    grad_enabled: bool
    compiled_ms: float
    eager_ms: float | None
    rounds_stable: bool | None
    compiled_rounds_ms: list[float]
    eager_rounds_ms: list[float] | None
    load: dict[str, float | int | str | None]  # as GraphRounds.load: load average, CPUs, session and autogroup
    verdicts: dict[str, Any]  # "compiled", "eager": tracer.timing.contention.judge
    how: str
    cupti: str  # whether CUPTI, left attached by the script's profiled calls, was detached first (CUDA)
    missing: str


class Run(TypedDict, total=False):
    """A compiled graph timed (tracer.timing.time_graph); ``error`` instead when timing failed."""
    type: Literal["run"]
    compile_id: str
    graph_kind: GraphKind
    device: str
    cupti: str
    compiled_ms: float | None
    # what the script runs without torch.compile -- Dynamo's graph run eagerly (a training forward with
    # grad; a backward: autograd's backward of it); before, the decomposed post-grad graph (now decomposed_ms)
    eager_ms: float | None
    eager_how: str  # how eager_ms was measured (tracer.timing.eager_user.EAGER_HOW)
    script_call: ScriptCall  # the script's whole compiled call that ran this graph, against force_eager
    decomposed_ms: float | None  # Inductor's post-grad graph run op by op by torch.fx: for reference, never "eager"
    decomposed_how: str
    decomposed_error: str  # decomposed_ms is None: why
    decomposed_note: str  # the post-grad graph could not be sent to the timing process, or ran too slowly
    kernel_sum_ms: float | None  # None with kernels_note: the kernels are not timed one by one
    # a C++ wrapper (cpp_wrapper=True) or an AOTInductor package runs its kernels inside compiled code
    kernels_note: str  # why ``kernels`` is empty and there is no kernel sum
    aoti: AotiRun  # an AOTInductor graph: the package timed and how it was loaded
    in_graph_sum_ms: float
    in_graph: str
    in_graph_cupti: str
    in_script: str
    inputs: str
    input_sizes: list[str]  # the sizes timed at, one per graph input ("2x5x8 float32", "5")
    configs: str
    graph_rounds: GraphRounds
    peak: Peak
    roofs: Roofs
    # tracer.timing.memory.measured_peak: {"peak_bytes", "source", "how"} (CUDA allocator; CPU profiler memory events)
    # or {"not_measured"}, with "eager" (eager_peak) and, for a training forward, "eager_saved" (eager_saved)
    memory: dict[str, Any]
    eager_nodes_ms: dict[str, float]  # post-grad FX node -> its eager time alone (tracer.timing.eager_nodes)
    eager_nodes: str  # how eager_nodes_ms was measured, or why it was not
    # a graph with collectives is timed with each collective replaced by a local stand-in
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
    # timing never needs a re-trace that fails; where a part cannot be timed, which and why
    eager_error: str  # eager_ms is None: why (Dynamo's graph not captured, no inputs, it raised)
    eager_note: str  # the eager baseline came from elsewhere or was left out (e.g. not sendable to a worker)
    eager_fixes: str  # what was rewritten so the post-grad graph runs eagerly (in-place foreach getitems)
    in_process: str  # timed in the agent's own process instead of a worker, and why (custom ops, frozen weights)
    timed_out: bool  # the per-graph limit ran out (error says at which step)
    limit_s: float  # the per-graph limit it ran under (s)
    settled: bool  # the graph time settled (rounds agreed, no contention)
    contended: bool  # the timing threads waited for a core (measured per round; before the load average)
    sum_vs_graph: float | None  # kernel sum / compiled graph time
    gap_cause: Literal["overhead", "kernels_alone", "unsettled"]
    warnings: list[str]
    eager_note: str  # why eager_ms is None, where the timing says
    # CUDA: tracer.cudagraph_record.CudagraphRecord.run_info, the whole graph
    # replayed as one CUDA graph (tracer.timing.ingraph.replay_time), user kernels not restored for eager
    cudagraphs: dict[str, Any]
    cudagraph_replay: dict[str, Any]
    eager_user_kernels: str
    # every CPU figure judged on its measured contention (tracer.timing.contention)
    reliable: bool  # False when any figure (compiled, eager, kernels) is not reliable
    unreliable: str  # which figures are not, and why, in one line ending "press r to time again"
    verdicts: dict[str, Verdict]  # "compiled" | "eager" | "kernels" | "decomposed" (a subgraph's) -> its verdict (CPU)
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
    # of the ``spans`` (rounds) the figure came from: those whose working threads ended on one core, and those after
    # which they were kept apart for the next round (tracer.timing.contention.Apart)
    spans: int
    one_core_spans: int
    apart_spans: int


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


class PairRounds(TypedDict, total=False):
    """Two graphs of one session (a recompile and the graph before it, or any two a diff compares) and their
    post-grad graphs run eagerly, timed in one process round by round (tracer.timing.interleave.pair_rounds):
    medians over rounds in ms, each round's time, ``b_vs_a`` (median of each round's B / A compiled time),
    ``eager_b_vs_a`` (the same for eager: how much more work B's inputs are), the sizes each ran on and the
    verdict on the rounds (CPU)."""
    rounds: int
    a_ms: float
    b_ms: float
    eager_a_ms: float
    eager_b_ms: float
    a_rounds_ms: list[float]
    b_rounds_ms: list[float]
    eager_a_rounds_ms: list[float]
    eager_b_rounds_ms: list[float]
    b_vs_a: float | None
    eager_b_vs_a: float | None
    sizes_a: list[str]
    sizes_b: list[str]
    eager_error: str
    device: str
    reliable: bool
    wait_share: float
    why: str


class PairTiming(TypedDict, total=False):
    """The answer to ``time_pair`` (``r`` in the diff view): graphs ``a`` and ``b`` (graph keys,
    ``"[0/0] inference"``) timed round by round; ``status`` "timing", then "done" (``rounds``) or "failed"
    (``message``, e.g. which step ran past the per-graph limit)."""
    type: Literal["pair_timing"]
    a: str
    b: str
    status: Literal["timing", "done", "failed"]
    rounds: PairRounds
    message: str
    cancelled: bool  # failed: c came first
    traceback: str  # failed: the agent's own error
    t: float


class InputsSaved(TypedDict, total=False):
    """The answer to ``save_inputs`` (``X`` in pane 6, ``--save-inputs``): kernel ``kernel`` of graph
    (``compile_id``, ``graph_kind``) had its arguments saved at its launch to ``path`` (``bytes`` on disk,
    ``tensors`` of them; ``how``: whose inputs the graph ran on, ``real``: all the script's own), or ``error``."""
    type: Literal["inputs_saved"]
    compile_id: str
    graph_kind: str
    part: int
    subgraph: str
    variant: str
    kernel: str
    path: str
    bytes: int
    tensors: int
    real: bool
    how: str
    error: str
    traceback: str
    t: float


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
    """A what-if recompile of a graph: ``status`` "compiling", then "done" (the variant's
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


from inductor_step.session.format.numerics import GraphNumerics  # noqa: E402 - the numerics message
from inductor_step.session.format.blame import Blame  # noqa: E402 - blame's message
from inductor_step.session.format.run_status import RunStatusMessage  # noqa: E402 - made from the RunStatus dataclass

Message = Union[Header, Stop, Output, Error, Done, AgentExit, Quit, Guards, Provenance, Artifact,
                RunStatusMessage, FusionQuery, Run, WhatIf, ProcessGroup, Blocked, PairTiming, GraphNumerics,
                CompileTime, InputsSaved, Blame]

#: ``type`` -> the message's type (a stop's type is then :data:`STOPS` by its stage).
MESSAGES: dict[str, type] = {
    "header": Header, "stop": StopBase, "output": Output, "error": Error, "done": Done,
    "agent_exit": AgentExit, "quit": Quit, "guards": Guards, "provenance": Provenance,
    "artifact": Artifact, "run_status": RunStatusMessage, "fusion_query": FusionQuery, "run": Run,
    "what_if": WhatIf, "process_group": ProcessGroup, "blocked": Blocked, "pair_timing": PairTiming,
    "numerics": GraphNumerics,
    "compile_time": CompileTime,
    "inputs_saved": InputsSaved,
    "blame": Blame,
}
