"""Snapshots of each level as plain data: FX graphs, IR buffers at lowering, scheduler nodes, LoopBodies, and what codegen's links need (buffer owners, mutations, provenance)."""

from __future__ import annotations

import functools
import logging
import os
import re
import threading
import traceback
import weakref
from typing import Any, Callable

import torch


from inductor_step.tracer.adapter.base import MAX_TEXT, _unavailable, current_graph, log, safe  # noqa: F401
from inductor_step.tracer.adapter.memo import with_graph_memo


# ----------------------------------------------------------------------------- FX graphs

def _short_path(filename: str) -> str:
    import os  # noqa: PLC0415

    try:
        rel = os.path.relpath(filename)
        return rel if not rel.startswith("..") else filename
    except ValueError:
        return filename


_TRACE_LINE = re.compile(r'File "([^"]+)", line (\d+)')


def user_line(stack_trace: str | None) -> str | None:
    """``file:line`` of the innermost user frame of an FX node's ``meta["stack_trace"]``."""
    if not stack_trace:
        return None
    frames = _TRACE_LINE.findall(stack_trace)
    frames = [f for f in frames if "/torch/" not in f[0].replace("\\", "/")] or frames
    if not frames:
        return None
    f, line = frames[-1]
    return f"{_short_path(f)}:{line}"


def torch_line(stack_trace: str | None) -> str | None:
    """``file:line`` of the innermost frame of ``meta["stack_trace"]`` where that frame is inside
    torch (``torch/nn/functional.py:5849`` for the ``constant_pad_nd`` of an ``F.pad``): the line
    torch's own artifacts (``fx_graph_transformed.py``'s ``# File:`` comments, tlparse) show for the
    node; None where the innermost frame is the user's (then :func:`user_line` is that line)."""
    frames = _TRACE_LINE.findall(stack_trace or "")
    if not frames or "/torch/" not in frames[-1][0].replace("\\", "/"):
        return None
    f, line = frames[-1]
    return f"{_short_path(f)}:{line}"


def _origins_in(sources: Any, graph_id: int) -> list[str]:
    """Names of the nodes of graph ``graph_id`` in a node's ``meta["from_node"]`` chain, walked as torch
    walks it for ``inductor_provenance_tracking_node_mappings``' postToPre
    (``torch/_inductor/debug.py: create_mapping_pre_post_grad_nodes``): every ``NodeSource``, nested
    ones too, whose ``graph_id`` is that graph's; names of the graphs between (AOTAutograd's
    ``clone_1``, ``alias``) are left out."""
    out: list[str] = []
    stack = list(sources or [])
    while stack:
        s = stack.pop()
        if getattr(s, "graph_id", None) == graph_id and s.name and s.name not in out:
            out.append(s.name)
        stack.extend(getattr(s, "from_node", None) or [])
    return out


def pre_grad_graph_id(graph: Any) -> int:
    """The id torch gives the graph compile_fx got (``torch._inductor.debug._pre_grad_graph_id``, set just
    before the pre-grad passes, so at ``pre_grad_custom_pass`` it is this graph's); ``id(graph)`` on a
    torch without it."""
    try:
        from torch._inductor import debug  # noqa: PLC0415

        gid = getattr(debug, "_pre_grad_graph_id", None)
        return gid if isinstance(gid, int) and gid > 0 else id(graph)
    except Exception:  # noqa: BLE001
        return id(graph)


def _tensor_meta(val: Any) -> dict[str, Any]:
    if isinstance(val, torch.Tensor):
        return {"shape": [str(s) for s in val.shape], "dtype": str(val.dtype).replace("torch.", ""),
                "device": str(val.device), "stride": [str(s) for s in val.stride()] if val.layout == torch.strided else None}
    if isinstance(val, (list, tuple)) and val and all(isinstance(v, torch.Tensor) for v in val):
        return {"shape": [[str(s) for s in v.shape] for v in val], "dtype": str(val[0].dtype).replace("torch.", "")}
    if isinstance(val, (torch.SymInt, torch.SymFloat, torch.SymBool, int, float, bool)):
        return {"shape": [], "dtype": type(val).__name__, "value": str(val)}
    return {}


