"""Higher-order ops' subgraphs as graphs of their own: their keys and their stops.

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

from typing import Any, Callable

from inductor_step.session.format import SUBGRAPH_SEP, GraphKey


def sub_kind(kind: str, path: list[str]) -> str:
    """The kind of subgraph ``path`` of the graph of kind ``kind``: ``("inference", ["true_graph_0"])`` ->
    ``"inference › true_graph_0"``; a what-if variant's settings stay last."""
    return GraphKey.parse_kind(kind).under(path).kind_text


def root_kind(kind: str) -> str:
    """``"inference › true_graph_0 · x=1"`` -> ``"inference · x=1"``: the kind of the graph a subgraph is in."""
    return GraphKey.parse_kind(kind).under([]).kind_text


def _match(dynamo_attrs: list[str], aot_attrs: list[str]) -> dict[str, str]:
    """AOT subgraph name -> Dynamo's, by the order the parent graph uses them; {} when the counts differ."""
    return dict(zip(aot_attrs, dynamo_attrs)) if len(dynamo_attrs) == len(aot_attrs) else {}


class SubgraphCapture:
    """The capture hooks' subgraph half, a part of :class:`tracer.capture.Capture` (its ``subgraphs``), which
    calls it where a hook meets a subgraph.  Over the shared :class:`tracer.agent_state.AgentState` (``frame``,
    ``graph``/``graphs``, ``stop``, ``tl``); ``part_frame(cid)`` is the frame entry of the graph Inductor
    compiles now (Capture.part_frame) and ``build_links(cid, kind, kernels, wrapper, owners, kernel_defs,
    mutations=)`` a graph's cross-level index (Capture.build_links)."""

    def __init__(self, state: Any, part_frame: Callable[[str], dict[str, Any]], build_links: Callable[..., dict]):
        self.state = state  # tracer.agent_state.AgentState
        self.part_frame = part_frame
        self.build_links = build_links

    # ------------------------------------------------------------------ dynamo and aot
    def keep_dynamo(self, cid: str, path: list[str], graph: Any) -> None:
        """The pre-grad pass runs on a subgraph of the frame's Dynamo graph (before the graph itself):
        keep its snapshot until its post-grad name is known."""
        from inductor_step.tracer import adapter  # noqa: PLC0415

        gm = getattr(graph, "owning_module", None)
        self.state.frame(cid).setdefault("sub_dynamo_pending", {})[tuple(path)] = {
            "graph": adapter.fx_graph(graph), "attrs": adapter.subgraph_attrs(gm) if gm is not None else []}

    def adopt_dynamo(self, cid: str, fr: dict[str, Any], graph: Any) -> None:
        """The pre-grad pass reached the root Dynamo graph of frame entry ``fr``: its subgraphs' snapshots
        (kept by :meth:`keep_dynamo`) and the order it uses them now belong to ``fr``."""
        from inductor_step.tracer import adapter  # noqa: PLC0415

        gm = getattr(graph, "owning_module", None)
        fr["sub_dynamo"] = self.state.frame(cid).pop("sub_dynamo_pending", {})
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

    def root(self, cid: str) -> tuple[str, str]:
        """(compile id, kind) of the graph whose subgraphs the post-grad passes are on now (their root
        module is :func:`tracer.adapter.pass_root`)."""
        from inductor_step.tracer import adapter  # noqa: PLC0415
        from inductor_step.session.format import with_part  # noqa: PLC0415

        fr = self.part_frame(cid)
        root = adapter.pass_root()
        backward = root is not None and adapter.is_backward_graph(root.graph)
        kind = with_part("backward" if backward else (fr["kind"] or "inference"), fr.get("part"))
        return getattr(self.state.tl, "variant", None) or (cid, kind)

    def on_post_grad_pre(self, cid: str, path: list[str], graph: Any) -> None:
        """The post-grad passes start on subgraph ``path``: its dynamo stop (its Dynamo graph, matched to
        its post-grad name), unless the graph is a what-if variant's."""
        fr = self.part_frame(cid)
        rcid, rkind = self.root(cid)
        kind = sub_kind(rkind, path)
        g = self.state.graph(rcid, kind)
        if g.last_stage is not None or getattr(self.state.tl, "variant", None) is not None:
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
        self.state.stop(rcid, kind, "dynamo", {"graph": snap, "graph_breaks": [], "recompile_reasons": [], "note": note})

    def on_post_grad_post(self, cid: str, path: list[str], graph: Any) -> None:
        """The post-grad passes are done on subgraph ``path``: its aot stop (its post-grad graph)."""
        from inductor_step.tracer import adapter  # noqa: PLC0415

        rcid, rkind = self.root(cid)
        kind = sub_kind(rkind, path)
        g = self.state.graph(rcid, kind)
        g.gm = getattr(graph, "owning_module", None)
        post_grad = adapter.fx_graph(graph)
        if isinstance(post_grad, dict) and "unavailable" not in post_grad:
            post_grad["when"] = ("after Inductor's post-grad passes on this subgraph (they run on each subgraph "
                                 "before its parent); AOTAutograd traced it inside the parent's graph")
        g.post_grad_nodes = post_grad.get("nodes") or []
        self.state.stop(rcid, kind, "aot", {"aot_graphs": {}, "post_grad": post_grad})

    # ------------------------------------------------------------------ lowering to codegen
    def lowering_key(self, cid: str, kind: str, gl: Any) -> tuple[str, str, str] | None:
        """``V.graph`` is a ``SubgraphLowering``: (compile id, kind, function) of its subgraph under the
        graph ``(cid, kind)`` being compiled; None for a root GraphLowering."""
        from inductor_step.tracer import adapter  # noqa: PLC0415

        sub = adapter.lowering_subgraph(gl)
        if sub is None:
            return None
        path, function = sub
        return cid, sub_kind(kind, path), function

    def _keys(self, cid: str, kind: str) -> list[tuple[tuple[str, str], GraphKey]]:
        """``((cid, kind text), key)`` of every graph seen so far that is a subgraph (at any depth) of graph
        ``(cid, kind)``, the same what-if variant."""
        top = GraphKey.parse_kind(kind, cid)
        depth = len(top.subgraphs)
        keys = ((pair, GraphKey.parse_kind(pair[1], pair[0])) for pair in list(self.state.graphs))
        return [(pair, k) for pair, k in keys
                if len(k.subgraphs) > depth and k.subgraphs[:depth] == top.subgraphs and k.replace(subgraph=top.subgraph) == top]

    def paths_of(self, cid: str, kind: str) -> list[str]:
        """The subgraphs (their paths under the parent, names joined as in the key) of graph ``(cid, kind)`` seen
        so far."""
        depth = len(GraphKey.parse_kind(kind).subgraphs)
        return [SUBGRAPH_SEP.join(k.subgraphs[depth:]) for _pair, k in self._keys(cid, kind)]

    def runs(self, cid: str, kind: str, msg: dict[str, Any], subs: dict[str, Any] | None) -> list[dict]:
        """The ``run`` messages of graph ``(cid, kind)``'s subgraphs, from its own ``run`` message ``msg``
        and the timing of its subgraph functions (``subs``: tracer.timing.subgraphs.split_by_subgraph);
        one per subgraph, timed or saying why not (``not_timed``; ``error`` and ``failed`` where timing the
        parent failed)."""
        out = []
        parent = f"{cid} {kind}"
        for sk in self.paths_of(cid, kind):
            k = sub_kind(kind, sk.split(SUBGRAPH_SEP))
            g = self.state.graphs.get((cid, k))
            if g is None:
                continue
            m: dict[str, Any] = {"type": "run", "compile_id": cid, "graph_kind": k, "device": msg.get("device", "cpu"),
                                 "cupti": msg.get("cupti", "")}
            t = (subs or {}).get(g.function) if g.function else None
            if msg.get("error"):
                m.update(error=f"not timed: timing {parent}, which calls it, failed", failed=True)
            elif g.function is None:
                m["not_timed"] = (f"not timed on its own: Inductor lowered it inline into {parent}'s kernels "
                                  f"(their times are in {parent}'s run)")
            elif t is None:
                m["not_timed"] = (f"its function {g.function} is not in {parent}'s output module (a C++ wrapper inlines "
                                  f"subgraphs into its parent's code: their kernels' times are the parent's)")
            elif t.get("compiled_ms") is None:
                m["not_timed"] = str(t.get("not_timed"))
            else:
                m.update(_judged(t, str(msg.get("device", "cpu")).startswith("cuda")))
                m.update(compiled_ms=t["compiled_ms"], eager_ms=t.get("eager_ms"), kernels=t["kernels"],
                         decomposed_ms=t.get("decomposed_ms"), eager_note=t.get("eager_note"),
                         kernel_sum_ms=t["kernel_sum_ms"], method=msg.get("method", ""), inputs=t.get("inputs") or (
                             f"the arguments {parent} passed it in the timed call ({msg.get('inputs', '')})"),
                         peak=msg.get("peak") or {}, roofs=msg.get("roofs") or {},
                         warnings=[w for w in (
                             f"{g.function} ran {t['runs']} times in one call of {parent}: compiled_ms is one run, "
                             f"the kernels are its first run's" if t.get("runs", 1) > 1 else None,
                             t.get("decomposed_note")) if w] + list(m.get("warnings") or []))
            out.append(m)
        return out

    def send_codegen(self, cid: str, kind: str, wrapper: str, kernel_defs: list[dict], cpp: bool = False) -> None:
        """The parent ``(cid, kind)`` reached codegen: a codegen stop for each of its subgraphs that
        Inductor generated a function for, and for the others (inlined: flex attention's mods) their
        missing stages, saying why."""
        from inductor_step.tracer.codeparse import attach_owners, bind_no_return_calls, kernel_spans, parse_wrapper, subgraph_functions  # noqa: PLC0415,E501

        functions = subgraph_functions(wrapper)
        for (c, k), _key in self._keys(cid, kind):
            g = self.state.graphs[(c, k)]
            if g.last_stage == "codegen":
                continue
            fn = getattr(g, "function", None)
            if cpp and fn is not None:  # GraphLowering.make_subgraph: "For cpp wrapper, we inline the subgraphs"
                self.state.stop(c, k, "codegen", {"unavailable": f"the C++ wrapper inlines this subgraph's code into {cid} "
                                                          f"{kind}'s: its kernels are listed there"}, pause=False)
                continue
            if fn is None or fn not in functions:
                why = (f"Inductor lowered this subgraph inline into {cid} {kind}'s kernels (flex attention's score and "
                       "mask mods go through PointwiseSubgraphLowering into the attention kernel): it has no IR "
                       "buffers, scheduler nodes, LoopBody or kernel of its own") if fn is None else \
                    f"its function {fn} is not in {cid} {kind}'s output module"
                done = ("dynamo", "aot") + (("lowering", "scheduling", "loopbody") if g.last_stage == "loopbody" else ())
                for stage in ("lowering", "scheduling", "loopbody", "codegen"):
                    if stage not in done:
                        self.state.stop(c, k, stage, {"unavailable": why}, pause=False)
                continue
            kernels = parse_wrapper(wrapper, body=functions[fn])
            bind_no_return_calls(kernels, g.after, (getattr(g, "mutations", None) or {}).get("mutation_real_name"))
            owners = getattr(g, "owners", None) or {}
            attach_owners(kernels, owners, wrapper)
            links = self.build_links(c, k, kernels, wrapper, owners, kernel_defs,
                                     mutations=getattr(g, "mutations", None))
            keep_own_nodes(links, g.post_grad_nodes)
            explain_hop_buffers(links, g.post_grad_nodes, f"{c} {k}", self.paths_of(c, k))  # a subgraph's own
            self.state.stop(c, k, "codegen", {"wrapper": wrapper, "kernels": kernels, "output_path": None,
                                              "kernel_spans": kernel_spans(wrapper, kernels), "links": links,
                                              "function": fn, "function_lines": _lines(wrapper, functions[fn])})


