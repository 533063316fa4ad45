"""End to end: what measuring the compile's own time adds to a compile's wall time under inductor-step.

The same script (``--child``: one model's training step compiled with ``torch.compile``, its first step timed,
i.e. the forward compile, the lazy backward compile and one run) in three ways, each a fresh process:

- **plain**: ``python this --child ...`` (torch.compile alone, for reference);
- **on**: ``python -m inductor_step --headless this --child ...`` (every stop continued at once, everything
  captured, the compile-time clock on: tracer.compile_time);
- **off**: the same with ``INDUCTOR_STEP_COMPILE_TIME=off`` (no clock: the only difference from "on").

Rounds alternate the order (on, off, plain; then off, plain, on; ...); a warm-up run (not counted) first fills
Inductor's C++ / Triton kernel caches.  FX graph and AOTAutograd caches are off in every mode
(inductor-step turns them off; plain gets TORCHINDUCTOR_FX_GRAPH_CACHE=0 TORCHINDUCTOR_AUTOGRAD_CACHE=0), so
every run compiles every graph.  Per run: the first step's wall time as the script measures it
(``time.perf_counter`` around it, ``torch.cuda.synchronize`` on CUDA) and its CPU time (``time.process_time``: every
thread of the process; with ``TORCHINDUCTOR_COMPILE_THREADS=1`` the whole compile is in the process, and CPU
time is far less sensitive than wall time to a shared machine's other users).  Prints each run, then per mode the
median, min-max and the on/off ratio of medians and of per-round pairs.

    python benchmarks/compile_time_e2e.py --model nanogpt --device cpu --rounds 5 [--nanogpt-dir DIR]
    python benchmarks/compile_time_e2e.py --model hf_gpt2 --device cuda --rounds 5
    python benchmarks/compile_time_e2e.py --show A.jsonl B.jsonl     # sessions' compile times and caches

``--model nanogpt`` imports karpathy/nanoGPT's ``model.py`` from ``--nanogpt-dir`` (GPT, GPTConfig; a tiny
config: 2 layers, 4 heads, 64 wide, block 64, vocab 256) and takes an AdamW step as nanoGPT's train.py does;
``--model hf_gpt2``: Hugging Face ``GPT2LMHeadModel`` from a config (2 layers, 128 wide, 4 heads, 128
positions, vocab 1024), its loss backward and an AdamW step.
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
MARK = "CTIME_E2E "


def child(model_name: str, device: str, nanogpt_dir: str) -> None:
    """One run: build, compile, time the first training step (and the second), print MARK + JSON."""
    import torch  # noqa: PLC0415

    torch.manual_seed(0)
    if model_name == "hf_gpt2":
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from transformers import GPT2Config, GPT2LMHeadModel  # noqa: PLC0415

        cfg = GPT2Config(n_layer=2, n_embd=128, n_head=4, vocab_size=1024, n_positions=128, resid_pdrop=0.0,
                         embd_pdrop=0.0, attn_pdrop=0.0)
        model = GPT2LMHeadModel(cfg).to(device).train()
        ids = torch.randint(0, cfg.vocab_size, (4, 128), device=device)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        cmodel = torch.compile(model)

        def step() -> float:
            loss = cmodel(input_ids=ids, labels=ids).loss
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            return loss
    else:
        sys.path.insert(0, nanogpt_dir)
        from model import GPT, GPTConfig  # noqa: PLC0415  - karpathy/nanoGPT's model.py

        cfg = GPTConfig(block_size=64, vocab_size=256, n_layer=2, n_head=4, n_embd=64, dropout=0.0, bias=True)
        model = GPT(cfg).to(device)
        opt = model.configure_optimizers(weight_decay=0.1, learning_rate=1e-3, betas=(0.9, 0.95),
                                         device_type="cuda" if device == "cuda" else "cpu")
        cmodel = torch.compile(model)
        x = torch.randint(0, 256, (4, 64), device=device)
        y = torch.randint(0, 256, (4, 64), device=device)

        def step() -> float:
            _logits, loss = cmodel(x, y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            return loss
    times, cpu = [], []
    for _ in range(2):
        t0, c0 = time.perf_counter(), time.process_time()
        loss = step()
        if device == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    print(MARK + json.dumps({"first_s": times[0], "second_s": times[1], "first_cpu_s": cpu[0], "loss": float(loss)}),
          flush=True)


def run(mode: str, args: argparse.Namespace) -> dict:
    """One fresh process in ``mode`` ("plain", "on", "off"); its MARK line as a dict, plus its process wall."""
    script = [os.path.abspath(__file__), "--child", "--model", args.model, "--device", args.device,
              "--nanogpt-dir", args.nanogpt_dir]
    env = dict(os.environ, TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0")
    if mode == "plain":
        cmd = [sys.executable] + script
    else:
        cmd = [sys.executable, "-m", "inductor_step", "--headless"] + script
        env["INDUCTOR_STEP_COMPILE_TIME"] = mode
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env, cwd=args.cwd)
    wall = time.perf_counter() - t0
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith(MARK)]
    if out.returncode or not lines:
        raise SystemExit(f"{mode} failed ({out.returncode}):\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}")
    r = json.loads(lines[-1][len(MARK):])
    r.update(mode=mode, process_s=wall)
    ctime = [ln for ln in out.stdout.splitlines() if ln.startswith("compile time:")]
    if ctime:
        r["summary"] = ctime[-1][:160]
    return r


def show(paths: list[str]) -> None:
    """Sessions' compile times as the device log shows them: per graph its total, its caches' verdicts and the
    stages a cache hit skipped; per session its Triton kernels' compile times (top 5) and cache verdicts."""
    sys.path.insert(0, os.path.dirname(ROOT))
    from inductor_step.session import compile_time as ct  # noqa: PLC0415
    from inductor_step.session.format import read_session  # noqa: PLC0415
    from inductor_step.session.store import Store  # noqa: PLC0415

    for path in paths:
        s = Store.of([dict(m) for m in read_session(path)])
        times = ct.graph_times(s)
        print(f"== {os.path.basename(path)}: {ct.summary_line(s)}")
        for key, g in times.items():
            caches = ", ".join(f"{k} {v.get('status')}" + (f" ({v['reason']})" if v.get("reason") else "")
                               for k, v in g.cache.items())
            skipped = sorted(set(g.skipped().values()))
            print(f"  {key:<22} {ct.fmt_time(g.total_ms):>9}  caches: {caches or '-'}"
                  + (f"  skipped {', '.join(g.skipped())}: {'; '.join(skipped)}" if skipped else ""))
            print("    stages: " + "  ".join(f"{st} {ct.fmt_time(ms) if ms is not None else note}"
                                           for st, _l, ms, note in ct.stage_rows(g)))
        tri = [(k, g.key) for g in times.values() for k in g.kernels if k.get("kind") == "triton"]
        verdicts: dict[str, int] = {}
        for k, _g in tri:
            verdicts[str(k.get("cache"))] = verdicts.get(str(k.get("cache")), 0) + 1
        print(f"  Triton kernels: {len(tri)}, cache verdicts {verdicts}, compile time total "
              f"{ct.fmt_time(sum(k.get('compile_ms') or 0 for k, _ in tri))}")
        for k, gk in sorted(tri, key=lambda x: -(x[0].get("compile_ms") or 0))[:5]:
            print(f"    {k['name']:<46} {ct.fmt_time(k.get('compile_ms')):>9} {k.get('cache')} ({gk}) "
                  f"autotune cache: {k.get('autotune_cache', '-')}")


