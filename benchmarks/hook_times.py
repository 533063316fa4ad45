"""Where the agent's own time goes: wall-clock timers around its hooks, inside one real run.

Runs SCRIPT under the agent in this process, as ``inductor-step --headless`` does (no UI; the
session stream goes to /dev/null, or to ``--record FILE``), with a ``time.perf_counter`` timer
around each of the agent's entry points (its parts' ``on_*``, ``send``, ``build_links``) and the
script's whole run (the script's own calls of its compiled graphs, made through ``on_graph_call``,
are not counted as ours); full garbage collections are counted with ``gc.callbacks``.  Timers count the
outermost entry only, so the "all hooks" line is the time the compile spent in our code (hooks
nest: ``on_trace`` calls ``on_output_code`` calls ``build_links``; each line is inclusive).
A full collection that starts inside a hook is counted in that hook's time (cProfile does not
see it) and reported on its own line.  ``--profile N`` also runs cProfile while inside a hook (only there) and prints its N most costly
functions by internal time and by cumulative time, so torch's and our own printing inside the hooks can be told apart.

``--plain`` runs the script without the agent (as ``runpy``, in the same way), for its run time and
its full collections to set beside ours.  Caches: the agent turns off the FX-graph and AOT caches; for
``--plain`` set ``TORCHINDUCTOR_FX_GRAPH_CACHE=0 TORCHINDUCTOR_AUTOGRAD_CACHE=0``.

    python benchmarks/hook_times.py [--plain | --profile 25] [--record s.jsonl] SCRIPT [ARGS...]

Standard library only beyond the project (torch is imported by the agent).
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import gc
import io
import os
import pstats
import runpy
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from inductor_step.tracer import agent as agent_mod  # noqa: E402  - standard library only at import
from inductor_step.tracer.agent_state import AgentOptions, AgentState  # noqa: E402
from inductor_step.tracer.agent_timing import TimingRequests  # noqa: E402
from inductor_step.tracer.capture import Capture  # noqa: E402
from inductor_step.tracer.capture_aoti import AotiCapture  # noqa: E402
from inductor_step.tracer.cudagraph_record import CudagraphRecord  # noqa: E402
from inductor_step.tracer.subgraphs import SubgraphCapture  # noqa: E402

# (the class that defines it, method name): every part's hooks, the stream's send and the links
ENTRY_POINTS = [(cls, name) for cls in (Capture, SubgraphCapture, TimingRequests, CudagraphRecord, AotiCapture)
                for name in dir(cls) if name.startswith("on_")] + [(AgentState, "send"), (Capture, "build_links")]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--profile", type=int, default=0, metavar="N", help="cProfile inside hooks; print N functions")
    p.add_argument("--plain", action="store_true",
                   help="no agent: run the script as plain python would (runpy), for its run time and collections")
    p.add_argument("--record", metavar="FILE", help="write the session here (default: /dev/null)")
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    a = p.parse_args()

    inclusive: dict[str, float] = {}
    calls: dict[str, int] = {}
    depth = threading.local()
    outer = {"s": 0.0, "n": 0}
    prof = cProfile.Profile() if a.profile else None

    script_calls = {"s": 0.0}  # the script's own graph calls made inside on_graph_call: not ours

    def timed(name: str, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if name == "on_graph_call":  # (timing part, key, inputs, run): run() is the script's compiled graph
                self_, key, inputs, run = args

                def run_script():
                    profiling = prof is not None and threading.current_thread() is threading.main_thread()
                    if profiling:
                        prof.disable()
                    s0 = time.perf_counter()
                    try:
                        return run()
                    finally:
                        script_calls["s"] += time.perf_counter() - s0
                        if profiling:
                            prof.enable()
                args = (self_, key, inputs, run_script)
            before = script_calls["s"]
            d = getattr(depth, "d", 0)
            depth.d = d + 1
            if d == 0 and prof is not None and threading.current_thread() is threading.main_thread():
                prof.enable()
            s = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                dt = time.perf_counter() - s - (script_calls["s"] - before)
                depth.d = d
                inclusive[name] = inclusive.get(name, 0.0) + dt
                calls[name] = calls.get(name, 0) + 1
                if d == 0:
                    outer["s"] += dt
                    outer["n"] += 1
                    if prof is not None and threading.current_thread() is threading.main_thread():
                        prof.disable()
        return wrapper

    for cls, name in ENTRY_POINTS:  # before the agent is made: its hooks are its parts' bound methods
        setattr(cls, name, timed(name, getattr(cls, name)))

    gcs = {"full": 0, "full_s": 0.0, "start": 0.0, "in_hooks": 0, "in_hooks_s": 0.0}

    def on_gc(phase: str, info: dict) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            gcs["start"] = time.perf_counter()
        else:
            dt = time.perf_counter() - gcs["start"]
            gcs["full"] += 1
            gcs["full_s"] += dt
            if getattr(depth, "d", 0):  # the collector ran inside one of our hooks: counted in its time
                gcs["in_hooks"] += 1
                gcs["in_hooks_s"] += dt

    gc.callbacks.append(on_gc)
    fd = os.open(a.record or os.devnull, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    script = os.path.abspath(a.script)
    out = sys.__stderr__
    t0 = time.perf_counter()
    if a.plain:
        sys.argv = [script, *a.args]
        sys.path.insert(0, os.path.dirname(script))
        rc = 0
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 0
        import atexit  # noqa: PLC0415 - as the agent does before its os._exit

        atexit._run_exitfuncs()
        total = time.perf_counter() - t0
        print(f"\n{os.path.relpath(script, ROOT)} {' '.join(a.args)}: exit {rc}, plain run (no agent) {total:.2f} s\n"
              f"  full garbage collections: {gcs['full']}, {gcs['full_s']:.3f} s", file=out)
        out.flush()
        os._exit(rc)
    rc = agent_mod.Agent(fd, None, AgentOptions(script=script, argv=a.args)).main()
    total = time.perf_counter() - t0
    print(f"\n{os.path.relpath(script, ROOT)} {' '.join(a.args)}: exit {rc}, agent's whole run {total:.2f} s", file=out)
    print(f"  all hooks (outermost entries)  {outer['s']:7.3f} s  in {outer['n']} calls"
          f"  ({100 * outer['s'] / total:.1f}% of the run)", file=out)
    for name in sorted(inclusive, key=inclusive.get, reverse=True):
        print(f"  {name:<28} {inclusive[name]:7.3f} s  in {calls[name]} calls (inclusive)", file=out)
    print(f"  full garbage collections: {gcs['full']}, {gcs['full_s']:.3f} s; inside our hooks {gcs['in_hooks']},"
          f" {gcs['in_hooks_s']:.3f} s (counted above; the same collection runs elsewhere without the agent"
          " when --plain shows as many)", file=out)
    if prof is not None:
        buf = io.StringIO()
        st = pstats.Stats(prof, stream=buf)
        st.sort_stats("tottime").print_stats(a.profile)
        st.sort_stats("cumulative").print_stats(a.profile)
        print(buf.getvalue(), file=out)
    out.flush()
    os._exit(rc if isinstance(rc, int) else 1)


if __name__ == "__main__":
    main()
