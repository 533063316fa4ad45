"""Our run stage's eager against plain eager of the same module without torch.compile: within 10%.

For each model, ``inductor-step --headless --run`` records a small script that compiles it and calls it; the
run messages' ``eager_ms`` (and ``decomposed_ms``, the post-grad graph op by op, the old "eager") are read
back.  Between recordings this process times the same module without compile: on CUDA
``triton.testing.do_bench(lambda: m(x))`` (median), on CPU the median of perf_counter calls; a backward graph
against ``torch.autograd.backward(out, ones)`` with the forward run untimed before each call (CUDA events on
GPU).  Repeats ``--repeats`` times (interleaved: plain, ours, plain, ours, ...) and prints medians side by
side; exits 1 when a model's eager is more than ``--tolerance`` (default 10%) from plain.  On CPU a repeat whose
plain loop or recorded run waited for a core (tracer.timing.contention: over 10% of the time) is left out and
counted; a model with no quiet repeat is reported, not compared.

    python benchmarks/eager_baseline.py                     # CPU models, or the CUDA ones where CUDA is there
    python benchmarks/eager_baseline.py --device cuda --repeats 5 --models mlp_bf16,mlp_ln,attn_train
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(ROOT))

#: name -> (model source defining m, x on DEVICE; compile call; "inference" or "train"; devices it runs on)
MODELS: dict[str, tuple[str, str, str, tuple[str, ...]]] = {
    "mlp_bf16": ('''
        m = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024))
        m = m.to(DEVICE, torch.bfloat16)
        x = torch.randn(512, 1024, device=DEVICE, dtype=torch.bfloat16)
    ''', 'torch.compile(m, mode="max-autotune")', "inference", ("cuda",)),
    "mlp_ln": ('''
        class Block(torch.nn.Module):
            def __init__(self, d=512, h=2048):
                super().__init__()
                self.fc1, self.fc2, self.ln = torch.nn.Linear(d, h), torch.nn.Linear(h, d), torch.nn.LayerNorm(d)
            def forward(self, x):
                return self.ln(x + self.fc2(torch.nn.functional.gelu(self.fc1(x))))
        m = Block().to(DEVICE)
        x = torch.randn(64, 512, device=DEVICE)
    ''', "torch.compile(m)", "inference", ("cuda", "cpu")),
    "mlp_ln_cpu": ('''
        class Block(torch.nn.Module):
            def __init__(self, d=256, h=1024):
                super().__init__()
                self.fc1, self.fc2, self.ln = torch.nn.Linear(d, h), torch.nn.Linear(h, d), torch.nn.LayerNorm(d)
            def forward(self, x):
                return self.ln(x + self.fc2(torch.nn.functional.gelu(self.fc1(x))))
        m = Block().to(DEVICE)
        x = torch.randn(64, 256, device=DEVICE)
    ''', "torch.compile(m)", "inference", ("cpu",)),
    "attn_train": ('''
        class Attn(torch.nn.Module):
            def __init__(self, d=256, heads=4):
                super().__init__()
                self.h, self.qkv, self.out, self.ln = heads, torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d), torch.nn.LayerNorm(d)
            def forward(self, x):
                b, s, d = x.shape
                q, k, v = self.qkv(self.ln(x)).view(b, s, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
                a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
                return x + self.out(a.transpose(1, 2).reshape(b, s, d))
        m = Attn().to(DEVICE)
        x = torch.randn(8, 128, 256, device=DEVICE)
    ''', "torch.compile(m)", "train", ("cuda", "cpu")),
}


def script_text(name: str, device: str) -> str:
    """The script ``inductor-step`` records for model ``name``: compile it, call it 3 times (a training model:
    forward and ``.sum().backward()``)."""
    src, compile_call, mode, _ = MODELS[name]
    body = textwrap.dedent(src)
    if mode == "train":
        run = "for _ in range(3):\n    c(x).sum().backward()\n"
    else:
        run = "with torch.no_grad():\n    for _ in range(3):\n        c(x)\n"
    return f"import torch\nDEVICE = {device!r}\ntorch.manual_seed(0)\n{body}\nc = {compile_call}\n{run}"


def build(name: str, device: str) -> tuple:
    """``(m, x)`` of model ``name`` on ``device``, in this process."""
    import torch

    ns = {"torch": torch, "DEVICE": device}
    torch.manual_seed(0)
    exec(textwrap.dedent(MODELS[name][0]), ns)  # noqa: S102 - our own model definitions
    return ns["m"], ns["x"]


def _sync(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def plain_forward_ms(call, device: str, grad: bool) -> float:
    """Median ms of ``call()`` (``m(x)`` without compile) under grad mode ``grad``: do_bench on CUDA, perf_counter
    calls (0.2 s, at least 20) on CPU."""
    import torch

    with torch.set_grad_enabled(grad):
        if device == "cuda":
            from triton.testing import do_bench

            return float(do_bench(call, warmup=25, rep=100, return_mode="median"))
        for _ in range(10):
            call()
        ms, t_end = [], time.perf_counter() + 0.2
        while time.perf_counter() < t_end or len(ms) < 20:
            t0 = time.perf_counter()
            call()
            ms.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(ms)


def plain_backward_ms(m, x, device: str, calls: int = 50) -> float:
    """Median ms of ``torch.autograd.backward(out, ones)`` of ``m(x)``, the forward untimed (grads set to None
    first); CUDA events on GPU, perf_counter on CPU."""
    import torch

    ms = []
    for i in range(calls + 5):
        m.zero_grad(set_to_none=True)
        out = m(x)
        g = torch.ones_like(out)
        _sync(device)
        if device == "cuda":
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            torch.autograd.backward([out], [g])
            b.record()
            b.synchronize()
            t = a.elapsed_time(b)
        else:
            t0 = time.perf_counter()
            torch.autograd.backward([out], [g])
            t = (time.perf_counter() - t0) * 1e3
        if i >= 5:
            ms.append(t)
    return statistics.median(ms)


def ours(name: str, device: str, work: str) -> dict[str, dict]:
    """``inductor-step --headless --run`` of model ``name``'s script: the run messages by graph kind."""
    from inductor_step.session.format import graph_key, read_session

    script = os.path.join(work, f"{name}.py")
    with open(script, "w", encoding="utf-8") as f:
        f.write(script_text(name, device))
    record = os.path.join(work, f"{name}.jsonl")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), ROOT, os.path.dirname(ROOT)) if p))
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--run", "--record", record, script],
                       cwd=work, env=env, capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        raise SystemExit(f"{name}: inductor-step exited {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}")
    return {graph_key(m).split(" ", 1)[1]: m for m in read_session(record) if m.get("type") == "run"}


