"""How a timed graph reports its collectives: listed as kernels with no time and the reason,
and the graph's times marked as excluding them.

The timing harness (:func:`tracer.timing.harness.time_graph`) runs the output module with every
collective replaced by a local stand-in (:func:`tracer.adapter.collectives.stand_ins_in_module`), so
the compute kernels around it run as in the script; a collective's own time needs every rank running it
together, which a timing run alone cannot have.  These are the entries and fields that say so.
"""

from __future__ import annotations

from typing import Any

from inductor_step.tracer.adapter.collectives import NOT_TIMED, stand_in_text


def collective_entry(name: str, call: int, op: str, stand_in_ms: float | None) -> dict[str, Any]:
    """The ``kernels`` entry of one collective call (:class:`session.format.RunKernel`): ``name`` as the
    harness names it (``torch.ops._c10d_functional.all_reduce_.default#0``), ``call``, ``backend``
    ``"extern"``, ``collective`` (the op, ``"all_reduce_"``), ``median_ms``/``p20_ms``/``p80_ms`` None,
    ``not_timed`` (why), ``stand_in`` (what ran in its place, in words) and ``stand_in_ms`` (that
    stand-in's own median time alone, ms: part of ``compiled_ms``)."""
    return {"name": name, "call": call, "backend": "extern", "collective": op, "median_ms": None, "p20_ms": None,
            "p80_ms": None, "not_timed": NOT_TIMED, "stand_in": stand_in_text(op), "stand_in_ms": stand_in_ms}


def collectives_summary(kernels: list[dict[str, Any]], eager_nodes: dict[str, str]) -> dict[str, Any]:
    """The run's collective fields, empty when the graph has none: ``collectives_stubbed`` (the collective
    calls' kernel names, in call order), ``collectives_stand_in_ms`` (the stand-ins' own times summed,
    ms, None where one is missing), ``eager_nodes_stubbed`` (the post-grad FX nodes run as stand-ins in
    the eager graph) and ``collectives_note``: what ``compiled_ms``, ``eager_ms``, ``kernel_sum_ms`` and
    the shares exclude, and why."""
    colls = [k for k in kernels if k.get("collective")]
    if not colls and not eager_nodes:
        return {}
    ops: dict[str, int] = {}
    for k in colls:
        ops[k["collective"]] = ops.get(k["collective"], 0) + 1
    own = [k.get("stand_in_ms") for k in colls]
    own_ms = sum(own) if own and all(isinstance(x, (int, float)) for x in own) else None
    what = ", ".join(f"{op}" + (f" x{n}" if n > 1 else "") for op, n in ops.items())
    note = (f"compiled_ms, eager_ms, kernel_sum_ms and the shares exclude the graph's {len(colls)} collective call(s) "
            f"({what}): each ran as a local stand-in with no communication, since timing a collective needs every "
            "rank running it together")
    if own_ms is not None:
        note += f"; the stand-ins' own {own_ms:.4f} ms (copies, Python calls) are inside compiled_ms"
    return {"collectives_stubbed": [k["name"] for k in colls], "collectives_stand_in_ms": own_ms,
            "eager_nodes_stubbed": list(eager_nodes), "collectives_note": note}
