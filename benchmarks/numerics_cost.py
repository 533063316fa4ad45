"""What the numerics comparison costs on a real model: ``inductor-step --headless --numerics`` on a script,
then per graph the comparison's wall time, the eager values it held at most (``kept_bytes``), the compiled
buffers it saw (``buffer_bytes``, each once per write) and how much it raised the agent's peak resident
memory (CPU, ``maxrss_growth_bytes``), read back from the recorded session; also the whole run's wall time
against the same run without ``--numerics`` (run one after the other, so the difference is the comparison).

Usage: python benchmarks/numerics_cost.py [SCRIPT [SCRIPT ARGS...]]
(default: examples/real/nanogpt_train.py)."""

import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.dirname(ROOT))


def run(args: list[str], record: str) -> float:
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--record", record, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
                   cwd=tempfile.gettempdir())
    return time.monotonic() - t0


def main() -> None:
    from inductor_step.session.store import Store, load_session

    script = sys.argv[1:] or [os.path.join(ROOT, "examples", "real", "nanogpt_train.py")]
    script = [os.path.abspath(script[0])] + script[1:]
    with tempfile.TemporaryDirectory() as d:
        plain = run(script, os.path.join(d, "plain.jsonl"))
        t0 = time.monotonic()
        subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--numerics", "--record",
                        os.path.join(d, "num.jsonl"), *script], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False, cwd=d)
        with_num = time.monotonic() - t0
        s = Store.of(load_session(os.path.join(d, "num.jsonl")))
    print(f"{' '.join(os.path.basename(a) for a in script)}: whole run {plain:.1f} s, with --numerics {with_num:.1f} s")
    print(f"{'graph':<22} {'s':>7} {'buffers':>8} {'compared':>8} {'kept MiB':>9} {'buffers MiB':>11} "
          f"{'maxrss+ MiB':>11}  answer")
    from inductor_step.session.numerics import short_answer

    for key, m in s.numerics.items():
        if m.get("failed"):
            print(f"{key:<22} failed: {m.get('error')}")
            continue
        sm = m.get("summary") or {}
        mib = 1 / (1 << 20)
        print(f"{key:<22} {m.get('seconds', 0):>7.2f} {sm.get('buffers', 0):>8} {sm.get('compared', 0):>8} "
              f"{m.get('kept_bytes', 0) * mib:>9.1f} {m.get('buffer_bytes', 0) * mib:>11.1f} "
              f"{m.get('maxrss_growth_bytes', 0) * mib:>11.1f}  {short_answer(m)}")
        print(f"{'':<22} phases (s): " + ", ".join(f"{k} {v:.2f}" for k, v in (m.get("phases_s") or {}).items()))


if __name__ == "__main__":
    main()
