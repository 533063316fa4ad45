"""Read Inductor's generated wrapper (output code) as text; standard library only.

Inductor's wrapper defines each kernel as ``NAME = async_compile.triton('NAME', '''...''', ...)`` or
``NAME = async_compile.cpp_pybinding([...signature...], r'''...''')`` and calls it from ``call(args)``
as ``NAME(buf0, arg1_1, ...)`` (C++) or ``NAME.run(buf0, ..., stream=stream0)`` (Triton); extern
kernels are called as ``extern_kernels.mm(...)`` with ``out=bufN``.

A higher-order op's subgraph (a ``torch.cond`` branch, an ``invoke_subgraph`` region, a ``while_loop``
body) is a module-level ``def true_graph_0(args):`` function that ``call()`` calls; its buffers and
arguments carry its name (``true_graph_0_buf0``, ``true_graph_0_arg0_1``).  :func:`subgraph_functions`
finds them and ``parse_wrapper(wrapper, body=...)`` reads one.

Under CUDA graphs (``torch._inductor.config.graph_partition``, on by default with ``triton.cudagraphs`` from
torch 2.9) the graph's body is split: the kernels sit in module-level ``def partition_0(args):`` functions and
``call`` is a method, ``def call(self, args):`` of ``class Runner``, that calls them as
``self.partitions[0](partition0_args)`` (``runner = Runner(partitions=[partition_0, ...])``) between the
statements that run outside the CUDA graphs.  Those functions are the graph's own body, not subgraphs:
:func:`graph_regions` says where the body is and in which order it runs.
"""

from __future__ import annotations

import bisect
import re
from typing import Any, Callable

from inductor_step.session.format import split_args as _split_args  # noqa: F401 - codeparse_cpp, cpp_kernels

_DEF = re.compile(
    r"^(?P<name>\w+) = async_compile\.(?P<kind>triton|cpp_pybinding|cpp|cuda|halide)\((?P<head>[^\n]*?)"
    r"(?P<q>r?''')(?P<src>.*?)'''",
    re.S | re.M,
)
# a buffer's name; inside a subgraph's function it carries the subgraph's name: true_graph_0_buf3
BUF = r"(?:\w+_)?buf\d+"
_BUF = re.compile(BUF)
_REUSE = re.compile(rf"^[ \t]*({BUF}) = ({BUF}); del \2[ \t]+# reuse", re.M)
_EXTERN_CALL = re.compile(rf"^[ \t]*(?:({BUF}) = )?(extern_kernels\.\w+)\((.*)\)[ \t]*$", re.M)
_CALL_LINE = re.compile(r"^[ \t]*(?P<name>\w+)(?:\.run)?\((?P<args>.*)\)[ \t]*$", re.M)  # kernel(...) / kernel.run(...)
_ITEM = re.compile(rf"^[ \t]*({BUF}) = ({BUF})\[(\d+)\][ \t]*$", re.M)
# ATen fallbacks Inductor calls directly: buf8 = torch.ops.aten._scaled_dot_product_...default(...); an op
# that returns nothing (its IR node has a NoneLayout: an in-place fallback, a collective's
# wait_tensor, the in-place all_reduce_) is called as a bare statement: torch.ops.X.default(buf2)
_FALLBACK_CALL = re.compile(rf"^[ \t]*(?:({BUF}) = )?((?:torch\.ops|aten)\.[\w.]+)\((.*)\)[ \t]*$", re.M)
# collectives Inductor calls as extern kernels (torch/_inductor/comm_lowering.py: _CollectiveKernel,
# _WaitKernel, _AllReduce_Kernel): torch.ops._c10d_functional.all_reduce_.default -> "all_reduce_"
_COLLECTIVE = re.compile(r"^torch\.ops\.(?:_c10d_functional|c10d_functional|_dtensor)\.(\w+)\.\w+$")
_NAME_ARG = re.compile(r"\b((?:\w+_)?(?:buf|arg)\d\w*|(?:buf|arg|primals_|tangents_)\w*)\b")
# a subgraph's function: def true_graph_0(args): ... up to the next line that is not indented
_SUBGRAPH_FN = re.compile(r"^def (\w+)\(args\):\n(?:(?:[ \t]+[^\n]*)?\n)*", re.M)
_NOT_SUBGRAPHS = {"call", "get_args", "benchmark_compiled_module"}
# graph partitions (CUDA graphs): runner = Runner(partitions=[partition_0, partition_1,])
_RUNNER = re.compile(r"^runner = Runner\(partitions=\[([^\]]*)\]\)", re.M)
_NOT_NEWLINE = re.compile(r"[^\n]")
_CALL_DEF = re.compile(r"^[ \t]*def call\((?:self, )?args\):", re.M)
_TRITON_PARAMS = re.compile(r"^def (\w+)\(([^)]*)\)", re.M)
_CPP_PARAMS = re.compile(r'extern "C"\s+\w*\s*void\s+\w+\((.*?)\)', re.S)  # kernel(...); a C++ wrapper: its name


