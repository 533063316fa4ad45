"""Dynamo's graph as Inductor gets it, and its real inputs at the first call: what the run stage times as eager.

Eager was Inductor's post-grad (decomposed) ATen graph run op by op, 2-25x slower than the
script without ``torch.compile``.  What the script runs without compile is the GraphModule Dynamo hands
its backend (the user's torch functions and modules, before AOTAutograd and decompositions).
:func:`install_dynamo_graph_hook` wraps ``torch._inductor.compile_fx.compile_fx`` (torch/__init__.py's
``_TorchCompileInductorWrapper.__call__`` imports it at each call, and DDPOptimizer calls that wrapper once
per submodule, so each part of a split graph comes here on its own): it keeps a copy of the graph before
Inductor's pre-grad passes change it, and wraps the callable compile_fx returns so that the first call's
inputs (real tensors; with ``inline_inbuilt_nn_modules`` the parameters are among them) are kept too.
"""

from __future__ import annotations

import functools
import threading
import types
from typing import Any, Callable

import torch

from inductor_step.tracer.adapter.base import install_wrapper, log, wrapped_by_us

_DEPTH = threading.local()  # compile_fx calls itself (config_patches): only the outermost call is seen

#: float tensors of a Dynamo graph's first call copied for eager timing, at most (bytes); parameters are
#: kept by reference, never copied
INPUT_BYTES = 1 << 30


def copy_graph_module(gm: Any) -> Any:
    """A GraphModule running the same code as ``gm`` with its own ``fx.Graph`` (node ``meta`` dropped:
    Dynamo's fake example values neither copy nor pickle), sharing ``gm``'s submodules and tensor
    attributes (no weight is copied).  Raises what ``torch.fx`` raises."""
    g = torch.fx.Graph()
    out = g.graph_copy(gm.graph, {})
    g.output(out)
    for n in g.nodes:
        n.meta = {}
    new = torch.fx.GraphModule(gm, g, class_name="DynamoGraph")
    return new


def keep_inputs(args: list | tuple) -> tuple[list | None, str]:
    """``(inputs, how)``: a Dynamo graph's first-call inputs kept for eager timing, or ``(None, why)``.
    Parameters and leaf tensors that require grad are kept by reference; other tensors are copied
    (``detach().clone()``, ``requires_grad`` as they had it) while the copies stay under
    :data:`INPUT_BYTES`; ints, floats and the rest as they are."""
    out: list = []
    used = 0
    for a in args:
        if isinstance(a, torch.Tensor):
            if isinstance(a, torch.nn.Parameter) or (a.is_leaf and a.requires_grad):
                out.append(a)  # a weight (frozen ones too, under no_grad): the script's own, never copied
                continue
            n = a.numel() * a.element_size() if a.layout == torch.strided else 0
            used += n
            if used > INPUT_BYTES:
                return None, f"the graph's inputs are over the {INPUT_BYTES >> 20} MiB copy budget"
            c = a.detach().clone()
            if a.requires_grad and (c.is_floating_point() or c.is_complex()):
                c.requires_grad_(True)
            out.append(c)
        elif isinstance(a, (list, tuple)):  # a list input (compiled autograd's ``inputs``): its tensors copied
            inner, why = keep_inputs(a)
            if inner is None:
                return None, why
            out.append(type(a)(inner))
        else:
            out.append(a)
    return out, "the script's own inputs from its first call of the graph"


#: calls of a compiled graph whose outputs get gradient hooks until the script's backward reaches one
WATCHED_CALLS = 8


def watch_grads(out: Any, seen: dict[str, Any]) -> None:
    """Note in ``seen["grad_used"]`` (a set of indices into the graph's flat outputs) which outputs of a compiled
    call the script's own backward reaches: a hook on each output that requires grad, on the first
    :data:`WATCHED_CALLS` calls until one fires.  A graph cut by a graph break returns what the rest of the
    script needs (Hugging Face's GPT-2 body: the logits, four key/value caches and the last hidden state), and
    the script's ``loss.backward()`` reaches the logits only; autograd's backward from every output would
    compute gradients the script never does.  Never raises."""
    try:
        if seen.get("grad_used") or seen.get("watched", 0) >= WATCHED_CALLS or not torch.is_grad_enabled():
            return
        seen["watched"] = seen.get("watched", 0) + 1
        used = seen.setdefault("grad_used", set())
        for i, o in enumerate(out if isinstance(out, (list, tuple)) else [out]):
            if isinstance(o, torch.Tensor) and o.requires_grad:
                o.register_hook(lambda g, i=i: used.add(i) if g is not None else None)  # None: not reached
    except Exception:  # noqa: BLE001 - never in the script's way
        log.debug("output grad hooks", exc_info=True)


def example_inputs(args: Any, seen: dict[str, Any]) -> None:
    """Note in ``seen["example"]`` the example inputs Dynamo hands its backend, by reference: the script's own
    tensors of the call being compiled (``OutputGraph.example_inputs()``: each graph argument's real value), so
    a graph timed while its compile is paused (``r`` at the codegen stop, before the script ever called it) has
    an eager baseline (:func:`example_call`).  Nothing is noted when any of them is fake (no real value to run
    on).  No tensor is copied here: this runs at every compile."""
    args = list(args or [])
    try:
        from torch._subclasses.fake_tensor import FakeTensor  # noqa: PLC0415
    except Exception:  # noqa: BLE001
        return
    if not any(isinstance(a, FakeTensor) for a in args):
        seen["example"] = (args, torch.is_grad_enabled())


