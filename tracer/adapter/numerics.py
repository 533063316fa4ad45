"""Numerics, the torch side: an output module that reports each buffer as its kernel writes it,
the post-grad graph run node by node in its own dtype or in float64, and a graph recompiled with chosen nodes
materialized.

Reads Inductor's output-code file (its ``call`` and kernel call lines, tracer.codeparse), runs
``torch.fx.Interpreter`` over the post-grad ``GraphModule`` and compiles again with
``torch._inductor.compile_fx.compile_fx_inner`` (through :func:`tracer.adapter.whatif.compile_variant`'s
snapshot form).  Nothing here compares: :mod:`tracer.numerics` does.
"""

from __future__ import annotations

import os
import re
import tempfile
from typing import Any, Callable

import torch

#: the name the instrumented wrapper calls after each kernel call: ``_istep_capture(kernel, call, line, pairs)``
CAPTURE = "_istep_capture"
_LOW_FLOATS = (torch.float16, torch.bfloat16, torch.float32)


def _statement_end(lines: list[str], i: int) -> int:
    """The index of the last line of the statement starting at ``lines[i]`` (brackets balanced)."""
    depth = 0
    j = i
    while j < len(lines):
        text = re.sub(r"'[^']*'|\"[^\"]*\"", "", lines[j].split("#")[0])
        depth += text.count("(") + text.count("[") + text.count("{")
        depth -= text.count(")") + text.count("]") + text.count("}")
        if depth <= 0:
            return j
        j += 1
    return i


def call_writes(kernel: dict[str, Any], call: int) -> list[str]:
    """The variable names call ``call`` of ``kernel`` (one of :func:`tracer.codeparse.parse_wrapper`'s)
    writes: a generated kernel's output pointer arguments (``out_ptr``/``in_out_ptr``, C++ non-const
    pointers; by buffer number), an extern call's ``out=`` and the name a fallback's result is assigned to."""

    if kernel["backend"] not in ("cpp", "triton"):
        return list(kernel.get("writes") or [])
    return sorted(_generated_writes(kernel, call), key=lambda n: [int(x) for x in re.findall(r"\d+", n)] or [0])


def _generated_writes(kernel: dict[str, Any], call: int) -> list[str]:
    """A generated kernel's written arguments in call order (:func:`call_writes` sorts them by buffer number,
    the order Inductor made them in)."""
    from inductor_step.tracer.codeparse import _NAME_ARG, _param_is_output  # noqa: PLC0415

    flags = _param_is_output(kernel["backend"], kernel.get("source") or "")
    args = (kernel.get("calls") or [[]])[call]
    out: list[str] = []
    for a, is_out in zip(args, flags or []):
        if is_out:
            out += [n for n in _NAME_ARG.findall(a)[:1] if n not in out]
    return out


