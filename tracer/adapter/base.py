"""What every part of the torch-access package shares: the ``unavailable`` shape, ``safe``, versions and the compile id."""

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

log = logging.getLogger("inductor_step")

MAX_TEXT = 20_000  # characters kept of one IR/scheduler node's own text


_OURS = "_inductor_step"  # the attribute our wrappers of torch's functions carry


def wrapped_by_us(fn: Any) -> bool:
    """Whether ``fn`` (a torch function or method, as found now) is already one of our wrappers: each wrapper is
    installed once per process, and a second install finds it and leaves it."""
    return bool(getattr(fn, _OURS, False))


def install_wrapper(owner: Any, name: str, wrapper: Any) -> None:
    """Put ``wrapper`` (one of ours around ``owner.name``: a class, module or object) in its place, marked so that
    :func:`wrapped_by_us` finds it."""
    setattr(wrapper, _OURS, True)
    setattr(owner, name, wrapper)


def _unavailable(what: str, exc: BaseException | None = None) -> dict[str, Any]:
    why = f"{what}: not available on torch {torch.__version__}"
    if exc is not None:
        why += f" ({type(exc).__name__}: {exc})"
    return {"unavailable": why}


def safe(what: str) -> Callable:
    """Decorator: on any exception return ``{"unavailable": ...}`` naming ``what`` and the error."""

    def deco(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*a: Any, **k: Any) -> Any:
            try:
                return fn(*a, **k)
            except Exception as e:  # noqa: BLE001 - degrade, never break the user's compile
                log.debug("capture %s failed:\n%s", what, traceback.format_exc())
                return _unavailable(what, e)

        return wrapper

    return deco


# ----------------------------------------------------------------------------- versions, device

def versions() -> dict[str, Any]:
    """torch, triton and device names for the session header; device is ``"cpu"`` or the GPU's name."""
    info: dict[str, Any] = {"torch": torch.__version__, "triton": None, "device": "cpu",
                            "cuda": torch.version.cuda}
    try:
        import triton  # noqa: PLC0415

        info["triton"] = triton.__version__
    except Exception:  # noqa: BLE001
        pass
    if torch.cuda.is_available():
        info["device"] = "cuda"
        info["device_name"] = torch.cuda.get_device_name(0)
    return info


def current_compile_id() -> str:
    """Dynamo's compile id of the compile on this thread, as Inductor prints it: ``"[0/0]"``."""
    try:
        from torch._guards import CompileContext  # noqa: PLC0415

        cid = CompileContext.current_compile_id()
        if cid is None:
            return "[?]"
        from inductor_step.tracer.adapter.backends import label_compile_id  # noqa: PLC0415

        return label_compile_id(f"[{cid}]")  # "[0/0]@reset1" after a torch._dynamo.reset()
    except Exception:  # noqa: BLE001
        return "[?]"


def current_aot_graph() -> tuple[str, str] | None:
    """The AOTAutograd graph being compiled on this thread: ``(aot id, role)``, e.g. ``("7", "forward")``
    (role ``joint``, ``forward``, ``inference`` or ``backward``; a forward and its backward share the
    aot id), else None.  From ``torch._functorch._aot_autograd.logging_utils.graph_being_compiled``
    (``["7_forward"]``, set by ``track_graph_compiling`` around each graph's compile)."""
    try:
        from torch._functorch._aot_autograd import logging_utils  # noqa: PLC0415

        names = list(logging_utils.graph_being_compiled)
    except Exception:  # noqa: BLE001
        return None
    if len(names) != 1 or "_" not in str(names[0]):
        return None
    aot_id, _, role = str(names[0]).partition("_")
    return (aot_id, role) if aot_id.isdigit() else None


def current_graph() -> Any:
    """``V.graph``, the live GraphLowering (lowering, scheduling and codegen hooks only)."""
    from torch._inductor.virtualized import V  # noqa: PLC0415

    return V.graph
