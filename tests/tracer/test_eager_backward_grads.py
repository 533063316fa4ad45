"""The eager backward starts where the script's ``loss.backward()`` does: from the outputs the script's backward
reached (a graph cut by a graph break returns its logits and key/value caches, and the loss reaches the logits
only), else from the graph's scalar output (the loss), not from every output that requires grad (a model
returning ``(logits, loss)`` would otherwise get a gradient of its logits that the script never computes)."""

from __future__ import annotations

import torch

from inductor_step.tracer.adapter.dynamo_graph import install_dynamo_graph_hook
from inductor_step.tracer.timing.eager_user import backward_round, user_eager


class Head(torch.nn.Module):
    """logits from one weight, the loss from another: a backward from the loss alone never reaches ``proj``."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(16, 32)
        self.score = torch.nn.Linear(16, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.proj(x), self.score(x).square().mean()


def test_backward_round_goes_back_from_the_loss_only():
    import torch._inductor.compile_fx as cfx

    graphs: list = []
    orig = cfx.compile_fx
    try:  # the hook taken off again after: another test installs its own
        assert install_dynamo_graph_hook(lambda gm, first_call: graphs.append((gm, first_call)))
        torch._dynamo.reset()
        m = Head()
        logits, loss = torch.compile(m)(torch.randn(4, 16))
        loss.backward()
    finally:
        cfx.compile_fx = orig
    gm, first_call = graphs[-1]
    seen = first_call()
    assert seen.get("inputs") is not None, seen
    assert seen.get("grad_used") == {1}, seen.get("grad_used")  # the loss, second of (logits, loss)
    eager = user_eager({"gm": gm, "inputs": seen["inputs"], "mode": "backward", "grad_used": seen["grad_used"],
                        "outputs": 2}, cuda=False)
    assert "round" in eager, eager
    assert "from the 1 of its 2 outputs that the script's own backward reached" in eager["how"], eager["how"]
    m.zero_grad(set_to_none=True)
    assert backward_round(gm, seen["inputs"], cuda=False) > 0
    # the loss's weight got its gradient; the logits' weight, which the loss does not read, none
    assert m.score.weight.grad is not None
    assert m.proj.weight.grad is None


class Body(torch.nn.Module):
    """A model body that returns its logits and a cache beside them, as Hugging Face's GPT-2 does (the key/value
    caches): no scalar output, and the script's loss, computed outside, reads the logits alone."""

    def __init__(self) -> None:
        super().__init__()
        self.head = torch.nn.Linear(16, 32)
        self.cache = torch.nn.Linear(16, 8)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.head(x), self.cache(x)


def test_backward_round_goes_back_from_what_the_scripts_loss_reached():
    import torch._inductor.compile_fx as cfx

    graphs: list = []
    orig = cfx.compile_fx
    try:
        assert install_dynamo_graph_hook(lambda gm, first_call: graphs.append((gm, first_call)))
        torch._dynamo.reset()
        m = Body()
        for _ in range(2):
            logits, _cache = torch.compile(m)(torch.randn(4, 16))
            logits.square().mean().backward()
    finally:
        cfx.compile_fx = orig
    gm, first_call = graphs[-1]
    seen = first_call()
    assert seen.get("grad_used") == {0}, seen.get("grad_used")
    dyn = {"gm": gm, "inputs": seen["inputs"], "mode": "backward", "grad_used": seen["grad_used"], "outputs": 2}
    eager = user_eager(dyn, cuda=False)
    m.zero_grad(set_to_none=True)
    eager["round"]()
    assert m.head.weight.grad is not None
    assert m.cache.weight.grad is None  # the cache's weight: no gradient, as in the script's step
    m.zero_grad(set_to_none=True)  # without what the script reached: a backward from both outputs
    backward_round(gm, seen["inputs"], cuda=False)
    assert m.cache.weight.grad is not None


def test_gpu_rounds_whose_threads_waited_for_a_core_are_flagged():
    """A launch-bound GPU figure (an eager backward) is as slow as the CPU launching it: GPU rounds are judged by
    the run-queue wait (schedstat) like CPU rounds; the timing thread's CPU time (blocked in CUDA syncs there)
    is no measure on the GPU."""
    from inductor_step.tracer.timing.harness import settled

    busy = {"source": "schedstat", "run_ms": 60.0, "wait_ms": 40.0, "wall_ms": 100.0, "wait_share": 0.4}
    quiet = dict(busy, wait_ms=0.5, wait_share=0.0083)
    rounds = {"compiled_ms": 2.7, "eager_ms": 4.8, "rounds_stable": True, "compiled_wait": quiet, "eager_wait": busy}
    out = settled(rounds, 2.7, 2.9, cuda=True)
    assert out["contended"] and not out["reliable"]
    assert "eager time not reliable" in out["unreliable"]
    out = settled(dict(rounds, eager_wait=quiet), 2.7, 2.9, cuda=True)
    assert out["reliable"] and not out["contended"]
    blocked = dict(busy, source="thread_cpu")  # a thread blocked in cudaEventSynchronize, not waiting for a core
    out = settled(dict(rounds, eager_wait=blocked), 2.7, 2.9, cuda=True)
    assert out["reliable"], out
