"""Do CPU timings know when they were contended?  Times small compiled graphs with
:func:`tracer.timing.time_graph` (what the run stage does) and with a plain ``perf_counter`` loop over the
compiled module's ``call``, on a quiet box, with one core of the box kept busy and with every core kept busy
(``sh -c 'while :; do :; done'`` children started here), and prints per run: the compiled time, the plain
loop's median, their ratio, the verdict and the measured run-queue wait share, and /proc/loadavg.

    python benchmarks/cpu_contention.py [--repeats 3] [--conditions quiet,one,all]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch


def graphs() -> list[tuple[str, str]]:
    """(name, output-code path) of a few small compiled graphs (inference, CPU)."""
    from torch._inductor.utils import run_and_get_code

    class LN(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(32, 64)
            self.ln = torch.nn.LayerNorm(64)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.gelu(self.ln(self.lin(x))) * 2

    class Conv(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c = torch.nn.Conv2d(16, 32, 3, padding=1)
            self.bn = torch.nn.BatchNorm2d(32)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.bn(self.c(x))).sum(dim=1)

    out = []
    d = tempfile.mkdtemp(prefix="cpu_contention_")
    for name, m, x in (("linear+layernorm+gelu [2,24,32]", LN().eval(), torch.randn(2, 24, 32)),
                       ("conv+bn+relu+sum [8,16,32,32]", Conv().eval(), torch.randn(8, 16, 32, 32)),
                       ("mlp 256x1024 [64,256]", torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(),
                                                                      torch.nn.Linear(1024, 256)).eval(),
                        torch.randn(64, 256))):
        torch._dynamo.reset()
        with torch.no_grad():
            _, codes = run_and_get_code(torch.compile(m), x)
        path = os.path.join(d, f"g{len(out)}.py")
        with open(path, "w") as f:
            f.write(codes[-1])
        out.append((name, path))
    return out


def plain_loop_ms(path: str, seconds: float = 0.5) -> float:
    """Median ms per ``call(get_args())`` in a plain perf_counter loop (batches of calls)."""
    from inductor_step.tracer import adapter

    mod = adapter.load_output_module(path)
    args = list(mod.get_args())
    with torch.no_grad():
        for _ in range(5):
            mod.call(list(args))
        one = []
        t_end = time.perf_counter() + seconds
        while time.perf_counter() < t_end:
            t0 = time.perf_counter()
            mod.call(list(args))
            one.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(one)


def busy(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(n)]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--conditions", default="quiet,one,all")
    a = p.parse_args()
    from inductor_step.tracer.timing import time_graph

    gs = graphs()
    cpus = len(os.sched_getaffinity(0))
    print(f"machine: {os.cpu_count()} CPUs ({cpus} usable), torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"nice {os.nice(0)}")
    summary: dict[tuple[str, str], list[tuple[float, float, bool, float]]] = {}
    for cond in a.conditions.split(","):
        kids = busy({"quiet": 0, "one": max(cpus // 2, 1), "all": cpus}[cond])
        try:
            time.sleep(0.5)
            for name, path in gs:
                for r in range(a.repeats):
                    res = time_graph(path, None, "cpu")
                    plain = plain_loop_ms(path)
                    v = res.get("verdicts", {}).get("compiled", {})
                    with open("/proc/loadavg") as f:
                        load = f.read().split()[0]
                    shares = res["graph_rounds"].get("compiled_wait_shares") or []
                    summary.setdefault((cond, name), []).append((res["compiled_ms"], plain, bool(res.get("reliable")),
                                                                 v.get("wait_share") or 0.0))
                    print(f"{cond:5} {name:34} compiled {res['compiled_ms']:.4f} ms  plain loop {plain:.4f} ms  "
                          f"ratio {res['compiled_ms'] / plain:.2f}  {'RELIABLE' if res.get('reliable') else 'FLAGGED '}"
                          f"  wait {100 * (v.get('wait_share') or 0):.1f}% (rounds {', '.join(f'{100 * s:.0f}' for s in shares)})"
                          f"  kernels wait {100 * (res.get('verdicts', {}).get('kernels', {}).get('wait_share') or 0):.0f}%"
                          f"  loadavg {load}", flush=True)
        finally:
            for k in kids:
                k.kill()
                k.wait()
    print("\nsummary (medians over the repeats): condition, graph, compiled ms, plain loop ms, compiled / plain, "
          "compiled / quiet compiled, flagged, wait share")
    quiet = {n: statistics.median(x[0] for x in v) for (c, n), v in summary.items() if c == "quiet"}
    for (cond, name), v in summary.items():
        c, p_ = statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)
        q = f"{c / quiet[name]:.2f}" if name in quiet else "-"
        print(f"  {cond:5} {name:34} {c:9.4f} {p_:9.4f} {c / p_:6.2f} {q:>6}  flagged {sum(not x[2] for x in v)}/{len(v)}"
              f"  wait {100 * statistics.median(x[3] for x in v):.0f}%")


if __name__ == "__main__":
    sys.exit(main())