def _target_name(node: Any) -> str:
    t = node.target
    if node.op == "call_function":
        try:
            from torch.fx.node import _get_qualified_name  # noqa: PLC0415

            return _get_qualified_name(t) if not isinstance(t, torch._ops.OpOverload) else str(t)
        except Exception:  # noqa: BLE001
            return str(t)
    return str(t)


@safe("FX graph")
def fx_graph(graph: Any, origin_graph_id: int | None = None) -> dict[str, Any]:
    """A torch.fx Graph as readable code plus one dict per node.

    Node dict: ``name``, ``op`` (placeholder, call_function, ...), ``target``, ``shape`` (list of
    str, symbolic sizes as printed), ``dtype``, ``user_line`` (``file:line`` of the innermost user
    frame of ``meta["stack_trace"]``), ``torch_line`` (only where the innermost frame is torch's own:
    :func:`torch_line`), ``from_node`` (names of the nodes this one came from, from
    ``meta["from_node"]`` where torch records it: with ``origin_graph_id`` (the Dynamo graph's
    :func:`pre_grad_graph_id`), only that graph's nodes, through the whole chain, as torch's provenance
    map's postToPre; else the direct sources), ``args`` (names of input nodes).
    """
    gm = getattr(graph, "owning_module", None)
    code = None
    if gm is not None:
        try:
            code = gm.print_readable(print_output=False, include_stride=False, include_device=False, colored=False)
        except TypeError:
            code = gm.print_readable(print_output=False)
        except Exception:  # noqa: BLE001
            code = None
    if code is None:
        code = str(graph)
    nodes = []
    for n in graph.nodes:
        val = n.meta.get("val", n.meta.get("example_value"))
        d: dict[str, Any] = {"name": n.name, "op": n.op, "target": _target_name(n),
                             "user_line": user_line(n.meta.get("stack_trace")),
                             "args": [a.name for a in n.all_input_nodes]}
        tl = torch_line(n.meta.get("stack_trace"))
        if tl:
            d["torch_line"] = tl
        d.update(_tensor_meta(val))
        src = n.meta.get("from_node")
        if src:
            try:
                d["from_node"] = _origins_in(src, origin_graph_id) if origin_graph_id is not None else \
                    [getattr(s, "name", str(s)) for s in src]
            except Exception:  # noqa: BLE001
                pass
        nodes.append(d)
    return {"code": code, "nodes": nodes}


def needs_autograd(graph: Any) -> bool:
    """Whether AOTAutograd will compile Dynamo's ``graph`` as a training (forward) graph, by its own
    rule (torch/_functorch/aot_autograd.py, ``output_and_mutation_safe``): grad mode is on, a tensor
    input requires grad, and an output requires grad or such an input is mutated in place.  Read from
    the ``example_value`` meta Dynamo puts on each node; where an output has none, True (the kind is
    corrected at the aot stop if AOTAutograd decides otherwise: capture.correct_kind).  Still guesses
    "forward" for an output that is a view of an input requiring grad (AOTAutograd regenerates such
    views and compiles an inference graph)."""
    if not torch.is_grad_enabled():
        return False
    grad_inputs = set()
    for n in graph.nodes:
        if n.op != "placeholder":
            continue
        val = n.meta.get("example_value", n.meta.get("val"))
        if isinstance(val, torch.Tensor) and val.requires_grad:
            grad_inputs.add(n)
    if not grad_inputs:
        return False
    for n in graph.nodes:  # an input that requires grad mutated in place (``x.add_(1)``)
        target = n.target if isinstance(n.target, str) else getattr(n.target, "__name__", "")
        if n.op in ("call_method", "call_function") and target.endswith("_") and not target.endswith("__") \
                and n.args and n.args[0] in grad_inputs:
            return True
    outputs = [n for n in graph.nodes if n.op == "output"]
    if not outputs:
        return True
    flat: list = []

    def walk(a: Any) -> None:
        if isinstance(a, (list, tuple)):
            for x in a:
                walk(x)
        elif isinstance(a, dict):
            for x in a.values():
                walk(x)
        else:
            flat.append(a)

    walk(outputs[0].args)
    for a in flat:
        if not isinstance(a, torch.fx.Node):
            continue
        if a.op == "placeholder":  # an input returned as is: AOTAutograd does not count it
            continue
        val = a.meta.get("example_value", a.meta.get("val"))
        if val is None or (isinstance(val, torch.Tensor) and val.requires_grad):
            return True
        if isinstance(val, (list, tuple)) and any(isinstance(v, torch.Tensor) and v.requires_grad for v in val):
            return True
    return False


