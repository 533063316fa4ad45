"""A compiled graph's measured memory on the GPU: the caching allocator's peak over one call, in the timing worker."""

from __future__ import annotations

from typing import Any, Callable

HOW = ("torch.cuda.max_memory_allocated() minus torch.cuda.memory_allocated() just before one call of the compiled "
       "module, on the timing inputs; the worker keeps those inputs, so a backward's del frees none of them: compare "
       "with the planned peak of the graph's own buffers, not with the figure above the call's start")


def measured_peak(call: Callable[[], Any], cuda: bool) -> dict[str, Any]:
    """``{"peak_bytes": n, "how": HOW}`` for one ``call()`` on CUDA (bytes; the allocator rounds each block up to 512),
    ``{"not_measured": why}`` on CPU (torch keeps no allocator statistics there) or when the call raises."""
    if not cuda:
        return {"not_measured": "on CPU torch keeps no allocator statistics "
                                "(torch.cuda.max_memory_allocated is CUDA's)"}
    import torch  # noqa: PLC0415

    try:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        out = call()
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - base
        del out
        return {"peak_bytes": int(peak), "how": HOW}
    except Exception as e:  # noqa: BLE001 - the timing stands without it
        first = str(e).splitlines()[0] if str(e) else ""
        return {"not_measured": f"the measuring call raised {type(e).__name__}: {first}"}