_GOT: list = []  # (Dynamo's graph, its first call) as compile_fx compiles them (side_by_side)


def side_by_side(name: str, device: str, repeats: int) -> dict[str, tuple[list[float], list[float]]]:
    """``{kind: (plain ms per repeat, ours ms per repeat)}`` measured in this one process, alternating: the
    Dynamo graph our run stage times as eager (captured here by tracer.adapter.install_dynamo_graph_hook, on its
    first-call inputs, run as tracer.timing.eager_user.user_eager runs it) against the module itself -- the
    same machine moment for both, which a shared box needs to see 10%."""
    import torch

    from inductor_step.tracer.adapter.dynamo_graph import install_dynamo_graph_hook
    from inductor_step.tracer.timing.eager_user import backward_round, user_eager

    got = _GOT
    got.clear()
    install_dynamo_graph_hook(lambda gm, first: _GOT.append((gm, first)))  # installs once per process
    torch._dynamo.reset()
    m, x = build(name, device)
    train = MODELS[name][2] == "train"
    c = eval(MODELS[name][1], {"torch": torch, "m": m})  # noqa: S307 - our own compile call
    for _ in range(2):
        if train:
            c(x).sum().backward()
        else:
            with torch.no_grad():
                c(x)
    gm, first = got[-1]
    seen = first()
    kinds = ("forward", "backward") if train else ("inference",)
    out: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in kinds}
    for _ in range(repeats):
        for k in kinds:
            if k == "backward":
                out[k][0].append(plain_backward_ms(m, x, device))
                out[k][1].append(statistics.median(backward_round(gm, seen["inputs"], device == "cuda")
                                                   for _ in range(5)))
            else:
                out[k][0].append(plain_forward_ms(lambda: m(x), device, grad=train))
                fn = user_eager({"gm": gm, "inputs": seen["inputs"], "grad_enabled": seen["grad_enabled"],
                                 "mode": k}, device == "cuda")["fn"]
                out[k][1].append(plain_forward_ms(fn, device, grad=train))
    return out


