"""What if: recompile one captured graph with Inductor settings changed.

The agent keeps, for every graph, a copy of the post-grad graph as ``compile_fx_inner`` got it
(taken at ``post_grad_custom_pre_pass``, before Inductor's post-grad passes; see
:func:`tracer.adapter.graph_snapshot`) and the shapes of its inputs.  :func:`run_what_if`
compiles a fresh copy of it again with ``torch._inductor.compile_fx.compile_fx_inner`` under
``torch._inductor.config.patch(settings)``, on a thread of its own, while the agent's stage hooks
record every stage as they do for the script's compiles: the stops carry the original's
``compile_id`` and ``graph_kind`` and a ``variant`` field (``"max_autotune=True"``), so the variant
is the graph ``"[0/0] forward · max_autotune=True"`` of the session.  The variant's stops never
pause (the compile runs straight through); a compile paused on the script's thread waits until the
variant is done, and the agent's per-compile state (current graph, fusion log) is put back after it.

Inputs: real random tensors of the shapes, strides, dtypes and devices the original compile saw
(symbolic sizes at their hints: a dynamic-shape graph's variant is compiled static at those sizes),
so the variant compiles in a FakeTensorMode and ShapeEnv of its own and adds no guard to the
script's.  The FX-graph and autotune caches are off in the agent (tracer.adapter.configure_inductor).

:func:`compare_outputs` (run in the timing worker) compares a variant's outputs with the original
compiled graph's and with the post-grad graph run eagerly, on the same inputs.
"""

from __future__ import annotations

import threading
import traceback
from typing import Any, Callable

from inductor_step.session.format import STAGES, GraphKey, settings_label
from inductor_step.tracer.graph_device import on_graph_device


def run_variant(state: Any, compile_fn: Callable[[], None], name: str) -> None:
    """Run ``compile_fn`` (a variant's compile, its hooks reading ``state.tl.variant``) on a thread of its own
    under ``state.variants.lock`` (``state``: the agent's tracer.agent_state.AgentState) and wait for it; the fusion
    log the agent collects is put back after (a variant keeps its own ``current``: AgentState.current)."""
    t = threading.Thread(target=compile_fn, name=name, daemon=True)
    with state.variants.lock, state.fusion.kept():
        t.start()
        t.join()


def check_settings(settings: dict[str, Any]) -> str | None:
    """None if every name is a ``torch._inductor.config`` value setting here, else a one-line reason."""
    from inductor_step.tracer import adapter  # noqa: PLC0415

    for name in settings:
        try:
            adapter.inductor_setting(name)
        except KeyError as e:
            return str(e.args[0])
    return None


