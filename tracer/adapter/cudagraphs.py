"""CUDA graphs under ``mode="reduce-overhead"``: whether a compile has them on, and torch's reasons for skipping a graph."""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable

from inductor_step.tracer.adapter.base import install_wrapper, wrapped_by_us

#: the loggers torch's skip messages come from: ``log_cudagraph_skip_and_bump_counter``
#: (torch/_inductor/cudagraph_utils.py) logs "skipping cudagraphs due to ..." as a WARNING on the
#: ``cudagraphs`` artifact logger, at compile time (``cudagraph_post_compile``, output_code.py) or at
#: a graph's first calls (cudagraph trees' input-mutation check, cudagraph_trees.py)
SKIP_LOGGERS = ("torch._inductor.cudagraph_utils.__cudagraphs",)


def cudagraphs_enabled() -> bool | None:
    """``torch._inductor.config.triton.cudagraphs`` now: on the compile thread, inside compile_fx,
    this is the setting the graph being compiled gets (``mode="reduce-overhead"`` patches it in);
    None where the config has no such field."""
    try:
        import torch._inductor.config as config  # noqa: PLC0415

        return bool(config.triton.cudagraphs)
    except Exception:  # noqa: BLE001
        return None


class _Handler(logging.Handler):
    def __init__(self, on_message: Callable[[str], None]) -> None:
        super().__init__(logging.WARNING)
        self.on_message = on_message

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg = record.getMessage()
        except Exception:  # noqa: BLE001
            return
        if "skipping cudagraphs" in msg:
            try:
                self.on_message(msg)
            except Exception:  # noqa: BLE001 - never in the script's way
                pass


def install_cudagraph_log_hook(on_message: Callable[[str], None]) -> dict[str, Any]:
    """Call ``on_message(text)`` with each "skipping cudagraphs due to ..." message torch logs, on the
    thread that logs it (the compile thread, or the script's thread during a graph's first calls).
    A handler on :data:`SKIP_LOGGERS` at WARNING, the level torch logs them at, so it sees them
    whatever ``TORCH_LOGS`` says and changes nothing torch prints.  Returns ``{"installed": [...]}``
    or ``{"unavailable": ...}``."""
    try:
        import torch._inductor.cudagraph_utils  # noqa: F401, PLC0415 - creates the artifact logger
    except Exception as e:  # noqa: BLE001
        return {"unavailable": f"torch._inductor.cudagraph_utils not available ({type(e).__name__}: {e})"}
    done = []
    for name in SKIP_LOGGERS:
        lg = logging.getLogger(name)
        if any(isinstance(h, _Handler) for h in lg.handlers):
            done.append(name)
            continue
        lg.addHandler(_Handler(on_message))
        done.append(name)
    return {"installed": done}


_REC = threading.local()  # this call's failed invariant checks (cudagraph trees run on the script's thread)


def _status_text(result: Any) -> str | None:
    """A failed ``CUDAGraphNode.check_invariants`` result as text, None for a success.  torch 2.6+ returns
    ``(CheckInvariantStatus, reason_callable)`` (the callable names the inputs whose data pointers changed);
    earlier torch a bool."""
    status, why = (result if isinstance(result, tuple) and len(result) == 2 else (result, None))
    if status is True or getattr(status, "name", "") == "SUCCESS":
        return None
    text = str(status) if status is not False else "the recorded graph's invariants do not hold"
    try:
        detail = why() if callable(why) else None
    except Exception:  # noqa: BLE001 - the reason is a nicety
        detail = None
    if detail and str(detail) != text:
        text += ": " + " ".join(str(detail).split())[:400]
    return text


def install_recording_hook(on_record: Callable[[str | None], None]) -> dict[str, Any]:
    """Call ``on_record(cause)`` each time cudagraph trees record a CUDA graph of a function
    (``CUDAGraphTreeManager.record_function``, torch/_inductor/cudagraph_trees.py), on the script's thread,
    inside the script's call of the graph.  ``cause`` says why the graphs recorded before for it were not
    replayed: the failed checks of ``CUDAGraphNode.check_invariants`` in this call (``"static input data
    pointer changed: ..."``, torch's own words and reason), or None where none failed (its first recording, or
    a new place in the tree: another graph ran before it).  Returns ``{"installed": [...]}`` or
    ``{"unavailable": why}``; installs once."""
    try:
        from torch._inductor import cudagraph_trees as ct  # noqa: PLC0415
    except Exception as e:  # noqa: BLE001
        return {"unavailable": f"torch._inductor.cudagraph_trees not available ({type(e).__name__}: {e})"}
    manager, node = getattr(ct, "CUDAGraphTreeManager", None), getattr(ct, "CUDAGraphNode", None)
    if manager is None or node is None or not all(hasattr(c, m) for c, m in ((manager, "run"), (manager, "record_function"),
                                                                              (node, "check_invariants"))):
        return {"unavailable": "this torch's cudagraph trees have no run/record_function/check_invariants"}
    if wrapped_by_us(manager.record_function):
        return {"installed": ["CUDAGraphTreeManager.record_function"]}
    real_run, real_record, real_check = manager.run, manager.record_function, node.check_invariants

    def run(self: Any, *a: Any, **k: Any) -> Any:
        depth = getattr(_REC, "depth", 0)
        if depth == 0:
            _REC.fails = []
        _REC.depth = depth + 1
        try:
            return real_run(self, *a, **k)
        finally:
            _REC.depth = depth

    def check_invariants(self: Any, *a: Any, **k: Any) -> Any:
        out = real_check(self, *a, **k)
        try:
            text = _status_text(out)
            if text and getattr(_REC, "depth", 0) and text not in _REC.fails:
                _REC.fails.append(text)
        except Exception:  # noqa: BLE001 - never in the script's way
            pass
        return out

    def record_function(self: Any, *a: Any, **k: Any) -> Any:
        try:
            fails = list(getattr(_REC, "fails", []) or [])
            on_record("; ".join(fails) if fails else None)
        except Exception:  # noqa: BLE001
            pass
        return real_record(self, *a, **k)

    install_wrapper(manager, "run", run)
    install_wrapper(manager, "record_function", record_function)
    install_wrapper(node, "check_invariants", check_invariants)
    return {"installed": ["CUDAGraphTreeManager.run", "CUDAGraphTreeManager.record_function",
                          "CUDAGraphNode.check_invariants"]}
