"""What measuring the compile's own time costs the compile.

Each round starts two fresh processes, in alternating order: **plain** (torch.compile of a training step, one step:
forward compile and the lazy backward compile; ``--model nanogpt``: examples/real/nanogpt_train.py's model,
``--model hf_gpt2``: examples/real/hf_gpt2_train.py's tiny Hugging Face GPT2LMHeadModel) and **ours** (the
same, with tracer.compile_time's hooks installed: dynamo_timed events, lowering per FX node, each kernel's
build, autotuning; its messages kept in a list).  No stops and no other capture: only the measuring.  Inductor's
FX graph and AOTAutograd caches are off in both (every round compiles everything); the C++ kernels come from
Inductor's on-disk cache in both after the warm-up round (not counted).

Per run: the first step's wall time (perf_counter), the process's CPU time over it (time.process_time: every
thread, compile workers included) and the time its threads waited for a core (/proc/self/task/*/schedstat's
run-queue wait, summed over threads), so a round the box's other users slowed is seen as such.  Prints every
run and the medians; the ratio ours / plain is also taken per round (paired) and its median printed.

``--micro``: the hooks' cost per call, without a compile: ``dynamo_timed`` events (start and end through
ChromiumEventLogger) with and without our event hook, rounds interleaved in one process (the hook swapped in and
out), and the per-node wrapper of ``GraphLowering.run_node`` the same way around a no-op; times the counts each
"ours" run reports (events, lowered nodes) give our added time per compile, contention-free in the sense that
both sides of each round share the same box at the same moment.

    python benchmarks/compile_time_overhead.py [--rounds 5] [--model nanogpt|hf_gpt2]
    python benchmarks/compile_time_overhead.py --micro
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NANOGPT = os.path.join(ROOT, "examples", "real", "nanogpt_train.py")


def _waited_ns() -> int:
    """ns this process's threads have waited on a run queue (schedstat field 2), summed."""
    total = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                total += int(f.read().split()[1])
        except (OSError, IndexError, ValueError):
            pass
    return total