def run_what_if(state: Any, cid: str, kind: str, settings: dict[str, Any],
                time_with: Callable[..., None] | None = None) -> str | None:
    """Recompile graph ``(cid, kind)`` of the agent's ``state`` (tracer.agent_state.AgentState: its graphs, frames,
    post-grad snapshots, stream) with ``settings``; returns the variant's graph key
    (``"[0/0] forward · max_autotune=True"``) or None when it failed.

    Sends ``what_if`` messages (``compiling``, then ``done`` or ``failed``), the variant's stops and,
    for a compile that raises, an ``error`` at the stage after the variant's last stop.  ``time_with``
    (the timing part's ``run_all``): then time the original and the variant with it (the variant's with
    numerics).  Call it on any thread but the one compiling: it compiles on a thread of its own and waits.
    """
    from inductor_step.tracer import adapter, whatif_partition  # noqa: PLC0415

    if adapter.functorch_settings(settings):  # the partitioner's settings: the joint graph partitioned again
        return whatif_partition.run_partition_what_if(state, cid, kind, settings, time_with)
    variant = settings_label(settings)
    vkind = GraphKey.parse_kind(kind, cid).replace(variant=variant).kind_text
    head = {"type": "what_if", "compile_id": cid, "graph_kind": kind, "variant": variant, "settings": settings}
    why = check_settings(settings)
    g = state.graphs.get((cid, kind))
    snapshot = state.variants.snapshots.get((cid, kind))
    if why is None and (g is None or snapshot is None):
        why = (f"{cid} {kind} has no post-grad graph captured yet (it reaches Inductor after its aot stop)"
               if g is not None else f"no graph {cid} {kind} in this session")
    if why is not None:
        state.send({**head, "status": "failed", "message": why})
        return None
    state.send({**head, "status": "compiling", "message": f"recompiling {cid} {kind} with {variant}"})
    state.graphs.pop((cid, vkind), None)
    result: dict[str, Any] = {}

    def compile_it() -> None:
        from inductor_step.tracer import adapter  # noqa: PLC0415

        state.tl.variant = (cid, vkind)
        try:
            fr = state.frames.get(state.frame_key(cid, kind)) or {}
            note = (f"The Dynamo graph of {cid} {kind}: this variant recompiled that graph's post-grad graph "
                    f"(as compile_fx_inner got it) with {variant}; Dynamo and AOTAutograd did not run again.")
            state.stop(cid, vkind, "dynamo", {"graph": fr.get("dynamo") or {"code": fr.get("dynamo_text") or "",
                                                                              "nodes": []},
                                              "graph_breaks": fr.get("graph_breaks") or [],
                                              "recompile_reasons": [], "note": note})
            base = GraphKey.parse_kind(kind).kind
            with on_graph_device((g or {}).get("device")):  # this thread starts on cuda:0
                result["compiled"] = adapter.compile_variant(snapshot, settings, is_backward=base == "backward",
                                                             is_inference=base == "inference")
        except BaseException as e:  # noqa: BLE001 - the variant's failure, reported at its stage
            result["error"] = e
            result["traceback"] = traceback.format_exc()
        finally:
            state.tl.variant = None

    run_variant(state, compile_it, "inductor-step what-if")
    vg = state.graphs.get((cid, vkind)) or {}
    if "error" in result:
        e = result["error"]
        last = vg.get("last_stage")
        stage = "codegen" if last == "codegen" else STAGES[STAGES.index(last) + 1] if last in STAGES else "aot"
        first = send_variant_error(state, e, result["traceback"], stage, cid, vkind)
        state.send({**head, "status": "failed", "message": f"the variant failed at {stage}: {first}"})
        return None
    state.variants.original[(cid, vkind)] = (cid, kind)
    state.send({**head, "status": "done", "message": f"{cid} {kind} recompiled with {variant}"})
    if time_with is not None:
        time_when_ready(state, time_with, [(cid, kind)], [f"{cid} {kind}", f"{cid} {vkind}"])
    return f"{cid} {vkind}"


def send_variant_error(state: Any, e: BaseException, tb: str, stage: str, cid: str, kind: str) -> str:
    """Send the ``error`` message of a variant ``(cid, kind)`` whose compile raised ``e`` (its traceback ``tb``) at
    ``stage``; returns the message's first line (``"InductorError: ..."``)."""
    text = f"{type(e).__name__}: {e}".strip()
    first = text.splitlines()[0] if text else type(e).__name__
    state.send({"type": "error", "stage": stage, "message": first, "full_message": text[:20000], "traceback": tb,
                "compile_id": cid, "graph_kind": kind})
    return first


def time_when_ready(state: Any, time_with: Callable[..., None], originals: list[tuple[str, str]],
                    keys: list[str]) -> None:
    """On a thread of its own: time graphs ``keys`` (``"[0/0] forward"``, the originals and their variants: ``run``
    messages, the variants' with numerics) with ``time_with`` once every graph of ``originals`` has its output
    code: a what-if made while an original's compile is paused before codegen waits for it (or for the script's
    end, when the variants are timed alone), and for any timing run in progress to end."""
    import time  # noqa: PLC0415

    def when_ready() -> None:
        while not all((state.graphs.get(o) or {}).get("output_path") for o in originals) and not state.script_done:
            time.sleep(0.2)
        time_with(only=keys)
    threading.Thread(target=when_ready, daemon=True, name="inductor-step what-if timing").start()


# ----------------------------------------------------------------------------- numerics (timing worker)

