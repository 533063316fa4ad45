"""Where the time goes and what to change: three ledgers over a recorded session, no torch.

- :func:`roofline_rows`: per timed kernel call, its bytes and FLOPs (library calls: the run's
  ``torch.utils.flop_counter`` count; generated kernels: :func:`loopbody_flops`), arithmetic intensity, the roof that
  binds, the roofline time max(bytes / bandwidth, FLOPs / peak), % of roof and **wasted ms** = measured -
  roofline (so wasted + roofline sums to the run's kernel sum exactly);
- :func:`line_rows`: wasted ms rolled up to the user's ``file:line`` through the session's links
  (kernel -> its post-grad FX nodes -> their user lines), each kernel's times split **evenly over its
  post-grad nodes** (a line gets the share of the kernel's nodes that come from it);
- :func:`fusion_rows`: every buffer one kernel writes and another kernel reads back (the scheduling
  stop's ``unmet_dependencies``), the bytes round-tripped (written once and read back once: 2 x the IR
  buffer's numel x itemsize), their cost at the measured bandwidth, the user lines on both sides and
  Inductor's own reason (the fusion log's lines naming both nodes, or "not considered" and why).

Each row is a frozen dataclass (:mod:`inductor_step.session.ledger.rows`: :class:`RooflineRow`, :class:`LineRow`,
:class:`FusionRow`, their fields with units and sources), read by attribute.
Every number carries where it came from; what cannot be had is None with the reason.
Inputs: the ``run`` messages (``kernels[].median_ms``, ``gb``/``gb_source``, ``flops``, ``peak``, and
``roofs`` from tracer.timing.machine), the codegen stop's ``links``, the lowering stop's IR buffers and
the scheduling stop's nodes and ``fusion_log``.
"""

from inductor_step.session.ledger.rows import FusionRow, LineRow, RooflineRow  # noqa: F401
from inductor_step.session.ledger.roofs import (  # noqa: F401
    EAGER_MARGIN, EAGER_MISSING, FLOP_OPS, ITEMSIZE, MEASURED, SPLIT_RULE, compute_roof, kernel_roofline,
    loopbody_flops, memory_roof,
)
from inductor_step.session.ledger.joins import (  # noqa: F401
    eager_by_node, fusion_reason, fusion_rows, kernel_lines, line_rows, node_reads, roofline_rows,
)
from inductor_step.session.ledger.text import (  # noqa: F401
    fmt, report_markdown, roofs_text, summary,
)
from inductor_step.session.ledger.ncu import (  # noqa: F401
    NCU_SOL, ncu_command, ncu_sol, ncu_text,
)