def is_backward_graph(graph: Any) -> bool:
    """A post-grad graph is a backward graph when its inputs include ``tangents_*``."""
    return any(n.op == "placeholder" and n.name.startswith("tangents") for n in graph.nodes)


# ----------------------------------------------------------------------------- lowering: IR buffers

def _s(x: Any) -> Any:
    if isinstance(x, (list, tuple)):
        return [str(v) for v in x]
    return None if x is None else str(x)


@safe("IR buffers")
@with_graph_memo
def ir_buffers(gl: Any) -> dict[str, Any]:
    """Every IR buffer of a GraphLowering (``V.graph.buffers``), in order.

    Buffer dict: ``name`` (``buf3``), ``operation`` (``op3``), ``ir_type`` (ComputedBuffer,
    ExternKernelOut, ...), ``kind`` (Pointwise, Reduction, Scan, ... for ComputedBuffer; else the
    IR type), ``ranges``, ``reduction_ranges``, ``reduction_type``, ``dtype``, ``device``,
    ``size``, ``stride`` (symbolic sizes as text), ``origins`` (post-grad FX node names, from
    ``buf.origins``), ``origin_node`` (the FX node whose lowering made it, ``buf.origin_node``) and ``text`` (Inductor's own ``str(buf)``, cut at MAX_TEXT characters).
    """
    out = []
    unnamed = []
    for buf in list(gl.buffers):
        if not getattr(buf, "name", None):
            # a buffer Inductor never named: flex attention's score / mask mod lowered inline for its
            # template (get_name() asserts on it); it is listed as part of its template, not as a buffer
            unnamed.append(f"{type(buf).__name__}(name=None, data={type(getattr(buf, 'data', None)).__name__})")
            continue
        d: dict[str, Any] = {"name": buf.get_name(), "ir_type": type(buf).__name__}
        try:
            d["operation"] = buf.get_operation_name()
        except Exception:  # noqa: BLE001
            d["operation"] = None
        data = getattr(buf, "data", None)
        kind = type(data).__name__ if data is not None and type(buf).__name__ == "ComputedBuffer" else type(buf).__name__
        d["kind"] = kind
        d["ranges"] = _s(getattr(data, "ranges", None)) if data is not None else None
        d["reduction_ranges"] = _s(getattr(data, "reduction_ranges", None)) if data is not None else None
        d["reduction_type"] = _s(getattr(data, "reduction_type", None)) if data is not None else None
        try:
            layout = buf.get_layout()
            d["dtype"] = str(layout.dtype).replace("torch.", "")
            d["device"] = str(layout.device)
            d["size"] = _s(layout.size)
            d["stride"] = _s(getattr(layout, "stride", None))
            d["layout"] = type(layout).__name__
        except Exception:  # noqa: BLE001
            pass
        try:
            d["origins"] = sorted(o.name for o in (buf.origins or ()))
        except Exception:  # noqa: BLE001
            d["origins"] = []
        try:  # the FX node whose lowering made this buffer (ir.Buffer.origin_node; None for some)
            on = getattr(buf, "origin_node", None) or getattr(data, "origin_node", None)
            d["origin_node"] = on.name if on is not None else None
        except Exception:  # noqa: BLE001
            d["origin_node"] = None
        try:
            d["text"] = str(buf)[:MAX_TEXT]
        except Exception as e:  # noqa: BLE001
            d["text"] = f"<str(buf) failed: {e}>"
        out.append(d)
    inputs = []
    for name, inp in getattr(gl, "graph_inputs", {}).items():
        m = {"name": name}
        try:
            m.update({"size": _s(inp.get_size()), "dtype": str(inp.get_dtype()).replace("torch.", "")})
        except Exception:  # noqa: BLE001
            pass
        inputs.append(m)
    extra = {"unnamed": unnamed} if unnamed else {}
    return {"buffers": out, "graph_inputs": inputs, **extra,
            "is_inference": bool(getattr(gl, "is_inference", False)),
            "is_backward": bool(getattr(gl, "is_backward", False))}


