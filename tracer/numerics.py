"""Numerics: every buffer of a compiled graph against eager, and the first that diverges or holds a NaN.

:func:`compare_graph` runs Inductor's output module once with a capture after every kernel call
(:func:`tracer.adapter.numerics.instrument`: each buffer is seen right after the kernel that writes it, before
its storage is reused, so an in-place kernel's buffer is compared as written) on the script's own inputs of the
graph's first call, keeping a copy of each buffer; then the post-grad graph node by node (``torch.fx.Interpreter``)
in the graph's dtypes and in float64 side by side (:func:`tracer.adapter.numerics.run_dual`).  As each node
runs, the buffers it produced (the links' ``fx_nodes``; among them the one no other of them feeds, of the
buffer's size) are compared with its two values and dropped, and the interpreters drop each value after its last
use: at most one kept copy of the compiled buffers (``kept_bytes``) lives beside the graph's live eager values,
and the compiled graph and the float64 graph each run once.

Tolerances are torch.testing's defaults for the buffer's dtype (:data:`TOLERANCES`).  A buffer *diverges* when
some element is further from eager than ``atol + rtol * |eager|``.  Its verdict then reads the float64 run:
``closer to float64 than eager`` (eager's own per-op rounding is the larger error: not a bug), ``as far from
float64 as eager`` or ``further from float64 than eager`` -- compiled's error against float64, in tolerances,
is over 1 and over twice eager's: the suspect case, the tolerance widened by how far eager itself is from
float64.  A NaN or Inf is counted on both sides; a position where one side is finite and the other not
diverges without limit.
"""

from __future__ import annotations

import math
import time
from typing import Any

import torch

from inductor_step.tracer.adapter import numerics as tn
from inductor_step.tracer.adapter.inductor_rng import Replay
from inductor_step.tracer.numerics_inputs import graph_inputs

#: torch.testing.assert_close's default (rtol, atol) by dtype
TOLERANCES: dict[str, tuple[float, float]] = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5),
                                              "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
                                              "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}
DIVERGING = ("closer", "same", "order", "suspect", "diverges")  # statuses past torch.testing's tolerance of eager
SUSPECT_FACTOR = 2.0  # compiled further from float64 than this many times eager's own error: suspect
TABLE_ROWS = 8  # the short table of the answer: the rows up to the divergence, at most this many


def _dt(t: Any) -> str:
    return str(t.dtype).replace("torch.", "")


def stats(c: Any, r: Any) -> dict[str, Any]:
    """How tensor ``c`` (compiled) differs from ``r`` (a reference of the same number of elements, any float
    dtype, any device): ``max_abs``, ``max_rel`` (max_abs over the largest finite ``|r|``), ``eps_units``
    (max_abs in units of ``c``'s dtype eps times that scale), ``tol_ratio`` (the largest ``|c - r| / (atol +
    rtol |r|)`` with ``c``'s dtype tolerances: over 1 fails ``torch.testing.assert_close``), ``nonfinite_mismatch``
    (positions where one side is NaN/Inf and the other is not the same), ``nan``/``inf`` counts of ``c`` and
    ``ref_nan``/``ref_inf`` of ``r``.
    Integer and bool tensors compare exactly (``tol_ratio`` 0 or inf).  Computed in float64."""
    dtype = _dt(c)
    c = c.detach()
    r = r.detach().to(c.device)
    if c.shape != r.shape:
        c, r = c.reshape(-1), r.reshape(-1)
    if not (c.is_floating_point() or c.is_complex()):
        bad = int((c != r.to(c.dtype)).sum())
        return {"max_abs": float((c.double() - r.double()).abs().max()) if c.numel() else 0.0, "max_rel": None,
                "eps_units": None, "tol_ratio": math.inf if bad else 0.0, "nonfinite_mismatch": 0, "nan": 0,
                "inf": 0, "mismatches": bad}
    rtol, atol = TOLERANCES.get(dtype, (0.0, 0.0))
    c, r = c.reshape(-1), r.reshape(-1)  # (a copy only where a buffer is not contiguous)
    acc = {"max_abs": 0.0, "ratio": 0.0, "scale": 0.0, "mismatch": 0, "nan": 0, "inf": 0, "ref_nan": 0, "ref_inf": 0}
    cpu = c.device.type == "cpu"
    step = CHUNK if cpu else CHUNK_GPU
    threads = torch.get_num_threads()
    if cpu:  # one thread: a chunk's passes are too short to share (see CHUNK)
        torch.set_num_threads(1)
    try:
        for i in range(0, c.numel(), step):  # float64 temporaries of a chunk, not of the whole buffer
            _chunk(c[i:i + step], r[i:i + step], rtol, atol, acc)
    finally:
        if cpu:
            torch.set_num_threads(threads)
    max_abs, scale, mismatch = acc["max_abs"], acc["scale"], acc["mismatch"]
    ratio = acc["ratio"] if (atol or rtol) else (0.0 if max_abs == 0 else math.inf)
    eps = torch.finfo(c.dtype).eps if c.is_floating_point() else torch.finfo(torch.float32).eps
    out = {"max_abs": max_abs, "max_rel": max_abs / scale if scale else (0.0 if max_abs == 0 else math.inf),
           "eps_units": max_abs / (eps * scale) if scale else (0.0 if max_abs == 0 else math.inf),
           "tol_ratio": ratio, "nonfinite_mismatch": mismatch, "nan": acc["nan"], "inf": acc["inf"],
           "ref_nan": acc["ref_nan"], "ref_inf": acc["ref_inf"]}
    if mismatch:
        out["max_abs"] = out["tol_ratio"] = out["max_rel"] = out["eps_units"] = math.inf
    return out


