"""Real models for the GPU acceptance run (benchmarks/gpu_acceptance.py), one training step per call.

As a script it is what ``inductor-step --headless --run`` records::

    python benchmarks/acceptance_models.py MODEL --mode MODE [--steps N] [--nanogpt-dir DIR]

and, with ``--reference OUT.json``, the reference that owes nothing to inductor-step: in a process where
inductor-step is never imported, the same model and inputs

* plain eager (no ``torch.compile``) under ``triton.testing.do_bench``: the module's call with grad enabled
  (``eager_fwd_*``: the call the script makes, what inductor-step's script's-call figure repeats; for timm, whose
  loss is computed outside the module, the call with the loss too, ``eager_fwd_loss_*``), and the forward plus
  ``loss.backward()`` (``eager_step_*``) (ms, median, L2 flushed);
* the compiled step under ``torch.profiler`` (CUDA activity): each GPU kernel's device time per launch (us);
* the compiled module's call alike (``compiled_fwd_*``, and ``compiled_fwd_loss_*`` for timm).

MODEL: ``nanogpt`` (karpathy/nanoGPT's ``model.py`` from ``--nanogpt-dir``, else examples/real/nanogpt_train.py's
GPT), ``hf_gpt2`` (transformers' ``GPT2LMHeadModel`` from a config), ``timm`` (``timm.create_model("resnet10t")``).
MODE: ``default``, ``reduce-overhead``, ``max-autotune``, ``max-autotune-no-cudagraphs``.  Random weights and
data, no download.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Callable

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build(name: str, device: str, nanogpt_dir: str | None,
          scale: int = 1) -> tuple[torch.nn.Module, Callable[[torch.nn.Module], torch.Tensor]]:
    """``(model, loss_of)``: the model in training mode on ``device`` and a function giving the loss of one
    forward of a model (the eager one or its compiled wrapper) on fixed random inputs; ``scale`` multiplies the
    batch (16 sequences of 256 tokens for the GPTs, 32 images of 128x128 for timm): at 8 an H200 step is bound by
    the GPU rather than by the host's Python, whose speed varies between processes on the device machine."""
    model, loss_of, _call = build_with_call(name, device, nanogpt_dir, scale)
    return model, loss_of


def build_with_call(name: str, device: str, nanogpt_dir: str | None, scale: int = 1) -> tuple[
        torch.nn.Module, Callable[[torch.nn.Module], torch.Tensor], Callable[[torch.nn.Module], Any]]:
    """``(model, loss_of, call_of)``: :func:`build`'s two and ``call_of(m)``, the module's call alone as the
    script makes it (what ``torch.compile``'s wrapper runs, and what inductor-step's script's-call figure
    repeats): the GPTs compute their loss inside the call, so ``loss_of`` is ``call_of`` and an attribute read;
    timm's ``cross_entropy`` runs outside it (two more kernels and their autograd nodes, eager)."""
    torch.manual_seed(0)
    if name == "nanogpt":
        if nanogpt_dir and os.path.exists(os.path.join(nanogpt_dir, "model.py")):
            sys.path.insert(0, nanogpt_dir)
            from model import GPT, GPTConfig  # noqa: PLC0415 - karpathy/nanoGPT's model.py
        else:
            sys.path.insert(0, os.path.join(ROOT, "examples", "real"))
            from nanogpt_train import GPT, GPTConfig  # noqa: PLC0415
        cfg = GPTConfig(block_size=256, vocab_size=4096, n_layer=2, n_head=6, n_embd=384, dropout=0.0, bias=True)
        model = GPT(cfg).to(device).train()
        x = torch.randint(0, cfg.vocab_size, (16 * scale, 256), device=device)
        y = torch.randint(0, cfg.vocab_size, (16 * scale, 256), device=device)
        return model, lambda m: m(x, y)[1], lambda m: m(x, y)
    if name == "hf_gpt2":
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from transformers import GPT2Config, GPT2LMHeadModel  # noqa: PLC0415

        cfg = GPT2Config(n_layer=2, n_embd=384, n_head=6, vocab_size=4096, n_positions=256, resid_pdrop=0.0,
                         embd_pdrop=0.0, attn_pdrop=0.0)
        model = GPT2LMHeadModel(cfg).to(device).train()
        ids = torch.randint(0, cfg.vocab_size, (16 * scale, 256), device=device)
        return model, lambda m: m(input_ids=ids, labels=ids).loss, lambda m: m(input_ids=ids, labels=ids)
    if name == "timm":
        import timm  # noqa: PLC0415

        model = timm.create_model("resnet10t", num_classes=10).to(device).train()
        img = torch.randn(32 * scale, 3, 128, 128, device=device)
        target = torch.randint(0, 10, (32 * scale,), device=device)
        return model, lambda m: torch.nn.functional.cross_entropy(m(img), target), lambda m: m(img)
    raise SystemExit(f"unknown model {name!r}: nanogpt, hf_gpt2 or timm")


