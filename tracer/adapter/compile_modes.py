"""How a graph was compiled: torch.compile's arguments, Inductor's non-default config, dynamic symbols, templates and autotuning choices."""

from __future__ import annotations

import contextlib
import math
import threading
from typing import Any, Iterator

import torch

from inductor_step.tracer.adapter.base import _unavailable, install_wrapper, log, safe, wrapped_by_us

#: Inductor config entries the agent itself sets (tracer.adapter.hooks), never the user's choice
_AGENT_KEYS = frozenset({"fx_graph_cache", "fx_graph_remote_cache", "autotune_local_cache",
                         "trace.provenance_tracking_level", "pre_grad_custom_pass", "post_grad_custom_pre_pass",
                         "post_grad_custom_post_pass", "_pre_fusion_custom_pass", "_post_fusion_custom_pass"})
_JSON = (bool, int, float, str, type(None))


def _plain(v: Any) -> Any:
    """A config or option value as JSON: scalars as they are, lists of scalars as lists, else its repr (cut)."""
    if isinstance(v, _JSON):
        return v if not (isinstance(v, float) and not math.isfinite(v)) else repr(v)
    if isinstance(v, (list, tuple)) and all(isinstance(x, _JSON) for x in v):
        return list(v)
    return repr(v)[:200]


# ----------------------------------------------------------------------------- torch.compile's arguments

def install_compile_args_hook() -> bool:
    """Remember each ``torch.compile(...)`` call's ``mode``, ``options`` and ``dynamic`` on the backend
    object it builds, so a compile can say how it was asked for (:func:`compiled_with`).

    ``torch.compile`` (torch/__init__.py) turns ``mode`` and ``options`` into config patches inside
    ``_TorchCompileInductorWrapper.__init__(mode, options, dynamic)`` (non-Inductor backends:
    ``_TorchCompileWrapper.__init__(backend, mode, options, dynamic)``) and keeps only the merged
    patches; we wrap both ``__init__`` to keep the arguments as given.  Returns False where this
    torch has neither class."""
    done = False
    for cls_name, first in (("_TorchCompileInductorWrapper", 0), ("_TorchCompileWrapper", 1)):
        cls = getattr(torch, cls_name, None)
        if cls is None:
            continue
        done = True
        real = cls.__init__
        if wrapped_by_us(real):
            continue

        def __init__(self: Any, *a: Any, _real: Any = real, _first: int = first, **k: Any) -> None:
            given = list(a[_first:_first + 3])
            given += [None] * (3 - len(given))
            mode, options, dynamic = (k.get("mode", given[0]), k.get("options", given[1]), k.get("dynamic", given[2]))
            try:
                opts = {str(key): _plain(v) for key, v in dict(options or {}).items()}
            except Exception:  # noqa: BLE001
                opts = {"?": repr(options)[:200]}
            _real(self, *a, **k)
            try:
                self._inductor_step_args = {"mode": mode, "options": opts, "dynamic": dynamic}
            except Exception:  # noqa: BLE001 - never in the script's way
                pass

        install_wrapper(cls, "__init__", __init__)
    return done


def _current_tx() -> Any:
    try:
        from torch._dynamo.symbolic_convert import InstructionTranslator  # noqa: PLC0415

        return InstructionTranslator.current_tx()
    except Exception:  # noqa: BLE001
        return None


def _backend_object(tx: Any) -> Any:
    """The backend Dynamo compiles with (``OutputGraph.compiler_fn``, unwrapped from Dynamo's debug
    wrappers through ``_torchdynamo_orig_backend``)."""
    fn = getattr(getattr(tx, "output", None), "compiler_fn", None)
    seen = 0
    while fn is not None and hasattr(fn, "_torchdynamo_orig_backend") and seen < 8:
        fn = fn._torchdynamo_orig_backend
        seen += 1
    return fn


