"""The script's-call figure against torch.utils.benchmark of the script's own calls, on CPU, side by side.

    python benchmarks/script_call_cpu.py [--rounds 3] [--script benchmarks/scripts/flex_block.py]

Each round runs, one after the other: the script with ``--bench`` (no inductor-step: ``torch.utils.benchmark``
of the compiled call ``c(x, mask)`` and of the module ``m(x, mask)``, two threads, three medians each), then
``inductor-step --headless --run`` of the same script (OMP_NUM_THREADS=2), whose run messages carry
``script_call`` (tracer/timing/script_call.py).  Prints each round's figures and their ratios, and the medians of
the ratios; a figure our verdicts call not reliable is marked.  Results: BENCHMARKS.md, "Session 34: the script's
call on CPU".
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def plain(script: str, env: dict[str, str]) -> tuple[float, float]:
    """(compiled call ms, eager module ms): the medians of the script's own three ``--bench`` rounds."""
    out = subprocess.run([sys.executable, script, "--bench"], env=env, capture_output=True, text=True, timeout=600)
    rows = re.findall(r"compiled call ([\d.]+) ms, eager module ([\d.]+) ms", out.stdout)
    if not rows:
        raise SystemExit(f"--bench printed no figures:\n{out.stdout[-1000:]}\n{out.stderr[-2000:]}")
    return statistics.median(float(c) for c, _ in rows), statistics.median(float(e) for _, e in rows)


def ours(script: str, env: dict[str, str], where: str) -> dict:
    """The ``script_call`` figure of the script's recorded run (the first graph that has a timed one)."""
    from inductor_step.session.format import read_session  # noqa: PLC0415

    record = os.path.join(where, "s.jsonl")
    subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--run", "--record", record, script],
                   env=env, capture_output=True, text=True, timeout=900, cwd=where)
    for m in read_session(record):
        fig = m.get("script_call") if m.get("type") == "run" else None
        if fig and isinstance(fig.get("compiled_ms"), (int, float)):
            return fig
    raise SystemExit("no timed script_call in the recording")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--script", default=os.path.join(ROOT, "benchmarks", "scripts", "flex_block.py"))
    args = p.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="2",
               PYTHONPATH=os.pathsep.join(x for x in (os.environ.get("PYTHONPATH"), ROOT) if x))
    c_ratios, e_ratios = [], []
    for r in range(args.rounds):
        pc, pe = plain(args.script, env)
        with tempfile.TemporaryDirectory() as d:
            fig = ours(args.script, env, d)
        bad = [w for w, v in (fig.get("verdicts") or {}).items() if v.get("reliable") is False]
        c_ratios.append(fig["compiled_ms"] / pc)
        e_ratios.append(fig["eager_ms"] / pe)
        print(f"round {r}: compiled call ours {fig['compiled_ms']:.4f} / plain {pc:.4f} ms = {c_ratios[-1]:.3f}; "
              f"eager ours {fig['eager_ms']:.4f} / plain {pe:.4f} ms = {e_ratios[-1]:.3f}"
              + (f"  (ours not reliable: {', '.join(bad)})" if bad else ""), flush=True)
    print(f"median ratio, compiled call: {statistics.median(c_ratios):.3f}; eager: {statistics.median(e_ratios):.3f} "
          f"({args.rounds} rounds; load average {os.getloadavg()[0]:.2f} at the end)")


if __name__ == "__main__":
    main()