def compile_kwargs(mode: str) -> dict[str, Any]:
    """``torch.compile`` keyword arguments for MODE (``default`` gives none)."""
    return {} if mode == "default" else {"mode": mode}


def step_fn(model: torch.nn.Module, loss_of: Callable) -> Callable[[], None]:
    """One training step: grads dropped, forward, ``loss.backward()`` (no optimizer: the graphs are the step)."""
    def step() -> None:
        model.zero_grad(set_to_none=True)
        loss_of(model).backward()
    return step


def reference(args: argparse.Namespace) -> dict[str, Any]:
    """The reference figures (see the module docstring); every time in ms unless named ``_us``."""
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415
    from triton.testing import do_bench  # noqa: PLC0415

    model, loss_of, call_of = build_with_call(args.model, "cuda", args.nanogpt_dir, args.scale)
    loss_outside = args.model == "timm"  # the GPTs' loss is inside the module's call
    out: dict[str, Any] = {"model": args.model, "mode": args.mode, "torch": torch.__version__,
                           "device_name": torch.cuda.get_device_name(0), "loss_outside_call": loss_outside}
    eager_step = step_fn(model, loss_of)
    # three do_bench runs each, their median: a launch-bound eager step varies from run to run
    out["eager_fwd_runs_ms"] = [do_bench(lambda: call_of(model), return_mode="median") for _ in range(3)]
    if loss_outside:
        out["eager_fwd_loss_runs_ms"] = [do_bench(lambda: loss_of(model), return_mode="median") for _ in range(3)]
    out["eager_step_runs_ms"] = [do_bench(eager_step, return_mode="median") for _ in range(3)]
    for key in [k for k in out if k.endswith("_runs_ms")]:
        out[key.replace("_runs_ms", "_ms")] = sorted(out[key])[1]
    if args.plain_only:
        return out
    compiled = torch.compile(model, **compile_kwargs(args.mode))
    cstep = step_fn(model, lambda m: loss_of(compiled))

    for _ in range(args.steps):
        cstep()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(10):
            cstep()
        torch.cuda.synchronize()
    kernels: dict[str, list[float]] = {}
    for e in prof.events():
        if getattr(e, "device_type", None) is not None and str(e.device_type).endswith("CUDA"):
            us = getattr(e, "device_time", None) or getattr(e, "cuda_time", 0.0)
            kernels.setdefault(e.name, []).append(float(us))
    out["profiler_us"] = kernels
    out["compiled_step_ms"] = do_bench(cstep, return_mode="median")

    def cfwd(fn: Callable[[torch.nn.Module], Any]) -> Callable[[], None]:
        def call() -> None:  # the compiled forward alone, each call a new CUDA-graph step as a training loop's
            torch.compiler.cudagraph_mark_step_begin()
            fn(compiled)
        return call
    # the module's call alone (what ours times), and for timm the call with the loss after it, alternating: a
    # launch-bound compiled forward (timm x8) read 2.46-4.14 ms between do_bench runs of one process
    for _ in range(3):
        out.setdefault("compiled_fwd_runs_ms", []).append(do_bench(cfwd(call_of), return_mode="median"))
        if loss_outside:
            out.setdefault("compiled_fwd_loss_runs_ms", []).append(do_bench(cfwd(loss_of), return_mode="median"))
    for key in ("compiled_fwd_runs_ms", "compiled_fwd_loss_runs_ms"):
        if key in out:
            out[key.replace("_runs_ms", "_ms")] = sorted(out[key])[1]
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", choices=["nanogpt", "hf_gpt2", "timm"])
    p.add_argument("--mode", default="default",
                   choices=["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"])
    p.add_argument("--steps", type=int, default=6, help="compiled training steps (the agent profiles calls 2+)")
    p.add_argument("--nanogpt-dir", default=os.environ.get("NANOGPT_DIR"))
    p.add_argument("--scale", type=int, default=1, help="batch multiplier (8: a GPU-bound step on an H200)")
    p.add_argument("--reference", metavar="OUT.json", help="write the reference figures instead (no inductor-step)")
    p.add_argument("--plain-only", action="store_true", help="with --reference: plain eager only (no compile, no profiler)")
    args = p.parse_args()
    if args.reference:
        with open(args.reference, "w", encoding="utf-8") as f:
            json.dump(reference(args), f)
        return
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model, loss_of = build(args.model, device, args.nanogpt_dir, args.scale)
    compiled = torch.compile(model, **compile_kwargs(args.mode))
    step = step_fn(model, lambda m: loss_of(compiled))
    for _ in range(args.steps):
        step()
    if device == "cuda":
        torch.cuda.synchronize()
    print(f"{args.model} {args.mode}: {args.steps} steps")


if __name__ == "__main__":
    main()