def inductor_config_changes() -> dict[str, Any]:
    """``torch._inductor.config`` entries whose value on this thread differs from torch's default,
    ``{name: value}`` (``"triton.cudagraphs": True``), without the ones the agent sets itself.

    Read during a compile it includes the compile's own patches: ``torch.compile``'s ``mode`` and
    ``options`` are applied by ``compile_fx`` as ``config.patch(...)`` around the compile (a per-thread
    ContextVar from torch 2.13).  Values: JSON scalars as they are, others as their repr."""
    from torch._inductor import config as ic  # noqa: PLC0415

    entries = getattr(ic, "_config", None)
    if not isinstance(entries, dict):
        raise RuntimeError("torch._inductor.config has no _config table")
    # ConfigModule._get_dict reads each entry's override without __getattr__'s side effects (deprecation
    # warnings, a deep copy of a list default stored as an override)
    current = ic._get_dict(skip_default=True) if hasattr(ic, "_get_dict") else \
        {n: getattr(ic, n) for n, e in entries.items() if not getattr(e, "deprecated", False)}
    out: dict[str, Any] = {}
    for name, value in current.items():
        entry = entries.get(name)
        if name in _AGENT_KEYS or entry is None or getattr(entry, "alias", None) is not None:
            continue
        try:
            if value == entry.default or callable(value):
                continue
        except Exception:  # noqa: BLE001 - a value that cannot be compared is left out
            continue
        out[name] = _plain(value)
    return dict(sorted(out.items()))


@safe("compile settings")
def compiled_with() -> dict[str, Any]:
    """How the graph being compiled on this thread was asked for, as a ``protocol.CompiledWith``:
    ``backend`` (``"inductor"``, or the backend's name), ``mode``, ``options`` and ``dynamic`` as given to
    ``torch.compile`` (None where the compile did not come through ``torch.compile``: ``note`` says so),
    ``fullgraph`` (Dynamo's ``InstructionTranslator.one_graph``: torch.compile's ``fullgraph``) and ``config``: the Inductor settings
    that differ from default for this compile (:func:`inductor_config_changes`).  Call it from a hook
    inside the backend compile (``pre_grad_custom_pass``)."""
    tx = _current_tx()
    backend = _backend_object(tx)
    out: dict[str, Any] = {"backend": None, "mode": None, "options": {}, "dynamic": None, "fullgraph": None}
    if backend is not None:
        out["backend"] = str(getattr(backend, "compiler_name", None) or getattr(backend, "__name__", None)
                             or type(backend).__name__)
        given = getattr(backend, "_inductor_step_args", None)
        if isinstance(given, dict):
            out.update(mode=given.get("mode"), options=dict(given.get("options") or {}),
                       dynamic=given.get("dynamic"))
        else:
            out["note"] = ("compiled without torch.compile's wrapper (torch._dynamo.optimize or a backend "
                           "function): mode and options not known")
    if tx is not None:
        out["fullgraph"] = bool(getattr(tx, "one_graph", False))
    elif backend is None:
        out["note"] = ("no Dynamo frame on this thread (torch.export, AOTInductor, compiled autograd or a direct "
                       "compile_fx): torch.compile's arguments not known")
    try:
        out["config"] = inductor_config_changes()
    except Exception as e:  # noqa: BLE001
        out["config"] = {}
        out["config_unavailable"] = _unavailable("torch._inductor.config", e)["unavailable"]
    return out


# ----------------------------------------------------------------------------- dynamic symbols

