"""Higher-order ops' subgraphs as graphs of their own (issue 27.1): their keys and their stops.

A ``torch.cond`` branch, an ``invoke_subgraph`` (``nested_compile_region``), a ``while_loop`` body or
flex attention's score / mask mod is keyed under its parent graph as its parent's post-grad module
names it: ``("[0/0]", "inference › true_graph_0")`` (protocol.graph_key, ``subgraph``).  Torch runs
these stages for it, and each becomes a stop of that key:

- dynamo: Dynamo traced it as a subgraph of the frame's graph (``cond_true_0``); the pre-grad pass
  sees it before its parent, and its stop goes out when its post-grad name is known (matched by the
  order the parent's graphs use their subgraphs: Dynamo's ``cond_true_0, cond_false_0`` are AOT's
  ``true_graph_0, false_graph_0``);
- aot: the post-grad passes run on it before its parent (``_recursive_post_grad_passes``);
- lowering, scheduling, loopbody: a ``SubgraphLowering`` inside the parent's lowering and codegen
  (``V.graph`` is the subgraph's; its buffers are ``true_graph_0_buf0``);
- codegen: its ``def true_graph_0(args):`` function in the parent's output module, parsed on its own
  (tracer.codeparse), with links over its own levels.

Flex attention's mods are lowered inline into the attention kernel (``PointwiseSubgraphLowering``):
they have dynamo and aot stops, and their later stages say so.
"""

from __future__ import annotations

from typing import Any

from inductor_step.tracer.protocol import SUBGRAPH_SEP, VARIANT_SEP, split_subgraph


def sub_kind(kind: str, path: list[str]) -> str:
    """The kind of subgraph ``path`` of the graph of kind ``kind``: ``("inference", ["true_graph_0"])`` ->
    ``"inference › true_graph_0"``; a what-if variant's settings stay last."""
    base, sep, variant = kind.partition(VARIANT_SEP)
    base = split_subgraph(base)[0]
    return f"{base}{SUBGRAPH_SEP}{SUBGRAPH_SEP.join(path)}" + (f"{sep}{variant}" if sep else "")


def root_kind(kind: str) -> str:
    """``"inference › true_graph_0 · x=1"`` -> ``"inference · x=1"``: the kind of the graph a subgraph is in."""
    base, sep, variant = kind.partition(VARIANT_SEP)
    return split_subgraph(base)[0] + (f"{sep}{variant}" if sep else "")


def _match(dynamo_attrs: list[str], aot_attrs: list[str]) -> dict[str, str]:
    """AOT subgraph name -> Dynamo's, by the order the parent graph uses them; {} when the counts differ."""
    return dict(zip(aot_attrs, dynamo_attrs)) if len(dynamo_attrs) == len(aot_attrs) else {}


