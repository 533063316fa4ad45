"""Blame's torch access in a bisect step's process: each graph's first call compared with its Dynamo graph run
eagerly, the compiler bisector's subsystem applications counted, Inductor settings patched per compile.

:func:`install_compare_hook` hooks ``torch._dynamo.output_graph.OutputGraph.call_user_compiler``
(tracer.adapter.backends.install_backend_hook, the one wrapper of it; there Dynamo hands its FX graph to the
backend: ``inductor``, or the ``aot_eager``/``eager`` backend the bisector chose through ``TORCH_BISECT_BACKEND``,
which ``torch.compile`` reads in torch/__init__.py): the callable the backend returns is
wrapped so that its first call also runs a copy of Dynamo's graph eagerly and in float64 on copies of the same
inputs, and, where outputs need a gradient, the backward of both with the same ``grad_outputs``.
:func:`install_application_log` wraps ``torch._inductor.compiler_bisector.CompilerBisector.disable_subsystem``, the
one call every bisectable application goes through (a post-grad pattern pass: ``GraphTransformObserver``'s pass
name; a lowering: ``GraphLowering.run_node``'s ``repr(node)``; a decomposition: ``proxy_tensor``'s ``repr(op)``),
to record each in order with its ``debug_info`` and compile id: the n-th is the one ``TORCH_BISECT_MAX=n`` keeps.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from inductor_step.tracer.adapter.base import current_compile_id, install_wrapper, log, wrapped_by_us

#: Inductor's settings that hold a user's own graph passes (torch._inductor.config)
CUSTOM_PASSES = ("pre_grad_custom_pass", "joint_custom_pre_pass", "joint_custom_post_pass",
                 "post_grad_custom_pre_pass", "post_grad_custom_post_pass")


def custom_passes() -> dict[str, str]:
    """``{setting: the pass's name}`` of the user's own graph passes set in ``torch._inductor.config`` now."""
    from torch._inductor import config as ic  # noqa: PLC0415

    out: dict[str, str] = {}
    for name in CUSTOM_PASSES:
        p = getattr(ic, name, None)
        if p is None:
            continue
        label = getattr(p, "__qualname__", None) or type(getattr(p, "inner", p)).__qualname__
        out[name] = str(label)
    return out


def apply_settings(settings: dict[str, Any]) -> None:
    """Set ``torch._inductor.config`` entries (dotted names) to ``settings``' values, for every later compile of
    this process (a lazily compiled backward too).  Raises AttributeError naming a setting this torch lacks."""
    from torch._inductor import config as ic  # noqa: PLC0415

    for name, value in settings.items():
        obj: Any = ic
        *head, last = name.split(".")
        for part in head:
            obj = getattr(obj, part)
        if not hasattr(obj, last):
            raise AttributeError(f"torch._inductor.config has no setting {name!r} (torch {torch.__version__})")
        setattr(obj, last, value)


class _Watched:
    """A user's graph pass, run as it was, with the FX nodes it rewrote recorded (by name: a node whose target
    changed, one it added, one it removed)."""

    def __init__(self, inner: Any, setting: str, log_to: dict[str, Any]):
        self.inner, self.setting, self.log_to = inner, setting, log_to

    def __call__(self, graph: Any, *a: Any, **k: Any) -> Any:
        g = getattr(graph, "graph", graph)
        before = {n.name: str(n.target) for n in g.nodes}
        out = self.inner(graph, *a, **k)
        after = {n.name: str(n.target) for n in g.nodes}
        rec = self.log_to.setdefault(self.setting, {"changed": [], "added": [], "removed": []})
        for name, t in after.items():
            if name not in before:
                rec["added"].append(name)
            elif before[name] != t:
                rec["changed"].append(f"{name}: {before[name]} -> {t}")
        rec["removed"] += [n for n in before if n not in after]
        return out

    def uuid(self) -> Any:
        fn = getattr(self.inner, "uuid", None)
        return fn() if callable(fn) else None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def watch_custom_passes(log_to: dict[str, Any]) -> None:
    """Wrap the user's own graph passes set in ``torch._inductor.config`` now (:data:`CUSTOM_PASSES`) so that the FX
    nodes each rewrites are recorded in ``log_to[setting]``; a pass already wrapped is left as it is."""
    from torch._inductor import config as ic  # noqa: PLC0415

    for name in CUSTOM_PASSES:
        p = getattr(ic, name, None)
        if p is not None and not isinstance(p, _Watched):
            w = _Watched(p, name, log_to)
            try:
                from torch._inductor.custom_graph_pass import CustomGraphPass  # noqa: PLC0415

                if isinstance(p, CustomGraphPass):  # Inductor checks the type of some of them
                    w = type("WatchedPass", (_Watched, CustomGraphPass), {})(p, name, log_to)
            except Exception:  # noqa: BLE001
                pass
            setattr(ic, name, w)


def graph_kind(max_depth: int = 60) -> str | None:
    """The kind of graph Inductor is compiling now, asked from within its compile: ``"forward"``, ``"backward"``
    or ``"inference"``, read from the ``graph_kwargs`` (``is_backward``, ``is_inference``) of the
    ``codegen_and_compile`` frame on the stack (torch/_inductor/compile_fx.py, torch 2.11 and 2.13 alike: the
    post-grad passes and the lowerings run under it); None outside it (Dynamo's graph, the joint graph, AOT's
    decompositions)."""
    import sys  # noqa: PLC0415

    f = sys._getframe(1)
    for _ in range(max_depth):
        if f is None:
            return None
        if f.f_code.co_name == "codegen_and_compile":
            kw = f.f_locals.get("graph_kwargs")
            if isinstance(kw, dict):
                return "backward" if kw.get("is_backward") else "inference" if kw.get("is_inference") else "forward"
        f = f.f_back
    return None


def install_application_log(log_to: dict[str, list[dict[str, Any]]]) -> bool:
    """Record every ``CompilerBisector.disable_subsystem(backend, subsystem, debug_info)`` call of this process in
    ``log_to[subsystem]`` (``{"backend", "compile_id", "graph_kind", "what"}``, in call order: the i-th entry is the
    application torch's counter numbers i; ``graph_kind``: :func:`graph_kind`, None outside Inductor's compile of one
    graph; a pass application's ``rewrote``: the FX nodes it changed, added and removed, see
    :func:`_watch_pass_applications`) before torch answers it.  False where this torch has no compiler bisector."""
    try:
        from torch._inductor.compiler_bisector import CompilerBisector  # noqa: PLC0415
    except Exception:  # noqa: BLE001
        return False
    real = CompilerBisector.__dict__.get("disable_subsystem")
    fn = getattr(real, "__func__", None)
    if fn is None:
        return False

    def disable_subsystem(cls: Any, backend: str, subsystem: str, debug_info: Callable[[], str] | None = None) -> bool:
        try:
            what = debug_info() if debug_info is not None else ""
        except Exception:  # noqa: BLE001
            what = "?"
        try:
            kind = graph_kind()
        except Exception:  # noqa: BLE001
            kind = None
        log_to.setdefault(subsystem, []).append({"backend": backend, "compile_id": current_compile_id(),
                                                 "graph_kind": kind, "what": str(what)[:300]})
        return fn(cls, backend, subsystem, debug_info)

    CompilerBisector.disable_subsystem = classmethod(disable_subsystem)  # type: ignore[method-assign]
    _watch_pass_applications(log_to)
    return True


def _graph_nodes(graph: Any) -> dict[str, str]:
    return {n.name: f"{n.op}:{n.target}" for n in getattr(graph, "nodes", ())}


def _watch_pass_applications(log_to: dict[str, list[dict[str, Any]]]) -> None:
    """Wrap ``torch.fx.passes.graph_transform_observer.GraphTransformObserver.apply_graph_pass`` and
    ``apply_gm_pass`` (every post-grad and joint-graph pass application the compiler bisector counts goes through
    one: torch 2.11 and 2.13): the graph before the pass (the application off) against after it (on), as the FX
    nodes it rewrote, added to the application's entry in ``log_to`` as ``rewrote``: ``{"changed": ["name: old ->
    new"], "added": [...], "removed": [...]}``.  An application the bisector switched off rewrote nothing."""
    try:
        from torch.fx.passes.graph_transform_observer import GraphTransformObserver as GTO  # noqa: PLC0415
    except Exception:  # noqa: BLE001
        return

    def watched(real: Callable, graph_of: Callable[[Any], Any]) -> Callable:
        def apply(self: Any, pass_fn: Callable) -> Any:
            sub = getattr(self, "subsystem", None)
            entries = log_to.get(sub or "", [])
            n0 = len(entries)
            try:
                before = _graph_nodes(graph_of(self))
            except Exception:  # noqa: BLE001
                return real(self, pass_fn)
            out = real(self, pass_fn)
            entries = log_to.get(sub or "", [])
            if len(entries) == n0 + 1:  # this application's entry (logged by disable_subsystem within it)
                try:
                    after = _graph_nodes(graph_of(self))
                    entries[-1]["rewrote"] = {
                        "changed": [f"{k}: {before[k].split(':', 1)[1]} -> {v.split(':', 1)[1]}"
                                    for k, v in after.items() if k in before and before[k] != v],
                        "added": [k for k in after if k not in before],
                        "removed": [k for k in before if k not in after]}
                except Exception:  # noqa: BLE001
                    pass
            return out

        return apply

    for name in ("apply_graph_pass", "apply_gm_pass"):
        real = getattr(GTO, name, None)
        if real is not None and not wrapped_by_us(real):
            fn = watched(real, lambda o: o.gm.graph)
            install_wrapper(GTO, name, fn)