@safe("dynamic symbols")
def dynamic_symbols() -> list[dict[str, Any]]:
    """The ShapeEnv's symbols of the graph Dynamo traced on this thread (``TracingContext.fake_mode.shape_env``),
    one ``protocol.Symbol`` each: ``name`` (``s27``), ``source`` (what it stands for, as Dynamo names it:
    ``L['x'].size()[1]``), ``sources`` (every input it stands for), ``range`` (``[lo, hi]`` as text, from
    ``var_to_range``: ``["2", "int_oo"]``), ``hint`` (its value at this compile, ``backed_var_to_val``,
    before torch 2.14 ``var_to_val``) and, where a guard replaced it (``ShapeEnv.replacements``: two lengths that
    must be equal, ``s75`` -> ``s13``), ``replaced_by`` (what the graphs write instead); the symbol that stands in
    for it lists its sources too (nanoGPT with both lengths marked dynamic: the graph wrote ``L['idx']`` as
    ``[4, s13]`` where s13 named only ``L['targets'].size()[1]``).
    An empty list for a static graph."""
    from torch._guards import TracingContext  # noqa: PLC0415

    ctx = TracingContext.try_get()
    env = getattr(getattr(ctx, "fake_mode", None), "shape_env", None)
    if env is None:
        return []
    out = []
    sources = dict(getattr(env, "var_to_sources", {}) or {})
    ranges = dict(getattr(env, "var_to_range", {}) or {})
    vals = dict((getattr(env, "backed_var_to_val", None) if hasattr(env, "backed_var_to_val")
                 else getattr(env, "var_to_val", None)) or {})
    for sym in sorted(set(sources) | set(ranges), key=lambda s: (len(str(s)), str(s))):
        names = []
        for src in sources.get(sym) or []:
            try:
                names.append(str(src.name() if callable(getattr(src, "name", None)) else src.name))
            except Exception:  # noqa: BLE001
                names.append(repr(src))
        r = ranges.get(sym)
        entry: dict[str, Any] = {"name": str(sym), "source": names[0] if names else None, "sources": names}
        if r is not None:
            entry["range"] = [str(r.lower), str(r.upper)]
        hint = vals.get(sym)
        if hint is not None:
            try:
                entry["hint"] = int(hint)
            except Exception:  # noqa: BLE001
                entry["hint"] = str(hint)
        out.append(entry)
    by_name = {e["name"]: e for e in out}
    for sym, expr in dict(getattr(env, "replacements", {}) or {}).items():
        mine, theirs = by_name.get(str(sym)), by_name.get(str(expr))
        if mine is None or str(expr) == str(sym):
            continue
        mine["replaced_by"] = str(expr)
        if theirs is not None:  # a plain symbol stands in for it: it stands for these inputs too
            theirs["sources"] = [*theirs["sources"], *(x for x in mine["sources"] if x not in theirs["sources"])]
    return out


# ----------------------------------------------------------------------------- templates

@safe("template nodes")
def template_nodes(gl: Any) -> dict[str, dict[str, Any]]:
    """Fused node name -> its template, for each post-fusion scheduler node of ``gl`` (``V.graph``) built
    around a template (``BaseSchedulerNode.is_template()``, torch/_inductor/scheduler.py): ``template``
    (the template buffer's IR type: ``CppTemplateBuffer``, ``TritonTemplateBuffer``, ...), ``template_node``
    (its ``opN``), ``buffer`` (its ``bufN``), ``epilogue`` / ``prologue`` (the member ``opN`` fused after /
    before it, ``get_prologue_template_epilogue``)."""
    sched = getattr(gl, "scheduler", None)
    out: dict[str, dict[str, Any]] = {}
    if sched is None:
        return out
    for fused in sched.nodes:
        if not fused.is_template():
            continue
        tnode = fused.get_template_node()
        members = list(fused.get_nodes())
        tname = next((m.get_name() for m in members if getattr(m, "node", None) is tnode), None)
        names = [m.get_name() for m in members]
        i = names.index(tname) if tname in names else 0
        out[fused.get_name()] = {"template": type(tnode).__name__, "template_node": tname,
                                 "buffer": tnode.get_name() if tnode is not None else None,
                                 "prologue": names[:i], "epilogue": names[i + 1:]}
    return out


# ----------------------------------------------------------------------------- autotuning

_local = threading.local()


@contextlib.contextmanager
def _feedback_into() -> Iterator[dict[str, Any]]:
    """A dict whose ``"times"`` the feedback saver (:func:`install_autotune_hook`) fills with ``{id(choice): ms}`` of
    the selection benchmarked on this thread inside the ``with``: None where none was."""
    rec: dict[str, Any] = {"times": None}
    outer = getattr(_local, "record", None)
    _local.record = rec
    try:
        yield rec
    finally:
        _local.record = outer
