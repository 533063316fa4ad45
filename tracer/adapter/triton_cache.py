"""Triton's own on-disk cache, read: where a compiled Inductor kernel's binaries sit, when each
entry was written, and whether entries of the same kernel sit under other cache keys (written by an earlier run).

Triton's ``compile()`` (triton/compiler/compiler.py) keys each binary by a hash of the kernel's source,
specialization, options, backend and cache-invalidating environment; the entry is a directory
``<TRITON_CACHE_DIR>/<key>/`` holding ``<kernel>.json`` and its group file ``__grp__<kernel>.json``, written
last on a compile and only read on a hit.  Nothing here imports Triton; no failure is raised.
"""

from __future__ import annotations

import os
import time
from typing import Any

#: how long one scan of a Triton cache root may take (the compile thread waits for it): past it, the scan stops
#: and the index says so
_SCAN_BUDGET_S = 0.25
_INDEX: dict[str, dict[str, Any]] = {}  # root -> {"files": {kernel json name: [(key, mtime_ns)]}, "partial"}


def _name_index(root: str) -> dict[str, Any]:
    """Every entry of the Triton cache ``root`` by its kernel's metadata file name, scanned once per process
    (the first time a kernel compiled by Triton is read): ``{"files": {"triton_poi_..._0.json": [(key,
    mtime_ns)]}}``, with ``"partial"`` saying why when the scan stopped early (``_SCAN_BUDGET_S``).  Entries
    written after the scan are not in it: they are this process's own."""
    if root in _INDEX:
        return _INDEX[root]
    files: dict[str, list[tuple[str, int]]] = {}
    out: dict[str, Any] = {"files": files}
    t_end = time.monotonic() + _SCAN_BUDGET_S
    try:
        with os.scandir(root) as it:
            for n, d in enumerate(it):
                if time.monotonic() > t_end:
                    out["partial"] = (f"Triton's cache under {root} has more entries than {_SCAN_BUDGET_S:.2f} s "
                                      f"could read ({n} read): earlier entries of a kernel may be missed")
                    break
                try:
                    for f in os.scandir(d.path):
                        if f.name.startswith("__grp__"):
                            files.setdefault(f.name.removeprefix("__grp__"), []).append(
                                (d.name, f.stat().st_mtime_ns))
                except OSError:
                    continue
    except OSError as e:
        out["partial"] = f"Triton's cache under {root} could not be read: {e}"
    _INDEX[root] = out
    return out


def caller_kernel(frame: Any) -> Any:
    """The ``CachingAutotuner`` whose compile metric is being added: the local ``kernel`` of the caller of
    ``_add_triton_kernel_info`` (torch 2.14's ``_emit_triton_kernel_compile_metric(kernel, ...)``, torch
    2.11's ``AsyncCompile.triton`` / its ``get_result``), two frames up at most; None if not found."""
    for _ in range(3):
        if frame is None:
            return None
        k = frame.f_locals.get("kernel")
        if k is not None and hasattr(k, "launchers"):
            return k
        frame = frame.f_back
    return None


def triton_cache_entries(kernel: Any) -> dict[str, Any]:
    """Where Triton's own on-disk cache holds a compiled ``CachingAutotuner``'s binaries, and when each entry
    was written: ``{"dir": cache root, "entries": [{"key", "written_ns"}]}``, one entry per launcher (config).

    Each launcher's ``cache_hash`` is its directory under the Triton cache root (Inductor's
    ``triton_hash_to_path_key``, torch/_inductor/runtime/triton_heuristics.py); the root is
    ``TRITON_CACHE_DIR``, which Inductor sets to ``<inductor cache>/triton/<device>``
    (``runtime.cache_dir_utils.triton_cache_dir``).  ``written_ns`` is the mtime of the entry's
    ``__grp__*.json``, the metadata group Triton's ``compile()`` writes last after compiling and only reads on a
    cache hit (triton/compiler/compiler.py); so an entry older than the moment Inductor asked for the kernel
    was served from Triton's cache, not compiled.  ``"other_keys"``: the ``written_ns`` of the same kernel's
    entries under other keys (same metadata file name; from the root's index, :func:`_name_index`), so a miss
    can tell a cold cache from a key that changed; ``"index_note"`` when that index is partial.
    ``{"unavailable": why}`` when no entry can be found (a remote Triton cache manager, a kernel with no
    launchers)."""
    if kernel is None:
        return {"unavailable": "the kernel object was not found where torch adds its compile time"}
    keys = [str(h) for h in (getattr(ln, "cache_hash", None) for ln in getattr(kernel, "launchers", None) or [])
            if h]
    if not keys:
        return {"unavailable": "the kernel's launchers carry no Triton cache hash (cache_hash)"}
    roots = []
    if os.environ.get("TRITON_CACHE_DIR"):
        roots.append(os.environ["TRITON_CACHE_DIR"])
    try:
        from torch._inductor.runtime.cache_dir_utils import triton_cache_dir  # noqa: PLC0415

        dev = (getattr(kernel, "triton_meta", None) or {}).get("device", 0)
        roots.append(triton_cache_dir(dev if isinstance(dev, int) else getattr(dev, "index", 0) or 0))
    except Exception:  # noqa: BLE001
        pass
    for root in dict.fromkeys(roots):
        entries = []
        for key in keys:
            try:
                files = os.listdir(os.path.join(root, key))
                grp = [f for f in files if f.startswith("__grp__")]
                e: dict[str, Any] = {"key": key}
                if grp:
                    e["written_ns"] = max(os.stat(os.path.join(root, key, f)).st_mtime_ns for f in grp)
                    e["file"] = grp[0].removeprefix("__grp__")
                entries.append(e)
            except OSError:
                break
        else:
            out: dict[str, Any] = {"dir": root, "entries": entries}
            names = {e["file"] for e in entries if e.get("file")}
            if names:
                index = _name_index(root)
                out["other_keys"] = sorted(ns for n in names for d, ns in index.get("files", {}).get(n, [])
                                           if d not in keys)
                if index.get("partial"):
                    out["index_note"] = index["partial"]
            return out
    return {"unavailable": f"no Triton cache entry {keys[0]} under {' or '.join(dict.fromkeys(roots)) or '?'} "
                           "(a remote or custom Triton cache manager?)"}
