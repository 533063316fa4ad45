"""Every access to torch's private compiler internals, in one place.

A new torch that moves something breaks this module only, and each capture degrades to
``{"unavailable": "<why>"}`` instead of crashing the user's compile.  Checked on torch 2.11
(GPU box) and 2.15 (CPU, CI).  Where the data comes from:

- compile id: ``torch._guards.CompileContext.current_compile_id()``;
- structured events: a ``logging.Handler`` on ``torch._logging._internal.trace_log``
  (``record.metadata``, ``record.payload``), emitted whenever that logger has a handler;
- live graphs: ``config.pre_grad_custom_pass`` (Dynamo's FX graph),
  ``config.post_grad_custom_pre_pass``/``post_grad_custom_post_pass`` (AOT graph, post-grad graph),
  ``config._pre_fusion_custom_pass``/``_post_fusion_custom_pass`` (``V.graph`` IR and scheduler nodes);
- fusion reasons: logger ``torch._inductor.scheduler.__fusion`` at DEBUG (Inductor's WhyNoFuse text).

Split by concern: :mod:`.base` (the ``unavailable`` shape, ``safe``, versions, the live
graph), :mod:`.hooks` (configuration, passes, wrappers), :mod:`.trace_log` (torch's structured trace),
:mod:`.snapshots` (FX / IR / scheduler / LoopBody / codegen data), :mod:`.memo` (text memo),
:mod:`.profiler` (profiler records), :mod:`.output_module` (output module, autotuners, benchmarker),
:mod:`.whatif` (settings, a captured graph compiled again), :mod:`.aoti` (AOTInductor calls and packages, a C++
wrapper's kernel built on its own), :mod:`.compile_modes` (how a graph was
compiled: torch.compile's arguments, non-default config, dynamic symbols, templates, autotuning), :mod:`.collectives` (a graph's collectives and the
local stand-ins timing runs in their place), :mod:`.subgraphs` (which higher-order-op subgraph a pass or a lowering is on), :mod:`.backends` (the backend Dynamo hands each graph to; ``torch._dynamo.reset``), :mod:`.eager_graph`
(the post-grad graph made runnable for the eager baseline; what keeps a graph's timing in this process),
:mod:`.compiled_calls` (the script's calls of what torch.compile returned: the run stage's whole-call figure).
Every public name is importable from here too (``from inductor_step.tracer import adapter``).
"""

from __future__ import annotations

from inductor_step.tracer.adapter.aoti import aot_compiling, cpp_kernel_binding, install_aoti_hook, load_aoti  # noqa: F401
from inductor_step.tracer.adapter.base import (  # noqa: F401
    MAX_TEXT,
    current_aot_graph,
    current_compile_id,
    current_graph,
    log,
    safe,
    versions,
)
from inductor_step.tracer.adapter.hooks import (  # noqa: F401
    configure_inductor,
    install_final_hooks,
    install_graph_call_hook,
    install_kernel_args_hook,
    install_kernel_bytes_hook,
    install_passes,
    output_module_key,
    take_kernel_defs,
    take_kernel_num_gb,
)
from inductor_step.tracer.adapter.trace_log import (  # noqa: F401
    add_trace_handler,
    fusion_logger,
    trace_event,
    trace_logger,
)
from inductor_step.tracer.adapter.snapshots import (  # noqa: F401
    buffer_mutations,
    buffer_owners,
    can_fuse,
    current_attempt,
    fx_graph,
    ir_buffers,
    is_backward_graph,
    kernel_provenance,
    loop_bodies,
    needs_autograd,
    pre_grad_graph_id,
    provenance_map_written,
    restart_reasons,
    scheduler_nodes,
    source_context,
    torch_line,
    user_line,
)
from inductor_step.tracer.adapter.backends import (  # noqa: F401
    RESET_SEP,
    backend_name,
    install_backend_hook,
    install_reset_hook,
    is_inductor,
    label_compile_id,
)
from inductor_step.tracer.adapter.dynamo_graph import (  # noqa: F401
    example_call,
    install_dynamo_graph_hook,
)
from inductor_step.tracer.adapter.eager_graph import (  # noqa: F401
    is_torch_op,
    runnable_eager,
    script_ops_in,
    unsendable_reason,
)
from inductor_step.tracer.adapter.memo import (  # noqa: F401
    TextMemo,
    graph_memo,
    with_graph_memo,
)
from inductor_step.tracer.adapter.profiler import (  # noqa: F401
    cuda_kernel_records,
    current_raw_stream,
    op_base_name,
    outermost_ops,
    profiler_active,
    register_inductor_ops,
    synchronize,
)
from inductor_step.tracer.adapter.output_module import (  # noqa: F401
    triton_binary_info,
    triton_asm,
    use_inductor_ptxas,
    autotuned_configs,
    benchmarker,
    kernel_config_counts,
    load_output_module,
    output_module,
    pin_configs,
    triton_config_text,
)
from inductor_step.tracer.adapter.collectives import (  # noqa: F401
    NoStandIn,
    collective_of,
    stand_ins_in_graph,
    packets_to_overloads as collective_packets_to_overloads,
    stand_ins_in_module,
    uses_collectives,
)
from inductor_step.tracer.adapter.partition import (  # noqa: F401
    functorch_settings,
    install_partition_hook,
    partition_again,
)
from inductor_step.tracer.adapter.whatif import (  # noqa: F401
    WHAT_IF_SETTINGS,
    compile_variant,
    example_inputs,
    graph_snapshot,
    inductor_setting,
    inductor_settings,
)
from inductor_step.tracer.adapter.compile_modes import (  # noqa: F401
    compiled_with,
    dynamic_symbols,
    inductor_config_changes,
    install_autotune_hook,
    install_compile_args_hook,
    take_autotune,
    template_nodes,
)
from inductor_step.tracer.adapter.output_module import _autotuners  # noqa: F401 - benchmarks/gpu_vs_profiler.py
from inductor_step.tracer.adapter.user_triton import (  # noqa: F401
    restore_triton_side_table,
    triton_side_table_entries,
)
from inductor_step.tracer.adapter.compiled_calls import CALLABLES, install_call_hook, note_graph  # noqa: F401
from inductor_step.tracer.adapter.cudagraphs import (  # noqa: F401
    cudagraphs_enabled,
    install_cudagraph_log_hook,
    install_recording_hook,
)
from inductor_step.tracer.adapter.subgraphs import (  # noqa: F401
    has_higher_order_ops,
    install_subgraph_tracking,
    lowering_subgraph,
    pass_root,
    pass_subgraph_path,
    portable_graph_module,
    rebuild_graph_module,
    scheduler_storage,
    subgraph_attrs,
    submodule,
)
from inductor_step.tracer.adapter.triton_autotune import (  # noqa: F401, E402
    install_triton_autotune_hook,
    reset_triton_autotuned,
    triton_autotuned,
)