# ----------------------------------------------------------------------------- scheduling

@safe("scheduler nodes")
@with_graph_memo
def scheduler_nodes(nodes: list) -> list[dict[str, Any]]:
    """Scheduler nodes as Inductor names them.

    Node dict: ``name`` (``op3`` or fused ``op3_op4``), ``type`` (SchedulerNode,
    FusedSchedulerNode, OuterLoopFusedSchedulerNode, ExternKernelSchedulerNode, ...),
    ``members`` (names from ``get_nodes()``), ``buffers`` (``get_buffer_names()``), ``device``,
    ``group`` (the loop group, as text), ``kernel`` (an extern node's call as the wrapper spells it:
    ``extern_kernels.mm``, ``torch.ops._c10d_functional.wait_tensor.default``; the IR node's
    ``python_kernel_name``, which ir_post_fusion.txt prints as ``opN.node.kernel``; absent for
    generated kernels) and ``text`` (``debug_str()``, cut at MAX_TEXT).
    """
    out = []
    for n in nodes:
        d: dict[str, Any] = {"name": n.get_name(), "type": type(n).__name__}
        try:
            d["members"] = [m.get_name() for m in n.get_nodes()]
        except Exception:  # noqa: BLE001
            d["members"] = [d["name"]]
        try:
            d["buffers"] = sorted(n.get_buffer_names(), key=lambda s: (len(s), s))
        except Exception:  # noqa: BLE001
            d["buffers"] = []
        try:
            d["device"] = str(n.get_device())
        except Exception:  # noqa: BLE001
            pass
        try:
            d["group"] = str(getattr(n, "group", ""))
        except Exception:  # noqa: BLE001
            pass
        kernel = getattr(getattr(n, "node", None), "python_kernel_name", None) if d["type"] == "ExternKernelSchedulerNode" \
            else None
        if kernel:
            d["kernel"] = str(kernel)
        try:
            d["text"] = n.debug_str()[:MAX_TEXT]
        except Exception as e:  # noqa: BLE001
            d["text"] = f"<debug_str() failed: {e}>"
        out.append(d)
    return out


def can_fuse(a: str, b: str) -> str:
    """``V.graph.scheduler.can_fuse(node_a, node_b)`` for two scheduler nodes named as Inductor
    names them (``op3`` or a fused ``op3_op4``), as ``"can fuse"`` / ``"cannot fuse"``; Inductor
    logs its reasons (WhyNoFuse) on the fusion logger while it decides.  Only while the graph's
    scheduler is live (a paused scheduling, loopbody or codegen stop, on the compile thread)."""
    try:
        sched = current_graph().scheduler
    except Exception as e:  # noqa: BLE001
        return f"not available: the scheduler is not live here ({type(e).__name__})"
    if sched is None:
        return "not available: the scheduler is not live here"
    by_name: dict[str, Any] = {}
    for n in sched.nodes:
        by_name[n.get_name()] = n
        for m in n.get_nodes():
            by_name.setdefault(m.get_name(), m)
    na, nb = by_name.get(a), by_name.get(b)
    if na is None or nb is None:
        return f"not available: no scheduler node named {a if na is None else b}"
    if na is nb:
        return "the same node"
    try:
        first, second = (na, nb) if _order(sched, na) <= _order(sched, nb) else (nb, na)
        return "can fuse" if sched.can_fuse(first, second) else "cannot fuse"
    except Exception as e:  # noqa: BLE001
        return f"can_fuse raised {type(e).__name__}: {e}"


