"""Run and time a compiled graph and each of its kernels (the `run` stage).

Modules, by concern:

* :mod:`.harness` -- :func:`time_graph`: load Inductor's output module, pick its inputs, record one
  ``call``'s kernel calls and time the graph and each kernel (the module docstring says how);
* :mod:`.hooks` -- routing each kernel call of an output module through a hook;
* :mod:`.rounds` -- repeated whole-graph rounds that must agree, CPU quantiles;
* :mod:`.ingraph` -- kernel times inside the running model (CUDA-graph replay, CUPTI, the script's
  own profiled calls) and CUPTI detaching;
* :mod:`.roofs` -- peak bandwidth/FLOP/s of the device, bytes and FLOPs of each kernel call.

The names below are the package's public surface (``timing.time_graph`` ...).
"""

from inductor_step.tracer.timing.harness import _graph_args, _use_script_inputs, integer_inputs, script_inputs, time_graph
from inductor_step.tracer.timing.hooks import Hook, _hooked
from inductor_step.tracer.timing.ingraph import capture_graph, cupti_detached, event_hook, in_graph_times, script_times
from inductor_step.tracer.timing.roofs import device_peaks, kernel_gb, mm_flops, op_flops, roofline
from inductor_step.tracer.timing.rounds import (GRAPH_ROUNDS, MAX_GRAPH_ROUNDS, ROUNDS_SPREAD, cpu_quantiles,
                                                rounds_until_stable,
                                                stable_window, whole_graph_rounds)

__all__ = ["GRAPH_ROUNDS", "MAX_GRAPH_ROUNDS", "ROUNDS_SPREAD", "Hook", "capture_graph", "cpu_quantiles", "cupti_detached", "event_hook",
           "device_peaks", "in_graph_times", "integer_inputs", "kernel_gb", "mm_flops", "rounds_until_stable", "op_flops", "roofline", "script_inputs", "script_times",
           "stable_window", "time_graph", "whole_graph_rounds", "_graph_args", "_hooked", "_use_script_inputs"]
