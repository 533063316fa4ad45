"""Higher-order ops' subgraphs as torch holds them: which subgraph a pass or a GraphLowering is working on.

A ``torch.cond`` branch, an ``invoke_subgraph`` (``torch.compiler.nested_compile_region``), a
``while_loop`` body or flex attention's score / mask mod is a ``GraphModule`` attribute of its parent
graph's module (``true_graph_0``, ``repeated_subgraph0``, ``while_loop_body_graph_0``, ``sdpa_score0``).
Inductor runs the pre-grad and post-grad passes on every subgraph before its parent
(``_recursive_pre_grad_passes`` / ``_recursive_post_grad_passes`` in torch/_inductor/compile_fx.py),
so our custom passes see the subgraphs first; it lowers cond / invoke_subgraph / while_loop
subgraphs with a ``SubgraphLowering`` (torch/_inductor/graph.py: ``parent``, ``name`` qualified by
the parent's name) inside the parent's lowering, schedules and generates each one inside the parent's
codegen (``codegen_subgraph_common``: a ``def NAME(args):`` function in the parent's output module),
and inlines flex attention's mods into the attention kernel (``PointwiseSubgraphLowering``).
"""

from __future__ import annotations

import threading
from typing import Any

from inductor_step.tracer.adapter.base import install_wrapper, log, wrapped_by_us

_TL = threading.local()  # .stack: the GraphModules the recursive passes are on, root first


def install_subgraph_tracking() -> list[str]:
    """Wrap ``_recursive_pre_grad_passes`` and ``_recursive_post_grad_passes`` (torch/_inductor/compile_fx.py)
    so :func:`pass_subgraph_path` knows, inside a custom pass, which subgraph of which root module the
    pass runs on.  The wrappers only push and pop the module; the passes are torch's.  Returns the
    functions wrapped (none where this torch has neither)."""
    done = []
    try:
        from torch._inductor import compile_fx  # noqa: PLC0415
    except Exception:  # noqa: BLE001
        return done
    for name in ("_recursive_pre_grad_passes", "_recursive_post_grad_passes"):
        real = getattr(compile_fx, name, None)
        if real is None:
            continue
        if wrapped_by_us(real):
            done.append(name)
            continue

        def wrapped(gm: Any, *a: Any, _real: Any = real, _name: str = name, **k: Any) -> Any:
            stack = getattr(_TL, "stack", None)
            if stack is None:
                stack = _TL.stack = []
                _TL.kinds = []
            stack.append(gm)
            _TL.kinds.append(_name)
            try:
                return _real(gm, *a, **k)
            finally:
                stack.pop()
                _TL.kinds.pop()

        install_wrapper(compile_fx, name, wrapped)
        done.append(name)
    return done


def _attr_name(parent: Any, child: Any) -> str | None:
    for n, m in getattr(parent, "_modules", {}).items():
        if m is child:
            return str(n)
    for n, m in vars(parent).items():
        if m is child:
            return str(n)
    return None


def pass_subgraph_path(graph: Any) -> list[str] | None:
    """Inside a pre-grad or post-grad custom pass on ``graph`` (a torch.fx Graph): the attribute names
    from the root module to the subgraph the pass runs on (``["true_graph_0"]``; Dynamo's names at
    pre-grad: ``["cond_true_0"]``), or None when it runs on the root graph (or outside the recursion)."""
    stack = list(getattr(_TL, "stack", None) or [])
    gm = getattr(graph, "owning_module", None)
    if len(stack) < 2 or gm is None or gm is stack[0] or stack[-1] is not gm:
        return None
    return _stack_path(stack)


def _stack_path(stack: list[Any]) -> list[str] | None:
    """The attribute names leading from ``stack[0]`` through each module of ``stack`` (None if one is not found)."""
    path = []
    for parent, child in zip(stack, stack[1:]):
        name = _attr_name(parent, child)
        if name is None:
            return None
        path.append(name)
    return path


def post_grad_subgraph_path() -> list[str] | None:
    """While ``_recursive_post_grad_passes`` runs on a subgraph on this thread: its attribute names from the
    root module (``["true_graph_0"]``, the names ``lowering_subgraph`` gives its ``SubgraphLowering`` later),
    so the subgraph's post-grad time goes to its own row; None on the root or outside."""
    stack = getattr(_TL, "stack", None) or []
    kinds = getattr(_TL, "kinds", None) or []
    if len(stack) < 2 or not kinds or kinds[-1] != "_recursive_post_grad_passes":
        return None
    return _stack_path(stack)


def pass_root() -> Any:
    """The root GraphModule of the recursive pass running on this thread (None outside one)."""
    stack = getattr(_TL, "stack", None) or []
    return stack[0] if stack else None


def subgraph_attrs(gm: Any) -> list[str]:
    """The subgraph attributes a module's graph uses (``get_attr`` nodes whose target is a GraphModule),
    in graph order, each once: Dynamo's ``["cond_true_0", "cond_false_0"]``, AOT's ``["true_graph_0", ...]``."""
    import torch  # noqa: PLC0415

    out: list[str] = []
    try:
        for n in gm.graph.nodes:
            if n.op == "get_attr" and str(n.target) not in out:
                obj = gm
                for part in str(n.target).split("."):
                    obj = getattr(obj, part, None)
                if isinstance(obj, torch.fx.GraphModule):
                    out.append(str(n.target))
    except Exception:  # noqa: BLE001
        log.debug("subgraph attrs", exc_info=True)
    return out


