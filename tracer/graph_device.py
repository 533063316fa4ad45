"""The CUDA device a graph runs on, made current on every thread and process that runs it.

CUDA's current device is per thread (and starts as ``cuda:0`` in every new thread and process).  Rank
1 of a two-GPU job calls ``torch.cuda.set_device(1)`` on its main thread, so its graphs' tensors and
streams are on ``cuda:1``; a timing thread, a timing worker process, numerics, saved inputs, repros
and what-if variants run on other threads or processes, where the current device is still
``cuda:0``, and a Triton launch there failed with "CUDA driver error: invalid argument".  Each of
them enters :func:`on_graph_device` with the device recorded for the graph (``"cuda:1"``, what the
``run`` message carries).
"""

from __future__ import annotations

import contextlib
import re
from typing import Any, Iterator

_CUDA = re.compile(r"^\s*cuda\s*(?::\s*(\d+))?\s*$")


def cuda_index(device: Any) -> int | None:
    """The CUDA device index to make current for a graph recorded on ``device`` (``"cuda:1"`` -> 1,
    a ``torch.device`` too), or None where there is nothing to set: a CPU graph, an unknown device,
    or a bare ``"cuda"`` (no index recorded: the thread's current device is the right one)."""
    if device is None:
        return None
    m = _CUDA.match(str(device))
    if m is None or m.group(1) is None:
        return None
    return int(m.group(1))


@contextlib.contextmanager
def on_graph_device(device: Any) -> Iterator[int | None]:
    """Within this block the calling thread's current CUDA device is the graph's (``device`` as
    :func:`cuda_index` reads it); yields the index set, or None where nothing was set (CPU, no CUDA).
    The thread's previous device is current again afterwards.  Never raises for a device it cannot
    set (it then sets nothing)."""
    idx = cuda_index(device)
    if idx is None:
        yield None
        return
    try:
        import torch  # noqa: PLC0415

        ok = torch.cuda.is_available() and idx < torch.cuda.device_count()
    except Exception:  # noqa: BLE001
        ok = False
    if not ok:
        yield None
        return
    with torch.cuda.device(idx):
        yield idx


def make_current(device: Any) -> int | None:
    """Make the graph's CUDA device (``device`` as :func:`cuda_index` reads it) the calling thread's
    current device for good (``torch.cuda.set_device``), for a process that runs one graph at a time
    (the timing worker).  Returns the index set, or None where nothing was set.  Never raises."""
    idx = cuda_index(device)
    if idx is None:
        return None
    try:
        import torch  # noqa: PLC0415

        if not torch.cuda.is_available() or idx >= torch.cuda.device_count():
            return None
        torch.cuda.set_device(idx)
    except Exception:  # noqa: BLE001
        return None
    return idx
