"""CUDA graphs under ``mode="reduce-overhead"``: whether a compile has them on, and torch's reasons for skipping a graph."""

from __future__ import annotations

import logging
from typing import Any, Callable

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