def _param_is_output(backend: str, source: str) -> list[bool] | None:
    """Which kernel parameters are written: Triton ``out_ptr``/``in_out_ptr``, C++ non-const pointers."""
    if backend == "triton":
        m = _TRITON_PARAMS.search(source)
        if not m:
            return None
        params = [p.strip().split(":")[0].strip() for p in m.group(2).split(",") if p.strip()]
        return [p.startswith(("out_ptr", "in_out_ptr")) for p in params]
    m = _CPP_PARAMS.search(source)
    if not m:
        return None
    params = [p.strip() for p in m.group(1).split(",") if p.strip()]
    return [("*" in p and not p.startswith("const")) for p in params]


def partition_functions(wrapper: str) -> list[str]:
    """The graph partitions' functions, in ``Runner.partitions`` order (``runner =
    Runner(partitions=[partition_0, partition_1,])``, torch/_inductor/codegen/wrapper.py); ``[]`` for a
    wrapper without partitions (no CUDA graphs, older torch, or a CPU graph: ``partitions=[]``)."""
    m = _RUNNER.search(wrapper or "")
    return [p.strip() for p in m.group(1).split(",") if p.strip()] if m else []


def graph_regions(wrapper: str) -> list[tuple[int, int, int | None]]:
    """Where the graph's own body is in ``wrapper``, as ``(first, end, anchor)`` character ranges: ``call``
    to the end of the module (``anchor`` None), and each partition function (:func:`partition_functions`)
    with ``anchor`` the offset of its ``self.partitions[i](`` call in ``call``, so a statement's place in
    the run order is ``(anchor, offset)`` for a partition's statement and ``(offset, offset)`` for
    ``call``'s own.  Higher-order ops' subgraph functions are not part of it (:func:`subgraph_functions`)."""
    m = _CALL_DEF.search(wrapper)
    call_start = m.start() if m else max(wrapper.find("def call("), 0)
    out: list[tuple[int, int, int | None]] = [(call_start, len(wrapper), None)]
    fns = {f.group(1): (f.start(), f.end()) for f in _SUBGRAPH_FN.finditer(wrapper)}
    for i, name in enumerate(partition_functions(wrapper)):
        if name not in fns:
            continue
        at = wrapper.find(f"self.partitions[{i}](", call_start)
        out.append((fns[name][0], fns[name][1], at if at >= 0 else call_start))
    return out


def _masked_body(wrapper: str) -> tuple[str, list[tuple[int, int, int | None]]]:
    """``wrapper`` with everything outside :func:`graph_regions` blanked (newlines kept, so offsets and line
    numbers stay those of ``wrapper``), and the regions."""
    regions = graph_regions(wrapper)
    pieces, at = [], 0
    for a, e, _ in sorted(regions):
        if a > at:
            pieces.append(_NOT_NEWLINE.sub(" ", wrapper[at:a]))
        pieces.append(wrapper[max(a, at):e])
        at = max(at, e)
    pieces.append(_NOT_NEWLINE.sub(" ", wrapper[at:]))
    return "".join(pieces), regions


