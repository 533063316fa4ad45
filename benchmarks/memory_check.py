"""Memory plan vs the allocator on the GPU: each graph's planned figure (session.memory) against plain torch.compile's ``torch.cuda.max_memory_allocated``, measured in a process of its own.

    python benchmarks/memory_check.py                          # nanogpt and hf_gpt2, cuda
    python benchmarks/memory_check.py --models nanogpt --device cpu   # the flow only: nothing measured on CPU

Per model (benchmarks/acceptance_models.py's ``build``: nanoGPT training, GPT-2 from a config; random weights,
no download) two processes:

* the recording: ``inductor-step --headless --record`` of this file with ``--child MODEL``: three training steps of
  ``torch.compile(model)`` (grads set to None, forward, ``loss.backward()``);
* the reference, where inductor-step is never imported: the same steps under plain ``torch.compile``, then two more
  steps measured: the forward call and ``loss.backward()`` whole, then each compiled graph's call, each from a reset
  peak, as ``torch.cuda.max_memory_allocated()`` minus ``torch.cuda.memory_allocated()`` just before the call.

Both sides measure the bytes allocated above what was resident when the call began: the plan's figure is
``Plan.high_water_outputs_dropped`` (its own buffers' live bytes, less the caller's storages the graph frees by
``del``: a backward's saved activations, the logits among them, since these steps keep only the loss).  ``peak``
(the graph's own buffers, nothing freed counted) is printed beside it.
Each graph is compared with its own call in the measured step (``CompiledFxGraph.__call__`` wrapped in the reference
process: the same phase and number of inputs, in order), so a model Dynamo split into several graphs (GPT-2's loss)
compares graph by graph.
The allocator rounds each block up to 512 bytes; the backward's call also holds autograd's own grad of the loss.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))


def steps(model_name: str, device: str, n: int) -> tuple:
    """``(model, compiled, loss_of)`` after ``n`` compiled training steps."""
    import torch  # noqa: PLC0415

    from acceptance_models import build  # noqa: PLC0415

    model, loss_of = build(model_name, device, os.environ.get("NANOGPT_DIR"))
    compiled = torch.compile(model)
    for _ in range(n):
        model.zero_grad(set_to_none=True)
        loss_of(compiled).backward()
    return model, compiled, loss_of


def measure(model_name: str, out: str) -> None:
    """The reference: plain torch.compile, two more steps measured (see the module docstring): one with the forward
    call and ``loss.backward()`` whole, one with each compiled graph's call on its own (``CompiledFxGraph.__call__``,
    wrapped here for that step only: phase, number of inputs, peak above the call's start)."""
    import torch  # noqa: PLC0415
    from torch._inductor.output_code import CompiledFxGraph  # noqa: PLC0415

    model, compiled, loss_of = steps(model_name, "cuda", 3)
    got: dict = {"calls": []}
    phase: list[str] = []
    real = CompiledFxGraph.__call__

    def call(self, inputs):  # type: ignore[no-untyped-def]
        if not phase:
            return real(self, inputs)
        n = len(inputs)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        out = real(self, inputs)
        torch.cuda.synchronize()
        got["calls"].append({"phase": phase[0], "inputs": n, "peak": torch.cuda.max_memory_allocated() - base})
        return out

    CompiledFxGraph.__call__ = call
    for per_call in (False, True):  # one step measured whole, then one graph call by graph call
        model.zero_grad(set_to_none=True)
        for which in ("forward", "backward"):
            phase[:] = [which] if per_call else []
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            if which == "forward":
                loss = loss_of(compiled)
            else:
                loss.backward()
            torch.cuda.synchronize()
            if not per_call:
                got[which] = torch.cuda.max_memory_allocated() - base
        phase[:] = []
    got["inductor_step_imported"] = any(m.startswith("inductor_step") for m in sys.modules)
    with open(out, "w") as f:
        json.dump(got, f)


def check(model_name: str, device: str, d: str) -> list[str]:
    """One model's rows: record, measure apart, compare."""
    session_path, measured = os.path.join(d, f"{model_name}.jsonl"), os.path.join(d, f"{model_name}.json")
    subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--record", session_path,
                    os.path.abspath(__file__), "--child", model_name, "--device", device], check=True, cwd=d,
                   stdout=subprocess.DEVNULL)
    got: dict = {}
    if device == "cuda":
        subprocess.run([sys.executable, os.path.abspath(__file__), "--measure", model_name, "--out", measured],
                       check=True, cwd=d)
        with open(measured) as f:
            got = json.load(f)
    from inductor_step import session  # noqa: PLC0415
    from inductor_step.session.memory import fmt_bytes  # noqa: PLC0415

    s = session.load(session_path)
    plans = [(g, g.memory().plan) for g in s.graphs]
    plans = [(g, p) for g, p in plans if p is not None]
    calls = list(got.get("calls") or [])
    rows = []
    for g, p in plans:  # each graph's call in the measured step: the same phase and number of inputs, in order
        c = next((c for c in calls if c["phase"] == g.kind and c["inputs"] == len(p.inputs)), None)
        if c is not None:
            calls.remove(c)
        m = c["peak"] if c is not None else None
        hw = p.high_water_outputs_dropped  # the reference keeps only the loss: the saved logits are freed too
        ratio = f"{m / hw:.3f}" if m and hw else "-"
        freed = p.released + p.released_outputs
        rows.append(f"{model_name:<8} {g.key:<16} {fmt_bytes(p.peak):>10} {fmt_bytes(freed):>10} "
                    f"{fmt_bytes(hw):>11} {fmt_bytes(m) if m is not None else 'not measured':>12} "
                    f"{ratio:>8} {'ok' if m and hw and abs(m / hw - 1) <= 0.05 else '-':>4}")
    if device == "cuda":
        rows.append(f"{model_name}: the step measured whole: forward {fmt_bytes(got.get('forward'))}, backward "
                    f"{fmt_bytes(got.get('backward'))}; {len(calls)} compiled call(s) matched no graph")
    if got.get("inductor_step_imported"):
        rows.append(f"{model_name}: the reference process imported inductor_step: not a plain reference")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--models", default="nanogpt,hf_gpt2")
    ap.add_argument("--child", metavar="MODEL", help="(the recorded script) three compiled training steps")
    ap.add_argument("--measure", metavar="MODEL", help="(the reference) plain torch.compile, measured")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.child:
        steps(a.child, a.device, 3)
        return
    if a.measure:
        measure(a.measure, a.out)
        return
    d = tempfile.mkdtemp(prefix="memory_check_")
    print(f"{'model':<8} {'graph':<16} {'peak':>10} {'freed':>10} {'high water':>11} {'measured':>12} "
          f"{'ratio':>8} {'5%':>4}")
    for name in a.models.split(","):
        for row in check(name, a.device, d):
            print(row, flush=True)
    print(f"sessions in {d}. peak: the graph's own buffers (session.memory, the wrapper's empty_strided / del / "
          "# reuse); freed: the caller's storages the graph frees (saved activations); high water = max(live - "
          "freed) over the statements; measured: plain torch.compile's max_memory_allocated() minus "
          "memory_allocated() before the call, in its own process")


if __name__ == "__main__":
    main()
