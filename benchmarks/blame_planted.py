"""Blame on real planted causes, each a real ``inductor-step --headless --blame`` run: what it names, in how many
steps and seconds.  Run by hand (each case costs a dozen compiles; CI runs only the relu case, tests/e2e/test_blame.py).

Cases: torch's own fault injection (``cpp.inject_relu_bug_TESTING_ONLY = "accuracy"``: the lowering of relu), a custom
post-grad pass that rewrites add into sub (the pass, and the FX node it rewrote), aten.cos lowered as aten.sin (the
lowering of cos), a pattern in torch's own post-grad pass that rewrites cos into sin (the pass application and the FX
nodes it rewrote), cos lowered wrong under sin's backward only (the backward's lowering), and ``cpp.simdlen = 1`` for
speed (the setting, where the machine is quiet enough to tell; on a busy one every variant is noise and nothing is
named).

Usage: python benchmarks/blame_planted.py [numerics|speed|all]"""

import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.dirname(ROOT))

CASES = [  # (name, script, --blame, what the verdict must name)
    ("relu fault injection", os.path.join(ROOT, "tests", "scripts", "blame_relu.py"), "numerics", "lowerings #1: relu"),
    ("custom post-grad pass", os.path.join(HERE, "blame_cases", "custom_pass.py"), "numerics",
     "post_grad_custom_post_pass (AddToSub); rewrote add"),
    ("wrong lowering of cos", os.path.join(HERE, "blame_cases", "wrong_lowering.py"), "numerics", ": cos"),
    ("a torch pass rewrites cos", os.path.join(ROOT, "tests", "scripts", "blame_torch_pass.py"), "numerics",
     "post_grad_passes #"),
    ("cos lowered wrong, backward", os.path.join(ROOT, "tests", "scripts", "blame_backward.py"), "numerics",
     ": cos"),
    ("cpp.simdlen = 1", os.path.join(ROOT, "tests", "scripts", "blame_slow.py"), "speed", "cpp.simdlen=None"),
]


def main() -> None:
    from inductor_step.session import blame as sb
    from inductor_step.session.format import read_session

    which = sys.argv[1] if len(sys.argv) > 1 else "all"
    rows = []
    for name, script, kind, want in CASES:
        if which not in ("all", kind):
            continue
        rec = os.path.join(tempfile.mkdtemp(), "s.jsonl")
        t = time.monotonic()
        subprocess.run([sys.executable, "-m", "inductor_step", "--headless", f"--blame={kind}", "--record", rec,
                        script], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tempfile.gettempdir(), check=False)
        wall = time.monotonic() - t
        runs = sb.runs(m for m in read_session(rec) if m.get("type") == "blame")
        v = runs[-1].verdict if runs else None
        named = (v.cause() + ("; " + v.what if v and v.what and v.what not in v.cause() else "")) if v and v.found \
            else (v.text if v else "no verdict")
        rows.append((name, want in named, named, v.steps if v else 0, v.seconds if v else 0.0, wall))
    print(f"{'case':<24} {'named':<6} {'steps':>5} {'search s':>9} {'run s':>7}  verdict")
    for name, ok, named, steps, secs, wall in rows:
        print(f"{name:<24} {'yes' if ok else 'NO':<6} {steps:>5} {secs:>9.1f} {wall:>7.1f}  {named[:110]}")


if __name__ == "__main__":
    main()
