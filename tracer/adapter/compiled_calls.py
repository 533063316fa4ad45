"""The script's calls of what ``torch.compile`` returned: each compiled callable, its last arguments and its graphs.

``torch.compile(fn)`` and ``torch.compile(module)`` both end in ``OptimizeContext.__call__``
(torch/_dynamo/eval_frame.py): for a module, ``OptimizedModule._initialize`` calls it on the module's
``__call__``.  :func:`install_call_hook` wraps the function it returns, so each call the script makes is
seen: the arguments of the latest call are kept (by reference: one call's inputs), with the grad mode it
ran in, and every compiled graph that ran inside it (``CompiledFxGraph.__call__`` says so through
:func:`note_graph`).  The run stage times that call again, whole (Dynamo's guards, AOTAutograd's wrappers,
every graph and what runs between them), against the same call under
``torch.compiler.set_stance("force_eager")``: :mod:`inductor_step.tracer.timing.script_call`.
"""

from __future__ import annotations

import functools
import inspect
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from inductor_step.tracer.adapter.base import install_wrapper, wrapped_by_us

#: every callable torch.compile returned in this process, in the order they were made
CALLABLES: list["CompiledCallable"] = []
_tl = threading.local()
#: the compiled callable the script called last, held strongly with what it calls (its module, torch's function)
#: until another is called: a script whose ``main()`` compiled its model returns, and its last reference with it,
#: before the run stage begins; every other callable is held weakly (a sweep over models keeps one alive, not all)
_LAST: list[Any] = []


def _weak(obj: Any) -> Callable[[], Any]:
    """A getter of ``obj`` that does not keep it alive (``None`` once the script let go of it); a bound method's
    through ``WeakMethod``; a strong one where ``obj`` takes no weak reference."""
    if obj is None:
        return lambda: None
    try:
        return weakref.WeakMethod(obj) if inspect.ismethod(obj) else weakref.ref(obj)
    except TypeError:
        return lambda: obj


@dataclass(eq=False)
class CompiledCallable:
    """One callable ``torch.compile`` returned, held weakly: ``fn()`` is torch's own (Dynamo's ``compile_wrapper``),
    ``entry()`` what the script calls (the ``OptimizedModule`` for a module, else ``fn()``), ``eager()`` what it
    would call without torch.compile (the module itself, or Dynamo's ``_torchdynamo_orig_callable``), each ``None``
    once the script let go of it; ``name`` what the script compiled (``GPT`` for a module, a function's qualified
    name), ``calls`` how many times the script called it, ``args`` / ``kwargs`` / ``grad_enabled`` its latest
    call's (``None`` before the first, and once the script let go of the callable), ``graphs``
    the compiled graphs' output-module keys (``CompiledFxGraph.cache_key``) that ran inside a call."""

    fn: Callable[[], Any]
    name: str
    entry: Callable[[], Any] = lambda: None
    eager: Callable[[], Any] = lambda: None
    calls: int = 0
    args: tuple | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)
    grad_enabled: bool = True
    graphs: set[str] = field(default_factory=set)

    def called(self, args: tuple, kwargs: dict[str, Any]) -> None:
        """The script called it: the call's arguments kept (by reference) in place of the last call's, and the
        callable held strongly as the last one called, in place of the one before (:data:`_LAST`)."""
        self.calls += 1
        self.args, self.kwargs, self.grad_enabled = args, kwargs, torch.is_grad_enabled()
        if not _LAST or _LAST[0] is not self:
            _LAST[:] = [self, self.fn(), self.entry(), self.eager()]

    def let_go(self) -> None:
        """The script let go of the callable: its arguments go too (a sweep over models keeps none of them alive)."""
        self.args, self.kwargs = None, {}


def _let_go_with(obj: Any, rec: CompiledCallable) -> None:
    try:
        weakref.finalize(obj, rec.let_go)
    except TypeError:  # takes no weak reference: held as long as we run
        pass


def _name(fn: Any) -> str:
    """What the script compiled: ``GPT`` for a module (its ``__call__``, or ``wrap_inline``'s wrapper of it),
    else the function's ``__qualname__``."""
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, torch.nn.Module):
        return type(owner).__name__
    inner = getattr(fn, "__wrapped__", None)
    if isinstance(inner, torch.nn.Module):
        return type(inner).__name__
    return str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__)


def install_call_hook(ours: Callable[[], bool] = lambda: False) -> bool:
    """Wrap the functions ``OptimizeContext.__call__`` returns (one :class:`CompiledCallable` each, in
    :data:`CALLABLES`).  ``ours()`` true: the call is our own timing's, not counted.  The wrapper copies the
    attributes torch sets on its function (``_torchdynamo_orig_callable``, ``_is_torch_compile``) and adds one
    Python call per script call.  False where this torch has no ``OptimizeContext``."""
    try:
        from torch._dynamo.eval_frame import OptimizeContext  # noqa: PLC0415
    except Exception:  # noqa: BLE001
        return False
    real = OptimizeContext.__call__
    if wrapped_by_us(real):
        return True

    def __call__(self: Any, fn: Any) -> Any:
        made = len(CALLABLES)
        result = real(self, fn)
        if isinstance(result, torch.nn.Module):  # an OptimizedModule: its forward came through here while made
            for rec in CALLABLES[made:]:
                rec.entry = _weak(result)
                _let_go_with(result, rec)
                if getattr(result, "_orig_mod", None) is not None:
                    rec.eager = _weak(result._orig_mod)
            return result
        if isinstance(result, type) or not callable(result):
            return result  # a class: its methods come through here
        orig = getattr(result, "_torchdynamo_orig_callable", None)
        rec = CompiledCallable(_weak(result), _name(fn), entry=_weak(result), eager=_weak(fn if orig is None else orig))
        CALLABLES.append(rec)
        _let_go_with(result, rec)

        @functools.wraps(result)
        def compiled_call(*args: Any, **kwargs: Any) -> Any:
            if ours():
                return result(*args, **kwargs)
            rec.called(args, kwargs)
            outer = getattr(_tl, "call", None)
            _tl.call = rec
            try:
                return result(*args, **kwargs)
            finally:
                _tl.call = outer

        return compiled_call

    _skip_code(__call__.__code__)
    # every wrapper shares one code object, a constant of __call__'s: skipped once, not per compiled callable
    for const in __call__.__code__.co_consts:
        if getattr(const, "co_name", None) == "compiled_call":
            _skip_code(const)
    install_wrapper(OptimizeContext, "__call__", __call__)
    return True


def _skip_code(code: Any) -> None:
    """Dynamo's frame evaluation runs ``code``'s frames as they are, never compiling them (``skip_code``, as for
    torch's own files): compiled autograd calls torch.compile while a compiled region runs, and a compiled function
    may be called from the eager code between another's graphs; our wrapper must not become a graph of the user's
    (tracing it failed: "'method' object has no attribute '__dict__'").  Where Dynamo inlines a compiled function
    it follows ``_torchdynamo_inline``, which the wrapper carries, so it never traces the wrapper either."""
    try:
        from torch._dynamo.eval_frame import skip_code  # noqa: PLC0415

        skip_code(code)
    except Exception:  # noqa: BLE001 - an older or newer torch without it: the wrapper stays traceable
        pass


def note_graph(key: str) -> None:
    """A compiled graph (output-module key ``key``) runs: it belongs to the compiled call in progress on this
    thread, if any (a backward graph runs in ``loss.backward()``, outside every call)."""
    rec = getattr(_tl, "call", None)
    if rec is not None:
        rec.graphs.add(key)