#: elements compared at a time on CPU, on one thread: float64 temporaries of 2 MiB, which stay in the cache across
#: the dozen passes of a chunk; on the shared 2-core EPYC of BENCHMARKS.md (load 5), 10M float32 elements against
#: float32 and float64 took 0.16 s so against 1.7 s with 32 MiB chunks on torch's 2 threads (whose barriers stall
#: when another process holds a core: up to 14 s).  The numbers are the same: maxima and counts.
CHUNK = 1 << 18
CHUNK_GPU = 1 << 24  # on a GPU: fewer, larger launches (float64 temporaries of 128 MiB)


def _chunk(c: Any, r: Any, rtol: float, atol: float, acc: dict[str, Any]) -> None:
    """:func:`stats` over one slice of the flattened tensors, folded into ``acc``.  Where both slices are
    finite (the common case: one check each, in their own dtypes) the masks and the NaN/Inf counts are skipped;
    the numbers are the same either way."""
    c64 = c.to(torch.complex128 if c.is_complex() else torch.float64)
    r64 = r.to(c64.dtype)
    if bool(torch.isfinite(c).all()) and bool(torch.isfinite(r).all()):
        if c64.numel():
            diff = torch.sub(c64, r64).abs_()
            rabs = r64.abs()
            acc["max_abs"] = max(acc["max_abs"], float(diff.max()))
            acc["scale"] = max(acc["scale"], float(rabs.max()))
            if atol or rtol:
                acc["ratio"] = max(acc["ratio"], float(diff.div_(rabs.mul_(rtol).add_(atol)).max()))
        return
    fc, fr = torch.isfinite(c64), torch.isfinite(r64)
    both = fc & fr
    same_nonfinite = ~fc & ~fr & ((c64 == r64) | (torch.isnan(c64) & torch.isnan(r64)))
    acc["mismatch"] += int((~both & ~same_nonfinite).sum())
    zero = torch.zeros((), dtype=torch.float64, device=c.device)
    diff = torch.where(both, (c64 - r64).abs(), zero)
    rabs = torch.where(fr, r64.abs(), zero)
    if diff.numel():
        acc["max_abs"] = max(acc["max_abs"], float(diff.max()))
        acc["scale"] = max(acc["scale"], float(rabs.max()))
        if atol or rtol:
            acc["ratio"] = max(acc["ratio"], float((diff / (atol + rtol * rabs)).max()))
    acc["nan"] += int(torch.isnan(c64).sum())
    acc["inf"] += int(torch.isinf(c64).sum())
    acc["ref_nan"] += int(torch.isnan(r64).sum())
    acc["ref_inf"] += int(torch.isinf(r64).sum())


def _json_num(x: Any) -> Any:
    """JSON has no inf: "inf" as a string (the session's readers show it as ∞)."""
    if isinstance(x, float) and not math.isfinite(x):
        return "inf" if x > 0 else ("nan" if math.isnan(x) else "-inf")
    return x