def _clone(args: list, dtype: Any = None) -> list:
    out = []
    for a in args:
        if isinstance(a, torch.Tensor):
            c = a.detach().clone()
            if dtype is not None and c.is_floating_point():
                c = c.to(dtype)
            if a.requires_grad and (c.is_floating_point() or c.is_complex()):
                c.requires_grad_(True)
            out.append(c)
        else:
            out.append(a)
    return out


def _flat(out: Any) -> list:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [y for x in out for y in _flat(x)]
    return []


def _run(fn: Callable, args: list, weights: list | None, seed: int) -> tuple[list, list]:
    """``(outputs, input gradients)`` of ``fn(*args)``; gradients (of ``sum(out * w)``) where outputs need them."""
    torch.manual_seed(seed)
    outs = _flat(fn(*args))
    grads: list = []
    need = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
    diff = [(o, w) for o, w in zip(outs, weights or []) if o.requires_grad]
    if need and diff:
        got = torch.autograd.grad([o for o, _ in diff], need, [w.to(o.dtype) for o, w in diff], allow_unused=True)
        grads = [g for g in got if g is not None]
    return [o.detach() for o in outs], [g.detach() for g in grads]


def compare_first_call(gm: Any, compiled: Callable, args: list, seed: int = 0) -> dict[str, Any]:
    """Dynamo graph ``gm`` (a copy taken before the backend changed it) run eagerly and in float64, against the
    backend's ``compiled`` callable, on copies of ``args`` (the script's own inputs of this call); returns
    ``{"outputs": [row...], "worst": row}`` where a row is tracer.numerics.stats of compiled vs eager with the
    numerics verdict (``status``: ok, closer, same, order, suspect, diverges) and ``which`` ("output 0",
    "grad 1").  Raises what running either raises."""
    from inductor_step.tracer.numerics import stats, verdict  # noqa: PLC0415

    with torch.no_grad():
        probe = _flat(gm(*_clone(args)))
    torch.manual_seed(seed + 7)
    weights = [torch.randn(p.shape, dtype=torch.float64) if p.is_floating_point() else None for p in probe]
    weights = [w if w is not None else torch.zeros(()) for w in weights]
    eo, eg = _run(gm, _clone(args), weights, seed)
    co, cg = _run(compiled, _clone(args), weights, seed)
    try:
        fo, fg = _run(gm, _clone(args, torch.float64), weights, seed)
    except Exception:  # noqa: BLE001 - an op without a float64 kernel: no reference
        fo, fg = [], []
    rows: list[dict[str, Any]] = []
    for label, cs, es, fs in (("output", co, eo, fo), ("grad", cg, eg, fg)):
        for i, (c, e) in enumerate(zip(cs, es)):
            s = stats(c, e)
            f = fs[i] if i < len(fs) and fs[i].shape == c.shape else None
            c64 = stats(c, f) if f is not None else None
            e64 = stats(e, f) if f is not None else None
            status, text = verdict(s, c64, e64, 1, str(c.dtype).replace("torch.", ""))
            rows.append({"which": f"{label} {i}", "shape": list(c.shape), "dtype": str(c.dtype).replace("torch.", ""),
                         "status": status, "verdict": text, "max_abs": s.get("max_abs"),
                         "tol_ratio": s.get("tol_ratio"), "nonfinite_mismatch": s.get("nonfinite_mismatch", 0),
                         "nan": s.get("nan", 0), "ref_nan": s.get("ref_nan", 0)})
        if len(cs) != len(es):
            rows.append({"which": f"{label}s", "status": "suspect",
                         "verdict": f"{len(cs)} compiled {label}s vs {len(es)} eager"})
    order = {"suspect": 3, "diverges": 2}

    def rank(r: dict[str, Any]) -> tuple:
        t = r.get("tol_ratio")
        return (order.get(r.get("status"), 0), t if isinstance(t, (int, float)) else 0.0)

    return {"outputs": rows, "worst": max(rows, key=rank) if rows else None}