class SubgraphCapture:
    """The capture hooks' subgraph half, mixed into :class:`tracer.capture.Capture` (which has
    ``frame``, ``graph``, ``stop``, ``part_frame``, ``current``, ``tl``)."""

    # ------------------------------------------------------------------ dynamo and aot
    def keep_dynamo_subgraph(self, cid: str, path: list[str], graph: Any) -> None:
        """The pre-grad pass runs on a subgraph of the frame's Dynamo graph (before the graph itself):
        keep its snapshot until its post-grad name is known."""
        from inductor_step.tracer import adapter  # noqa: PLC0415

        gm = getattr(graph, "owning_module", None)
        self.frame(cid).setdefault("sub_dynamo_pending", {})[tuple(path)] = {
            "graph": adapter.fx_graph(graph), "attrs": adapter.subgraph_attrs(gm) if gm is not None else []}

    def adopt_dynamo_subgraphs(self, cid: str, fr: dict[str, Any], graph: Any) -> None:
        """The pre-grad pass reached the root Dynamo graph of frame entry ``fr``: its subgraphs' snapshots
        (kept by :meth:`keep_dynamo_subgraph`) and the order it uses them now belong to ``fr``."""
        from inductor_step.tracer import adapter  # noqa: PLC0415

        gm = getattr(graph, "owning_module", None)
        fr["sub_dynamo"] = self.frame(cid).pop("sub_dynamo_pending", {})
        fr["sub_dynamo_attrs"] = adapter.subgraph_attrs(gm) if gm is not None else []

    def _dynamo_of(self, fr: dict[str, Any], path: list[str]) -> tuple[dict | None, str | None]:
        """The Dynamo snapshot of the subgraph at AOT path ``path``, and Dynamo's name for it."""
        from inductor_step.tracer import adapter  # noqa: PLC0415

        root = adapter.pass_root()
        subs = fr.get("sub_dynamo") or {}
        dyn_path: list[str] = []
        dyn_attrs = fr.get("sub_dynamo_attrs") or []
        aot_mod = root
        for name in path:
            aot_attrs = adapter.subgraph_attrs(aot_mod) if aot_mod is not None else []
            d = _match(dyn_attrs, aot_attrs).get(name)
            if d is None:
                return None, None
            dyn_path.append(d)
            entry = subs.get(tuple(dyn_path)) or {}
            dyn_attrs = entry.get("attrs") or []
            aot_mod = getattr(aot_mod, name, None)
        entry = subs.get(tuple(dyn_path))
        return (entry or {}).get("graph"), SUBGRAPH_SEP.join(dyn_path)

    def subgraph_root(self, cid: str) -> tuple[str, str]:
        """(compile id, kind) of the graph whose subgraphs the post-grad passes are on now (their root
        module is :func:`tracer.adapter.pass_root`)."""
        from inductor_step.tracer import adapter  # noqa: PLC0415
        from inductor_step.tracer.protocol import with_part  # noqa: PLC0415

        fr = self.part_frame(cid)
        root = adapter.pass_root()
        backward = root is not None and adapter.is_backward_graph(root.graph)
        kind = with_part("backward" if backward else (fr["kind"] or "inference"), fr.get("part"))
        return getattr(self.tl, "variant", None) or (cid, kind)

    def on_subgraph_post_grad_pre(self, cid: str, path: list[str], graph: Any) -> None:
        """The post-grad passes start on subgraph ``path``: its dynamo stop (its Dynamo graph, matched to
        its post-grad name), unless the graph is a what-if variant's."""
        fr = self.part_frame(cid)
        rcid, rkind = self.subgraph_root(cid)
        kind = sub_kind(rkind, path)
        g = self.graph(rcid, kind)
        if g.last_stage is not None or getattr(self.tl, "variant", None) is not None:
            return
        snap, dyn_name = self._dynamo_of(fr, path)
        parent = f"{rcid} {rkind}"
        if snap is not None:
            note = (f"A subgraph of {parent}: Dynamo traced it as {dyn_name!r} of the frame's graph; AOTAutograd "
                    f"named it {SUBGRAPH_SEP.join(path)!r}.")
        else:
            snap = {"code": "", "nodes": []}
            note = (f"A subgraph of {parent}, named {SUBGRAPH_SEP.join(path)!r} by AOTAutograd: its Dynamo graph "
                    "could not be matched (the parent's Dynamo and AOT graphs use a different number of subgraphs).")
        g.dynamo = snap
        self.stop(rcid, kind, "dynamo", {"graph": snap, "graph_breaks": [], "recompile_reasons": [], "note": note})

    def on_subgraph_post_grad_post(self, cid: str, path: list[str], graph: Any) -> None:
        """The post-grad passes are done on subgraph ``path``: its aot stop (its post-grad graph)."""
        from inductor_step.tracer import adapter  # noqa: PLC0415

        rcid, rkind = self.subgraph_root(cid)
        kind = sub_kind(rkind, path)
        g = self.graph(rcid, kind)
        g.gm = getattr(graph, "owning_module", None)
        post_grad = adapter.fx_graph(graph)
        if isinstance(post_grad, dict) and "unavailable" not in post_grad:
            post_grad["when"] = ("after Inductor's post-grad passes on this subgraph (they run on each subgraph "
                                 "before its parent); AOTAutograd traced it inside the parent's graph")
        g.post_grad_nodes = post_grad.get("nodes") or []
        self.stop(rcid, kind, "aot", {"aot_graphs": {}, "post_grad": post_grad})

    # ------------------------------------------------------------------ lowering to codegen
    def subgraph_lowering_key(self, cid: str, kind: str, gl: Any) -> tuple[str, str, str] | None:
        """``V.graph`` is a ``SubgraphLowering``: (compile id, kind, function) of its subgraph under the
        graph ``(cid, kind)`` being compiled; None for a root GraphLowering."""
        from inductor_step.tracer import adapter  # noqa: PLC0415

        sub = adapter.lowering_subgraph(gl)
        if sub is None:
            return None
        path, function = sub
        return cid, sub_kind(kind, path), function

    def send_subgraph_codegen(self, cid: str, kind: str, wrapper: str, kernel_defs: list[dict]) -> None:
        """The parent ``(cid, kind)`` reached codegen: a codegen stop for each of its subgraphs that
        Inductor generated a function for, and for the others (inlined: flex attention's mods) their
        missing stages, saying why."""
        from inductor_step.tracer.codeparse import bind_no_return_calls, kernel_spans, parse_wrapper, subgraph_functions  # noqa: PLC0415,E501

        prefix = kind.partition(VARIANT_SEP)[0] + SUBGRAPH_SEP
        variant = kind.partition(VARIANT_SEP)[2]
        functions = subgraph_functions(wrapper)
        for (c, k), g in list(self.graphs.items()):
            if c != cid or not k.startswith(prefix) or k.partition(VARIANT_SEP)[2] != variant:
                continue
            if g.last_stage == "codegen":
                continue
            fn = getattr(g, "function", None)
            if fn is None or fn not in functions:
                why = (f"Inductor lowered this subgraph inline into {cid} {kind}'s kernels (flex attention's score and "
                       "mask mods go through PointwiseSubgraphLowering into the attention kernel): it has no IR "
                       "buffers, scheduler nodes, LoopBody or kernel of its own") if fn is None else \
                    f"its function {fn} is not in {cid} {kind}'s output module"
                done = ("dynamo", "aot") + (("lowering", "scheduling", "loopbody") if g.last_stage == "loopbody" else ())
                for stage in ("lowering", "scheduling", "loopbody", "codegen"):
                    if stage not in done:
                        self.stop(c, k, stage, {"unavailable": why}, pause=False)
                continue
            kernels = parse_wrapper(wrapper, body=functions[fn])
            bind_no_return_calls(kernels, g.after, (getattr(g, "mutations", None) or {}).get("mutation_real_name"))
            owners = getattr(g, "owners", None) or {}
            self.attach_owners(kernels, owners)
            links = self.build_links(c, k, kernels, wrapper, owners, kernel_defs,
                                     mutations=getattr(g, "mutations", None))
            self.stop(c, k, "codegen", {"wrapper": wrapper, "kernels": kernels, "output_path": None,
                                        "kernel_spans": kernel_spans(wrapper, kernels), "links": links,
                                        "function": fn, "function_lines": _lines(wrapper, functions[fn])})


def _lines(text: str, span: tuple[int, int]) -> list[int]:
    """1-based [first, last] lines of character span ``span`` in ``text``."""
    first = text.count("\n", 0, span[0]) + 1
    return [first, first + text.count("\n", span[0], span[1]) - 1]
