"""Numerics: the compiled graph's one run, each buffer kept as written until its FX node runs eagerly.

:class:`Pass` is the capture :func:`tracer.numerics.compare_graph` installs in the instrumented output module
(``_istep_capture``) and the ``on_values`` of :func:`tracer.adapter.numerics.run_dual`: it makes each buffer's
row at once and compares the buffer with its node's eager values (graph dtypes, float64) when that node runs.
"""

from __future__ import annotations

import time
from typing import Any

import torch

from inductor_step.tracer.numerics import _dt, _nbytes, _reference, _tensors, stats


class Pass:
    """The compiled graph's one run: each buffer its kernel writes becomes a row at once (in execution order) and,
    where it has a node to be compared with, a copy of it waits for that node's eager values (:meth:`node`:
    in the graph's dtypes and in float64, from :func:`tracer.adapter.numerics.run_dual`), which compare it and
    drop it.  ``want``: the nodes with a reference; ``items``: {buffer: i} for ``bufN = bufM[i]`` (an output of
    a multi-output fallback)."""

    def __init__(self, plan: dict[str, str | None], want: set[str], items: dict[str, int]):
        self.plan, self.want, self.items = plan, want, items
        self.rows: list[dict[str, Any]] = []
        self.waiting: dict[str, list[tuple[dict[str, Any], Any]]] = {}
        self.bytes = 0  # the captured buffers' own bytes (each once per write)
        self.kept = {"now": 0, "peak": 0}  # the copies waiting for their node
        self.eager64: dict[str, dict[str, Any]] = {}
        self.compare_s = 0.0  # of the eager run's time, comparing

    def _ref(self, row: dict[str, Any], node: str, ref: Any, value: Any) -> Any:
        """The reference for ``value`` in node ``node``'s value ``ref``: the value, or the element of its tuple (by the
        wrapper's index, else the one of the same size closest to it, said in ``matched``)."""
        if not isinstance(ref, (list, tuple)):
            return ref
        i = self.items.get(row["buffer"])
        if i is not None and i < len(ref):
            row["item"] = i
            return ref[i]
        same = [(j, r) for j, r in enumerate(ref) if isinstance(r, torch.Tensor) and r.numel() == value.numel()]
        if len(same) > 1:
            j, r = min(same, key=lambda jr: stats(value, jr[1])["max_abs"])
            row["item"] = j
            row["matched"] = f"output {j} of {node}: the closest of its {len(same)} outputs of this size"
            return r
        if same:
            row["item"] = same[0][0]
            return same[0][1]
        return None

    def __call__(self, kernel: str, call: int, line: int, pairs: tuple) -> None:
        for name, value in pairs:
            if isinstance(value, (list, tuple)) and not isinstance(value, torch.Tensor):
                continue  # a multi-output fallback's tuple: its items (bufN = bufM[i]) are captured one by one
            row: dict[str, Any] = {"buffer": name, "kernel": kernel, "call": call, "line": line}
            node = self.plan.get((kernel, name)) or self.plan.get(name)
            row["fx_node"] = node
            self.rows.append(row)
            if not isinstance(value, torch.Tensor):
                row["why"] = f"not compared: the kernel returned a {type(value).__name__}"
                continue
            self.bytes += value.numel() * value.element_size()
            row.update(dtype=_dt(value), shape=list(value.shape))
            if value.is_floating_point() and not bool(torch.isfinite(value).all()):
                row["nan"], row["inf"] = int(torch.isnan(value).sum()), int(torch.isinf(value).sum())
            elif value.is_floating_point():
                row["nan"] = row["inf"] = 0
            if node in self.want:  # a copy: the buffer's storage may be reused by a later kernel
                self.waiting.setdefault(node, []).append((row, value.clone()))
                self.kept["now"] += _nbytes(value)
                self.kept["peak"] = max(self.kept["peak"], self.kept["now"])

    def node(self, node: Any, v: Any, v64: Any) -> None:
        """Node ``node``'s eager value ``v`` and float64 value ``v64``: compare every buffer waiting for it."""
        waiting = self.waiting.pop(node.name, None)
        if not waiting or not (isinstance(v, torch.Tensor) or _tensors(v)):
            return
        t0 = time.monotonic()
        r64 = _reference(v, v64)
        for row, c in waiting:
            ref = self._ref(row, node.name, v, c)
            rng = _rng_return(node, row.get("item"))
            if rng:
                row["why"] = (f"not compared: output {row['item']} of {node.name} is `{rng}`, the state of its random "
                              "number generator (each run draws its own), not a value")
            elif isinstance(ref, torch.Tensor) and ref.numel() == c.numel():
                try:
                    row["stats"] = stats(c, ref)
                except Exception as e:  # noqa: BLE001
                    row["why"] = f"not compared ({type(e).__name__}: {e})"
                if row.get("matched") and (row.get("stats") or {}).get("tol_ratio", 0) > 1.0:
                    del row["stats"]  # no output of the node is this buffer: an internal value of its lowering
                    row["why"] = (f"not compared: none of {node.name}'s outputs of this size is this buffer "
                                  "(Inductor's buffer holds an internal value of its lowering, such as a Welford "
                                  "reduction's sum of squares; the buffers computed from it are compared)")
            elif isinstance(ref, torch.Tensor):
                row["why"] = (f"not compared: {c.numel()} elements vs {ref.numel()} in {node.name} (a part of "
                              f"{node.name}'s buffer, written in place)")
            held = self._held(row, node, v, c) if "stats" in row or row.get("matched") else None
            if "stats" in row:
                self._float64(row, node.name, v, v64, r64, c, held)
            self.kept["now"] -= _nbytes(c)
        del waiting
        self.compare_s += time.monotonic() - t0

    def _held(self, row: dict[str, Any], node: Any, v: Any, c: Any) -> Any:
        """Where buffer ``c`` is past the tolerance from node ``node``'s value (or matched none of its outputs) and
        the node's lowering stores an intermediate (:func:`tracer.numerics_holds.intermediates`: a mean's sum, a
        var_mean's sum of squared deviations), compare it with that intermediate of the node's value ``v`` instead
        (``holds`` says which) and return its map from the node's value; where none matches either, the row is not
        comparable (``why``).  None where the node's value is the reference."""
        from inductor_step.tracer.numerics_holds import intermediates, not_comparable  # noqa: PLC0415

        direct = (row.get("stats") or {}).get("tol_ratio")
        if direct is not None and direct <= 1.0:
            return None
        alts = intermediates(node)
        for what, f in alts:
            try:
                ref = f(v)
                if not isinstance(ref, torch.Tensor) or ref.numel() != c.numel():
                    continue
                st = stats(c, ref)
            except Exception:  # noqa: BLE001
                continue
            tol = st.get("tol_ratio") or 0.0
            if tol <= 1.0 or (direct is not None and tol * 1e3 < direct):
                row["stats"], row["holds"] = st, what
                row.pop("why", None)
                row.pop("item", None)
                row.pop("matched", None)
                return f
        if alts and "stats" in row:
            del row["stats"]
            row["why"] = not_comparable(node)
        return None

    def _float64(self, row: dict[str, Any], name: str, v: Any, v64: Any, r64: Any, c: Any,
                 held: Any = None) -> None:
        """Compiled buffer ``c`` against the float64 reference (``_c64``) and eager's own error (``eager64``, or
        ``_e64`` for a buffer that ``held`` an intermediate of the node: ``held`` maps the node's values to it)."""
        key = name if row.get("item") is None else f"{name}[{row['item']}]"
        if held is not None:
            v, v64, r64 = held(v), held(v64), held(r64)
        pick = (lambda t: t) if isinstance(v, torch.Tensor) else (lambda t: t[row["item"]])
        try:
            o, x = pick(v), pick(v64)
            if (key not in self.eager64 or held is not None) and isinstance(o, torch.Tensor) \
                    and isinstance(x, torch.Tensor) and o.numel() == x.numel():
                if held is not None:
                    row["_e64"] = stats(o, x)
                else:
                    self.eager64[key] = stats(o, x)
        except Exception:  # noqa: BLE001
            pass
        probe = {"buffer": row["buffer"]}
        ref = self._ref(probe, name, r64, c)
        if isinstance(ref, torch.Tensor) and ref.numel() == c.numel():
            try:
                c64 = stats(c, ref)
            except Exception:  # noqa: BLE001
                return
            if not (probe.get("matched") and c64.get("tol_ratio", 0) > 1.0):
                row["_c64"] = c64


def _rng_return(node: Any, item: int | None) -> str | None:
    """The name of output ``item`` of ``node``'s ATen op where it is a random generator's state (an attention
    op's ``philox_seed`` / ``philox_offset``, also with dropout 0), else None."""
    schema = getattr(node.target, "_schema", None)
    if item is None or schema is None or item >= len(schema.returns):
        return None
    name = schema.returns[item].name or ""
    return name if ("philox" in name or "seed" in name or "rng" in name) else None