def producer_node(gm: Any, fx_nodes: list[str], numel: int | None = None) -> str | None:
    """Of a buffer's FX nodes (its origins), the one whose value the buffer holds: the last, in graph
    order, that no other of them uses, of ``numel`` elements where known; None if none is in ``gm``."""
    order = {n.name: i for i, n in enumerate(gm.graph.nodes)}
    nodes = {n.name: n for n in gm.graph.nodes}
    cands = [n for n in fx_nodes if n in nodes]
    if numel is not None:
        sized = [n for n in cands if _numel(nodes[n]) == numel]
        cands = sized or cands
    if not cands:
        return None
    sinks = [n for n in cands if not any(u.name in cands for u in nodes[n].users)]
    return max(sinks or cands, key=lambda n: order[n])


def updater_node(gm: Any, node: str | None, kernel: dict[str, Any]) -> str | None:
    """Where a kernel writes a buffer whose node (``node``, from the links) another node of the kernel's own
    (``kernel["post_grad_nodes"]``) accumulates into in place -- an ``index_put(node, ..., accumulate=True)``, a
    scatter or ``index_add`` of its size taking ``node`` as the tensor it updates (Triton's atomic adds of an
    embedding's gradient into the zeros of a ``full``) -- that node, whose value the buffer holds after the
    kernel; None where there is not exactly one."""
    own = set(kernel.get("post_grad_nodes") or [])
    nodes = {n.name: n for n in gm.graph.nodes}
    n = nodes.get(node or "")
    if n is None or not own:
        return None
    users = [u.name for u in n.users if u.name in own and u.args and u.args[0] is n and _numel(u) == _numel(n)
             and any(w in str(u.target) for w in ("index_put", "scatter", "index_add"))]
    return users[0] if len(users) == 1 else None


def input_mutations(gm: Any) -> dict[str, str]:
    """{placeholder: the node whose value the graph copies into it} for each input the graph mutates
    (``copy_(arg3_1, add_2)`` at a post-grad graph's end: an optimizer step, a running mean): a kernel that
    writes ``arg3_1`` in place is compared with ``add_2``."""
    out: dict[str, str] = {}
    for n in gm.graph.nodes:
        if n.op == "call_function" and str(n.target).startswith("aten.copy_") and len(n.args) >= 2 \
                and getattr(n.args[0], "op", None) == "placeholder" and hasattr(n.args[1], "name"):
            out[n.args[0].name] = n.args[1].name
    return out


def _numel(node: Any) -> int | None:
    v = node.meta.get("val")
    try:
        return int(v.numel()) if isinstance(v, torch.Tensor) else None
    except Exception:  # noqa: BLE001 - symbolic sizes
        return None


def _reference(old: Any, v: Any) -> Any:
    """The float64 value used as the reference of a node whose eager value was ``old``: in float32 where eager's
    was float16 or bfloat16 (float32's eps is 2^16 times finer than bfloat16's: enough for a reference), else
    float64."""
    if isinstance(v, torch.Tensor):
        low = isinstance(old, torch.Tensor) and old.dtype in (torch.float16, torch.bfloat16)
        return v.to(torch.float32) if low and v.dtype == torch.float64 else v
    if isinstance(v, (list, tuple)):
        olds = list(old) if isinstance(old, (list, tuple)) else [None] * len(v)
        return type(v)(_reference(o, x) for o, x in zip(olds + [None] * (len(v) - len(olds)), v))
    return v


def _tensors(v: Any) -> bool:
    return isinstance(v, (list, tuple)) and any(isinstance(x, torch.Tensor) for x in v)


def _nbytes(v: Any) -> int:
    if isinstance(v, torch.Tensor):
        return v.numel() * v.element_size()
    if isinstance(v, (list, tuple)):
        return sum(_nbytes(x) for x in v)
    return 0


def _clone_args(args: list) -> list:
    """Copies of a graph's inputs with their strides, also a view's that is not dense (a saved q/k/v slice of
    a backward's input, stride 3x its size: ``clone`` would make it contiguous and fail the wrapper's
    ``assert_size_stride``)."""
    out = []
    for a in args:
        if isinstance(a, torch.Tensor) and a.layout == torch.strided:
            out.append(torch.empty_strided(a.size(), a.stride(), dtype=a.dtype, device=a.device).copy_(a))
        else:
            out.append(a)
    return out


