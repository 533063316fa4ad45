"""Diff two compiled graphs level by level, top-down: why it recompiled, the Dynamo graph,
the post-grad graph, IR buffers, scheduler nodes, kernels and timings.  No Textual, no torch: it reads
the session's messages only, so it works on ``--open`` sessions on a laptop.

The contract: :func:`diff_graphs` takes two :class:`DiffSide` (its stops by stage, its timing run, its
guards, its session's guards and header) and returns a :class:`GraphDiff`, one :class:`Level` per
level in the order a compile passes them; a level says ``changed`` and lists :class:`Change` items
(added / removed / changed, each naming the item in A and in B and the stage whose pane shows it),
or says why it could not be compared (``missing``).  :func:`render` prints it as plain text (what
``inductor-step diff --headless`` and the report print); :func:`pair_graphs` pairs the graphs of two
sessions (by compile id and kind, then by content).

Where each comparison comes from:

- why: the later graph's ``recompile_reasons`` (Dynamo's ``recompile_reasons`` of the dynamo stop:
  ``"0/0: tensor 'x' size mismatch at index 0. expected 8, actual 16"``), the guard of the named
  compile that failed (from its ``guards`` message, ``dynamo_cpp_guards_str``) with the user line
  Dynamo wrote after it (guard provenance, ``# code  # file:line in fn``), and the specializations
  read from the Dynamo graphs' placeholders (a size that became symbolic or was specialized, a dtype),
  and how each was compiled (the dynamo stops' ``compiled_with``: torch.compile's mode, options, dynamic,
  fullgraph, backend and the non-default Inductor config, session.modes.compiled_with_changes);
- Dynamo and post-grad graphs: the stops' ``graph.nodes`` / ``post_grad.nodes`` aligned with
  :class:`difflib.SequenceMatcher` over (op, target), then compared by shape, dtype and device;
- IR buffers: the lowering stop's ``buffers`` aligned over (IR type, kind, reduction type, the op
  names of their origins), compared by ranges, reduction ranges, size and dtype;
- scheduler nodes: the scheduling stop's ``after`` (fused nodes), related through the buffer
  alignment: a node whose buffers went to several nodes was split, several whose buffers went to
  one were merged;
- kernels: the codegen stop's ``kernels`` matched by normalized source (the kernel's own name and
  buffer / argument numbering replaced), then by name stem, then by similarity; a unified diff
  (difflib) of the normalized sources for the changed ones;
- timings: the ``run`` messages (ms, as the tracer measured them), per graph and per matched kernel.
"""

#: each public name -> the module of this package that defines it; a module is imported when one of its
#: names is first read (the UI's first frame needs only the guards)
_WHERE = {
    **dict.fromkeys(('Change', 'DiffSide', 'GraphDiff', 'LEVELS', 'Level', 'SIMILAR_PAIRS', 'TIME_CHANGE',), "model"),
    **dict.fromkeys(('Guard', 'failed_guards', 'guard_list', 'later_failures', 'parse_guards', 'split_reason',), "guards"),
    **dict.fromkeys(('AOT_DIFF_LINES', 'EXACT_ALIGN', 'align', 'diff_aot_graphs', 'diff_nodes', 'specializations',), "fx"),
    **dict.fromkeys(('diff_buffers', 'diff_scheduler',), "ir"),
    **dict.fromkeys(('diff_kernels', 'diff_timing', 'match_kernels', 'normalize_kernel',), "kernels"),
    **dict.fromkeys(('default_partner', 'diff_graphs', 'diff_sessions', 'pair_graphs',), "graphs"),
    **dict.fromkeys(('measured_at', 'moved_text', 'rounds_text', 'timing_notes', 'top_notes', 'verdict_text',), "moments"),
    **dict.fromkeys(('diff_files', 'level_lines', 'render', 'render_recompiles', 'render_sessions', 'session_of',), "text"),
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> object:
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module  # noqa: PLC0415

    value = getattr(import_module(f"{__name__}.{mod}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