def submodule(gm: Any, path: list[str]) -> Any:
    """``gm``'s subgraph module at ``path`` (attribute names), or None."""
    for name in path:
        gm = getattr(gm, name, None)
        if gm is None:
            return None
    return gm


def lowering_subgraph(gl: Any) -> tuple[list[str], str] | None:
    """For a ``SubgraphLowering`` (``V.graph`` while Inductor lowers or generates a subgraph): ``(path,
    function)``: the subgraph's attribute names from the root graph (``["true_graph_0"]``; Inductor
    qualifies a nested one's name by its parent's: ``true_graph_0_true_graph_0`` is
    ``["true_graph_0", "true_graph_0"]``) and the function its code becomes in the output module
    (``gl.name``).  None for a root GraphLowering."""
    parent = getattr(gl, "parent", None)
    name = getattr(gl, "name", None)
    if parent is None or not name:
        return None
    function = str(name)
    path = []
    while parent is not None and name:
        prefix = getattr(parent, "name", None)
        local = name[len(prefix) + 1:] if prefix and name.startswith(prefix + "_") else name
        path.insert(0, local)
        name, parent = getattr(parent, "name", None), getattr(parent, "parent", None)
    return path, function


def has_higher_order_ops(gm: Any) -> bool:
    """Whether a GraphModule calls a higher-order op (``torch.ops.higher_order.*``) anywhere."""
    try:
        from torch._ops import HigherOrderOperator  # noqa: PLC0415

        # a user Triton kernel's wrapper (triton_kernel_wrapper_functional) is a higher-order op that a
        # re-trace handles: its graph goes the plain way, with the kernel side table (tracer.adapter.user_triton)
        return any(n.op == "call_function" and isinstance(n.target, HigherOrderOperator)
                   and not str(getattr(n.target, "__name__", "")).startswith("triton_kernel_wrapper")
                   for m in gm.modules() if hasattr(m, "graph") for n in m.graph.nodes)
    except Exception:  # noqa: BLE001
        return False


def scheduler_storage(gl: Any, nodes: list) -> tuple[dict[str, dict[str, str]], dict[str, Any]]:
    """``(buffer_owners, buffer_mutations)`` (tracer.adapter.snapshots) of a GraphLowering whose scheduler
    is still being built: a subgraph's final nodes reach ``log_ir_post_fusion`` inside ``Scheduler.__init__``,
    before ``gl.scheduler`` is set, so the scheduler is read from the nodes (``BaseSchedulerNode.scheduler``)."""
    from types import SimpleNamespace  # noqa: PLC0415

    from inductor_step.tracer.adapter.snapshots import buffer_mutations, buffer_owners  # noqa: PLC0415

    sched = getattr(nodes[0], "scheduler", None) if nodes else None
    if sched is None:
        return {}, {}
    view = SimpleNamespace(scheduler=SimpleNamespace(nodes=list(nodes),
                                                     mutation_real_name=getattr(sched, "mutation_real_name", {})),
                           removed_buffers=getattr(gl, "removed_buffers", ()))
    owners, storage = buffer_owners(view), buffer_mutations(view)
    return (owners if "unavailable" not in owners else {}), (storage if "unavailable" not in storage else {})


class _PortableGraphModule:
    """A post-grad GraphModule with higher-order ops, pickled without a re-trace (see
    :func:`portable_graph_module`); unpickles as the GraphModule itself."""

    def __init__(self, data: bytes):
        self.data = data

    def __reduce__(self) -> tuple:
        return (rebuild_graph_module, (self.data,))


def portable_graph_module(gm: Any) -> Any:
    """``gm`` in a form ``torch.save`` / ``torch.load`` carry to the timing process intact.

    A GraphModule pickles as its code and is re-traced by ``torch.fx`` when loaded
    (``_deserialize_graph_module``), and a higher-order op (``torch.ops.higher_order.cond(pred,
    true_graph_0, ...)``) fails under that symbolic trace ("can only be of (Tensor, int, SymInt) but
    got Proxy").  Such a module is pickled node by node with ``torch.fx._graph_pickler.GraphPickler``
    instead (what Inductor's out-of-process compile uses) and rebuilt by :func:`rebuild_graph_module`.
    Any other module, or where that pickler fails, is returned unchanged."""
    if gm is None or not has_higher_order_ops(gm):
        return gm
    try:
        from torch.fx._graph_pickler import GraphPickler, Options  # noqa: PLC0415

        return _PortableGraphModule(GraphPickler.dumps(gm, Options(ops_filter=None)))
    except Exception:  # noqa: BLE001
        log.debug("graph pickler", exc_info=True)
        return gm


def rebuild_graph_module(data: bytes) -> Any:
    """The GraphModule :func:`portable_graph_module` pickled (node metadata under a fresh fake mode), each
    of its subgraph modules' code regenerated.  Raises what ``GraphPickler.loads`` raises."""
    import torch  # noqa: PLC0415
    from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: PLC0415
    from torch.fx._graph_pickler import GraphPickler  # noqa: PLC0415
    from torch.fx.experimental.symbolic_shapes import ShapeEnv  # noqa: PLC0415

    gm = GraphPickler.loads(data, FakeTensorMode(shape_env=ShapeEnv()))
    for m in gm.modules():
        if isinstance(m, torch.fx.GraphModule):
            m.recompile()
    return gm
