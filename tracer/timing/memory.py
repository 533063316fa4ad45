"""A graph's measured memory in the timing worker: the compiled call's peak, eager's peak for the same graph, and the bytes eager autograd saves for the backward."""

from __future__ import annotations

from typing import Any, Callable

HOW = ("torch.cuda.max_memory_allocated() minus torch.cuda.memory_allocated() just before one call of the compiled "
       "module, on the timing inputs; the worker keeps those inputs, so a backward's del frees none of them: compare "
       "with the planned peak of the graph's own buffers, not with the figure above the call's start")
#: where a CPU peak comes from (the ``source`` of a figure measured by :func:`profiled_peak`)
PROFILER = ("torch.profiler (profile_memory=True): the peak of the running sum of the [memory] events' bytes "
            "(allocations +, frees -) over one call, above its start")
ALLOCATOR = "torch.cuda.max_memory_allocated() minus memory_allocated() before one call (the caching allocator)"
EAGER_HOW = {
    "inference": "Dynamo's graph run eagerly on the script's first-call inputs (grad mode as the script had it)",
    "forward": "Dynamo's graph run eagerly with grad enabled on the script's first-call inputs (autograd keeps what "
               "the backward needs, as the script's eager does)",
    "backward": "autograd's backward of Dynamo's graph (torch.autograd.backward {from}; its forward run "
                "before, outside the measure): the bytes above the start of the backward call",
}
SAVED_HOW = ("Dynamo's graph run eagerly once with grad enabled under torch.autograd.graph.saved_tensors_hooks: the "
             "distinct storages (untyped_storage) of the tensors autograd packs for the backward, bytes = "
             "storage.nbytes(); those of parameters and of the other graph inputs counted apart")