def drop_subgraph_kernels(kernels: list[dict], wrapper: str) -> list[dict]:
    """A parent's kernels (tracer.codeparse.parse_wrapper on ``call()``) without those only its subgraphs'
    functions call: they are the subgraphs' kernels, under the subgraphs' keys."""
    from inductor_step.tracer.codeparse import parse_wrapper, subgraph_functions  # noqa: PLC0415

    functions = subgraph_functions(wrapper)
    if not functions:
        return kernels
    theirs = {k["name"] for span in functions.values() for k in parse_wrapper(wrapper, body=span)}
    return [k for k in kernels if k.get("calls") or k["name"] not in theirs]


def explain_hop_buffers(links: dict[str, Any], post_grad_nodes: list[dict], parent: str, subgraphs: list[str]) -> None:
    """A parent graph's buffers that a higher-order op computes (``Switch`` for a cond, ``InvokeSubgraph``,
    ``WhileLoop``, and their ``MultiOutput`` items) have no kernel of their own: the wrapper calls the
    op's subgraph functions.  Their links say so, naming the subgraphs' graphs (in place)."""
    if "buffers" not in links or not subgraphs:
        return
    nodes = {n["name"]: n for n in post_grad_nodes}
    subs = set(subgraphs)

    def sub_name(arg: str) -> str:  # a get_attr node's target: the second call's node may be repeated_subgraph0_1
        n = nodes.get(arg) or {}
        return str(n.get("target")) if n.get("op") == "get_attr" else arg

    def used(name: str, depth: int = 0) -> tuple[str | None, list[str]]:
        n = nodes.get(name) or {}
        found = list(dict.fromkeys(sub_name(a) for a in n.get("args") or [] if sub_name(a) in subs))
        if found:
            return str(n.get("target")), found
        if depth < 1:  # a getitem of the op's result
            for a in n.get("args") or []:
                op, found = used(a, depth + 1)
                if found:
                    return op, found
        return None, []

    for entry in links["buffers"].values():
        if entry.get("kernels"):
            continue
        for fx in entry.get("fx_nodes") or []:
            op, found = used(fx)
            if found:
                graphs = ", ".join(f"{parent}{SUBGRAPH_SEP}{f}" for f in found)
                entry["notes"] = [f"computed by {op} ({fx}): the wrapper calls its subgraph function(s) "
                                  f"{', '.join(found)}; their kernels are in {graphs}"]
                break


