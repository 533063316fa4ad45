"""The ledgers' three row types, one frozen dataclass each: a kernel call's roofline, a user line's time, a missed fusion.

Built by :mod:`inductor_step.session.ledger.joins` (:func:`~inductor_step.session.ledger.roofs.kernel_roofline`
for the roofline) and read by attribute everywhere: the ledger's text (``inductor-step ledger``, the headless
summary, REPORT.md), the library API (``Session.roofline_rows()``, ``Kernel.roofline()``) and pane 9.  A figure
that cannot be had is None, and the row says why (``missing``, ``eager_missing``, a ``*_source``).
:meth:`to_dict` gives a row as the plain dict the ledger used to pass (``dataclasses.asdict``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


class _Row:
    def to_dict(self) -> dict[str, Any]:
        """The row as a plain dict of its fields (``dataclasses.asdict``: tuples stay tuples)."""
        return dataclasses.asdict(self)  # type: ignore[call-overload]


@dataclass(frozen=True)
class RooflineRow(_Row):
    """One timed kernel call held to its roofline (:func:`inductor_step.session.ledger.kernel_roofline`).

    From the graph's ``run`` message (``kernels[i]``, written by tracer.timing) and the run's roofs
    (``run.roofs``, tracer.timing.machine; else ``run.peak``):

    - ``graph``: the graph key (``"[0/0] forward"``); ``name``: the kernel (``cpp_fused_add_0``,
      ``extern_kernels.mm``); ``call``: which call of it in the graph (1-based); ``backend``: "triton", "cpp",
      "extern" ... (``kernels[i].backend``).
    - ``measured_ms`` (ms): ``kernels[i].median_ms``, the call alone, median of repeated calls (GPU: L2
      flushed), as in pane 7; None for a call not timed (a collective: ``missing`` says why).
    - ``gb`` (GB, 1e9 bytes) the call reads and writes, ``gb_source`` how they were counted
      (``kernels[i].gb`` / ``gb_source``: the tensors in full, or Inductor's own byte count).
    - ``flops`` (FLOPs) and ``flops_source``: library calls, the run's ``torch.utils.flop_counter`` count
      (``kernels[i].flops``); generated kernels, counted from their LoopBodies (the lowering stop's
      ``loop_bodies``, :func:`~inductor_step.session.ledger.loopbody_flops`); else None.
    - ``intensity`` (FLOP/byte): flops / bytes.
    - ``bw_gbps`` (GB/s) the bytes are divided by and ``bw_source`` (the measured memory roof,
      :func:`~inductor_step.session.ledger.memory_roof`); ``tflops_peak`` (TFLOP/s) and ``tflops_source``
      (the measured GEMM of its dtype, :func:`~inductor_step.session.ledger.compute_roof`).
    - ``memory_ms`` (ms) = bytes / bandwidth; ``compute_ms`` (ms) = FLOPs / peak; ``roofline_ms`` (ms): the
      larger; ``bound``: "memory" | "compute" | None (which of the two it is).
    - ``pct_of_roof`` (% of roof): roofline / measured x 100 (over 100: faster than its roof, ``over_roof`` says
      why the count must be wrong); ``wasted_ms`` (ms) = measured - roofline.
    - ``missing``: why there is no roofline (None when there is one); ``not_timed``: why the call has no time
      (None when it has one).
    - ``eager_ms`` (ms): the call's post-grad FX nodes run alone by torch.fx.Interpreter (the run's
      ``eager_nodes_ms``, matched to the codegen stop's ``links.kernels[k].post_grad_nodes``), summed; None
      with ``eager_source`` saying why.
    """

    name: str
    call: int = 1
    backend: str | None = None
    measured_ms: float | None = None
    gb: float | None = None
    gb_source: str = ""
    flops: float | None = None
    flops_source: str = ""
    intensity: float | None = None
    bw_gbps: float | None = None
    bw_source: str = ""
    tflops_peak: float | None = None
    tflops_source: str = ""
    memory_ms: float | None = None
    compute_ms: float | None = None
    roofline_ms: float | None = None
    bound: str | None = None
    pct_of_roof: float | None = None
    wasted_ms: float | None = None
    over_roof: str | None = None
    missing: str | None = None
    not_timed: str | None = None
    graph: str = ""
    eager_ms: float | None = None
    eager_source: str = ""


@dataclass(frozen=True)
class LineRow(_Row):
    """One user line (``"/path/train.py:22"``) and the kernel time that went to it, over every timed graph
    (:func:`inductor_step.session.ledger.line_rows`).

    A kernel's times are split evenly over its post-grad FX nodes (the codegen stop's
    ``links.kernels[k].post_grad_nodes``); a line gets the share of the nodes whose stack trace ends on it
    (``links.fx_nodes[n].user_line``, Dynamo's ``stack_trace``).

    - ``line``: ``file:line``, or "(no user line)".
    - ``kernels``: ``"[0/0] backward cpp_fused_..."`` each, with the share it gave (``" (x0.50)"``) or, for a call
      not timed, why in brackets; ``targets``: (graph key, kernel name) of each.
    - ``measured_ms``, ``roofline_ms``, ``wasted_ms`` (ms): the sums of the kernels' figures
      (:class:`RooflineRow`) x the line's share; ``unpriced_ms`` (ms): measured time of kernels with no
      roofline.  All four None for a line of collectives only (nothing measured, not 0).
    - ``untimed``: its kernel calls with no time (``"[1/0] inference torch.ops._c10d_functional...: collective,
      not timed: ..."``), left out of every sum.
    - ``eager_ms`` (ms): the eager time of the post-grad FX nodes whose user line it is (the run's
      ``eager_nodes_ms``: torch.fx.Interpreter, each node alone), None with ``eager_missing`` saying why;
      ``eager_source`` says where a sum came from ("" without one).
    - ``slower_than_eager``: measured > 1.10 x eager (:data:`~inductor_step.session.ledger.EAGER_MARGIN`).
    - ``unreliable``: the verdicts of the runs it was timed in that were judged not reliable
      (:mod:`inductor_step.session.trust`), None when all were.
    """

    line: str
    kernels: tuple[str, ...] = ()
    measured_ms: float | None = 0.0
    roofline_ms: float | None = 0.0
    wasted_ms: float | None = 0.0
    unpriced_ms: float | None = 0.0
    untimed: tuple[str, ...] = ()
    eager_ms: float | None = None
    eager_missing: str | None = None
    eager_source: str = ""
    targets: tuple[tuple[str, str], ...] = ()
    slower_than_eager: bool = False
    unreliable: str | None = None


@dataclass(frozen=True)
class FusionRow(_Row):
    """One missed fusion: a buffer one kernel writes and another kernel reads back
    (:func:`inductor_step.session.ledger.fusion_rows`).

    From the scheduling stop's nodes (``unmet_dependencies``: MemoryDep / StarDep), the codegen stop's
    ``links`` (which kernels write and read each buffer), the lowering stop's IR buffers (size, dtype) and the
    scheduling stop's ``fusion_log`` (Inductor's ``can_fuse`` lines):

    - ``graph``: the graph key; ``buffer``: the IR buffer (``buf3``); ``producer`` / ``consumer``: the kernels
      that write it and read it back; ``nodes``: (producer's scheduler node, consumer's), for pane 4's ``f``.
    - ``bytes`` (bytes) round-tripped: 2 x the IR buffer's numel x itemsize (written once, read back once),
      None with ``bytes_source`` saying why.
    - ``cost_ms`` (ms): those bytes at ``bw_gbps`` (GB/s, the run's measured memory roof, ``bw_source``); None
      where the bandwidth or the size is unknown.
    - ``producer_lines`` / ``consumer_lines``: the user lines (``file:line``) on each side (``links.buffers``).
    - ``stays``: why the write would stay even if fused ("the graph returns it", "2 nodes read it"), "" if not.
    - ``verdict``: Inductor's reason (the last fusion-log line naming both kernels' nodes, ``"Inductor: ..."``),
      or "not considered" and why; ``log``: every such line.
    - ``library``: a library call on a side (never fusable as compiled); ``fix``: a setting to try with ``w``
      or None, ``fix_why``: why (:mod:`inductor_step.session.fusion_fix`; None and "" on library rows).
    """

    graph: str
    buffer: str
    producer: str
    consumer: str
    bytes: int | None = None
    bytes_source: str = ""
    cost_ms: float | None = None
    bw_gbps: float | None = None
    bw_source: str = ""
    producer_lines: tuple[str, ...] = ()
    consumer_lines: tuple[str, ...] = ()
    stays: str = ""
    verdict: str = ""
    log: tuple[str, ...] = ()
    nodes: tuple[str | None, str | None] = (None, None)
    library: bool = False
    fix: str | None = None
    fix_why: str = ""


__all__ = ["FusionRow", "LineRow", "RooflineRow"]