def install_compare_hook(on_first_call: Callable[[str, Callable[[], dict[str, Any]]], None],
                         settings: dict[str, Any] | None = None, rewrites: dict[str, Any] | None = None) -> bool:
    """Through Dynamo's ``OutputGraph.call_user_compiler`` (tracer.adapter.backends.install_backend_hook): before
    each backend compile apply ``settings`` (:func:`apply_settings`: after the script set its own), and call
    ``on_first_call(compile_id, compare)`` at the first call of each compiled graph (``rewrites``: the FX nodes the
    user's own passes rewrite, recorded there by :func:`watch_custom_passes`), where ``compare()`` returns
    :func:`compare_first_call`'s answer.  The call itself then runs on as the script's.  False where this torch has
    no ``call_user_compiler``."""
    try:
        from inductor_step.tracer.adapter.backends import install_backend_hook  # noqa: PLC0415
        from inductor_step.tracer.adapter.dynamo_graph import copy_graph_module  # noqa: PLC0415
    except Exception:  # noqa: BLE001
        return False

    def before(gm: Any, backend: str) -> tuple[str, Any]:
        if settings:
            apply_settings(settings)
        if rewrites is not None:
            watch_custom_passes(rewrites)
        try:
            copy = copy_graph_module(gm)
        except Exception:  # noqa: BLE001
            copy = None
            log.debug("blame: the Dynamo graph did not copy", exc_info=True)
        return current_compile_id(), copy

    def wrap(gm: Any, backend: str, compiled: Callable, state: tuple[str, Any] | None) -> Callable:
        cid, copy = state or ("[?]", None)
        if copy is None:
            return compiled
        seen = [False]

        def first_call(*args: Any) -> Any:
            if not seen[0]:
                seen[0] = True
                on_first_call(cid, lambda: compare_first_call(copy, compiled, list(args)))
            return compiled(*args)

        return first_call

    return install_backend_hook(before, None, wrap)