def verdict(vs_eager: dict[str, Any], c64: dict[str, Any] | None, e64: dict[str, Any] | None,
            terms: int = 1, dtype: str = "float32") -> tuple[str, str]:
    """``(status, text)`` of one buffer: status ``ok`` (within torch.testing's tolerance of eager),
    ``closer`` (diverges, compiled nearer float64 than eager), ``same`` (diverges, as far from float64 as
    eager), ``order`` (diverges, compiled's error against float64 within a sum's rounding: ``terms`` terms
    accumulated in float32, ``terms`` x float32's eps plus the dtype's eps, relative to the buffer's largest value:
    another summation order than eager's), ``suspect`` (diverges, compiled's error against float64 over its
    tolerance, over :data:`SUSPECT_FACTOR` times eager's and over that allowance), or ``diverges`` (no float64
    reference)."""
    r = vs_eager.get("tol_ratio") or 0.0
    if vs_eager.get("nonfinite_mismatch"):
        return "suspect", (f"{vs_eager['nonfinite_mismatch']} element(s) are NaN/Inf on one side only")
    if r <= 1.0:
        return "ok", "within torch.testing's tolerance of eager"
    if not c64 or not e64:
        return "diverges", f"{r:.3g}x the tolerance from eager (no float64 reference)"
    cr, er = c64.get("tol_ratio") or 0.0, e64.get("tol_ratio") or 0.0
    head = f"{r:.3g}x the tolerance from eager; vs float64 compiled {cr:.3g}x, eager {er:.3g}x"
    if cr <= er:
        return "closer", head + ": compiled is closer to float64 than eager (eager's own rounding; not a bug)"
    if cr > 1.0 and cr > SUSPECT_FACTOR * er:
        eps = EPS.get(dtype, EPS["float32"])
        allowed = terms * EPS["float32"] + eps  # in units of the buffer's largest |value|
        rel = c64.get("max_rel")
        if terms > 1 and isinstance(rel, float) and rel <= allowed:
            return "order", (head + f": within the rounding of a sum of {terms} terms in float32 (compiled "
                             f"{rel / eps:.3g} eps of {dtype} from float64, allowed {allowed / eps:.3g}): another "
                             "summation order than eager's, not a bug")
        return "suspect", head + ": compiled is further from float64 than eager can explain"
    return "same", head + ": both about as far from float64"


EPS = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23, "float64": 2.0 ** -52}