def _errors(outs: Any, refs: Any) -> list[dict[str, Any]]:
    import torch  # noqa: PLC0415

    outs, refs = list(outs or []), list(refs or [])
    rows: list[dict[str, Any]] = []
    for i, (x, r) in enumerate(zip(outs, refs)):
        row: dict[str, Any] = {"output": i}
        if not isinstance(x, torch.Tensor) or not isinstance(r, torch.Tensor):
            if x == r or (x is None and r is None):
                row.update(max_abs=0.0, max_rel=0.0)
            else:
                row["error"] = f"not tensors: {type(x).__name__} vs {type(r).__name__}"
            rows.append(row)
            continue
        row.update(shape=str(list(x.shape)), dtype=str(x.dtype).replace("torch.", ""))
        if x.shape != r.shape:
            row["error"] = f"shape {list(x.shape)} vs {list(r.shape)}"
        elif x.numel() == 0:
            row.update(max_abs=0.0, max_rel=0.0)
        else:
            a, b = x.detach().double(), r.detach().to(x.device).double()
            diff = (a - b).abs()
            bad = ~(torch.isfinite(a) == torch.isfinite(b))
            max_abs = float("inf") if bool(bad.any()) else float(diff.nan_to_num(0.0).max())
            scale = float(b.abs().nan_to_num(0.0, posinf=0.0, neginf=0.0).max())
            row.update(max_abs=max_abs, max_rel=(max_abs / scale) if scale else (0.0 if max_abs == 0 else float("inf")))
        rows.append(row)
    if len(outs) != len(refs):
        rows.append({"output": min(len(outs), len(refs)), "error": f"{len(outs)} outputs vs {len(refs)}"})
    return rows


def random_ops(gm: Any) -> list[str]:
    """The random ops of a post-grad graph (``prims.inductor_random.default``, dropout, seeds), by target."""
    return sorted({str(n.target) for n in gm.graph.nodes if n.op == "call_function"
                   and any(w in str(n.target) for w in ("rand", "dropout", "seed", "bernoulli"))})


def compare_outputs(variant_path: str, original_path: str, eager_gm: Any, script: dict[str, Any] | None = None,
                    seed: int = 0, random_ops: list[str] | None = None) -> dict[str, Any]:
    """A variant's outputs against the original's (:class:`session.format.Numerics`).

    ``variant_path``/``original_path``: the output modules (``inductor_output_code``'s file);
    ``eager_gm``: the original's post-grad GraphModule (or None); ``random_ops``: its random ops
    (:func:`random_ops`, taken before it was sent here: unpickling a GraphModule traces its code again,
    and Inductor's random prims then run once and become constants).  Inputs: the variant module's
    ``get_args()`` (seeded), with the script's own first-call tensors where shapes match (as timing
    does); each graph gets its own copy, since a compiled ``call`` may mutate its inputs, and starts
    from the same RNG state (``torch.manual_seed(seed + 1)``).  Eager draws random numbers by another
    algorithm than Inductor's generated code, so a graph with random ops differs from eager by design.
    """
    import torch  # noqa: PLC0415

    from inductor_step.tracer import adapter  # noqa: PLC0415
    from inductor_step.tracer.timing.harness import _graph_args, _use_script_inputs  # noqa: PLC0415

    torch.manual_seed(seed)
    vmod = adapter.load_output_module(variant_path)
    omod = adapter.load_output_module(original_path)
    # collectives run as the same local stand-ins in the variant, the original and eager, never for real
    stubbed = adapter.stand_ins_in_graph(eager_gm) if eager_gm is not None else {}
    with open(variant_path, encoding="utf-8") as f:
        vsource = f.read()
    with open(original_path, encoding="utf-8") as f:
        osource = f.read()
    has_collectives = bool(stubbed) or adapter.uses_collectives(vsource)
    with torch.no_grad(), adapter.stand_ins_in_module(vmod, vsource), adapter.stand_ins_in_module(omod, osource):
        args = _graph_args(vmod)
        ints, floats = _use_script_inputs(args, (script or {}).get("inputs") or {})
        inputs = (f"the variant's get_args() (random, seed {seed})"
                  + (f"; the script's first-call values for {ints + floats} tensors" if ints + floats else ""))

        def copy() -> list:
            """The inputs again, and the same RNG state: a graph's random ops (dropout) draw the same numbers."""
            torch.manual_seed(seed + 1)
            return [a.clone(memory_format=torch.preserve_format) if isinstance(a, torch.Tensor) else a for a in args]

        out: dict[str, Any] = {"inputs": inputs}
        if has_collectives:
            out["note"] = ("the graph's collectives ran as local stand-ins (no communication) in the variant, the "
                           "original and eager alike: the comparison covers the compute around them")
        mine = vmod.call(copy())
        try:
            out["vs_original"] = _errors(mine, omod.call(copy()))
        except Exception as e:  # noqa: BLE001
            out["vs_original"] = [{"output": 0, "error": f"the original did not run on these inputs: "
                                                         f"{type(e).__name__}: {e}"}]
        if eager_gm is not None:
            rand = random_ops or []
            if rand:
                out["note"] = (out["note"] + "; " if out.get("note") else "") + (
                    f"the graph draws random numbers ({', '.join(rand[:3])}): eager draws them by another "
                    "algorithm than Inductor's generated code, so vs eager differs by design")
            try:
                eager_gm.recompile()
                ref = eager_gm(*[a for a in copy()])
                out["vs_eager"] = _errors(mine, ref if isinstance(ref, (list, tuple)) else [ref])
            except Exception as e:  # noqa: BLE001
                out["vs_eager"] = [{"output": 0, "error": f"eager did not run: {type(e).__name__}: {e}"}]
    return out


