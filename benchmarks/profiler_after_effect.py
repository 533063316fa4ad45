"""Does profiling a script's calls slow the same process's later timing runs? (CUDA; issue 4)

The agent profiles each graph's calls 2-11 under torch.profiler (tracer.agent.Agent.on_graph_call,
CUDA and CPU activity) and times the graphs afterwards in the same process (``compiled_ms``).
Kineto may leave CUPTI attached after a profiler session ends (``TEARDOWN_CUPTI``; pytorch issue
144455), which slows every later kernel launch.  This script measures that in one process:

1. runs a script (default: examples/real/torchvision_resnet.py --device cuda --size small
   --steps 3) and keeps each compiled graph (``CompiledFxGraph``) with its second call's inputs;
2. times each graph with triton.testing.do_bench (L2 flushed, median), five rounds: *before*;
3. runs ``--sessions`` profiler sessions as the agent does (synchronize, then one graph call under
   ``torch.profiler.profile(activities=[CUDA, CPU])``; ``--activities cuda``: CUDA only);
4. times each graph again: *after*.  Prints before, after and after/before per graph.

Run it once as is and once with ``TEARDOWN_CUPTI=1`` in the environment to compare.

    python benchmarks/profiler_after_effect.py [--sessions 40] [-- SCRIPT ARGS...]
"""

from __future__ import annotations

import argparse
import os
import runpy
import statistics
import sys
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
DEFAULT = [os.path.join(ROOT, "examples", "real", "torchvision_resnet.py"), "--device", "cuda", "--size", "small",
           "--steps", "3"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=40, help="profiler sessions between the two timings (default 40)")
    ap.add_argument("--rounds", type=int, default=5, help="do_bench rounds per timing (default 5)")
    ap.add_argument("--activities", choices=["cuda", "cuda+cpu"], default="cuda+cpu",
                    help="what each session records (default cuda+cpu, as the agent)")
    ap.add_argument("script", nargs=argparse.REMAINDER, help="-- SCRIPT ARGS (default: ResNet-18 training, small)")
    a = ap.parse_args()
    argv = [x for x in a.script if x != "--"] or DEFAULT

    import torch  # noqa: PLC0415
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415
    from triton.testing import do_bench  # noqa: PLC0415

    from tracer import adapter  # noqa: PLC0415

    kept: dict[str, tuple[Any, list]] = {}
    calls: dict[str, int] = {}
    from torch._inductor.output_code import CompiledFxGraph  # noqa: PLC0415

    real = CompiledFxGraph.__call__

    def keep(self: Any, inputs: Any) -> Any:
        key = getattr(self, "cache_key", None) or str(id(self))
        calls[key] = calls.get(key, 0) + 1
        if calls[key] == 2 and isinstance(inputs, list):
            kept[key] = (self, list(inputs))
        return real(self, inputs)

    CompiledFxGraph.__call__ = keep
    sys.argv = list(argv)
    runpy.run_path(argv[0], run_name="__main__")
    CompiledFxGraph.__call__ = real
    torch.set_grad_enabled(False)

    def timing() -> dict[str, float]:
        out = {}
        for key, (g, inputs) in kept.items():
            out[key] = statistics.median(do_bench(lambda g=g, i=inputs: g(list(i)), warmup=25, rep=100,
                                                  return_mode="median") for _ in range(a.rounds))
        return out

    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, sessions record {a.activities}, TEARDOWN_CUPTI="
          f"{os.environ.get('TEARDOWN_CUPTI', '(unset)')}; {len(kept)} graph(s) kept from {' '.join(argv)}")
    before = timing()
    keys = list(kept)
    for i in range(a.sessions):
        g, inputs = kept[keys[i % len(keys)]]
        adapter.synchronize()
        with profile(activities=[ProfilerActivity.CUDA] + ([ProfilerActivity.CPU] if a.activities == "cuda+cpu" else [])):
            g(list(inputs))
            torch.cuda.synchronize()
    after = timing()
    for key in keys:
        print(f"  graph {key[:16]}...: before {before[key]:.4f} ms, after {a.sessions} profiler sessions "
              f"{after[key]:.4f} ms, after/before {after[key] / before[key]:.3f}")
    ratios = [after[k] / before[k] for k in keys]
    print(f"after/before, median over graphs: {statistics.median(ratios):.3f} (range {min(ratios):.3f}-{max(ratios):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