def main(argv: list[str] | None = None) -> int:
    import torch

    from inductor_step.tracer.timing.contention import WAIT_SHARE_LIMIT, Span

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tolerance", type=float, default=0.10)
    ap.add_argument("--models", default="")
    ap.add_argument("--in-process", action="store_true",
                    help="also compare in this one process, alternating: the captured Dynamo graph run as our eager "
                         "against the module (the 10%% check on a shared, noisy box)")
    a = ap.parse_args(argv)
    names = [n for n in (a.models.split(",") if a.models else MODELS) if a.device in MODELS[n][3]]
    print(f"device {a.device} ({torch.cuda.get_device_name() if a.device == 'cuda' else f'{torch.get_num_threads()} threads'}), "
          f"torch {torch.__version__}, {a.repeats} repeats, medians")
    bad = []
    if a.in_process:
        for name in names:
            for k, (p, o) in side_by_side(name, a.device, a.repeats).items():
                pm, om = statistics.median(p), statistics.median(o)
                ok = abs(om / pm - 1) <= a.tolerance
                print(f"{name:<11} {k:<9} in one process: plain eager {pm:9.4f} ms   ours {om:9.4f} ms "
                      f"({100 * (om / pm - 1):+6.1f}%) {'ok' if ok else 'OFF'}   "
                      f"(plain {', '.join(f'{v:.4f}' for v in p)}; ours {', '.join(f'{v:.4f}' for v in o)})", flush=True)
                if not ok:
                    bad.append(f"{name} {k} (in one process)")
    with tempfile.TemporaryDirectory(prefix="eager_baseline_") as work:
        for name in names:
            m, x = build(name, a.device)
            train = MODELS[name][2] == "train"
            kinds = ("forward", "backward") if train else ("inference",)
            plain: dict[str, list[float]] = {k: [] for k in kinds}
            got: dict[str, list[float]] = {k: [] for k in kinds}
            dec: dict[str, list[float]] = {k: [] for k in kinds}
            comp: dict[str, list[float]] = {k: [] for k in kinds}
            dropped: dict[str, int] = {k: 0 for k in kinds}
            seen_waits: dict[str, list[str]] = {k: [] for k in kinds}
            for _ in range(a.repeats):  # interleaved: plain, ours, plain, ours, ...
                waits = {}
                here = {}
                for k in kinds:
                    with Span() as sp:
                        here[k] = (plain_backward_ms(m, x, a.device) if k == "backward"
                                   else plain_forward_ms(lambda: m(x), a.device, grad=train))
                    waits[k] = (sp.result or {}).get("wait_share", 0.0) if a.device == "cpu" else 0.0
                runs = ours(name, a.device, work)
                for k in kinds:
                    r = runs.get(k) or {}
                    if r.get("eager_ms") is None:
                        raise SystemExit(f"{name} {k}: no eager time ({r.get('eager_error') or r.get('error')})")
                    ev = (r.get("verdicts") or {}).get("eager") or {}
                    eager_ok = ev.get("reliable") is not False
                    seen_waits[k].append(f"plain {100 * waits[k]:.0f}%, ours {100 * (ev.get('wait_share') or 0):.0f}%")
                    if not eager_ok or waits[k] > WAIT_SHARE_LIMIT:  # the box was busy: not compared
                        dropped[k] += 1
                        continue
                    plain[k].append(here[k])
                    got[k].append(r["eager_ms"])
                    comp[k].append(r.get("compiled_ms") or float("nan"))
                    if r.get("decomposed_ms") is not None:
                        dec[k].append(r["decomposed_ms"])
            for k in kinds:
                if not got[k]:
                    print(f"{name:<11} {k:<9} no quiet repeat: all {a.repeats} waited for a core over "
                          f"{100 * WAIT_SHARE_LIMIT:.0f}% of the time (ours or plain: {'; '.join(seen_waits[k])}); "
                          "not compared", flush=True)
                    bad.append(f"{name} {k} (busy)")
                    continue
                p, o = statistics.median(plain[k]), statistics.median(got[k])
                d = statistics.median(dec[k]) if dec[k] else float("nan")
                off = o / p - 1
                ok = abs(off) <= a.tolerance
                print(f"{name:<11} {k:<9} plain eager {p:9.4f} ms   ours {o:9.4f} ms ({100 * off:+6.1f}%) "
                      f"{'ok' if ok else 'OFF'}   compiled {statistics.median(comp[k]):9.4f} ms   "
                      f"decomposed post-grad op by op {d:9.4f} ms   "
                      f"(plain {', '.join(f'{v:.4f}' for v in plain[k])}; ours {', '.join(f'{v:.4f}' for v in got[k])}"
                      + (f"; {dropped[k]} busy repeat(s) left out" if dropped[k] else "") + ")",
                      flush=True)
                if not ok:
                    bad.append(f"{name} {k}")
    if bad:
        print(f"more than {100 * a.tolerance:.0f}% from plain eager: {', '.join(bad)}")
        return 1
    print(f"every model within {100 * a.tolerance:.0f}% of plain eager")
    return 0


if __name__ == "__main__":
    sys.exit(main())