_AUTOTUNE: list[dict[str, Any]] = []
#: selections deferred to the scheduler (a MultiTemplateBuffer): (the record, the buffer, its choices, the timings
#: heard from it, :func:`_listen`), resolved when the graph's selections are taken (:func:`take_autotune`, at its
#: codegen stop)
_DEFERRED: list[tuple[dict[str, Any], Any, list, dict[str, Any]]] = []


def _choice_kind(c: Any) -> str:
    """``template``, ``extern`` or the caller's class, through select_algorithm's wrappers (``_wrapped``)."""
    for _ in range(4):
        inner = getattr(c, "__dict__", {}).get("_wrapped")
        if inner is None:
            break
        c = inner
    name = type(c).__name__
    if "Extern" in name:
        return "extern"
    if "Template" in name:
        return "template"
    return name


def _choice_name(c: Any) -> str:
    return str(getattr(c, "name", None) or type(c).__name__)


def _buffer_of(node: Any) -> str | None:
    """The buffer name of a selection's output (a TensorBox of a StorageBox of the buffer)."""
    for _ in range(4):
        if node is None:
            return None
        if hasattr(node, "get_name"):
            try:
                return str(node.get_name())
            except Exception:  # noqa: BLE001
                pass
        node = getattr(node, "data", None)
    return None


def install_autotune_hook() -> bool:
    """Record every choice Inductor's ``select_algorithm`` makes (torch/_inductor/select_algorithm.py):
    wraps ``AlgorithmSelectorCache.__call__(name, choices, input_nodes, layout, ...)`` for the op, the
    candidates, the input sizes and the winner it returns (``(node, choice)`` from torch 2.10, or the
    node), and registers a feedback saver (``add_feedback_saver``: ``timings`` {choice: ms} of each
    benchmarked selection).  A selection with one candidate is recorded unbenchmarked.  Collected per
    graph by :func:`take_autotune`.  Returns False where this torch has no such class."""
    try:
        from torch._inductor import select_algorithm as sa  # noqa: PLC0415
    except Exception:  # noqa: BLE001
        return False
    cls = getattr(sa, "AlgorithmSelectorCache", None)
    if cls is None:
        return False
    real = cls.__call__
    if wrapped_by_us(real):
        return True

    def feedback(timings: Any, name: Any, input_nodes: Any, choices: Any, *rest: Any) -> None:
        rec = getattr(_local, "record", None)
        if rec is None:
            return
        try:
            rec["times"] = {id(c): float(t) for c, t in dict(timings).items()}
        except Exception:  # noqa: BLE001
            log.debug("autotune feedback", exc_info=True)

    def __call__(self: Any, name: Any, choices: Any, input_nodes: Any, layout: Any, *a: Any, **k: Any) -> Any:
        if not any(f is feedback for f in getattr(self, "feedback_saver_fns", [])):
            try:
                self.add_feedback_saver(feedback)
            except Exception:  # noqa: BLE001
                pass
        with _feedback_into() as rec:
            result = real(self, name, choices, input_nodes, layout, *a, **k)
        try:
            sel = _selection(str(name), list(choices), input_nodes, result, rec["times"])
            deferred = _multi_template(result)
            if deferred is not None:  # benchmarked later, by the scheduler: resolved at take_autotune
                sel["note"] = DEFERRED_NOTE
                _DEFERRED.append((sel, deferred, list(choices), _listen(deferred)))
            # a lone library call with nothing to choose (every mm outside max-autotune) is no choice
            if sel["benchmarked"] or any(c["kind"] != "extern" for c in sel["choices"]):
                _AUTOTUNE.append(sel)
        except Exception:  # noqa: BLE001 - a record we cannot make is left out
            log.debug("autotune record", exc_info=True)
        return result

    install_wrapper(cls, "__call__", __call__)
    return True


