"""Does profiling a script's calls slow the same process's later timing runs? (CUDA)

The agent profiles each graph's calls 2-11 under torch.profiler (tracer.agent_timing.TimingRequests.on_graph_call,
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
``--checkpoints 1,10`` also times after that many sessions; ``--one-session`` runs the calls inside
one session; ``--teardown-test keep|restore`` then detaches CUPTI as the agent's timing run does
(tracer.timing.cupti_detached) and checks timing, the run's own CUPTI sessions and later profiled
calls after it (BENCHMARKS.md, seventh run).

    python benchmarks/profiler_after_effect.py [--sessions 40] [--checkpoints 1,10] [--one-session] [-- SCRIPT ARGS...]
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
    ap.add_argument("--checkpoints", default="",
                    help="also time after these cumulative session counts, e.g. 1,10 (before --sessions)")
    ap.add_argument("--one-session", action="store_true",
                    help="run the --sessions calls inside ONE profiler session instead of one session each")
    ap.add_argument("--teardown-test", choices=["keep", "restore"], default=None,
                    help="afterwards: one empty session with TEARDOWN_CUPTI=1 (then kept set, or restored), time "
                         "again, run tracer.timing.time_graph on each graph (its CUPTI in-graph session), time "
                         "again, then 10 more profiled calls, counting each one's kernel records")
    ap.add_argument("--activities", choices=["cuda", "cuda+cpu"], default="cuda+cpu",
                    help="what each session records (default cuda+cpu, as the agent)")
    ap.add_argument("script", nargs=argparse.REMAINDER, help="-- SCRIPT ARGS (default: ResNet-18 training, small)")
    a = ap.parse_args()
    argv = [x for x in a.script if x != "--"] or DEFAULT

    import torch  # noqa: PLC0415
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415
    from triton.testing import do_bench  # noqa: PLC0415

    from inductor_step.tracer import adapter  # noqa: PLC0415

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
    acts = [ProfilerActivity.CUDA] + ([ProfilerActivity.CPU] if a.activities == "cuda+cpu" else [])
    checkpoints = sorted({int(c) for c in a.checkpoints.split(",") if c.strip()} | {a.sessions})
    ratios: list[float] = []
    if a.one_session:
        adapter.synchronize()
        with profile(activities=acts):
            for i in range(a.sessions):
                g, inputs = kept[keys[i % len(keys)]]
                g(list(inputs))
                torch.cuda.synchronize()
        checkpoints = [a.sessions]
        afters = {a.sessions: timing()}
    else:
        afters = {0: timing()} if a.sessions == 0 else {}
        for i in range(a.sessions):
            g, inputs = kept[keys[i % len(keys)]]
            adapter.synchronize()
            with profile(activities=acts):
                g(list(inputs))
                torch.cuda.synchronize()
            if i + 1 in checkpoints:
                afters[i + 1] = timing()
    if a.teardown_test:
        teardown_test(a.teardown_test, kept, keys, before, timing, acts)
    what = f"{a.sessions} calls in one profiler session" if a.one_session else "{n} profiler sessions"
    for n in checkpoints:
        after = afters[n]
        for key in keys:
            print(f"  graph {key[:16]}...: before {before[key]:.4f} ms, after {what.format(n=n)} "
                  f"{after[key]:.4f} ms, after/before {after[key] / before[key]:.3f}")
        ratios = [after[k] / before[k] for k in keys]
        print(f"after {what.format(n=n)}: after/before, median over graphs: {statistics.median(ratios):.3f} "
              f"(range {min(ratios):.3f}-{max(ratios):.3f})")
    return 0


def teardown_test(mode: str, kept: dict, keys: list, before: dict, timing: Any, acts: list) -> None:
    """See --teardown-test."""
    import time  # noqa: PLC0415

    import torch  # noqa: PLC0415
    from torch._inductor.codecache import PyCodeCache  # noqa: PLC0415
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

    from inductor_step.tracer import adapter  # noqa: PLC0415
    from inductor_step.tracer import timing as tt  # noqa: PLC0415

    def show(label: str) -> None:
        t = timing()
        print(f"[{label}] after/before: " + ", ".join(f"{k[:8]} {t[k] / before[k]:.3f} ({t[k]:.4f} ms)" for k in keys),
              flush=True)

    def records_per_call(n: int) -> list[int]:
        out = []
        for i in range(n):
            g, inputs = kept[keys[i % len(keys)]]
            adapter.synchronize()
            out.append(len(adapter.cuda_kernel_records(lambda g=g, x=inputs: g(list(x)), cpu_ops=True)))
        return out

    print("records per profiled call, before teardown:", records_per_call(6), flush=True)
    show("before teardown")
    old = os.environ.get("TEARDOWN_CUPTI")
    os.environ["TEARDOWN_CUPTI"] = "1"
    t0 = time.perf_counter()
    with profile(activities=[ProfilerActivity.CUDA]):
        torch.zeros(1, device="cuda").add_(1)
        torch.cuda.synchronize()
    torch.zeros(1, device="cuda").add_(1)
    torch.cuda.synchronize()
    print(f"teardown session took {1e3 * (time.perf_counter() - t0):.1f} ms", flush=True)
    if mode == "restore":
        if old is None:
            del os.environ["TEARDOWN_CUPTI"]
        else:
            os.environ["TEARDOWN_CUPTI"] = old
    show("after teardown")
    time.sleep(1.0)
    show("after teardown, 1 s later")
    for round_ in (1, 2):
        for k in keys:
            g, _ = kept[k]
            path = PyCodeCache.write(g.source_code)[1]
            r = tt.time_graph(path, None, "cuda")
            print(f"time_graph round {round_} {k[:8]}: compiled_ms {r['compiled_ms']:.4f}, in_graph_cupti: "
                  f"{r['in_graph_cupti'][:120]}", flush=True)
        show(f"after time_graph round {round_}")
    print("records per profiled call, after:", records_per_call(6), flush=True)
    show("after the later profiled calls")


if __name__ == "__main__":
    sys.exit(main())