def example_call(seen: dict[str, Any]) -> dict[str, Any]:
    """``seen`` as the first call would fill it, from the example inputs :func:`example_inputs` noted, copied now
    as :func:`keep_inputs` copies a call's (the timing runs Dynamo's graph on them; the script's own tensors stay
    untouched); ``{}`` when none were noted or the graph has been called since."""
    if seen.get("called") or "example" not in seen:
        return {}
    args, grad = seen["example"]
    inputs, how = keep_inputs(args)
    if inputs is None:
        return {"inputs": None, "how": how}
    return {"inputs": inputs, "grad_enabled": grad,
            "how": "the example inputs Dynamo handed torch.compile's backend (the script's own tensors of the call "
                   "being compiled, before the compiled graph ran)"}


def install_dynamo_graph_hook(on_graph: Callable[[Any, Callable[[], dict[str, Any]]], None],
                              on_start: Callable[[Any, Callable[[], dict[str, Any]]], None] | None = None) -> bool:
    """Call ``on_graph(gm_copy, first_call)`` as ``compile_fx`` starts on a Dynamo graph (or a DDPOptimizer
    submodule): ``gm_copy`` is :func:`copy_graph_module` of it, ``first_call()`` returns
    ``{"inputs": [...] or None, "how": text, "grad_enabled": bool, "grad_used": indices of the outputs the
    script's backward reached (:func:`watch_grads`)}`` once the compiled callable has been
    called (before, only ``{"example": ...}``: :func:`example_inputs`, :func:`example_call`).  ``on_graph`` is called after
    compile_fx returned, inside the compile (the compile id and part are still current).  ``on_start(gm_copy,
    first_call)``, where given, is called as compile_fx starts, so the stops of this compile can time the graph
    before it returns (``r`` at the codegen stop).  Returns False where this torch has no ``compile_fx``."""
    try:
        import torch._inductor.compile_fx as cfx  # noqa: PLC0415
    except Exception:  # noqa: BLE001
        return False
    real = getattr(cfx, "compile_fx", None)
    if real is None:
        return False
    if wrapped_by_us(real):
        return True

    @functools.wraps(real)
    def compile_fx(model_: Any, example_inputs_: Any, *a: Any, **k: Any) -> Any:
        if getattr(_DEPTH, "n", 0) or not isinstance(model_, torch.fx.GraphModule):
            return real(model_, example_inputs_, *a, **k)
        try:
            gm = copy_graph_module(model_)
        except Exception:  # noqa: BLE001 - never in the script's way
            log.debug("dynamo graph copy", exc_info=True)
            gm = None
        seen: dict[str, Any] = {}

        def first_call() -> dict[str, Any]:
            return seen

        if gm is not None and on_start is not None:  # the stops inside this compile (r at codegen) see it
            try:
                example_inputs(example_inputs_, seen)
                on_start(gm, first_call)
            except Exception:  # noqa: BLE001
                log.debug("dynamo graph start hook", exc_info=True)
        _DEPTH.n = 1
        try:
            compiled = real(model_, example_inputs_, *a, **k)
        finally:
            _DEPTH.n = 0
        if gm is None or not isinstance(compiled, (types.FunctionType, types.MethodType)):
            return compiled  # AOTInductor's CompiledAOTI (torch._inductor.aot_compile asserts its type), a path
        run = _keeping_first_call(compiled, gm, seen)
        try:
            on_graph(gm, first_call)
        except Exception:  # noqa: BLE001
            log.debug("dynamo graph hook", exc_info=True)
        return run

    install_wrapper(cfx, "compile_fx", compile_fx)
    return True


def _keeping_first_call(compiled: Callable[..., Any], gm: Any, seen: dict[str, Any]) -> Callable[..., Any]:
    """``compiled`` (what compile_fx returned for Dynamo's graph ``gm``) wrapped so that its first call's inputs,
    grad mode and, after the script's backward, the outputs it reached are kept in ``seen`` (the hook's
    ``first_call()``)."""
    def keep(args: Any) -> None:  # a boxed call (a list) or positional ones: the graph's flat inputs
        if seen.get("called"):
            return
        seen.pop("example", None)  # the script's own tensors: no longer held once a call's are kept
        try:
            inputs, how = keep_inputs(list(args))
            seen.update(inputs=inputs, how=how, grad_enabled=torch.is_grad_enabled(), called=True)
        except Exception as e:  # noqa: BLE001
            seen.update(inputs=None, how=f"inputs not kept ({type(e).__name__}: {e})",
                        grad_enabled=torch.is_grad_enabled(), called=True)

    n = sum(1 for node in gm.graph.nodes if node.op == "placeholder")

    def run(*args: Any, **kwargs: Any) -> Any:  # the arguments go on as they came (boxed or not)
        # boxed (one list holding every input) unless the graph takes exactly these arguments (compiled
        # autograd's graph takes one list, ``inputs``)
        boxed = len(args) == 1 and isinstance(args[0], list) and n != 1 and len(args[0]) == n
        keep(args[0] if boxed else args)
        out = compiled(*args, **kwargs)
        watch_grads(out, seen)
        return out
    try:
        functools.update_wrapper(run, compiled)
    except Exception:  # noqa: BLE001
        pass
    return run