def keep_own_nodes(links: dict[str, Any], post_grad_nodes: list[dict]) -> None:
    """A subgraph's kernels carry the parent's post-grad nodes too (Inductor's provenance names the
    higher-order op's node): keep only the subgraph's own (in place)."""
    own = {n["name"] for n in post_grad_nodes}
    for k in (links.get("kernels") or {}).values():
        if "post_grad_nodes" in k:
            k["post_grad_nodes"] = [n for n in k["post_grad_nodes"] if n in own]
        for c in k.get("calls") or []:
            if "post_grad_nodes" in c:
                c["post_grad_nodes"] = [n for n in c["post_grad_nodes"] if n in own]


def _lines(text: str, span: tuple[int, int]) -> list[int]:
    """1-based [first, last] lines of character span ``span`` in ``text``."""
    first = text.count("\n", 0, span[0]) + 1
    return [first, first + text.count("\n", span[0], span[1]) - 1]


def _judged(t: dict[str, Any], cuda: bool) -> dict[str, Any]:
    """A subgraph row's contention verdicts (judged like its parent): ``verdicts``, ``reliable``,
    ``contended``, ``settled``, ``warnings`` and ``unreliable`` from the run-queue wait while its compiled and
    decomposed times were taken (tracer.timing.subgraphs.split_by_subgraph; tracer.timing.contention.judge).
    Nothing on CUDA, where the GPU's time is not the cores'."""
    if cuda:
        return {}
    from inductor_step.tracer.timing.contention import judge  # noqa: PLC0415

    verdicts = {"compiled": judge(t.get("compiled_wait"), "the subgraph's compiled timing")}
    if t.get("decomposed_wait") is not None:
        verdicts["decomposed"] = judge(t.get("decomposed_wait"), "the decomposed subgraph's timing")
    bad = [k for k, v in verdicts.items() if v.get("reliable") is False]
    out: dict[str, Any] = {"verdicts": verdicts, "reliable": not bad, "contended": bool(bad), "settled": not bad,
                           "warnings": [verdicts[b]["text"] for b in bad]}
    if bad:
        worst = max(verdicts[b].get("wait_share") or 0 for b in bad)
        out["unreliable"] = (f"{', '.join(b + ' time' for b in bad)} not reliable (other processes held the cores: "
                             f"threads waited for a core up to {100 * worst:.0f}% of the time); press r to time again")
    return out