def _order(sched: Any, node: Any) -> int:
    names = [n.get_name() for n in sched.nodes]
    try:
        return names.index(node.get_name())
    except ValueError:
        return min((names.index(x) for x in names if node.get_name() in x.split("_")), default=0)


# ----------------------------------------------------------------------------- LoopBody

@safe("LoopBody")
@with_graph_memo
def loop_bodies(nodes: list) -> list[dict[str, Any]]:
    """Each member SchedulerNode's LoopBody (``snode._body``, private).

    Body dict: ``node`` (``op3``), ``fused_node`` (the post-fusion node holding it), ``buffers``,
    ``var_ranges`` (index variable -> extent, as text), ``indexing_exprs`` (name -> sympy text),
    ``body`` (``LoopBody.debug_str()``: the ``ops.load``/``ops.store`` program), or ``none`` with
    the reason where a node has no LoopBody (extern kernels, templates).
    """
    out = []
    for fused in nodes:
        try:
            members = list(fused.get_nodes())
        except Exception:  # noqa: BLE001
            members = [fused]
        for m in members:
            d: dict[str, Any] = {"node": m.get_name(), "fused_node": fused.get_name(),
                                 "type": type(m).__name__}
            try:
                d["buffers"] = sorted(m.get_buffer_names(), key=lambda s: (len(s), s))
            except Exception:  # noqa: BLE001
                d["buffers"] = []
            body = getattr(m, "_body", None)
            if body is None:
                d["none"] = f"{type(m).__name__} has no LoopBody"
            else:
                try:
                    d["var_ranges"] = {str(k): str(v) for k, v in body.var_ranges.items()}
                    d["indexing_exprs"] = {str(k): str(v) for k, v in body.indexing_exprs.items()}
                except Exception:  # noqa: BLE001
                    pass
                try:
                    d["body"] = body.debug_str()[:MAX_TEXT]
                except Exception as e:  # noqa: BLE001
                    d["body"] = f"<LoopBody.debug_str() failed: {e}>"
            out.append(d)
    return out


# ----------------------------------------------------------------------------- codegen

@safe("scheduler membership")
def buffer_owners(gl: Any) -> dict[str, dict[str, str]]:
    """buffer name -> {``scheduler_node``: ``opN``, ``fused_node``: the post-fusion node holding it}."""
    sched = getattr(gl, "scheduler", None)
    out: dict[str, dict[str, str]] = {}
    if sched is None:
        return out
    for fused in sched.nodes:
        for m in fused.get_nodes():
            for b in m.get_buffer_names():
                out[b] = {"scheduler_node": m.get_name(), "fused_node": fused.get_name()}
    return out


@safe("scheduler mutations")
def buffer_mutations(gl: Any) -> dict[str, Any]:
    """What the scheduler knows about storage at codegen: ``mutation_real_name`` (a mutating
    buffer -> the buffer whose storage it writes, e.g. an index_put's ``buf75 -> buf74``,
    ``Scheduler.mutation_real_name``) and ``removed`` (``V.graph.removed_buffers``: buffers whose
    stores Inductor dropped, their values kept in registers)."""
    sched = getattr(gl, "scheduler", None)
    real = dict(getattr(sched, "mutation_real_name", {}) or {}) if sched is not None else {}
    return {"mutation_real_name": {str(k): str(v) for k, v in real.items()},
            "removed": sorted(str(b) for b in (getattr(gl, "removed_buffers", ()) or ()))}