def subgraph_functions(wrapper: str) -> dict[str, tuple[int, int]]:
    """The module-level functions Inductor generated for higher-order ops' subgraphs (``def
    true_graph_0(args):``, torch/_inductor/codegen/wrapper.py ``define_subgraph_launcher_fn``): name ->
    (first, end) character offsets of the function in ``wrapper``.  Graph partitions' functions
    (:func:`partition_functions`) are the graph's own body, never subgraphs."""
    parts = set(partition_functions(wrapper))
    return {m.group(1): (m.start(), m.end()) for m in _SUBGRAPH_FN.finditer(wrapper)
            if m.group(1) not in _NOT_SUBGRAPHS and m.group(1) not in parts}


def subgraph_argument_lists(wrapper: str) -> dict[str, list[str]]:
    """Subgraph function -> the argument texts its callers pass (``true_graph_0_args = [arg1_1, arg0_1]``),
    each distinct list once: a cond's two branches get the same list, a while_loop's cond and body too."""
    out: dict[str, list[str]] = {}
    for m in re.finditer(r"^[ \t]*(\w+)_args = \[(.*)\][ \t]*$", wrapper, re.M):
        if m.group(2) not in out.setdefault(m.group(1), []):
            out[m.group(1)].append(m.group(2))
    return out


def parse_wrapper(wrapper: str, body: tuple[int, int] | None = None) -> list[dict[str, Any]]:
    """Kernels defined and called in an Inductor wrapper, in call order.

    ``body``: the character range whose calls are read (a subgraph's function, from
    :func:`subgraph_functions`: only the kernels it calls are returned); default the graph's own body,
    :func:`graph_regions`: ``call()`` to the end and, under CUDA graphs, its partition functions, in the
    order they run (kernels called only in a subgraph's function are listed with no calls).

    Returns one dict per kernel: ``name``, ``backend`` (``"triton"``, ``"cpp"``, ``"extern"``),
    ``source`` (the kernel's own source; for extern kernels the call line), ``calls`` (each call's
    argument list as text), ``call_lines`` (each call's 1-based line in ``wrapper``) and ``writes`` (buffer names the kernel writes, resolved through
    Inductor's ``bufN = bufM; del bufM  # reuse`` aliases, so in-place reuse still names the
    buffers that were computed).  Extern and fallback calls are named ``OP#i`` (the i-th call of
    ``OP`` in the wrapper); a fallback called as a bare statement (it returns nothing) has no
    ``writes`` until :func:`bind_no_return_calls` finds its IR node.  A collective
    (``torch.ops._c10d_functional.X``) also has ``collective``: ``"all_reduce_"``,
    ``"wait_tensor"``, ...  Never raises on unusual code: unknown parts are left out.
    """
    starts = _line_starts(wrapper)
    kernels = _defined_kernels(wrapper)
    # alias groups from buffer reuse: every name in a chain refers to the same storage
    reuses = dict(_REUSE.findall(wrapper))


    order: list[tuple[tuple[int, int], str]] = []
    region = body
    if body is None:
        body_start = 0
        text, regions = _masked_body(wrapper)
    else:
        body_start, text, regions = body[0], wrapper[body[0]:body[1]], []

    def place(pos: int) -> tuple[int, int]:  # a statement's place in the run order (graph_regions)
        at = body_start + pos + len(text[pos:pos + 200]) - len(text[pos:pos + 200].lstrip())  # its first character
        anchor = next((r[2] for r in regions if r[2] is not None and r[0] <= at < r[1]), at)
        return anchor, at
    body = text
    order += _kernel_calls(kernels, body, starts, body_start, place)
    order += _extern_calls(kernels, body, starts, body_start, place)
    order.sort()
    seen: list[str] = []
    for _, n in order:
        if n not in seen:
            seen.append(n)
    # kernels defined but never called (e.g. only in the benchmark harness) come last; in a subgraph's
    # function, only those it calls
    seen += [n for n in kernels if n not in seen and region is None]
    out = [kernels[n] for n in seen]
    for k in out:
        k["reuses"] = {w: reuses[w] for w in k["writes"] if w in reuses}
    return out


