"""Inductor's own random numbers, replayed for numerics' eager reference (dropout).

With ``fallback_random=False`` (the default) Inductor rewrites dropout and ``torch.rand*`` into its own prims:
``inductor_seeds(count, device)`` (the wrapper's ``aten.randint.low_out(-2**63, 2**63 - 1, [count])``, one
draw from torch's generator), ``inductor_lookup_seed(seeds, i)`` and ``inductor_random(size, seed, mode)``,
whose element at contiguous position p is Inductor's ``rand(seed, p)`` (Philox in the C++ and Triton code,
wherever the kernel that draws it is fused).  Their eager implementations ignore the seed and draw from
torch's generator, so every buffer computed from them differed from eager ("2 of 47 buffers compared" on
GPT-2's training forward).  :class:`Replay` gives the eager run the compiled graph's numbers: the seeds drawn
as the wrapper draws them (numerics starts both runs from the same ``torch.manual_seed``) and each
``inductor_random`` computed by Inductor itself (a one-node graph compiled with ``compile_fx_inner`` once per
size, mode and device, called with the seed).
"""

from __future__ import annotations

from typing import Any

import torch

SEEDS = "prims.inductor_seeds"
RANDOM = "prims.inductor_random"


class Replay:
    """Stand-ins for Inductor's random prims in an eager run (:meth:`call`); ``error`` says why a replay
    failed (the compile of the one-node graph raised), then that call runs the prim's own eager code."""

    def __init__(self) -> None:
        self._compiled: dict[tuple, Any] = {}
        self.error: str | None = None
        self.replayed = 0

    def handles(self, target: Any) -> bool:
        """Whether :meth:`call` replays ``target`` (an FX node's target)."""
        t = str(target)
        return t.startswith(SEEDS) or t.startswith(RANDOM)

    def call(self, target: Any, args: tuple, kwargs: dict) -> Any:
        """``target(*args, **kwargs)`` as the compiled graph computes it."""
        t = str(target)
        if t.startswith(SEEDS):
            count, device = (list(args) + [kwargs.get("count"), kwargs.get("device")])[:2] if args else \
                (kwargs["count"], kwargs["device"])
            self.replayed += 1
            return torch.randint(-(2 ** 63), 2 ** 63 - 1, [int(count)], dtype=torch.int64, device=device)
        size, seed, mode = args[0], args[1], args[2] if len(args) > 2 else kwargs.get("mode", "rand")
        if kwargs.get("offset") or len(args) > 3:
            return target(*args, **kwargs)
        fn = self._compile([int(s) for s in size], str(mode), seed)
        if fn is None:
            return target(*args, **kwargs)
        self.replayed += 1
        return fn([seed])[0]

    def _compile(self, size: list[int], mode: str, seed: Any) -> Any:
        key = (tuple(size), mode, str(seed.device), seed.dtype)
        if key in self._compiled:
            return self._compiled[key]
        fn = None
        try:
            from torch._inductor import config as ic  # noqa: PLC0415
            from torch._inductor.compile_fx import compile_fx_inner  # noqa: PLC0415
            from torch.fx.experimental.proxy_tensor import make_fx  # noqa: PLC0415

            op = torch.ops.prims.inductor_random.default
            gm = make_fx(lambda s: (op(size, s, mode),))(seed.clone())
            with ic.patch({"fallback_random": False}):
                fn = compile_fx_inner(gm, [seed.clone()], is_inference=True)
        except Exception as e:  # noqa: BLE001 - said in the result; that prim then runs eagerly
            self.error = f"{type(e).__name__}: {e}".splitlines()[0][:300]
        self._compiled[key] = fn
        return fn