def _selection(op: str, choices: list, input_nodes: Any, result: Any, times: dict[int, float] | None) -> dict[str, Any]:
    """One selection as a ``protocol.Autotune``."""
    node, chosen = (result if isinstance(result, tuple) and len(result) == 2 else (result, None))
    sizes = []
    for n in input_nodes or []:
        try:
            sizes.append("x".join(str(s) for s in n.get_size()) + f" {str(n.get_dtype()).replace('torch.', '')}")
        except Exception:  # noqa: BLE001
            sizes.append("?")
    cands = []
    for c in choices:
        entry: dict[str, Any] = {"name": _choice_name(c), "kind": _choice_kind(c)}
        desc = getattr(c, "description", None)
        if desc:
            entry["description"] = str(desc)[:200]
        if times is not None:
            _time_choice(entry, times.get(id(c)))
        cands.append(entry)
    rec: dict[str, Any] = {"op": op, "input_sizes": sizes, "choices": cands, "benchmarked": times is not None,
                           "buffer": _buffer_of(node)}
    if chosen is not None:
        rec["winner"] = _choice_name(chosen)
    elif times:
        rec["winner"] = _choice_name(min((c for c in choices if id(c) in times), key=lambda c: times[id(c)]))
    if times is None:
        rec["note"] = ("one candidate: used without benchmarking" if len(choices) == 1 else
                       "not benchmarked (config.deterministic, a cached result, or no timings came back)")
    return rec


def _time_choice(entry: dict[str, Any], t: float | None) -> None:
    """Set a choice's ``ms`` (its benchmark time, or None where it has none) and ``failed`` where torch timed it at
    ``inf`` (select_algorithm's mark of a failed or timed-out benchmark)."""
    entry["ms"] = t if t is not None and math.isfinite(t) else None
    if t is not None and not math.isfinite(t):
        entry["failed"] = "benchmark failed or timed out (inf)"


DEFERRED_NOTE = ("deferred to the scheduler (benchmark_epilogue_fusion): it never benchmarked this selection, "
                 "the buffer's first choice stayed")


def _multi_template(result: Any) -> Any:
    """The ``MultiTemplateBuffer`` a selection returned (torch/_inductor/ir.py: under max-autotune on the GPU,
    ``benchmark_epilogue_fusion``, select_algorithm returns ``TensorBox(MultiTemplateBuffer)`` (torch 2.11) or
    ``(that, None)`` (later) and the scheduler benchmarks the choices later, with their epilogues), else None."""
    node = result[0] if isinstance(result, tuple) and len(result) == 2 else result
    for _ in range(4):
        if node is None:
            return None
        if any(k.__name__ == "MultiTemplateBuffer" for k in type(node).__mro__):
            return node
        node = getattr(node, "data", None)
    return None


def _listen(buf: Any) -> dict[str, Any]:
    """A dict that receives the selection's own timings (``{"timings": {choice: ms}}``) when the scheduler first
    asks the MultiTemplateBuffer ``buf`` for them: its ``_choice_timings_fn`` (select_algorithm's ``get_timings``)
    is wrapped.  The buffer's ``_choice_timings`` cannot be read for them afterwards: where an epilogue is fused,
    the scheduler replaces them with the times of the fused kernels it compiled (``speedup_by_fusion``: one of
    22 choices in a bf16 Linear + GELU on the H200).  ``get_timings`` also drops every library choice slower than
    the fastest one (``bias_addmm`` behind ``addmm``), which torch's AUTOTUNE table still prints: the feedback
    saver's times of every benchmarked choice (``{id(choice): ms}``) are kept as ``"all"``."""
    heard: dict[str, Any] = {}
    fn = getattr(buf, "_choice_timings_fn", None)
    if not callable(fn):
        return heard

    def timings(hint_override: Any = None, *a: Any, **k: Any) -> Any:
        with _feedback_into() as rec:  # every choice the benchmark timed, those get_timings drops too
            out = fn(hint_override, *a, **k)
        if hint_override is None and "timings" not in heard:
            try:
                heard["timings"] = dict(out)
                heard["all"] = rec["times"] or {}
            except Exception:  # noqa: BLE001 - left to the buffer's own dict
                pass
        return out

    try:
        buf._choice_timings_fn = timings
    except Exception:  # noqa: BLE001
        pass
    return heard


