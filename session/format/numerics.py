"""The ``numerics`` message: each buffer of a compiled graph against eager and float64, and the first
that diverges or holds a NaN (written by tracer.numerics, read by session.numerics and the numerics pane)."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from inductor_step.session.format.types import GraphKind


class NumericsBuffer(TypedDict, total=False):
    """One buffer of a graph compared with eager as its kernel wrote it (tracer.numerics.compare_graph):
    ``vs_eager``/``compiled_vs_f64``/``eager_vs_f64`` are tracer.numerics.stats (max_abs, max_rel,
    eps_units, tol_ratio, nonfinite_mismatch, nan, inf; a float may be the string "inf"); ``status`` is
    ok, closer, same, suspect, diverges or not_compared (``why``)."""
    index: int
    buffer: str
    kernel: str
    call: int
    line: int  # the kernel call's line in the wrapper
    fx_node: str | None
    fx_nodes: list[str]
    user_lines: list[str]
    dtype: str
    shape: list[int]
    status: str
    verdict: str
    why: str
    vs_eager: dict[str, Any]
    compiled_vs_f64: dict[str, Any]
    eager_vs_f64: dict[str, Any]
    nan: int
    inf: int
    holds: str  # what the buffer holds where it is not its FX node's value (a mean's sum), compared with that
    eager_nan: int  # eager's NaN count on the same node
    eager_inf: int


class NumericsAnswer(TypedDict, total=False):
    """The first divergent / suspect / NaN-or-Inf buffer: where it is at every level, and the short table
    of errors along the graph up to it (``table``: buffer, kernel, fx_node, status, max_abs, tol_ratio,
    eps_units)."""
    index: int
    buffer: str
    kernel: str
    fused_nodes: list[str]
    scheduler_node: str | None
    kernel_lines: list[list[int]]
    kernel_nodes: list[str]
    wrapper_line: int
    fx_node: str | None
    fx_nodes: list[str]
    user_lines: list[str]
    status: str | None
    verdict: str | None
    table: list[dict[str, Any]]
    nan: int
    inf: int
    eager_nan: int
    eager_inf: int
    eager_too: bool | None


class GraphNumerics(TypedDict, total=False):
    """``numerics`` message: one graph's buffers against eager, or ``error`` (``failed``)."""
    type: Literal["numerics"]
    compile_id: str
    graph_kind: GraphKind
    part: int
    subgraph: str
    variant: str
    device: str
    failed: bool
    error: str
    inputs: str
    method: str
    rows: list[NumericsBuffer]
    points: int
    tolerances: dict[str, Any]
    kept_bytes: int  # the compiled buffers kept at most, each until its FX node ran eagerly (one copy)
    buffer_bytes: int  # the compiled buffers captured, each once per write (the graph's own)
    maxrss_growth_bytes: int  # how much the comparison raised the process's peak resident memory (CPU)
    gpu_peak_growth_bytes: int  # CUDA: the comparison's peak allocation over what was allocated before it (torch.cuda)
    f64_fallbacks: str
    random: str
    summary: dict[str, Any]
    first_divergence: NumericsAnswer
    first_suspect: NumericsAnswer
    first_nonfinite: NumericsAnswer  # the first NaN/Inf the compiled graph adds (eager lacks it there)
    nonfinite_as_eager: dict[str, Any]  # buffers, float64_too, first: NaN/Inf eager holds at the same elements
    inputs_origin: str  # "real" (the script's call), "random", or "waiting"
    waiting: bool  # not compared yet: the script has not called the graph (``message`` says so)
    message: str
    localized: dict[str, Any]  # tracer.numerics_localize.localize_kernels: the first divergence's kernel unfused
    localized_nonfinite: dict[str, Any]  # the same for the first NaN/Inf's kernel, where it is another kernel
    seconds: float
    phases_s: dict[str, float]  # prepare, compiled, eager_and_float64 (of_which_comparing), localize
    t: float