def reduction_terms(gm: Any, names: list[str]) -> int:
    """The most terms any of FX nodes ``names`` of ``gm`` sums into one output element: a matmul's or
    convolution's contracted size, else the largest input's elements per output element (a sum, a mean, a
    norm); 1 where none reduces."""
    nodes = {n.name: n for n in gm.graph.nodes}
    best = 1
    for name in names:
        n = nodes.get(name)
        if n is None or n.op != "call_function":
            continue
        out = n.meta.get("val")
        ins = [a.meta.get("val") for a in n.all_input_nodes]
        ins = [v for v in ins if isinstance(v, torch.Tensor)]
        t = str(n.target)
        try:
            if any(k in t for k in ("aten.mm", "aten.bmm", "aten.addmm", "aten.baddbmm")) and ins:
                k = int(ins[-1].shape[-2]) if ins[-1].dim() >= 2 else 1
            elif "convolution" in t and len(ins) >= 2:
                k = int(ins[1].numel() // max(1, int(ins[1].shape[0])))
            elif isinstance(out, torch.Tensor) and ins:
                k = int(max(v.numel() for v in ins) // max(1, out.numel()))
            else:
                k = 1
        except Exception:  # noqa: BLE001 - symbolic sizes
            k = 1
        best = max(best, k)
    return best


def compare_graph(output_path: str, gm: Any, links: dict[str, Any], script: dict[str, Any] | None, *,
                  snapshot: dict[str, Any] | None = None, is_backward: bool = False, is_inference: bool = False,
                  localize: bool = True) -> dict[str, Any]:
    """Compare every buffer of compiled graph ``output_path`` (Inductor's output module) with the eager
    value of its producing FX node of post-grad GraphModule ``gm``; ``links`` is the codegen stop's links
    (tracer.links: each buffer's ``fx_nodes``, ``kernels``, ``kernel_lines``, ``user_lines``), ``script`` the
    agent's record of the script's first call of the graph (``inputs``: {position: tensor}), ``snapshot`` the
    what-if snapshot of the graph (for :func:`tracer.numerics_localize.localize_kernels`).  Returns :class:`session.format.GraphNumerics`.
    Raises what loading or running the module raises."""
    from inductor_step.tracer.adapter.output_module import load_output_module  # noqa: PLC0415
    from inductor_step.tracer.codeparse import parse_wrapper  # noqa: PLC0415

    t0 = time.monotonic()
    rss0 = _maxrss()
    gpu0 = _gpu_peak_reset()
    with open(output_path, encoding="utf-8") as f:
        source = f.read()
    kernels = [k for k in parse_wrapper(source) if k.get("call_lines")]
    lb = (links or {}).get("buffers") or {}
    plan, items = _buffer_plan(source, kernels, gm, links)
    rand_all = tn.random_dependents(gm)
    # Inductor's random prims replayed in the eager runs (tracer.adapter.inductor_rng), so the
    # buffers computed from a dropout are compared too; inductor_randint is not replayed
    rand = {n: op for n, op in rand_all.items() if "inductor_randint" in op}
    replay = Replay() if rand_all else None
    want = {n for n in plan.values() if n and n not in rand}
    args, real, inputs = graph_inputs(load_output_module(output_path), gm, script)
    phases: dict[str, float] = {"prepare": time.monotonic() - t0}
    p1, points, fell_back, t = _run_both(output_path, kernels, gm, args, plan, want, items, replay, phases)
    rows = _rows(p1.rows, p1.eager64, rand, set(fell_back), lb, (links or {}).get("kernels") or {}, gm)
    replayed = None
    if replay is not None:
        rows, rand, replayed = _replayed(rows, rand, rand_all, replay, p1, fell_back, lb, links, gm)
    out: dict[str, Any] = {"inputs": inputs, "inputs_origin": "real" if real else "random", "rows": rows,
                           "points": len(points),
                           "tolerances": {d: {"rtol": r, "atol": a} for d, (r, a) in TOLERANCES.items()
                                          if any(x.get("dtype") == d for x in rows)},
                           "kept_bytes": p1.kept["peak"], "buffer_bytes": p1.bytes,
                           "method": "each buffer captured right after its kernel (the wrapper instrumented) and "
                                     "kept until its FX node ran by torch.fx in the graph's dtypes and in float64 "
                                     "side by side: compared, then dropped"}
    if fell_back:
        out["f64_fallbacks"] = (f"{len(fell_back)} node(s) have no float64 kernel and ran in float32 for the "
                                f"reference: {', '.join(fell_back[:6])}")
    _random_note(out, gm, plan, rand, replayed)
    _answers(out, rows, lb, links)
    if localize and _localize(out, gm, snapshot, args, is_backward, is_inference):
        phases["localize"] = time.monotonic() - t
    out["phases_s"] = phases
    out["seconds"] = time.monotonic() - t0
    out["maxrss_growth_bytes"] = max(0, _maxrss() - rss0)
    if gpu0 is not None:
        out["gpu_peak_growth_bytes"] = max(0, int(torch.cuda.max_memory_allocated()) - gpu0)
    return _clean(out)


def _buffer_plan(source: str, kernels: list[dict[str, Any]], gm: Any,
                 links: dict[str, Any]) -> tuple[dict[Any, str | None], dict[str, Any]]:
    """Which FX node of ``gm`` each buffer the wrapper ``source``'s ``kernels`` write is compared with:
    ``(plan, items)``, ``plan`` mapping a buffer to its node and ``(kernel, buffer)`` to the node of a kernel that
    updates that buffer in place, ``items`` a multi-output fallback's item buffers to their index."""
    lb = (links or {}).get("buffers") or {}
    sizes = {n.name: _numel(n) for n in gm.graph.nodes}
    plan: dict[Any, str | None] = {}  # buffer -> its node; (kernel, buffer) where a kernel updates it in place
    mutated = input_mutations(gm)
    for k in kernels:
        for ci in range(len(k["call_lines"])):
            for w in tn.call_writes(k, ci):
                fx = (lb.get(w) or {}).get("fx_nodes") or []
                numels = {sizes.get(n) for n in fx}
                plan[w] = (producer_node(gm, fx, numels.pop() if len(numels) == 1 else None) if fx
                           else mutated.get(w))
    items = tn.item_outputs(source)
    for b, (src, i) in items.items():  # a multi-output fallback's item: its node is the fallback's
        fx = (lb.get(b) or {}).get("fx_nodes") or (lb.get(src) or {}).get("fx_nodes") or []
        plan[b] = producer_node(gm, fx) if fx else plan.get(src)
    items = {b: i for b, (src, i) in items.items()}
    for k in kernels:  # a kernel that updates a buffer in place: the node of its own that does it
        for ci in range(len(k["call_lines"])):
            for w in tn.call_writes(k, ci):
                other = updater_node(gm, plan.get(w), ((links or {}).get("kernels") or {}).get(k["name"]) or {})
                if other:
                    plan[(k["name"], w)] = other
    return plan, items


def _run_both(output_path: str, kernels: list[dict[str, Any]], gm: Any, args: list, plan: dict[Any, str | None],
              want: set[str], items: dict[str, Any], replay: Any, phases: dict[str, float]) -> tuple[Any, Any, list, float]:
    """Run the instrumented compiled module, then ``gm`` in the graph's dtypes and in float64 side by side, each
    buffer compared as its node runs; ``phases`` gets each run's seconds.  Returns ``(the pass
    (numerics_pass.Pass), the capture points, the nodes that fell back to float32, when the runs ended)``."""
    t = time.monotonic()
    seed = 0
    from inductor_step.tracer.numerics_pass import Pass  # noqa: PLC0415

    p1 = Pass(plan, want, items)
    mod, points = tn.load_instrumented(output_path, kernels, p1)
    torch.manual_seed(seed)
    with torch.no_grad():
        mod.call(_clone_args(args))  # 1. compiled, each buffer kept as written (one copy)
    phases["compiled"], t = time.monotonic() - t, time.monotonic()
    torch.manual_seed(seed)
    # 2. eager in the graph's dtypes and in float64 side by side: each node's buffers compared and dropped at once
    fell_back = tn.run_dual(gm, _clone_args(args), _clone_args(args), p1.node, replay=replay)
    phases["eager_and_float64"], t = time.monotonic() - t, time.monotonic()
    phases["of_which_comparing"] = p1.compare_s
    p1.waiting.clear()
    return p1, points, fell_back, t


def _replayed(rows: list[dict], rand: dict[str, str], rand_all: dict[str, str], replay: Any, p1: Any,
              fell_back: list, lb: dict[str, Any], links: dict[str, Any],
              gm: Any) -> tuple[list[dict], dict[str, str], str]:
    """Whether replaying Inductor's random numbers gave the compiled values: ``(rows, rand, what was said)``;
    where it did not, the rows again with every buffer computed from a random op left uncompared."""
    bad = [r["buffer"] for r in rows if r.get("fx_node") in rand_all and r.get("status") in DIVERGING]
    if bad or replay.error:  # the replay did not give the compiled numbers: those buffers are not compared
        why = replay.error or f"{', '.join(bad[:3])} differ(s) from the replayed eager values"
        rand = {n: op for n, op in rand_all.items()}
        rows = _rows(p1.rows, p1.eager64, rand, set(fell_back), lb, (links or {}).get("kernels") or {}, gm)
        replayed = f"replaying Inductor's random numbers failed ({why})"
    else:
        n_dep = sum(1 for r in rows if r.get("fx_node") in rand_all and r.get("status") not in (None, "not_compared"))
        replayed = (f"{n_dep} buffer(s) computed from Inductor's random ops "
                    f"({', '.join(sorted({op for op in rand_all.values()})[:3])}) compared: the eager runs drew "
                    "the compiled graph's seeds and Inductor's own random numbers for them (replayed)")
    return rows, rand, replayed


def _random_note(out: dict[str, Any], gm: Any, plan: dict[Any, str | None], rand: dict[str, str],
                 replayed: str | None) -> None:
    """``out["random"]``: what the graph's random ops meant for the comparison, where it has any."""
    if rand:
        out["random"] = (f"{len(set(rand) & set(plan.values()))} buffer(s) depend on Inductor's random ops "
                         f"({', '.join(sorted(set(rand.values()))[:3])}): not compared (Inductor's code draws its "
                         "numbers by another algorithm than eager; fallback_random=True makes them comparable)"
                         + (f"; {replayed}" if replayed else ""))
    elif replayed:
        out["random"] = replayed
    elif tn.random_dependents(gm, only_inductor=False):
        out["random"] = ("the graph's random ops are ATen calls on both sides (fallback_random=True): each run starts "
                         "from the same seed (torch.manual_seed(0)), so they draw the same numbers where they draw "
                         "in the same order")


def _localize(out: dict[str, Any], gm: Any, snapshot: dict[str, Any] | None, args: list, is_backward: bool,
              is_inference: bool) -> bool:
    """Localize the first divergence and the first NaN/Inf (where another kernel) to the kernel's own nodes
    (tracer.numerics_localize) into ``out``; False when there is nothing to localize."""
    first = out.get("first_suspect") or out.get("first_divergence")
    nf = out.get("first_nonfinite")  # (not a NaN/Inf eager holds too: nonfinite_as_eager)
    targets = [("localized", first)] if first and first.get("status") != "order" else []
    if nf and (not first or nf["kernel"] != first["kernel"]):  # the NaN's kernel too, when it is another one
        targets.append(("localized_nonfinite", nf))
    if not targets:
        return False
    if snapshot is None:
        for field, _ in targets:
            out[field] = {"unavailable": "not localized: no snapshot of the graph as compile_fx_inner got it"}
    else:
        try:
            from inductor_step.tracer.numerics_localize import localize_kernels  # noqa: PLC0415

            out.update(localize_kernels(targets, gm, snapshot, args, is_backward, is_inference))
        except Exception as e:  # noqa: BLE001
            for field, _ in targets:
                out[field] = {"unavailable": f"not localized ({type(e).__name__}: {e})"}
    return True


def _gpu_peak_reset() -> int | None:
    """Where CUDA is in use: reset torch's peak-allocation counter of the current device and return what is
    allocated now (bytes; the comparison's own peak is then ``max_memory_allocated()`` minus it); else None."""
    if not (torch.cuda.is_available() and torch.cuda.is_initialized()):
        return None
    torch.cuda.reset_peak_memory_stats()
    return int(torch.cuda.memory_allocated())


def _maxrss() -> int:
    """This process's peak resident memory so far, bytes (``getrusage``: Linux reports KiB); 0 where unknown."""
    try:
        import resource  # noqa: PLC0415

        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024
    except Exception:  # noqa: BLE001
        return 0


def _rows(r1: list[dict], eager64: dict[str, dict], rand: dict[str, str], fell: set[str],
          lb: dict[str, Any], lk: dict[str, Any], gm: Any) -> list[dict[str, Any]]:
    rows = []
    for i, a in enumerate(r1):
        row = {k: v for k, v in a.items() if k not in ("stats", "_c64", "_e64")}
        row["index"] = i
        node = a.get("fx_node")
        info = lb.get(a["buffer"]) or {}
        row["fx_nodes"] = info.get("fx_nodes") or []
        row["user_lines"] = info.get("user_lines") or []
        if node in rand:
            row["status"], row["why"] = "not_compared", f"depends on the random op {rand[node]}"
        elif not node:
            row["status"] = "not_compared"
            row.setdefault("why", "no post-grad FX node for this buffer in the links")
        elif "stats" not in a:
            row["status"] = "not_compared"
            row.setdefault("why", f"no output of {node} is this buffer (an internal value of its lowering, such as a "
                                  "precomputed sum; the buffers computed from it are compared)")
        else:
            row["vs_eager"] = a["stats"]
            c64 = a.get("_c64")
            e64 = a.get("_e64") or eager64.get(node if a.get("item") is None else f"{node}[{a['item']}]")
            if node in fell:  # the reference is the same float32 kernel as eager: it cannot judge the rounding
                c64 = e64 = None
                row["no_f64"] = (f"{node} has no float64 kernel here: its reference ran in float32 (eager's own "
                                 "kernel), so it cannot tell compiled's rounding from eager's")
            if c64:
                row["compiled_vs_f64"] = c64
            if e64:
                row["eager_vs_f64"] = e64
            terms = reduction_terms(gm, (lk.get(a["kernel"]) or {}).get("post_grad_nodes") or row["fx_nodes"] or [node])
            row["status"], row["verdict"] = verdict(a["stats"], c64, e64, terms, a.get("dtype") or "float32")
            if a.get("holds"):  # compared with what its LoopBody stores, not its node's value
                row["verdict"] = f"holds {a['holds']}: compared with that; {row['verdict']}"
            row["eager_nan"], row["eager_inf"] = _eager_nonfinite(a)
        rows.append(row)
    return rows


def _eager_nonfinite(a: dict[str, Any]) -> tuple[int, int]:
    """Eager's NaN and Inf counts on the buffer's node (its reference in the first pass)."""
    st = a.get("stats") or {}
    return int(st.get("ref_nan", 0)), int(st.get("ref_inf", 0))


def _answers(out: dict[str, Any], rows: list[dict], lb: dict[str, Any], links: dict[str, Any]) -> None:
    """The first divergence, the first suspect and the first NaN/Inf, each with its kernel, fused nodes,
    kernel lines, FX nodes and user line, and the short table of errors up to it."""
    lk = (links or {}).get("kernels") or {}

    def where(row: dict[str, Any]) -> dict[str, Any]:
        info = lb.get(row["buffer"]) or {}
        k = row["kernel"]
        return {"index": row["index"], "buffer": row["buffer"], "kernel": k,
                "fused_nodes": (lk.get(k) or {}).get("fused_nodes") or ([info["fused_node"]] if info.get("fused_node") else []),
                "scheduler_node": info.get("scheduler_node"),
                "kernel_lines": (info.get("kernel_lines") or {}).get(k) or [],
                "kernel_nodes": (lk.get(k) or {}).get("post_grad_nodes") or [],
                "wrapper_line": row["line"], "fx_node": row.get("fx_node"), "fx_nodes": row.get("fx_nodes") or [],
                "user_lines": row.get("user_lines") or [], "status": row.get("status"),
                "verdict": row.get("verdict"), "table": _table(rows, row["index"])}

    div = next((r for r in rows if r.get("status") in DIVERGING), None)
    sus = next((r for r in rows if r.get("status") == "suspect"), None)
    as_eager = [r for r in rows if (r.get("nan") or r.get("inf")) and eager_holds_nonfinite(r)]
    # the first NaN/Inf is the first one the compiled graph adds; a mask's -inf is eager's too
    nf = next((r for r in rows if (r.get("nan") or r.get("inf")) and not eager_holds_nonfinite(r)), None)
    if as_eager:
        f64 = all(not (r.get("compiled_vs_f64") or {}).get("nonfinite_mismatch") for r in as_eager)
        first = where(as_eager[0])
        first.update(nan=as_eager[0].get("nan", 0), inf=as_eager[0].get("inf", 0), table=[])
        out["nonfinite_as_eager"] = {"buffers": [r["buffer"] for r in as_eager], "float64_too": f64, "first": first}
    if div:
        out["first_divergence"] = where(div)
    if sus:
        out["first_suspect"] = where(sus)
    if nf:
        w = where(nf)
        e_nan, e_inf = nf.get("eager_nan", -1), nf.get("eager_inf", -1)
        w.update(nan=nf.get("nan", 0), inf=nf.get("inf", 0), eager_nan=e_nan, eager_inf=e_inf,
                 eager_too=bool((e_nan or 0) > 0 or (e_inf or 0) > 0) if nf.get("status") not in (None, "not_compared") else None)
        out["first_nonfinite"] = w
    n_cmp = sum(1 for r in rows if r.get("status") not in ("not_compared", None))
    out["summary"] = {"buffers": len(rows), "compared": n_cmp,
                      "diverging": sum(1 for r in rows if r.get("status") in DIVERGING),
                      "suspect": sum(1 for r in rows if r.get("status") == "suspect"),
                      "nonfinite": sum(1 for r in rows if (r.get("nan") or r.get("inf")) and not eager_holds_nonfinite(r)),
                      "nonfinite_as_eager": len(as_eager)}


def eager_holds_nonfinite(row: dict[str, Any]) -> bool:
    """Whether every NaN/Inf of compiled buffer ``row`` is one eager holds at the same element (a mask filled
    with -inf on purpose, a log of the data's negative values): compared with eager, no position is NaN/Inf on
    one side only.  False for a buffer not compared (nothing says eager holds them)."""
    ve = row.get("vs_eager")
    return bool(ve) and not ve.get("nonfinite_mismatch") and row.get("status") not in (None, "not_compared")


def _table(rows: list[dict], upto: int) -> list[dict[str, Any]]:
    """The error growing along the graph: the compared rows up to ``upto`` (and two after), at most TABLE_ROWS."""
    sel = [r for r in rows if r["index"] <= upto + 2 and r.get("vs_eager")]
    before = [r for r in sel if r["index"] <= upto][-(TABLE_ROWS - 2):]
    after = [r for r in sel if r["index"] > upto][:2]
    return [{"buffer": r["buffer"], "kernel": r["kernel"], "fx_node": r.get("fx_node"), "status": r.get("status"),
             "max_abs": r["vs_eager"].get("max_abs"), "tol_ratio": r["vs_eager"].get("tol_ratio"),
             "eps_units": r["vs_eager"].get("eps_units")} for r in before + after]


def _clean(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    return _json_num(x)


__all__ = ["TOLERANCES", "compare_graph", "producer_node", "reduction_terms", "stats", "verdict"]
