"""torch.distributed, as the agent in one rank of a torchrun job touches it.

While the UI holds one rank paused at a stop, the other ranks wait at their next collective; a
process group's timeout (torch's default: 10 min for NCCL, 30 min for the others:
``torch.distributed.distributed_c10d._get_default_timeout``) would then kill the job.  So the
agent raises every process group's timeout for the job: the default for groups made without one
(``_get_default_timeout``, which ``init_process_group``, ``new_group`` and ``init_device_mesh``
consult) and any shorter one the script passes (a wrapper of ``init_process_group`` and
``new_group`` on ``torch.distributed`` and ``distributed_c10d``).  Each group made is reported
(:class:`inductor_step.session.format.ProcessGroup`).  Checked on torch 2.11 and 2.15.
"""

from __future__ import annotations

import functools
from datetime import timedelta
from typing import Any, Callable

from inductor_step.tracer.adapter.base import install_wrapper, log, wrapped_by_us


def rank_env(environ: dict[str, str]) -> dict[str, Any]:
    """A rank's place in its job from the variables torchrun sets (``RANK``, ``LOCAL_RANK``,
    ``WORLD_SIZE``, ``GROUP_RANK``, ``TORCHELASTIC_RESTART_COUNT``, ``TORCHELASTIC_RUN_ID``);
    keys of :class:`inductor_step.session.format.Distributed`.  Raises ValueError if ``RANK`` or
    ``WORLD_SIZE`` is missing (the agent was not started by torchrun)."""
    if "RANK" not in environ or "WORLD_SIZE" not in environ:
        raise ValueError("RANK and WORLD_SIZE are not set: --connect is for an agent that torchrun starts")
    out: dict[str, Any] = {"rank": int(environ["RANK"]), "world_size": int(environ["WORLD_SIZE"]),
                           "local_rank": int(environ.get("LOCAL_RANK", environ["RANK"]))}
    if "GROUP_RANK" in environ:
        out["group_rank"] = int(environ["GROUP_RANK"])
    if "TORCHELASTIC_RESTART_COUNT" in environ:
        out["restart_count"] = int(environ["TORCHELASTIC_RESTART_COUNT"])
    if environ.get("TORCHELASTIC_RUN_ID"):
        out["run_id"] = environ["TORCHELASTIC_RUN_ID"]
    return out


def watch_process_groups(raise_to_s: float | None, on_group: Callable[[dict[str, Any]], None]) -> str:
    """Report every process group the script makes to ``on_group`` (a ``process_group`` message)
    and, when ``raise_to_s`` (seconds) is given, raise each group's timeout to at least that.
    Returns the note for the header ("" when torch.distributed is unavailable)."""
    try:
        import torch.distributed as dist  # noqa: PLC0415
        from torch.distributed import distributed_c10d as c10d  # noqa: PLC0415
    except Exception as e:  # noqa: BLE001
        log.debug("torch.distributed unavailable: %s", e)
        return ""
    if not dist.is_available():
        return ""
    default_timeout = getattr(c10d, "_get_default_timeout", None)

    def default_s(backend: Any) -> float | None:
        if default_timeout is None:
            return None
        try:
            return default_timeout(str(backend or "gloo")).total_seconds()
        except Exception:  # noqa: BLE001
            return None

    raised = timedelta(seconds=raise_to_s) if raise_to_s else None
    if raised is not None and default_timeout is not None:
        @functools.wraps(default_timeout)
        def longer_default(backend: Any) -> timedelta:
            return max(default_timeout(backend), raised)

        c10d._get_default_timeout = longer_default

    def wrap(name: str) -> None:
        orig = getattr(c10d, name, None)
        if orig is None or wrapped_by_us(orig):
            return

        @functools.wraps(orig)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            asked = kwargs.get("timeout")
            if asked is None and name == "init_process_group" and len(args) >= 3:
                asked = args[2]
            elif asked is None and name == "new_group" and len(args) >= 2:
                asked = args[1]
            backend = kwargs.get("backend", args[0] if name == "init_process_group" and args else None)
            if raised is not None and isinstance(asked, timedelta) and asked < raised:
                if "timeout" in kwargs:
                    kwargs["timeout"] = raised
                else:
                    args = tuple(raised if i == (2 if name == "init_process_group" else 1) else a
                                 for i, a in enumerate(args))
            result = orig(*args, **kwargs)
            try:
                group = result if name == "new_group" else None
                be = dist.get_backend(group) if dist.is_initialized() else backend
                msg = {"type": "process_group", "call": name, "backend": str(be) if be else None,
                       "world_size": dist.get_world_size(group) if dist.is_initialized() else None,
                       "rank": dist.get_rank(group) if dist.is_initialized() else None,
                       "timeout_asked_s": asked.total_seconds() if isinstance(asked, timedelta) else None,
                       "default_s": default_s(be),
                       "timeout_s": _group_timeout(asked, raised, default_s(be)),
                       }
                on_group(msg)
            except Exception:  # noqa: BLE001 - reporting must never break the script's group
                log.debug("process group report", exc_info=True)
            return result

        install_wrapper(c10d, name, wrapper)
        if getattr(dist, name, None) is orig:
            setattr(dist, name, wrapper)

    wrap("init_process_group")
    wrap("new_group")
    if raised is None:
        return ""
    nccl = "NCCL not in this build" if not dist.is_nccl_available() else \
        f"{_human(default_timeout('nccl').total_seconds()) if default_timeout else '?'} NCCL"
    return (f"collective timeout raised to {_human(raise_to_s)} for every process group "
            f"(torch's default: {nccl}, "
            f"{_human(default_timeout('gloo').total_seconds()) if default_timeout else '?'} others), "
            "so a rank paused at a stop does not time the others out")


def _group_timeout(asked: Any, raised: Any, default: float | None) -> float | None:
    """The timeout a group got, in seconds: what the wrapper passed (``asked`` raised to
    ``raised``), else the (raised) default for its backend."""
    base = asked.total_seconds() if isinstance(asked, timedelta) else default
    vals = [v for v in (base, raised.total_seconds() if isinstance(raised, timedelta) else None) if v is not None]
    return max(vals) if vals else None


def _human(s: float | None) -> str:
    if s is None:
        return "?"
    if s >= 3600 and s % 3600 == 0:
        return f"{int(s // 3600)} h"
    if s >= 60 and s % 60 == 0:
        return f"{int(s // 60)} min"
    return f"{s:g} s"
