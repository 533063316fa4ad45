"""Profiler records: torch.profiler's CUPTI kernel durations and the ops around them, the current CUDA stream, Inductor's op registrations."""

from __future__ import annotations

import functools
import logging
import os
import re
import threading
import traceback
import weakref
from typing import Any, Callable

import torch


from inductor_step.tracer.adapter.base import MAX_TEXT, _unavailable, current_graph, log, safe  # noqa: F401


def profiler_active() -> bool:
    """Whether a torch profiler (the script's own) is running now; ours would fail to start."""
    try:
        return bool(torch.autograd.profiler._is_profiler_enabled)
    except Exception:  # noqa: BLE001
        return False


def register_inductor_ops() -> None:
    """Register the ops Inductor's post-grad graphs and output code use beyond ATen
    (``torch.ops.prims.inductor_seeds``, ``prims.prepare_softmax_online``, ...): importing
    ``torch._inductor.compile_fx`` does, as it does in the process that compiled them.  For a fresh
    process (the timing worker) that loads such a graph."""
    import torch._inductor.compile_fx  # noqa: F401, PLC0415
    import torch._inductor.inductor_prims  # noqa: F401, PLC0415


def current_raw_stream() -> int:
    """The raw handle of the current CUDA stream (``torch._C._cuda_getCurrentRawStream``): what a
    Triton launcher's ``stream=`` argument takes, e.g. inside a CUDA-graph capture."""
    import torch  # noqa: PLC0415

    return torch._C._cuda_getCurrentRawStream(torch.cuda.current_device())


def synchronize() -> None:
    """``torch.cuda.synchronize()`` where CUDA is initialised; nothing otherwise."""
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


_OP_NAME = re.compile(r"^[A-Za-z_]\w*::[\w.]+$")


def op_base_name(name: str) -> str:
    """The operator an extern call of a compiled graph or a profiler CPU op stands for, without
    namespace, overload or our call suffix: ``extern_kernels.mm#3`` -> ``mm``,
    ``torch.ops.aten.convolution_backward.default#2`` -> ``convolution_backward``,
    ``aten::addmm`` -> ``addmm``."""
    name = name.split("#")[0]
    if "::" in name:
        return name.rsplit("::", 1)[1]
    parts = name.split(".")
    if len(parts) > 1 and parts[-1] in ("default", "out", "Tensor", "Scalar", "self", "input"):
        parts = parts[:-1]
    return parts[-1]


def outermost_ops(events: list) -> dict[int, tuple[int, str]]:
    """Profiler CPU op correlation id -> ``(correlation id, name)`` of the outermost operator
    (``aten::mm``, ``mylib::op``; not autograd's or the user's ranges) around it on the same thread,
    itself where none encloses it.  ``events``: ``prof.profiler.kineto_results.events()`` of a
    torch.profiler run with CPU activity; a GPU kernel's ``linked_correlation_id()`` is the id of
    the op that launched it."""
    ops = []
    for e in events:
        name = e.name()
        if not _OP_NAME.match(name) or name.startswith("autograd::") or e.linked_correlation_id() != 0:
            continue
        ops.append((e.start_thread_id(), e.start_ns(), -e.end_ns(), e.correlation_id(), name))
    ops.sort()
    roots: dict[int, tuple[int, str]] = {}
    stack: list[tuple[int, int, int]] = []  # (thread, end, correlation id) of the ops still open
    for tid, start, neg_end, corr, name in ops:
        while stack and (stack[-1][0] != tid or stack[-1][1] <= start):
            stack.pop()
        roots[corr] = roots[stack[0][2]] if stack else (corr, name)
        stack.append((tid, -neg_end, corr))
    return roots


def cuda_kernel_records(fn: Callable[[], Any], cpu_ops: bool = False) -> list[tuple]:
    """Run ``fn`` under torch.profiler (CUDA activity: CUPTI) and return every GPU kernel it ran
    as ``(name, start_ns, duration_ms)`` in start order, kernels replayed from a CUDA graph included.

    ``cpu_ops``: also record CPU activity and add ``(op, op_id)`` to each record: the outermost
    operator that launched the kernel (:func:`outermost_ops`; e.g. ``aten::convolution`` for each
    of the several kernels cuDNN runs for one convolution) and that op call's correlation id, or
    ``(None, None)`` for kernels launched outside any operator (Inductor's Triton kernels).

    Reads ``prof.profiler.kineto_results`` (torch's private view of the CUPTI records), since the
    public ``prof.events()`` rounds to whole microseconds.  Raises where the profiler cannot start
    (another one is active, or this torch was built without kineto).
    """
    import warnings  # noqa: PLC0415

    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

    acts = [ProfilerActivity.CUDA] + ([ProfilerActivity.CPU] if cpu_ops else [])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with profile(activities=acts) as prof:
            fn()
            torch.cuda.synchronize()
    events = list(prof.profiler.kineto_results.events())
    roots = outermost_ops(events) if cpu_ops else {}
    out: list[tuple] = []
    for e in events:
        if e.device_type() != torch.autograd.DeviceType.CUDA:
            continue
        rec: tuple = (e.name(), int(e.start_ns()), e.duration_ns() / 1e6)
        if cpu_ops:
            root = roots.get(e.linked_correlation_id())
            rec += (root[1], root[0]) if root else (None, None)
        out.append(rec)
    out.sort(key=lambda r: r[1])
    return out