def main() -> None:
    if sys.argv[1:2] == ["--show"]:
        show(sys.argv[2:])
        return
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--child", action="store_true")
    p.add_argument("--model", choices=("nanogpt", "hf_gpt2"), default="nanogpt")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--nanogpt-dir", default="/work/trial")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--cwd", default=None, help="where the runs start (inductor-step writes its session there)")
    p.add_argument("--json", default=None, help="write every run here")
    p.add_argument("--cpus", default=None, help="run pinned to these cores (os.sched_setaffinity), e.g. 0-5")
    p.add_argument("--modes", default="on,off,plain", help="which of on, off, plain to run (comma-separated)")
    args = p.parse_args()
    if args.cpus:
        lo, _, hi = args.cpus.partition("-")
        os.sched_setaffinity(0, range(int(lo), int(hi or lo) + 1))
    if args.child:
        child(args.model, args.device, args.nanogpt_dir)
        return
    modes = [m for m in args.modes.split(",") if m in ("on", "off", "plain")]
    run(modes[0], args)  # warm-up: kernels into Inductor's on-disk caches, imports into the page cache
    runs: list[dict] = []
    for i in range(args.rounds):
        order = modes[i % len(modes):] + modes[:i % len(modes)]
        for m in order:
            r = run(m, args)
            r["round"] = i + 1
            runs.append(r)
            print(f"{args.model} {args.device} round {i + 1} {m:<5} first step {r['first_s']:7.3f} s  cpu "
                  f"{r['first_cpu_s']:7.3f} s  load1 {os.getloadavg()[0]:5.2f}  second "
                  f"{r['second_s'] * 1000:7.1f} ms  process {r['process_s']:6.2f} s", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)
    med = statistics.median
    first = {m: [r["first_s"] for r in runs if r["mode"] == m] for m in modes}
    for m in modes:
        v = first[m]
        print(f"{args.model} {args.device} {m:<5} first step median {med(v):.3f} s  min {min(v):.3f}  max {max(v):.3f}"
              f"  (n={len(v)})")
    cpu = {m: [r["first_cpu_s"] for r in runs if r["mode"] == m] for m in modes}
    for m in modes:
        v = cpu[m]
        print(f"{args.model} {args.device} {m:<5} first step CPU median {med(v):.3f} s  min {min(v):.3f}  "
              f"max {max(v):.3f}  (the process's threads: time.process_time)")
    if cpu.get("on") and cpu.get("off"):
        pc = [a / b for a, b in zip(cpu["on"], cpu["off"])]
        print(f"{args.model} {args.device} on/off CPU: ratio of medians {med(cpu['on']) / med(cpu['off']):.4f}  "
              f"per-round median {med(pc):.4f} (range {min(pc):.4f}-{max(pc):.4f})")
    on_off = [a / b for a, b in zip(first["on"], first["off"])]
    print(f"{args.model} {args.device} on/off: ratio of medians {med(first['on']) / med(first['off']):.4f}  "
          f"per-round median {med(on_off):.4f} (range {min(on_off):.4f}-{max(on_off):.4f})  "
          + (f"off/plain {med(first['off']) / med(first['plain']):.3f}" if first.get("plain") else ""))
    s = [r.get("summary") for r in runs if r["mode"] == "on" and r.get("summary")]
    if s:
        print(f"{args.model} {args.device} an 'on' run's headless line: {s[-1]}")


if __name__ == "__main__":
    main()