def _resolve_deferred(sel: dict[str, Any], buf: Any, choices: list, heard: dict[Any, float] | None = None,
                      every: dict[int, float] | None = None) -> None:
    """Fill a deferred selection once the scheduler is done: each choice's time (``heard``: what the buffer's
    timing function returned, :func:`_listen`; else ``MultiTemplateBuffer._choice_timings``, keyed by the hint
    override in torch 2.10+) and the winner: the template the scheduler finalized the buffer as
    (``_render_caller``), else the fastest by the buffer's own timings, as ``get_min_choice`` reads them (the fused
    kernels' where the scheduler timed an epilogue fused: said in the note).  Left as recorded when the scheduler
    never asked for timings."""
    cached = getattr(buf, "_choice_timings", None)
    if isinstance(cached, dict) and None in cached and isinstance(cached[None], dict):
        cached = cached[None]
    if not isinstance(cached, dict):
        cached = {}
    if not heard and not cached:
        return
    own = heard or cached
    log.debug("deferred %s: heard %d of %d, cached %d, render_caller %s", sel.get("op"), len(heard or {}),
              len(every or {}), len(cached), getattr(buf, "_render_caller", "absent"))
    times = dict(every or {}) if heard else {}  # choices get_timings dropped keep the time torch measured
    times.update({id(c): float(t) for c, t in own.items()})
    for c, entry in zip(choices, sel["choices"]):
        _time_choice(entry, times.get(id(c)))
    sel["benchmarked"] = True
    if heard and cached and (set(cached) != set(heard) or any(heard.get(c) != t for c, t in cached.items())):
        # the scheduler timed choices with the epilogue fused and kept those times: get_min_choice reads them
        times = {id(c): float(t) for c, t in cached.items()}
        sel["fused_ms"] = {_choice_name(c): float(t) for c, t in cached.items()}
    chosen = getattr(buf, "_render_caller", None)
    finite = [c for c in choices if math.isfinite(times.get(id(c), math.inf))]
    if chosen is not None:
        sel["winner"] = _choice_name(chosen)
    elif finite:
        sel["winner"] = _choice_name(min(finite, key=lambda c: times[id(c)]))
    if chosen is not None:
        sel["note"] = "benchmarked by the scheduler (benchmark_epilogue_fusion): the template it finalized"
    elif hasattr(buf, "_render_caller"):  # no template finalized: the fastest choice's kernel replaced the buffer
        sel["note"] = "benchmarked by the scheduler (benchmark_epilogue_fusion): the fastest choice"
    else:
        sel["note"] = ("benchmarked by the scheduler (benchmark_epilogue_fusion); the fastest choice shown as the "
                       "winner: this torch does not say which it finalized")
    if sel.get("fused_ms"):
        sel["note"] += (f"; then {len(sel['fused_ms'])} choice(s) timed with the epilogue fused (fused_ms), "
                        "the winner the fastest of those")


def take_autotune() -> list[dict[str, Any]]:
    """The selections recorded since the last call (:func:`install_autotune_hook`), in Inductor's order; those the
    scheduler benchmarked (deferred, :func:`_resolve_deferred`) with their times and winner."""
    for sel, buf, choices, heard in _DEFERRED:
        try:
            _resolve_deferred(sel, buf, choices, heard.get("timings"), heard.get("all"))
        except Exception:  # noqa: BLE001 - left as recorded
            log.debug("autotune deferred", exc_info=True)
    _DEFERRED.clear()
    out = list(_AUTOTUNE)
    _AUTOTUNE.clear()
    return out