def instrument(source: str, kernels: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """``source`` (an output module) with a ``_istep_capture(kernel, call, line, (("buf3", buf3), ...))``
    statement after every kernel call of ``kernels`` (:func:`tracer.codeparse.parse_wrapper`), so each buffer
    is seen right after the kernel that writes it and before its storage is reused.  Returns the new source
    and the points, in source order: ``{"kernel", "call", "line" (1-based, in the original), "writes"}``."""
    lines = source.split("\n")
    points = []
    for k in kernels:
        for ci, line in enumerate(k.get("call_lines") or []):
            writes = call_writes(k, ci)
            if writes and 0 < line <= len(lines):
                points.append({"kernel": k["name"], "call": ci, "line": line, "writes": writes})
    called = {w: p["kernel"] for p in points for w in p["writes"]}
    for m in _ITEM.finditer(source):
        line = source.count("\n", 0, m.start()) + 1
        if m.group(2) in called:
            points.append({"kernel": called[m.group(2)], "call": 0, "line": line, "writes": [m.group(1)]})
    points.sort(key=lambda p: p["line"])
    for p in sorted(points, key=lambda p: -p["line"]):
        i = p["line"] - 1
        end = _statement_end(lines, i)
        indent = re.match(r"\s*", lines[i]).group(0)
        pairs = "".join(f"({w!r}, {w}), " for w in p["writes"])
        lines.insert(end + 1, f"{indent}{CAPTURE}({p['kernel']!r}, {p['call']}, {p['line']}, ({pairs}))")
    return "\n".join(lines), points


_ITEM = re.compile(r"^[ \t]*((?:\w+_)?buf\d+) = ((?:\w+_)?buf\d+)\[(\d+)\][ \t]*$", re.M)


def item_outputs(source: str) -> dict[str, tuple[str, int]]:
    """``{bufN: (bufM, i)}`` for each ``bufN = bufM[i]`` of an output module: the outputs of a multi-output
    fallback (``bufM = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(...)``)."""
    return {m.group(1): (m.group(2), int(m.group(3))) for m in _ITEM.finditer(source)}


def load_instrumented(output_path: str, kernels: list[dict[str, Any]],
                      capture: Callable[[str, int, int, tuple], None]) -> tuple[Any, list[dict[str, Any]]]:
    """Load output module ``output_path`` instrumented by :func:`instrument`, its captures going to
    ``capture(kernel, call, line, ((name, value), ...))``; returns ``(module, points)``.  Its kernels
    compile from Inductor's cache (the same code as the original's).  Raises what importing raises."""
    from inductor_step.tracer.adapter.output_module import load_output_module  # noqa: PLC0415

    with open(output_path, encoding="utf-8") as f:
        source = f.read()
    new, points = instrument(source, kernels)
    fd, path = tempfile.mkstemp(prefix="istep_numerics_", suffix=".py",
                                dir=os.path.dirname(output_path) or None)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(new)
    try:
        mod = load_output_module(path)
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    setattr(mod, CAPTURE, capture)
    return mod, points


def _to64(x: Any) -> Any:
    if isinstance(x, torch.Tensor) and x.dtype in _LOW_FLOATS:
        return x.to(torch.float64)
    if isinstance(x, torch.dtype) and x in _LOW_FLOATS:
        return torch.float64
    if isinstance(x, (list, tuple)):
        return type(x)(_to64(v) for v in x)
    if isinstance(x, dict):
        return {k: _to64(v) for k, v in x.items()}
    return x


def _down(x: Any) -> Any:
    if isinstance(x, torch.Tensor) and x.dtype == torch.float64:
        return x.to(torch.float32)
    if isinstance(x, (list, tuple)):
        return type(x)(_down(v) for v in x)
    return x


class _Run(torch.fx.Interpreter):
    """``torch.fx.Interpreter`` over a post-grad graph, in its own dtypes or (``float64``) with every floating
    tensor below float64 and every such dtype argument made float64; a node with no float64 kernel runs in
    float32 (its result back in float64) and its name goes to ``fell_back``."""

    def __init__(self, gm: Any, float64: bool, fell_back: list[str], replay: Any = None):
        super().__init__(gm)
        self.float64, self.fell_back, self._cur = float64, fell_back, "?"
        self.replay = replay  # tracer.adapter.inductor_rng.Replay: Inductor's random prims as the compiled graph draws

    def run_node(self, n: Any) -> Any:
        self._cur = n.name
        return super().run_node(n)

    def placeholder(self, target: Any, a: Any, k: Any) -> Any:
        v = super().placeholder(target, a, k)
        return _to64(v) if self.float64 else v

    def get_attr(self, target: Any, a: Any, k: Any) -> Any:
        v = super().get_attr(target, a, k)
        return _to64(v) if self.float64 else v

    def call_function(self, target: Any, a: Any, k: Any) -> Any:
        if self.replay is not None and self.replay.handles(target):
            v = self.replay.call(target, a, k)
            return _to64(v) if self.float64 else v
        if not self.float64:
            return target(*a, **k)
        a64, k64 = _to64(a), _to64(k)
        try:
            return target(*a64, **k64)
        except Exception:  # noqa: BLE001 - no float64 kernel for this op: float32, said so
            self.fell_back.append(self._cur)
            return _to64(target(*_down(a64), **_down(k64)))

    def call_module(self, target: Any, a: Any, k: Any) -> Any:
        f = self.float64
        return super().call_module(target, _to64(a) if f else a, _to64(k) if f else k)


def run_graph(gm: Any, args: list, on_value: Callable[[Any, Any], None], float64: bool = False) -> list[str]:
    """Run post-grad GraphModule ``gm`` on ``args`` node by node (``torch.fx.Interpreter``), calling
    ``on_value(node, value)`` after each node.  ``float64``: every floating tensor below float64 (inputs,
    attributes) and every dtype argument (``convert_element_type(x, torch.bfloat16)``) becomes float64, the
    reference run; a node that has no float64 kernel runs in float32 (its result back in float64), and its
    name is returned (those nodes' reference is float32, not float64)."""
    fell_back: list[str] = []
    r = _Run(gm, float64, fell_back)
    orig = r.run_node

    def tagged(n: Any) -> Any:
        v = orig(n)
        on_value(n, v)
        return v

    r.run_node = tagged  # type: ignore[method-assign]
    with torch.no_grad():
        r.run(*args)
    return fell_back


def _rng_state() -> tuple[Any, Any]:
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() and torch.cuda.is_initialized() else None
    return torch.get_rng_state(), cuda


def _set_rng_state(state: tuple[Any, Any]) -> None:
    torch.set_rng_state(state[0])
    if state[1] is not None:
        torch.cuda.set_rng_state_all(state[1])


def run_dual(gm: Any, args: list, args64: list, on_values: Callable[[Any, Any, Any], None],
             fell_back: list[str] | None = None, replay: Any = None) -> list[str]:
    """Run post-grad GraphModule ``gm`` on ``args`` twice in lockstep, node by node: in its own dtypes and in
    float64 (as :func:`run_graph`), calling ``on_values(node, value, value_in_float64)`` after each node, so
    that each node's two values can be compared and dropped at once: each run frees a value after its last
    use by another node (the output node is not run: the graph's outputs, a forward's saved activations, are
    not kept to the end).  Each run draws its random numbers from its own copy of
    torch's generator state as it was on entry (the CPU one and, where CUDA is initialized, the CUDA ones),
    as if they ran one after the other from the same seed.  ``args``: the first run's inputs, ``args64``: the
    second's (a copy: its floating tensors are converted, the others used as given).  Returns the nodes that ran
    in float32 for want of a float64 kernel (``fell_back``, where given, is that list, filled as they run).
    ``replay`` (a :class:`tracer.adapter.inductor_rng.Replay`): Inductor's random prims give the compiled graph's
    numbers in both runs."""
    fell_back = [] if fell_back is None else fell_back
    runs = [_Run(gm, False, fell_back, replay), _Run(gm, True, fell_back, replay)]
    rand = set(random_dependents(gm, only_inductor=False, roots_only=True))
    start = _rng_state()
    states = [start, start]
    for r, a in zip(runs, (args, args64)):
        r.env = {}
        r.args_iter = iter(gm.graph.process_inputs(*a))
    last: dict[Any, list[Any]] = {}  # node -> the values it is the last user of; the output node is no user:
    seen: set[Any] = set()  # the graph's outputs (a forward's saved activations) are dropped like the rest
    for node in reversed(gm.graph.nodes):
        if node.op == "output":
            continue
        last.setdefault(node, [])
        for n in node.all_input_nodes:
            if n not in seen:
                seen.add(n)
                last[node].append(n)
    with torch.no_grad():
        for node in gm.graph.nodes:
            if node.op == "output":
                break
            vals = []
            for i, r in enumerate(runs):
                if node.name in rand:
                    _set_rng_state(states[i])
                r.env[node] = r.run_node(node)
                if node.name in rand:
                    states[i] = _rng_state()
                vals.append(r.env[node])
            on_values(node, vals[0], vals[1])
            del vals
            dead = last.get(node, []) + ([node] if node not in seen else [])  # unused: dropped at once
            for r in runs:
                for d in dead:
                    r.env.pop(d, None)
    _set_rng_state(states[0])
    for r in runs:
        r.env.clear()
    return fell_back


def ancestors_graph(gm: Any, names: list[str]) -> Any:
    """A copy of GraphModule ``gm`` that computes only nodes ``names`` (its outputs, in that order) and what
    they are computed from: every other node is erased, the placeholders kept (the same inputs).  Raises
    KeyError for a name ``gm`` lacks."""
    graph = torch.fx.Graph()
    graph.output(graph.graph_copy(gm.graph, {}))  # the same node names; meta shared, not copied
    g = torch.fx.GraphModule(gm, graph)  # attributes shared with gm
    by_name = {n.name: n for n in g.graph.nodes}
    want = [by_name[n] for n in names]
    keep: set[Any] = set()
    stack = list(want)
    while stack:
        n = stack.pop()
        if n in keep:
            continue
        keep.add(n)
        stack.extend(n.all_input_nodes)
    out = next(n for n in g.graph.nodes if n.op == "output")
    out.args = (tuple(want),)
    for n in reversed(list(g.graph.nodes)):
        if n is not out and n.op != "placeholder" and n not in keep:
            g.graph.erase_node(n)
    g.graph.lint()
    g.recompile()
    return g


def prunable(gm: Any) -> bool:
    """Whether :func:`ancestors_graph` computes the same values as ``gm`` for its nodes: no random op (pruning
    would change the order of the draws) and no in-place op but the final ``copy_`` into an input."""
    if random_dependents(gm, only_inductor=False):
        return False
    for n in gm.graph.nodes:
        schema = getattr(n.target, "_schema", None) if n.op == "call_function" else None
        if schema is not None and schema.is_mutable and not str(n.target).startswith("aten.copy_"):
            return False
    return True


RANDOM_WORDS = ("rand", "dropout", "bernoulli", "seed", "normal", "multinomial")
#: Inductor's own random prims (``fallback_random=False``): its generated code draws by another algorithm than eager
INDUCTOR_RANDOM = ("prims.inductor_random", "prims.inductor_randint", "prims.inductor_seed", "prims.inductor_lookup_seed")


def random_dependents(gm: Any, only_inductor: bool = True, roots_only: bool = False) -> dict[str, str]:
    """{node name: the random op it depends on} for every node of ``gm`` computed from a random op's
    output, the op itself included: Inductor's own random prims (``prims.inductor_random``, drawn by Inductor's
    code, never as eager draws them), or with ``only_inductor=False`` any random op (``aten.rand``, dropout, ...:
    with ``fallback_random=True`` both sides call these ATen ops on torch's generator); ``roots_only``: the random
    ops themselves."""
    out: dict[str, str] = {}
    for n in gm.graph.nodes:
        t = str(n.target)
        if n.op == "call_function" and (t.startswith(INDUCTOR_RANDOM) if only_inductor
                                        else any(w in t for w in RANDOM_WORDS)):
            out[n.name] = t
            continue
        for a in [] if roots_only else n.all_input_nodes:
            if a.name in out:
                out[n.name] = out[a.name]
                break
    return out


def compile_materialized(snapshot: dict[str, Any], names: list[str], inputs: list, is_backward: bool,
                         is_inference: bool) -> tuple[list, list[str], bool]:
    """Compile a what-if snapshot (:func:`tracer.adapter.whatif.graph_snapshot`: the graph as
    ``compile_fx_inner`` got it) again with the nodes ``names`` as outputs, so Inductor writes each one's value
    to memory even where it fuses them, run it once on ``inputs`` and return ``(their values, the names found,
    pruned)``: a name the snapshot lacks (a post-grad pass made that node) is left out.  ``pruned``: the graph
    compiled is only what those nodes are computed from (:func:`ancestors_graph`, where :func:`prunable`), so a
    divergence early in a large graph recompiles a small one; else the whole graph with them added to its
    outputs."""
    from inductor_step.tracer.adapter.whatif import _graph_module, compile_variant, graph_snapshot  # noqa: PLC0415

    gm = _graph_module(snapshot)
    by_name = {n.name: n for n in gm.graph.nodes}
    found = [n for n in names if n in by_name and by_name[n].op == "call_function"]
    pruned = prunable(gm)
    if pruned:
        gm, skip = ancestors_graph(gm, found), 0
    else:
        out_node = next(n for n in gm.graph.nodes if n.op == "output")
        old = out_node.args[0]
        old = list(old) if isinstance(old, (list, tuple)) else [old]
        out_node.args = (tuple(old + [by_name[n] for n in found]),)
        gm.graph.lint()
        gm.recompile()
        skip = len(old)
    snap = graph_snapshot(gm)
    snap["attrs"] = snapshot["attrs"]
    snap["specs"] = snapshot["specs"]
    compiled = compile_variant(snap, {}, is_backward=is_backward, is_inference=is_inference)
    with torch.no_grad():
        outs = compiled([torch.empty_strided(a.size(), a.stride(), dtype=a.dtype, device=a.device).copy_(a)
                         if isinstance(a, torch.Tensor) and a.layout == torch.strided else a for a in inputs])
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    return outs[skip:], found, pruned