def provenance_map_written() -> bool:
    """Whether torch writes this graph's ``inductor_provenance_tracking_node_mappings`` with kernel
    entries: ``dump_inductor_provenance_info`` (torch/_inductor/debug.py) writes only ``{"version"}``
    when ``_pre_grad_graph_id`` is unset, as for a lazily compiled backward."""
    try:
        from torch._inductor import debug  # noqa: PLC0415

        gid = getattr(debug, "_pre_grad_graph_id", "unknown")
        return True if gid == "unknown" else bool(gid)  # a torch without it: not known to be empty
    except Exception:  # noqa: BLE001
        return True


def current_attempt() -> int:
    """Dynamo's restart attempt of the compile on this thread (``[0/0_1]`` is attempt 1 of
    ``[0/0]``: Dynamo restarted the frame's analysis), from ``CompileContext.current_trace_id()``."""
    try:
        from torch._guards import CompileContext  # noqa: PLC0415

        tid = CompileContext.current_trace_id()
        return int(getattr(tid, "attempt", 0) or 0) if tid is not None else 0
    except Exception:  # noqa: BLE001
        return 0


def restart_reasons() -> list[str]:
    """Why Dynamo restarted the analysis of the frame compiling on this thread (``[0/0_1]``): the
    ``restart_reason`` of each ``RestartAnalysis`` it caught (``TensorifyScalarRestartAnalysis``, a graph
    break's speculation restart, ...), else the exception's type, as torch records them for
    ``compilation_metrics.restart_reasons``.  Read from the ``restart_reasons`` set of Dynamo's
    ``compile_frame`` (torch/_dynamo/convert_frame.py), which is on the stack while the frame's graph
    compiles; ``[]`` where it is not found (torch logs the set only when the frame's compile ends)."""
    try:
        import sys  # noqa: PLC0415

        f = sys._getframe(1)
        while f is not None:
            if f.f_code.co_name == "compile_frame" and f.f_code.co_filename.replace("\\", "/").endswith(
                    "_dynamo/convert_frame.py"):
                reasons = f.f_locals.get("restart_reasons")
                return sorted(str(r) for r in reasons) if isinstance(reasons, (set, list, tuple)) else []
            f = f.f_back
    except Exception:  # noqa: BLE001
        pass
    return []


def kernel_provenance() -> dict[str, list[str]]:
    """Inductor's provenance: ``"kernel_name:debug_handle"`` -> post-grad FX node names.

    Filled while kernels are generated when ``config.trace.provenance_tracking_level`` >= 1
    (``torch._inductor.debug._inductor_triton_kernel_to_post_grad_node_info``, global across
    graphs; the wrapper's ``# [Provenance debug handles]`` comments say which handles are its own).
    """
    try:
        from torch._inductor import debug  # noqa: PLC0415

        return {k: list(v) for k, v in getattr(debug, "_inductor_triton_kernel_to_post_grad_node_info", {}).items()}
    except Exception:  # noqa: BLE001
        return {}


def source_context(user_lines: list[str], around: int = 3) -> dict[str, str]:
    """``"file:line"`` -> that line of the user's source with ``around`` lines each side, the line
    itself marked ``>``; files that cannot be read are left out."""
    import linecache  # noqa: PLC0415
    import os  # noqa: PLC0415

    out: dict[str, str] = {}
    for ul in user_lines:
        path, _, num = ul.rpartition(":")
        if not num.isdigit():
            continue
        n = int(num)
        full = path if os.path.isabs(path) else os.path.abspath(path)
        rows = []
        for i in range(max(1, n - around), n + around + 1):
            text = linecache.getline(full, i)
            if not text and i > n:
                break
            rows.append(f"{'>' if i == n else ' '} {i:>5}  {text.rstrip()}")
        if any(r.strip() for r in rows):
            out[ul] = "\n".join(rows)
    return out