INTERLEAVED_ROUNDS = 7  # rounds of (variant, original, eager) in :func:`interleaved_rounds`


def interleaved_rounds(variant_path: str, original_path: str, eager_gm: Any, script: dict[str, Any] | None = None,
                       rounds: int = INTERLEAVED_ROUNDS) -> dict[str, Any]:
    """A variant and its original (and the original's post-grad graph run eagerly) timed in one
    process, round by round, so a change of the machine between the two separate timings cannot pass for the
    setting's effect (:class:`session.format.Interleaved`).

    Each round times the three in turn (the order rotates every round), each one ``benchmark_cpu`` median on
    CPU (:func:`tracer.timing.rounds.cpu_quantiles`, 20 ms of calls) or ``triton.testing.do_bench`` median on
    CUDA; figures are medians over ``rounds``; ``speedup_vs_original`` is the median of each round's original /
    variant.  Each module runs on its own ``get_args()`` with the script's first-call tensors where shapes match
    (as timing does); a variant compiled static from a dynamic original runs at the hint sizes, the original at
    its own ``get_args()`` sizes (``shapes`` says so).  On CPU the run-queue wait of the rounds judges them
    (:func:`tracer.timing.contention.judge`); the rounds are :func:`tracer.timing.interleave.rounds`.  Raises what
    loading or running the modules raises."""
    import torch  # noqa: PLC0415

    from inductor_step.tracer import adapter  # noqa: PLC0415
    from inductor_step.tracer.timing import interleave  # noqa: PLC0415
    from inductor_step.tracer.timing.harness import _graph_args, _use_script_inputs  # noqa: PLC0415

    vmod, omod = adapter.load_output_module(variant_path), adapter.load_output_module(original_path)
    with open(variant_path, encoding="utf-8") as f:
        vsource = f.read()
    with open(original_path, encoding="utf-8") as f:
        osource = f.read()
    kept = (script or {}).get("inputs") or {}
    with torch.no_grad(), adapter.stand_ins_in_module(vmod, vsource), adapter.stand_ins_in_module(omod, osource):
        vargs, oargs = _graph_args(vmod), _graph_args(omod)
        _use_script_inputs(vargs, kept)
        _use_script_inputs(oargs, kept)
        cuda = any(isinstance(t, torch.Tensor) and t.is_cuda for t in vargs)
        fns: dict[str, Any] = {"variant": lambda: vmod.call(list(vargs)), "original": lambda: omod.call(list(oargs))}
        if eager_gm is not None:
            try:
                adapter.stand_ins_in_graph(eager_gm)
                eager_gm.recompile()
                eager_gm(*oargs)
                fns["eager"] = lambda: eager_gm(*oargs)
            except Exception:  # noqa: BLE001 - eager of a post-grad graph can fail on exotic ops
                pass
        out = interleave.rounds(fns, cuda, rounds)  # the rounds, their medians and (CPU) their verdict
    out["speedup_vs_original"] = interleave.ratio(out, "original", "variant")
    vshapes = [list(t.shape) for t in vargs if isinstance(t, torch.Tensor)]
    oshapes = [list(t.shape) for t in oargs if isinstance(t, torch.Tensor)]
    if vshapes != oshapes:
        out["shapes"] = ("the variant was compiled static at the original's size hints and ran on those sizes; the "
                         "original ran on its own get_args() sizes")
    return out


__all__ = ["run_what_if", "compare_outputs", "check_settings", "interleaved_rounds", "random_ops"]