def _defined_kernels(wrapper: str) -> dict[str, dict[str, Any]]:
    """The kernels ``wrapper`` defines (``NAME = async_compile.triton(...)``, ``.cpp_pybinding(...)``), by name,
    each with no calls yet (parse_wrapper's dicts)."""
    kernels: dict[str, dict[str, Any]] = {}
    for m in _DEF.finditer(wrapper):
        backend = "triton" if m.group("kind") == "triton" else ("cpp" if m.group("kind").startswith("cpp") else m.group("kind"))
        src = m.group("src").strip("\n")
        kernels[m.group("name")] = {"name": m.group("name"), "backend": backend, "source": src,
                                    "calls": [], "call_lines": [], "writes": []}
    return kernels


def _kernel_calls(kernels: dict[str, dict[str, Any]], body: str, starts: list[int], body_start: int,
                  place: Callable[[int], tuple[int, int]]) -> list[tuple[tuple[int, int], str]]:
    """Record each call in ``body`` (at ``body_start`` of the wrapper) of the defined ``kernels``: its arguments,
    line and the buffers it writes; returns each call's ``(place in the run order, kernel name)``."""
    order: list[tuple[tuple[int, int], str]] = []
    outputs: dict[str, list[bool] | None] = {}  # each kernel's written parameters, read from its source once
    for cm in _CALL_LINE.finditer(body):  # one pass over the body for every kernel (not one per kernel)
        k = kernels.get(cm.group("name"))
        if k is None:
            continue
        args = [a for a in _split_args(cm.group("args")) if "=" not in a.split("(")[0]]
        k["calls"].append(args)
        k["call_lines"].append(_line_of(starts, body_start + cm.start("args")))
        if k["name"] not in outputs:
            outputs[k["name"]] = _param_is_output(k["backend"], k["source"])
        flags = outputs[k["name"]]
        written = []
        if flags:
            for a, is_out in zip(args, flags):
                if is_out:
                    written += _NAME_ARG.findall(a)[:1]
        k["writes"] = sorted(set(k["writes"]) | set(written), key=lambda s: (len(s), s))
        order.append((place(cm.start()), k["name"]))
    return order


def _extern_calls(kernels: dict[str, dict[str, Any]], body: str, starts: list[int], body_start: int,
                  place: Callable[[int], tuple[int, int]]) -> list[tuple[tuple[int, int], str]]:
    """Add to ``kernels`` the extern kernel calls (``extern_kernels.X``, ``OP#i``) and fallback calls
    (``torch.ops.X``, a collective's with ``collective``) in ``body``; returns each one's ``(place, name)``."""
    order: list[tuple[tuple[int, int], str]] = []
    extern_i = 0
    for cm in _EXTERN_CALL.finditer(body):
        call_args = _split_args(cm.group(3))
        outs = [a.split("=", 1)[1].strip() for a in call_args if a.replace(" ", "").startswith("out=")]
        if cm.group(1):  # bufN = extern_kernels.convolution(...)
            outs.insert(0, cm.group(1))
        name = f"{cm.group(2)}#{extern_i}"
        extern_i += 1
        kernels[name] = {"name": name, "backend": "extern", "source": cm.group(0).strip(),
                         "calls": [call_args], "call_lines": [_line_of(starts, body_start + cm.start(2))],
                         "writes": [o for o in outs if _BUF.fullmatch(o)]}
        order.append((place(cm.start()), name))
    fallback_i: dict[str, int] = {}
    for cm in _FALLBACK_CALL.finditer(body):
        op = cm.group(2) if cm.group(2).startswith("torch.ops.") else "torch.ops." + cm.group(2)
        i = fallback_i.get(op, 0)
        fallback_i[op] = i + 1
        name = f"{op}#{i}"
        kernels[name] = {"name": name, "backend": "extern", "source": cm.group(0).strip(),
                         "calls": [_split_args(cm.group(3))], "call_lines": [_line_of(starts, body_start + cm.start(2))],
                         "writes": [cm.group(1)] if cm.group(1) else []}
        coll = _COLLECTIVE.match(op)
        if coll:
            kernels[name]["collective"] = coll.group(1)
        order.append((place(cm.start()), name))
    return order