def _step(model_name: str):
    """The compiled model's first training step, as a function of nothing (its inputs built here)."""
    import importlib.util  # noqa: PLC0415

    import torch  # noqa: PLC0415

    torch.manual_seed(1337)
    if model_name == "hf_gpt2":
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from transformers import GPT2Config, GPT2LMHeadModel  # noqa: PLC0415

        config = GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=256, n_positions=64,
                            resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
        model = torch.compile(GPT2LMHeadModel(config).train())
        ids = torch.randint(0, config.vocab_size, (2, 32))
        return lambda: model(input_ids=ids, labels=ids).loss.backward()
    spec = importlib.util.spec_from_file_location("nanogpt", NANOGPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cfg = mod.GPTConfig()
    model = torch.compile(mod.GPT(cfg))
    x = torch.randint(0, cfg.vocab_size, (4, cfg.block_size))
    y = torch.randint(0, cfg.vocab_size, (4, cfg.block_size))
    return lambda: model(x, y)[1].backward()


def child(mode: str, model_name: str = "nanogpt") -> None:
    """One run: print a JSON line with wall_s, cpu_s, wait_s of the first training step."""
    sys.path.insert(0, os.path.dirname(ROOT))
    import torch  # noqa: PLC0415

    torch._inductor.config.fx_graph_cache = False
    torch._functorch.config.enable_autograd_cache = False
    messages: list = []
    counts = {"events": 0, "nodes": 0}
    if mode == "ours":
        from inductor_step.tracer.compile_time import CompileClock, install_clock  # noqa: PLC0415

        real_event, real_node = CompileClock.on_event, CompileClock.on_node

        def on_event(self, *a):  # noqa: ANN001
            counts["events"] += 1
            return real_event(self, *a)

        def on_node(self, *a):  # noqa: ANN001
            counts["nodes"] += 1
            return real_node(self, *a)

        CompileClock.on_event, CompileClock.on_node = on_event, on_node

        class State:  # what install_clock reads of the agent's state
            frames: dict = {}
            send = staticmethod(messages.append)

        install_clock(State())
    step = _step(model_name)
    w0, c0, q0 = time.perf_counter(), time.process_time(), _waited_ns()
    step()
    wall, cpu, wait = time.perf_counter() - w0, time.process_time() - c0, (_waited_ns() - q0) / 1e9
    ctime = sum(m.get("total_ms", 0.0) for m in messages if m.get("type") == "compile_time")
    print(json.dumps({"mode": mode, "wall_s": wall, "cpu_s": cpu, "wait_s": wait, "measured_ms": ctime,
                      "messages": len(messages), **counts}))


def micro(rounds: int = 7, n: int = 20000) -> None:
    """Per-call cost of the event hook and the run_node wrapper, with and without, rounds interleaved."""
    sys.path.insert(0, os.path.dirname(ROOT))
    import torch  # noqa: PLC0415, F401
    from torch._dynamo import utils as du  # noqa: PLC0415
    from torch._inductor.graph import GraphLowering  # noqa: PLC0415

    from inductor_step.tracer.adapter import compile_timers as ct  # noqa: PLC0415
    from inductor_step.tracer.compile_time import CompileClock  # noqa: PLC0415

    cls = du.ChromiumEventLogger
    plain = (cls.log_event_start, cls.log_event_end, GraphLowering.run_node)
    clock = CompileClock(lambda m: None, lambda c, b: "inference")
    GraphLowering.run_node = lambda self, n: None  # a no-op node: only the wrapper's own cost shows
    bare_node = GraphLowering.run_node
    ct.install_event_hook(clock.on_event)
    ct.install_node_timer(clock.on_node)
    ours = (cls.log_event_start, cls.log_event_end, GraphLowering.run_node)

    class Node:
        name = "n"

    node = Node()

    def events() -> float:
        t = time.perf_counter()
        with du.dynamo_timed("outer_bench_event"):  # one root: the clock keeps its children until it ends
            for _ in range(n):
                with du.dynamo_timed("bench_event"):
                    pass
        return (time.perf_counter() - t) / n * 1e6

    def nodes() -> float:
        t = time.perf_counter()
        for _ in range(n):
            GraphLowering.run_node(None, node)
        return (time.perf_counter() - t) / n * 1e6

    res: dict[str, list[float]] = {"event plain": [], "event ours": [], "node plain": [], "node ours": []}
    for i in range(rounds):
        for side in (("plain", "ours") if i % 2 == 0 else ("ours", "plain")):
            s_, e_, rn = plain if side == "plain" else ours
            cls.log_event_start, cls.log_event_end = s_, e_
            GraphLowering.run_node = bare_node if side == "plain" else rn
            res[f"event {side}"].append(events())
            res[f"node {side}"].append(nodes())
    cls.log_event_start, cls.log_event_end, GraphLowering.run_node = plain
    med = statistics.median
    for what in ("event", "node"):
        a, b = med(res[f"{what} plain"]), med(res[f"{what} ours"])
        print(f"{what:<5} plain {a:7.2f} us  ours {b:7.2f} us  added {b - a:6.2f} us per call "
              f"(medians of {rounds} interleaved rounds of {n})  load1 {os.getloadavg()[0]:.2f}")


def run(mode: str, model_name: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", mode, "--model", model_name], capture_output=True,
                         text=True, timeout=900)
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode or not line:
        raise SystemExit(f"{mode} failed:\n{out.stderr[-3000:]}")
    r = json.loads(line[-1])
    r["load1"] = os.getloadavg()[0]
    return r


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--child", choices=("plain", "ours"))
    p.add_argument("--model", choices=("nanogpt", "hf_gpt2"), default="nanogpt")
    p.add_argument("--micro", action="store_true", help="the hooks' cost per call, without a compile")
    ns = p.parse_args()
    if ns.micro:
        micro()
        return
    if ns.child:
        child(ns.child, ns.model)
        return
    run("plain", ns.model)  # warm-up: C++ kernels into Inductor's on-disk cache
    rows: list[tuple[dict, dict]] = []
    for i in range(ns.rounds):
        order = ("plain", "ours") if i % 2 == 0 else ("ours", "plain")
        got = {m: run(m, ns.model) for m in order}
        rows.append((got["plain"], got["ours"]))
        for m in order:
            r = got[m]
            share = r["wait_s"] / (r["cpu_s"] + r["wait_s"]) if r["cpu_s"] + r["wait_s"] else 0.0
            print(f"round {i + 1} {m:<5} wall {r['wall_s']:7.3f} s  cpu {r['cpu_s']:7.3f} s  waited {r['wait_s']:6.3f} s "
                  f"({share * 100:4.1f}% of wanted)  load1 {r['load1']:.2f}"
                  + (f"  compile time measured {r['measured_ms'] / 1000:.3f} s, {r['events']} events, "
                     f"{r['nodes']} nodes lowered" if m == "ours" else ""), flush=True)
    med = statistics.median
    for key in ("wall_s", "cpu_s", "wait_s"):
        a, b = [r[0][key] for r in rows], [r[1][key] for r in rows]
        paired = [y / x for x, y in zip(a, b) if x]
        print(f"{key:<7} plain median {med(a):.3f}  ours median {med(b):.3f}  ours/plain {med(b) / med(a):.3f}x  "
              f"paired median {med(paired):.3f}x (range {min(paired):.3f}-{max(paired):.3f})")


if __name__ == "__main__":
    main()
