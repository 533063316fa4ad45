"""Which backend Dynamo hands each graph to, the graph it hands over, and ``torch._dynamo.reset()`` calls.

With ``backend="aot_eager"``, ``"eager"`` or a custom backend none of Inductor's
passes run, so nothing was recorded.  :func:`install_backend_hook` wraps
``torch._dynamo.output_graph.OutputGraph.call_user_compiler`` (torch/_dynamo/output_graph.py: Dynamo
calls the backend there with its FX graph and example inputs) and reports every graph with the
backend's name before and after the backend compiles it, and may wrap the callable the backend returns (blame's
first-call comparison, tracer.adapter.blame).  :func:`install_reset_hook` wraps
``torch._dynamo.reset`` (``torch.compiler.reset`` calls it too): after a reset torch numbers frames
from ``[0/0]`` again, so the compile ids this module gives out (:func:`label_compile_id`) carry
``@resetN`` from then on.
"""

from __future__ import annotations

from typing import Any, Callable

from inductor_step.tracer.adapter.base import install_wrapper, log, wrapped_by_us
from inductor_step.session.format import RESET_SEP

#: how many times the script called torch._dynamo.reset() (install_reset_hook)
RESETS = [0]

#: the backends that are Inductor (their graphs get Inductor's stops)
INDUCTOR_NAMES = frozenset({"inductor", "compile_fx", "compile_fx_inner"})


def label_compile_id(raw: str) -> str:
    """``"[0/0]"`` as this session spells it: ``"[0/0]@reset1"`` after one ``torch._dynamo.reset()``."""
    return f"{raw}{RESET_SEP}{RESETS[0]}" if RESETS[0] and raw != "[?]" else raw


def backend_name(fn: Any) -> str:
    """The name a person gave the backend: ``"inductor"``, ``"aot_eager"``, ``"eager"``, a custom
    backend's function name.  Unwraps torch.compile's wrappers (``compiler_name``) and Dynamo's
    debug wrappers (``_torchdynamo_orig_backend``, ``compiler_fn``), DDPOptimizer's
    (``backend_compile_fn``) and ``functools.partial``."""
    seen = 0
    while fn is not None and seen < 8:
        seen += 1
        name = getattr(fn, "compiler_name", None)
        if isinstance(name, str):
            return name
        owner = getattr(fn, "__self__", None)  # DDPOptimizer.compile_fn: the backend it splits the graph for
        inner = (getattr(fn, "_torchdynamo_orig_backend", None) or getattr(fn, "compiler_fn", None)
                 or getattr(owner, "backend_compile_fn", None) or getattr(fn, "func", None))
        if inner is None or inner is fn:
            break
        fn = inner
    if isinstance(fn, str):
        return fn
    return getattr(fn, "__name__", None) or type(fn).__name__


def is_inductor(name: str) -> bool:
    return name in INDUCTOR_NAMES


#: the hook sets :func:`install_backend_hook` installed, called in this order (one wrapper calls them all)
_HOOKS: list[tuple[Callable | None, Callable | None, Callable | None]] = []


def install_backend_hook(before: Callable[[Any, str], Any] | None = None,
                         after: Callable[[Any, str, BaseException | None], None] | None = None,
                         wrap: Callable[[Any, str, Callable, Any], Callable] | None = None) -> bool:
    """Call ``before(gm, backend)`` as Dynamo hands FX graph ``gm`` to its backend, ``wrap(gm, backend, compiled,
    state)`` once the backend returned the ``compiled`` callable (``state``: what this hook set's ``before``
    returned, None without one; what ``wrap`` returns is the callable Dynamo gets instead), and ``after(gm, backend,
    error)`` at the end (``error``: what the backend raised, re-raised afterwards).  Each call adds one hook set;
    one wrapper of ``OutputGraph.call_user_compiler`` calls them all, in the order they were installed (each
    ``wrap`` wraps the callable the one before returned).  None of them may raise into the compile (exceptions are
    logged; a ``wrap`` that raised leaves the callable as it was).  Returns False where this torch has no
    ``OutputGraph.call_user_compiler``."""
    try:
        from torch._dynamo.output_graph import OutputGraph  # noqa: PLC0415
    except Exception:  # noqa: BLE001
        return False
    real = getattr(OutputGraph, "call_user_compiler", None)
    if real is None:
        return False
    _HOOKS.append((before, after, wrap))
    if wrapped_by_us(real):
        return True

    def call_user_compiler(self: Any, gm: Any, example_inputs: Any) -> Any:
        hooks = list(_HOOKS)
        try:
            name = backend_name(getattr(self, "compiler_fn", None))
        except Exception:  # noqa: BLE001
            name = "?"
        states: list[Any] = []
        for b, _, _ in hooks:
            state = None
            if b is not None:
                try:
                    state = b(gm, name)
                except Exception:  # noqa: BLE001
                    log.debug("backend hook (before)", exc_info=True)
            states.append(state)
        err: BaseException | None = None
        try:
            compiled = real(self, gm, example_inputs)
            for (_, _, w), state in zip(hooks, states):
                if w is not None:
                    try:
                        compiled = w(gm, name, compiled, state)
                    except Exception:  # noqa: BLE001
                        log.debug("backend hook (wrap)", exc_info=True)
            return compiled
        except BaseException as e:
            err = e
            raise
        finally:
            for _, a, _ in hooks:
                if a is None:
                    continue
                try:
                    a(gm, name, err)
                except Exception:  # noqa: BLE001
                    log.debug("backend hook (after)", exc_info=True)

    install_wrapper(OutputGraph, "call_user_compiler", call_user_compiler)
    return True


def install_reset_hook(on_reset: Callable[[int], None] | None = None) -> bool:
    """Count the script's ``torch._dynamo.reset()`` calls (:data:`RESETS`, :func:`label_compile_id`),
    calling ``on_reset(n)`` after the n-th.  Returns False where torch._dynamo has no ``reset``."""
    try:
        import torch._dynamo as dynamo  # noqa: PLC0415
    except Exception:  # noqa: BLE001
        return False
    real = getattr(dynamo, "reset", None)
    if real is None:
        return False
    if wrapped_by_us(real):
        return True

    def reset(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        RESETS[0] += 1
        if on_reset is not None:
            try:
                on_reset(RESETS[0])
            except Exception:  # noqa: BLE001
                log.debug("reset hook", exc_info=True)
        return out

    install_wrapper(dynamo, "reset", reset)
    return True