def interned_files() -> dict[int, str]:
    """The structured trace's interned file names (``torch._logging.structured.INTERN_TABLE``), id -> name."""
    try:
        from torch._logging import structured  # noqa: PLC0415

        return {v: k for k, v in structured.INTERN_TABLE.items()}
    except Exception:  # noqa: BLE001
        return {}


def guard_origin(max_depth: int = 40) -> tuple[str | None, dict[str, list[str]]]:
    """Asked from a structured-trace handler during torch's ``guard_added_fast`` event: ``(prefix, sources)`` of the
    guard being logged, read from the ``ShapeEnv._log_guard(prefix, g, forcing_spec)`` frame on the stack
    (torch/fx/experimental/symbolic_shapes.py, torch 2.11 and 2.13 alike): ``prefix`` is ``"eval"``,
    ``"runtime_assert"`` or ``"eval [guard suppressed]"`` (not installed), ``sources`` the guard's symbols and what
    each stands for (``{"s77": ["L['x'].size()[0]"]}``, ``ShapeEnv.var_to_sources``).  ``(None, {})`` when no such
    frame is found within ``max_depth`` frames."""
    import sys  # noqa: PLC0415

    f = sys._getframe(1)
    for _ in range(max_depth):
        if f is None:
            break
        if f.f_code.co_name == "_log_guard" and f.f_code.co_filename.endswith("symbolic_shapes.py"):
            loc = f.f_locals
            env, g = loc.get("self"), loc.get("g")
            out: dict[str, list[str]] = {}
            try:
                free = {str(s) for s in getattr(g, "free_symbols", ())}
                for sym, srcs in (getattr(env, "var_to_sources", None) or {}).items():
                    if str(sym) in free:
                        out[str(sym)] = [str(x.name() if callable(x.name) else x.name) for x in srcs]
            except Exception:  # noqa: BLE001
                pass
            return str(loc.get("prefix")), out
        f = f.f_back
    return None, {}