def bind_no_return_calls(kernels: list[dict[str, Any]], sched_nodes: list[dict[str, Any]],
                         real_name: dict[str, str] | None = None) -> None:
    """Give each fallback call that returns nothing (``torch.ops._c10d_functional.wait_tensor.default(buf2)``:
    no ``bufN =``, so the wrapper never names its buffers) the buffers of the IR node that made it,
    in place (``writes``).

    ``sched_nodes``: the scheduler's nodes in codegen order (the scheduling stop's ``after``),
    with ``type``, ``kernel`` (the extern call's name, ``python_kernel_name``) and ``buffers``.
    Inductor emits one call per extern node, in that order, so the i-th call of an op is the i-th
    extern node whose ``kernel`` is that op; ``real_name`` (``Scheduler.mutation_real_name``:
    a ``MutationOutput`` buffer -> the buffer it writes) checks it: a node whose mutation outputs
    write none of the call's arguments is not that call's, and the first unused node of the op
    that does is taken instead.  A call left without a node keeps ``writes`` empty.
    """
    real_name = real_name or {}
    by_op: dict[str, list[dict[str, Any]]] = {}
    for n in sched_nodes or []:
        if n.get("type") == "ExternKernelSchedulerNode" and n.get("kernel"):
            by_op.setdefault(n["kernel"].removeprefix("torch.ops."), []).append(n)
    used = {n["name"] for ns in by_op.values() for n in ns for k in kernels
            if k.get("writes") and k["writes"][0] in (n.get("buffers") or [])}

    def fits(node: dict[str, Any], args: set[str]) -> bool:
        written = {real_name[b] for b in node.get("buffers") or [] if b in real_name}
        return not written or bool(written & args)

    for k in kernels:
        if k.get("backend") != "extern" or "#" not in k["name"] or k.get("writes") or not k.get("calls"):
            continue
        op, _, i = k["name"].rpartition("#")
        # the wrapper spells an aten fallback "aten.scatter_reduce_.two(...)"; its node's kernel may
        # or may not say "torch.ops." first
        nodes = by_op.get(op.removeprefix("torch.ops."), [])
        args = {n for a in k["calls"][0] for n in _NAME_ARG.findall(a)}
        node = nodes[int(i)] if int(i) < len(nodes) else None
        if node is None or node["name"] in used or not fits(node, args):
            node = next((n for n in nodes if n["name"] not in used and fits(n, args)), None)
        if node is not None:
            used.add(node["name"])
            k["writes"] = list(node.get("buffers") or [])


def multi_outputs(wrapper: str) -> dict[str, tuple[str, int]]:
    """``bufK = bufJ[i]`` lines: the outputs of multi-output kernels, child -> (parent, index)."""
    return {c: (p, int(i)) for c, p, i in _ITEM.findall(wrapper)}


_SOLE = re.compile(r"^[ \t]*(buf\d+) = (buf\d+)[ \t]*$", re.M)


def sole_outputs(wrapper: str) -> dict[str, str]:
    """``bufK = bufJ`` lines (no index, no ``del``): a fallback's single output, child -> parent.
    Inductor wraps a fallback's one tensor in a ``MultiOutput`` with no index (torch 2.11-2.13:
    ``buf4 = torch.ops.aten.cumsum.default(...)`` then ``buf5 = buf4``); torch 2.14 writes the
    fallback's buffer directly."""
    return dict(_SOLE.findall(wrapper))


def kernel_source_lines(wrapper: str, name: str) -> tuple[int, int] | None:
    """1-based (first, last) line numbers of kernel ``name``'s definition inside ``wrapper``."""
    for m in _DEF.finditer(wrapper):
        if m.group("name") == name:
            first = wrapper.count("\n", 0, m.start()) + 1
            last = wrapper.count("\n", 0, m.end()) + 1
            return first, last
    return None


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer("\n", text)]


def _line_of(starts: list[int], pos: int) -> int:
    """1-based line number of character offset ``pos``."""
    return bisect.bisect_right(starts, pos)


