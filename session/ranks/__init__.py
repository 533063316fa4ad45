"""Compare the ranks of a torchrun job ("compare ranks"): per graph, which ranks compiled it,
whether their graphs agree level by level, whether their kernel times agree, and where they diverge,
each divergence in one line a person reads.  No Textual, no torch: it reads the ranks' sessions
(:class:`inductor_step.session.store.Store`, one per rank), so it works on a recorded job on a laptop.

Where each answer comes from:

- which ranks compiled a graph: the graph keys of each rank's stops (``protocol.graph_key``,
  ``"[0/1] forward"``), as the app keys graphs; a graph only some ranks have is a recompile there
  when its dynamo stop has ``recompile_reasons`` (Dynamo's, ``"0/0: tensor 'x' size mismatch ..."``);
- whether the graphs agree: :func:`inductor_step.session.diff.diff_graphs` of the reference rank's graph
  (the lowest rank that compiled it to codegen) against each other rank's, level by level (Dynamo
  graph, post-grad graph, IR buffers, scheduler nodes after fusion, kernels by normalized source);
  its "why" level is replaced by what differs between two ranks (recompile reasons, the Dynamo
  graphs' input specializations, the sessions' torch / device / settings), not a guard of one;
- kernel times: each rank's ``run`` message (``kernels[].median_ms``, summed over a kernel's calls,
  with ``p20_ms`` / ``p80_ms``), kernels paired across ranks by the kernel diff's matching; a
  difference counts when the slowest rank's median is over :data:`TIME_RATIO` times the fastest's,
  the two ranks' p20..p80 ranges do not overlap, and neither run is flagged noisy (``settled`` False,
  ``contended``, ``graph_rounds.rounds_stable`` False: the tracer's flags on a CPU run; or its kernel
  sum far over its graph time, ``sum_vs_graph``);
- a rank that died: its session has no ``done`` message and its process ended (``agent_exit``; or
  the job file's state ``died``); where: the stage after its last stop (the stage it was in), or
  the error it reported.
"""

from inductor_step.session.ranks.model import (  # noqa: F401
    Divergence, GRAPH_LEVELS, GraphComparison, KernelTime, RankComparison, RankState, SUM_VS_GRAPH,
    TIME_RATIO,
)
from inductor_step.session.ranks.compare import (  # noqa: F401
    compare_job, compare_job_file, compare_ranks, diff_pair, rank_diff, rank_state, run_noise, stand_in,
)
from inductor_step.session.ranks.text import (  # noqa: F401
    graph_lines, text,
)
