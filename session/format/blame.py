"""The ``blame`` message: a bisect of a divergence to the backend, subsystem and single pass application or lowering
that caused it, step by step (written by tracer.blame, read by session.blame, the blame pane and REPORT.md)."""

from __future__ import annotations

from typing import Any, Literal, TypedDict


class BlameMeasure(TypedDict, total=False):
    """The target graph's worst output (or input gradient) against its Dynamo graph run eagerly, in one step
    (tracer.adapter.blame.compare_first_call: tracer.numerics.stats and the numerics verdict)."""
    which: str  # "output 0", "grad 1"
    status: str  # ok, closer, same, order, suspect, diverges
    verdict: str
    max_abs: Any  # a float, or "inf"
    tol_ratio: Any  # |compiled - eager| over torch.testing's tolerance, at its largest (a float, or "inf")
    nonfinite_mismatch: int
    dtype: str
    shape: list[int]


class BlameStep(TypedDict, total=False):
    """One step of the search: the script run again in a child process under ``env`` (torch's compiler bisector:
    TORCH_BISECT_BACKEND / _SUBSYSTEM / _MAX) and ``settings`` (torch._inductor.config), and what came of it."""
    index: int
    what: str
    level: Literal["baseline", "backend", "subsystem", "application", "config", "variant"]
    env: dict[str, str]
    settings: dict[str, Any]
    outcome: Literal["bad", "good", "crash", "timeout", "cancelled", "noise", "slower", "faster"]
    measure: BlameMeasure
    error: str
    seconds: float  # the step's wall time, its process's start included
    variant: str  # speed: the what-if variant's graph key ("[0/0] forward · split_reductions=False")
    interleaved: dict[str, Any]  # speed: its run's interleaved rounds against the original (session.format.Interleaved)
    kernels: int  # speed: the variant's kernel calls timed


class BlameSetting(TypedDict, total=False):
    """What turns the blamed cause off: the bisector's environment or Inductor settings, in words too."""
    env: dict[str, str]
    config: dict[str, Any]
    text: str


class BlameVerdict(TypedDict, total=False):
    """The search's answer.  ``found`` False: ``text`` says why (nothing diverged, cancelled, an error)."""
    found: bool
    cancelled: bool
    error: str
    level: Literal["backend", "subsystem", "application", "config"]
    backend: str  # eager, aot_eager, aot_eager_decomp_partition, inductor
    subsystem: str  # lowerings, post_grad_passes, joint_graph_passes, pre_grad_passes, decomposition
    application: int  # the application's number in torch's counter (TORCH_BISECT_MAX keeps 0..n)
    applications: int  # how many the subsystem had
    application_compile_id: str  # the compile it ran in
    graph_kind: str  # the graph of that compile it ran in: forward, backward, inference (Inductor's passes, lowerings)
    what: str  # the pass's name, the lowered FX node, the decomposed op, the setting
    compile_id: str
    fx_nodes: list[str]  # post-grad FX nodes it names (a lowering's node, the nodes a pass changed or added)
    rewrote: dict[str, list[str]]  # a pass application's FX nodes: changed ("add: old -> new"), added, removed
    baseline: BlameMeasure
    leaves: BlameMeasure  # the divergence left with it off
    setting: BlameSetting
    repro: str  # the command line that shows the divergence (the script, its own inputs)
    repro_off: str  # the same with the setting that keeps the cause off
    text: str
    steps: int
    seconds: float
    variants: list[BlameStep]  # speed: every variant's step (the session judges them: session.blame.speed_verdict)


class BlameSpecialization(TypedDict, total=False):
    """A dynamic size Dynamo's shape environment made a constant (torch's ``symbolic_shape_specialization`` event):
    a later compile whose guard on it failed is the recompile it explains."""
    symbol: str  # s77
    sources: list[str]  # what it stands for: L['x'].size()[0]
    value: str  # the constant
    reason: str  # torch's words: range_refined_to_singleton, ...
    user_line: str  # the user's line that forced it: "spec.py:7 in f"
    user_code: str
    torch_line: str  # the innermost torch function on the way (not the shape environment's own)


class BlameConstraint(TypedDict, total=False):
    """A guard the user's line put on a dynamic size (torch's ``guard_added_fast`` event, ``ShapeEnv._log_guard``):
    the size stays dynamic but only within it; a later compile whose guard on it failed is the recompile it explains."""
    expr: str  # torch's guard: s77 > 16, Eq(Mod(s17, 4), 0)
    symbols: list[str]  # its symbols: s77
    sources: dict[str, list[str]]  # what each stands for: {"s77": ["L['x'].size()[0]"]}
    kind: Literal["guard", "runtime_assert"]
    user_line: str  # the user's line that added it: "guards.py:6 in f"
    user_code: str
    torch_line: str  # the innermost torch function on the way (not the shape environment's own)


class Blame(TypedDict, total=False):
    """``blame`` message: ``event`` start (the search begins), step (one step done) or verdict (the answer)."""
    type: Literal["blame"]
    kind: Literal["numerics", "speed", "recompile"]
    event: Literal["start", "step", "verdict", "specialization", "constraint"]
    compile_id: str  # the graph blamed ("?" until the baseline finds the first that diverges)
    graph_kind: str
    script: str
    argv: list[str]
    step_limit_s: float
    message: str
    step: BlameStep
    verdict: BlameVerdict
    specialization: BlameSpecialization  # kind recompile
    constraint: BlameConstraint  # kind recompile
    t: float
