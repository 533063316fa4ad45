"""Issue 30.6: what measuring the compile's own time costs the compile.

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

    python benchmarks/compile_time_overhead.py [--rounds 5] [--model nanogpt|hf_gpt2]
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
    if mode == "ours":
        from inductor_step.tracer.compile_time import install_clock  # noqa: PLC0415

        class Agent:  # what install_clock reads of the agent
            frames: dict = {}
            send = staticmethod(messages.append)

        install_clock(Agent())
    step = _step(model_name)
    w0, c0, q0 = time.perf_counter(), time.process_time(), _waited_ns()
    step()
    wall, cpu, wait = time.perf_counter() - w0, time.process_time() - c0, (_waited_ns() - q0) / 1e9
    ctime = sum(m.get("total_ms", 0.0) for m in messages if m.get("type") == "compile_time")
    print(json.dumps({"mode": mode, "wall_s": wall, "cpu_s": cpu, "wait_s": wait, "measured_ms": ctime,
                      "messages": len(messages)}))


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
    ns = p.parse_args()
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
                  + (f"  compile time measured {r['measured_ms'] / 1000:.3f} s" if m == "ours" else ""), flush=True)
    med = statistics.median
    for key in ("wall_s", "cpu_s", "wait_s"):
        a, b = [r[0][key] for r in rows], [r[1][key] for r in rows]
        paired = [y / x for x, y in zip(a, b) if x]
        print(f"{key:<7} plain median {med(a):.3f}  ours median {med(b):.3f}  ours/plain {med(b) / med(a):.3f}x  "
              f"paired median {med(paired):.3f}x (range {min(paired):.3f}-{max(paired):.3f})")


if __name__ == "__main__":
    main()