def _first(e: BaseException) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def profiled_peak(call: Callable[[], Any]) -> int:
    """The peak (bytes) of one ``call()`` above its start, from torch.profiler's memory events (``profile_memory``:
    every allocation and free of the CPU allocator while profiling, ``kineto_results`` ``[memory]`` events,
    ``nbytes()`` signed), in time order.  Raises RuntimeError where the profiler recorded no memory event, else what
    the call or the profiler raises."""
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        out = call()
    del out
    events = sorted((e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"),
                    key=lambda e: e.start_ns())
    if not events:
        raise RuntimeError("the profiler recorded no [memory] event for the call")
    run = peak = 0
    for e in events:
        run += int(e.nbytes())
        peak = max(peak, run)
    return peak


def _allocator_peak(call: Callable[[], Any]) -> int:
    import torch  # noqa: PLC0415

    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    out = call()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    del out
    return int(peak)


def _peak(call: Callable[[], Any], cuda: bool) -> dict[str, Any]:
    try:
        return {"peak_bytes": _allocator_peak(call) if cuda else profiled_peak(call),
                "source": ALLOCATOR if cuda else PROFILER}
    except Exception as e:  # noqa: BLE001 - the timing stands without it
        return {"not_measured": f"the measuring call raised {_first(e)}"}


def eager_peak(dyn: dict[str, Any] | None, cuda: bool) -> dict[str, Any]:
    """Eager's peak for the graph of ``dyn`` (tracer.timing.eager_user.user_eager's: Dynamo's GraphModule ``gm``,
    its first-call ``inputs``, ``mode``): ``{"peak_bytes", "source", "how"}`` (bytes above the call's start; for
    a backward above the start of ``torch.autograd.backward``, the forward run before it) or ``{"not_measured":
    why}``.  The inputs' leaves keep the ``.grad`` they had."""
    if not dyn or dyn.get("gm") is None or dyn.get("inputs") is None:
        why = (dyn or {}).get("missing") or "Dynamo's graph or its first-call inputs were not captured"
        return {"not_measured": why}
    import torch  # noqa: PLC0415

    from inductor_step.tracer.timing.eager_user import _grad_outputs, describe  # noqa: PLC0415

    gm, inputs, mode = dyn["gm"], dyn["inputs"], dyn.get("mode") or "inference"
    leaves = [t for t in inputs if isinstance(t, torch.Tensor) and t.is_leaf and t.requires_grad]
    grads = [t.grad for t in leaves]
    try:
        if mode == "backward":
            for t in leaves:
                t.grad = None
            with torch.enable_grad():
                outs, ones = _grad_outputs(gm(*inputs), dyn.get("grad_used") or None)
            if not outs:
                return {"not_measured": "no output of Dynamo's graph requires grad: there is no backward"}
            res = _peak(lambda: torch.autograd.backward(outs, ones), cuda)
            del outs, ones
        else:
            grad = True if mode == "forward" else bool(dyn.get("grad_enabled"))

            def call() -> Any:
                with torch.set_grad_enabled(grad):
                    return gm(*inputs)
            res = _peak(call, cuda)
    except Exception as e:  # noqa: BLE001
        res = {"not_measured": f"Dynamo's graph raised when run eagerly ({_first(e)})"}
    finally:
        for t, g in zip(leaves, grads):
            t.grad = g
    return {**res, "how": describe(EAGER_HOW, dyn)} if "peak_bytes" in res else res


def eager_saved(dyn: dict[str, Any] | None) -> dict[str, Any]:
    """What eager autograd saves for the backward of a training forward's Dynamo graph (``dyn`` as for
    :func:`eager_peak`, ``mode`` ``"forward"``): one call of ``gm`` with grad enabled under
    ``torch.autograd.graph.saved_tensors_hooks``; ``{"storage_bytes": the distinct storages that are neither
    parameters nor graph inputs (bytes), "storages": their count, "params_bytes", "inputs_bytes" (distinct
    storages of saved parameters / other graph inputs), "tensors": tensors packed, "how"}``, or ``{"not_measured":
    why}``."""
    if not dyn or dyn.get("gm") is None or dyn.get("inputs") is None:
        return {"not_measured": (dyn or {}).get("missing") or "Dynamo's graph or its first-call inputs were not "
                                                               "captured"}
    import torch  # noqa: PLC0415

    def key(t: Any) -> tuple[int, int] | None:
        try:
            s = t.untyped_storage()
            return (s.data_ptr(), s.nbytes())
        except Exception:  # noqa: BLE001 - a tensor without a storage (sparse, nested): no bytes to count
            return None

    params = {key(t) for t in dyn["inputs"] if isinstance(t, torch.nn.Parameter)}
    others = {key(t) for t in dyn["inputs"] if isinstance(t, torch.Tensor) and not isinstance(t, torch.nn.Parameter)}
    packed: list[tuple[int, int] | None] = []

    def pack(t: Any) -> Any:
        packed.append(key(t) if isinstance(t, torch.Tensor) else None)
        return t

    try:
        with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = dyn["gm"](*dyn["inputs"])
        del out
    except Exception as e:  # noqa: BLE001
        return {"not_measured": f"Dynamo's graph raised when run eagerly under saved_tensors_hooks ({_first(e)})"}
    distinct = {k for k in packed if k is not None}
    acts = {k for k in distinct if k not in params and k not in others}
    return {"storage_bytes": sum(n for _, n in acts), "storages": len(acts),
            "params_bytes": sum(n for _, n in distinct & params),
            "inputs_bytes": sum(n for _, n in distinct & (others - params)),
            "tensors": len(packed), "how": SAVED_HOW}


def measured_peak(call: Callable[[], Any], cuda: bool, dyn: dict[str, Any] | None = None) -> dict[str, Any]:
    """One ``call()`` of the compiled module measured: ``{"peak_bytes": n, "how": HOW, "source"}`` on CUDA
    (bytes; the allocator rounds each block up to 512), on CPU ``{"peak_bytes", "source": PROFILER}`` where the
    profiler's memory events work, else ``{"not_measured": why}``.  With ``dyn`` (the graph's eager, as for
    :func:`eager_peak`) also ``"eager"``: :func:`eager_peak`, and for a training forward ``"eager_saved"``:
    :func:`eager_saved`."""
    res = _peak(call, cuda)
    out: dict[str, Any] = {**res, "how": HOW} if cuda and "peak_bytes" in res else res
    if dyn is not None:
        out["eager"] = eager_peak(dyn, cuda)
        if dyn.get("mode") == "forward":
            out["eager_saved"] = eager_saved(dyn)
    return out