def config_values() -> dict[str, Any]:
    """Every ``torch._inductor.config`` setting's value now (bool, int, float, str, None ones), by dotted name."""
    from torch._inductor import config as ic  # noqa: PLC0415

    out: dict[str, Any] = {}
    for name in getattr(ic, "_config", {}) or {}:
        obj: Any = ic
        try:
            for part in name.split("."):
                obj = getattr(obj, part)
        except Exception:  # noqa: BLE001
            continue
        if isinstance(obj, (bool, int, float, str)) or obj is None:
            out[name] = obj
    return out


def config_default(name: str) -> tuple[bool, Any]:
    """``(is the value torch's default, the default)`` of ``torch._inductor.config`` setting ``name``
    (``ConfigModule._is_default``); raises KeyError for a name it does not have."""
    from torch._inductor import config as ic  # noqa: PLC0415

    entry = ic._config[name]
    return bool(ic._is_default(name)), entry.default


def preload() -> None:
    """Import torch, Dynamo and Inductor (what a bisect step would import) and probe the CPU's vector ISA once (it
    builds and runs a small program), so that steps forked from this process start warm.  CUDA stays untouched."""
    import torch._dynamo  # noqa: F401, PLC0415
    import torch._inductor.compile_fx  # noqa: F401, PLC0415
    import torch._inductor.compiler_bisector  # noqa: F401, PLC0415

    try:
        from torch._inductor import cpu_vec_isa  # noqa: PLC0415

        cpu_vec_isa.pick_vec_isa()
    except Exception:  # noqa: BLE001
        pass


def reset_bisector() -> None:
    """After a fork: torch's compiler bisector reads its environment once (``get_env_val`` is cached, and
    ``bisection_enabled`` is set as the module loads); read it again for this step's environment."""
    from torch._inductor import compiler_bisector as cb  # noqa: PLC0415

    cb.get_env_val.cache_clear()
    cb.CompilerBisector.bisection_enabled = cb.get_is_bisection_enabled()
    cb.subsystem_call_counter.clear()


__all__ = ["CUSTOM_PASSES", "apply_settings", "compare_first_call", "config_default", "config_values", "custom_passes",
           "graph_kind", "guard_origin", "install_application_log", "install_compare_hook", "interned_files",
           "preload", "reset_bisector", "watch_custom_passes"]
