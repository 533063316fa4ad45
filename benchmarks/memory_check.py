"""Issue 42 on the GPU: each graph's planned peak (session.memory, from the recorded wrapper) against what the
caching allocator measured for the same graph (``torch.cuda.max_memory_allocated`` around one call, minus what was
allocated before it), and against Inductor's own estimate (recorded at the codegen stop).

    python benchmarks/memory_check.py                      # cuda: a transformer layer's training step
    python benchmarks/memory_check.py --device cpu         # the flow only: nothing measured on CPU

The outer run records ``--child`` under ``inductor-step --headless --record``; the child compiles the step, runs it
once (compiles forward and backward), then runs it again measuring the forward (the compiled call) and the
backward (``loss.backward()``: the compiled backward, then AccumulateGrad) each from a reset peak, and writes the
figures beside the session.  Expect the measured figure a little above the plan: the allocator rounds each block
up to 512 bytes, cuBLAS / attention workspaces are not in the wrapper, and the backward's figure includes
autograd's own buffers.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile


def child(device: str, out: str) -> None:
    import torch  # noqa: PLC0415

    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048, dropout=0.0,
                                             batch_first=True).to(device)
    x = torch.randn(16, 256, 512, device=device)
    step = torch.compile(lambda x: layer(x).square().mean())
    step(x).backward()  # compiles the forward, then the backward
    got: dict[str, float | None] = {"forward": None, "backward": None}
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        loss = step(x)
        torch.cuda.synchronize()
        got["forward"] = torch.cuda.max_memory_allocated() - base
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        loss.backward()
        torch.cuda.synchronize()
        got["backward"] = torch.cuda.max_memory_allocated() - base
    with open(out, "w") as f:
        json.dump(got, f)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--child", metavar="OUT")
    a = ap.parse_args()
    if a.child:
        child(a.device, a.child)
        return
    d = tempfile.mkdtemp(prefix="memory_check_")
    session_path, measured = os.path.join(d, "s.jsonl"), os.path.join(d, "measured.json")
    subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--record", session_path, os.path.abspath(__file__),
                    "--device", a.device, "--child", measured], check=True, cwd=d)
    from inductor_step import session  # noqa: PLC0415
    from inductor_step.session.memory import fmt_bytes  # noqa: PLC0415

    s = session.load(session_path)
    with open(measured) as f:
        got = json.load(f)
    print(f"session {session_path}; device {s.header.get('device_name') or s.header.get('device')}")
    print(f"{'graph':<18} {'planned peak':>13} {'Inductor est.':>14} {'measured':>12} {'measured/plan':>14}")
    for g in s.graphs:
        p = g.memory().plan
        if p is None:
            continue
        m = got.get(g.kind)
        ratio = f"{m / p.peak:.3f}" if m and p.peak else "-"
        print(f"{g.key:<18} {fmt_bytes(p.peak):>13} {fmt_bytes(p.inductor_estimate):>14} "
              f"{fmt_bytes(m) if m is not None else 'not measured':>12} {ratio:>14}")
    print("planned: session.memory (the wrapper's empty_strided / del / # reuse); measured: "
          "torch.cuda.max_memory_allocated() minus memory_allocated() before the call")


if __name__ == "__main__":
    main()