def kernel_spans(wrapper: str, kernels: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Where each kernel of :func:`parse_wrapper` sits in ``wrapper`` (1-based line numbers), so a
    viewer needs no parsing: ``{"def": [first, last], "body": line, "calls": [line, ...]}`` for a
    generated kernel (its ``NAME = async_compile...`` definition, the wrapper line holding the
    first line of its ``source``, each call in ``call()``); ``{"call": line, "calls": [line]}`` for
    an extern or fallback call."""
    starts = _line_starts(wrapper)
    defs: dict[str, tuple[int, int, int]] = {}
    for m in _DEF.finditer(wrapper):
        src = m.group("src")
        first = m.start("src") + (len(src) - len(src.lstrip("\n")))
        defs[m.group("name")] = (_line_of(starts, m.start()), _line_of(starts, m.end() - 1), _line_of(starts, first))
    out: dict[str, dict[str, Any]] = {}
    for k in kernels:
        calls = list(k.get("call_lines") or [])
        if k.get("backend") == "extern":
            out[k["name"]] = {"call": calls[0] if calls else None, "calls": calls}
        elif k["name"] in defs:
            first, last, body = defs[k["name"]]
            out[k["name"]] = {"def": [first, last], "body": body, "calls": calls}
    return out


_CPP_PTR_ALIAS = re.compile(r"^[ \t]*auto (out_ptr\d+) = (in_out_ptr\d+);[ \t]*$", re.M)
# bufB = bufA; del bufA  # reuse, or bufB = reinterpret_tensor(bufA, ...); del bufA  # reuse
_ANY_REUSE = re.compile(r"^[ \t]*(buf\d+) = (?:reinterpret_tensor\()?(buf\d+)\b[^\n]*; del \2[ \t]+# reuse", re.M)


def in_place_writes(kernel: dict[str, Any], wrapper: str) -> list[str]:
    """Buffers a C++ kernel stores in the storage of a buffer it also writes, before that one:
    ``buf10 = buf8; del buf8  # reuse`` (or ``= reinterpret_tensor(buf8, ...)``), then
    ``kernel(..., buf10, ...)`` whose source keeps buf8's own pointer as ``auto out_ptr0 = in_out_ptr1;``
    computes buf8 too.  One step back the ``# reuse`` chain per such alias of the parameter; ``[]``
    for other kernels (``kernel``: one of :func:`parse_wrapper`'s, ``wrapper`` its wrapper)."""
    if kernel.get("backend") != "cpp":
        return []
    src = kernel.get("source") or ""
    m = _CPP_PARAMS.search(src)
    if not m:
        return []
    params = [re.split(r"[\s*&]+", p.strip())[-1] for p in m.group(1).split(",") if p.strip()]
    n_alias: dict[str, int] = {}
    for _, target in _CPP_PTR_ALIAS.findall(src):
        n_alias[target] = n_alias.get(target, 0) + 1
    reuses = dict(_ANY_REUSE.findall(wrapper))
    out: list[str] = []
    for call in kernel.get("calls") or []:
        for arg, param in zip(call, params):
            names = _NAME_ARG.findall(arg)
            name = names[0] if names else None
            for _ in range(n_alias.get(param, 0)):
                name = reuses.get(name) if name else None
                if name and name not in out:
                    out.append(name)
    return out


def attach_owners(kernels: list[dict], owners: dict[str, dict[str, str]], wrapper: str = "") -> None:
    """Each kernel of :func:`parse_wrapper` gets ``fused_nodes``, ``buffers`` and
    ``scheduler_nodes`` from the scheduler's buffer owners (in place; ``writes`` is dropped);
    ``wrapper``: the output module, where a C++ kernel's in-place stores are read (:func:`in_place_writes`)."""
    members: dict[str, list[str]] = {}
    for b, o in owners.items():
        members.setdefault(o["fused_node"], []).append(b)
    for k in kernels:
        # a kernel computes every buffer of the fused node(s) owning a buffer it writes (also one it
        # stores in place before the buffer it passes: auto out_ptr0 = in_out_ptr1;)
        fused = []
        for b in k["writes"] + in_place_writes(k, wrapper):
            o = owners.get(b)
            if o and o["fused_node"] not in fused:
                fused.append(o["fused_node"])
        k["fused_nodes"] = sorted(fused, key=lambda f: [int(x) for x in re.findall(r"\d+", f)] or [1 << 30])
        k["buffers"] = sorted({b for f in fused for b in members[f]}, key=lambda s: (len(s), s)) if owners else k["writes"]
        k["scheduler_nodes"] = sorted({owners[b]["scheduler_node"] for b in k["buffers"] if b in owners},
                                      key=lambda s: (len(s), s))
        del k["writes"]
