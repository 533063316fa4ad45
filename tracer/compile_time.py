"""Where the compile's own time goes: torch's ``dynamo_timed`` events per graph, cut into stages, with
the time we held the compile (paused at a stop, or in our own capture hooks) taken out; per kernel, per FX node's
lowering, the frame's Dynamo tracing and the caches' verdicts.  One ``compile_time`` message per finished
compile (a frame's Dynamo + forward/inference compile, a lazy backward, or a late event such as runtime
autotuning); the UI adds a graph's messages up.

Clocks: torch's own ``time.time_ns()`` stamps of its events (tracer.adapter.compile_timers); ours, on the same
clock, for our stops and hooks and where torch has no timer (each C++ kernel's build, each ``select_algorithm``).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from inductor_step.session.format import COMPILE_STAGES as STAGE_ORDER  # noqa: F401 - the stages' labels
from inductor_step.session.format import PART_SEP, GraphKey

#: torch's event name -> our stage (names as torch 2.11-2.14 spell them); an event not here takes its
#: parent's stage, and time under no named event is "other"
STAGE_OF: dict[str, str] = {
    "dynamo": "dynamo", "entire_frame_compile": "dynamo", "_compile.compile_inner": "dynamo",
    "bytecode_tracing": "dynamo", "insert_deferred_runtime_asserts": "dynamo", "gc": "dynamo",
    "build_guards": "guards",
    "_recursive_pre_grad_passes": "pre_grad",
    "create_aot_dispatcher_function": "aot", "aot_collect_metadata": "aot", "aot_trace_joint_graph": "aot",
    "_recursive_joint_graph_passes": "aot",
    "min_cut_rematerialization_partition": "partition", "default_partition": "partition",
    "additional_fake_tensor_prop": "post_grad", "_recursive_post_grad_passes": "post_grad",
    "GraphLowering.run": "lowering",
    "Scheduler.__init__": "scheduling",
    "GraphLowering.codegen": "codegen", "Scheduler.codegen": "codegen", "PythonWrapperCodegen.generate": "codegen",
    "code_gen": "codegen",
    "async_compile.wait": "kernels", "compile_file": "kernels",
    "C++ vector ISA probe (cpu_vec_isa.valid_vec_isa_list)": "kernels",  # tracer.adapter.compile_timers.ISA_PROBE
    "PyCodeCache.load_by_key_path": "load", "GraphLowering.compile_to_module": "load",
    "CachingAutotuner.benchmark_all_configs": "autotune",
    # Inductor's entry points: their own time is the cache key, the repro artifact, bookkeeping
    "compile_fx.<locals>.fw_compiler_base": "inductor", "compile_fx.<locals>.bw_compiler": "inductor",
    "compile_fx.<locals>.inference_compiler": "inductor", "inductor_compile": "inductor",
    "compile_fx_inner": "inductor", "fx_codegen_and_compile": "inductor", "GraphLowering.compile_to_fn": "inductor",
    "entire_backward_compile": "inductor", "backward._backward_impl": "inductor",
    "backend_compile": "inductor",  # compile_fx outside its timed parts: the AOTAutograd cache key, fake inputs
}

def stage_of(name: str) -> str | None:
    """Our stage for torch's event ``name`` (None: the parent's)."""
    s = STAGE_OF.get(name)
    if s is not None:
        return s
    if name.startswith("select_algorithm ") or "autotune" in name.lower():
        return "autotune"
    if "Cache" in name or name.startswith(("inductor_codecache", "TritonBundler")):
        return "cache"
    return None


def overlap(intervals: list[tuple[int, int]], a: int, b: int) -> int:
    """ns of [a, b) covered by ``intervals`` (sorted, disjoint)."""
    out = 0
    for s, e in intervals:
        if e <= a:
            continue
        if s >= b:
            break
        out += min(b, e) - max(a, s)
    return out


def _merge(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


#: roots (no compile id) that only load kernels already built: Inductor's module load outside a compile, and
#: the ISA probe it runs then (tracer.adapter.compile_timers.ISA_PROBE)
_LOADS_OUTSIDE_A_COMPILE = frozenset({"async_compile.wait", "C++ vector ISA probe (cpu_vec_isa.valid_vec_isa_list)"})


def _length(intervals: list[tuple[int, int]]) -> int:
    """Total length (ns) of disjoint intervals (``_merge``'s result)."""
    return sum(e - s for s, e in intervals)


#: an event's graph within its root: (DDP part or None, higher-order op subgraph path or None)
Tag = tuple[Any, Any]
_NO_TAG: Tag = (None, None)


class _Event:
    __slots__ = ("name", "start", "end", "children", "data", "cid", "tag")

    def __init__(self, name: str, start: int, cid: str | None, tag: Tag = _NO_TAG):
        self.name, self.start, self.end, self.cid, self.tag = name, start, None, cid, tag
        self.children: list[_Event] = []
        self.data: dict[str, Any] = {}


def cid_label(raw: str | None) -> str | None:
    """torch's ``"0/0"`` (or ``"0/0_1"``, a restarted analysis) as our ``"[0/0]"``; None outside a compile."""
    if not raw or raw == "None":
        return None
    return f"[{raw.split('_')[0]}]"


class CompileClock:
    """Collects the events of one agent (all threads) and sends one ``compile_time`` message per finished
    root event.  ``send`` writes a message; ``graph_of(cid, backward)`` names the graph kind (the agent knows
    whether a frame's graph is a forward or an inference), or gives ``(compile id, kind)`` for a what-if variant; ``label(cid)`` spells a compile id as the session
    does (``@resetN``).  ``hold(kind)`` brackets time we keep the compile (``"paused"``: a stop waiting for the
    UI; ``"ours"``: our capture hooks), taken out of every stage.

    Parts and subgraphs: every event is tagged, as it starts, with the graph it belongs to within
    its root: the DDP part the agent announced (:meth:`set_part`: DDPOptimizer compiles each bucket's submodule
    in its own ``compile_fx`` call, under the frame's compile id) and the higher-order op's subgraph Inductor is
    lowering or generating (``scope()``: ``V.graph`` is a ``SubgraphLowering``, its path ``"true_graph_0"``).
    Each event's own time goes to its tag's graph, so a frame's graphs add up to the frame: one message per
    graph, and for a frame compiled in parts one more for the frame's own time (``frame_own``: Dynamo's
    tracing, DDPOptimizer's split, the guards)."""

    def __init__(self, send: Callable[[dict[str, Any]], None], graph_of: Callable[..., Any],
                 label: Callable[[str], str] = lambda c: c, scope: Callable[[], str | None] | None = None):
        self.send = send
        self.graph_of = graph_of
        self.label = label
        self.scope = scope
        self.tl = threading.local()
        self.lock = threading.Lock()
        # C++ cache key -> each _worker_compile_cpp run: (start, end, built); a kernel's build runs in a worker
        # thread, then once more (finding its .so) when the output module waits for it
        self.built: dict[str, list[tuple[int, int, bool]]] = {}

    # ------------------------------------------------------------------ per thread state
    def _state(self) -> Any:
        st = self.tl
        if not hasattr(st, "stack"):
            st.stack = []
            st.held = []  # (start, end, kind)
            st.hold_depth = 0
            st.kernels = []
            st.nodes = {}
            st.part = None  # the DDP part whose compile_fx runs now (set_part), until its owner event ends
            st.part_owner = None
            st.bw_part = None  # a backward root's part (its forward's)
        return st

    def _tag(self, st: Any) -> Tag:
        sub = None
        if self.scope is not None:
            try:
                sub = self.scope()
            except Exception:  # noqa: BLE001 - never in the compile's way
                sub = None
        return (st.part, sub)

    def set_part(self, part: int | None, backward: bool = False) -> None:
        """The agent's hook: ``compile_fx`` started on DDP part ``part`` of the frame (its pre-grad pass, called
        from inside torch's ``_recursive_pre_grad_passes`` event: that event and what follows, until the event
        that holds it ends, belong to the part); ``backward``: this backward root compiles part ``part``."""
        st = self._state()
        if backward:
            st.bw_part = part
            return
        st.part = part
        at = next((i for i in range(len(st.stack) - 1, -1, -1) if st.stack[i].name == "_recursive_pre_grad_passes"),
                  None)
        if at is None:
            st.part_owner = st.stack[-1] if st.stack else None
            return
        for ev in _iter(st.stack[at]):
            ev.tag = (part, ev.tag[1])
        st.part_owner = st.stack[at - 1] if at > 0 else None

    # ------------------------------------------------------------------ hooks
    def on_event(self, phase: str, name: str, t_ns: int, data: dict[str, Any]) -> None:
        """A ``dynamo_timed`` event starts (``"B"``) or ends (``"E"``) on this thread."""
        st = self._state()
        if phase == "B":
            ev = _Event(name, t_ns, cid_label(data.get("compile_id")), self._tag(st))
            ev.data = data  # the start's metadata (kernel_name, is_backward), replaced by the end's below
            if st.stack:
                st.stack[-1].children.append(ev)
            st.stack.append(ev)
            return
        while st.stack and st.stack[-1].name != name:  # torch fixes overlapping events the same way
            st.stack.pop().end = t_ns
        if not st.stack:
            return
        ev = st.stack.pop()
        ev.end = t_ns
        if ev is st.part_owner:  # the event that held the parts' compile_fx calls ended: back to the frame
            st.part, st.part_owner = None, None
        ev.data = {**ev.data, **data}
        ev.cid = ev.cid or cid_label(data.get("compile_id"))
        if not st.stack:
            self._finish(ev, st)

    def so_far(self) -> dict[str, float]:
        """ms per stage of the compile open on this thread, up to now (a stop's ``compile_ms``: the stage bar
        shows it while the compile is paused); {} outside a compile."""
        st = self._state()
        if not st.stack:
            return {}
        now = time.time_ns()
        root = st.stack[0]
        held = [(s, e) for s, e, _ in st.held if e > root.start]
        if st.hold_depth and getattr(st, "hold_start", None):
            held.append((st.hold_start, now))  # the hook we are in now (the stop is sent from one)
        out, _top, _total = _stage_times(root, _merge(held), now)
        tags = list(out)
        mine = self._tag(st) if root.name != "entire_backward_compile" else None
        stages: dict[str, float] = {}
        for tag in tags:  # the graph whose stop asks: its own tag's stages (a backward root: all of them)
            if mine is None or tag == mine:
                for k, v in out[tag].items():
                    stages[k] = stages.get(k, 0.0) + v
        return {k: round(v, 3) for k, v in stages.items() if v >= 0.0005}

    def hold(self, kind: str) -> "_Hold":
        """``with clock.hold("paused"):`` the compile thread waits for the UI (or runs our hooks)."""
        return _Hold(self, kind)

    def on_node(self, name: str, ns: int) -> None:
        st = self._state()
        nodes = st.nodes.setdefault(self._tag(st), {})
        nodes[name] = nodes.get(name, 0) + ns

    def on_submit(self, rec: dict[str, Any]) -> None:
        st = self._state()
        rec["t"] = time.time_ns()
        rec["tag"] = (st.part, None)  # a subgraph's kernels are its parent's module's
        st.kernels.append(rec)

    def on_built(self, key: str, start: int, end: int, built: bool) -> None:
        with self.lock:
            self.built.setdefault(key, []).append((start, end, built))

    def on_triton(self, name: str, info: dict[str, Any]) -> None:
        st = self._state()
        rec = {"name": name, "kind": "triton", "t": time.time_ns(), "info": info, "tag": (st.part, None)}
        st.kernels.append(rec)

    # ------------------------------------------------------------------ a finished root
    def _finish(self, root: _Event, st: Any) -> None:
        """A root event ended: one ``compile_time`` message per graph it compiled (the frame's own first, then
        each part and subgraph), its stages' times less the time held in our hooks and paused at our stops."""
        if root.cid is None and not st.kernels and not st.nodes:
            return  # a compile worker's own event, or torch's between compiles: nothing of a graph
        if root.cid is None and root.name in _LOADS_OUTSIDE_A_COMPILE and not st.nodes:
            # our own run stage (timing, numerics, saved inputs) loading the kernels a compile built: not a
            # compile of the script's (it read "[?] inference" in pane T)
            st.kernels = []
            st.held = [h for h in st.held if h[1] > root.end]
            return
        held = [(s, e, k) for s, e, k in st.held if e > root.start and s < root.end]
        st.held = [h for h in st.held if h[1] > root.end]
        ours_all = _merge([(s, e) for s, e, _ in held])
        out, top, _total_ns = _stage_times(root, ours_all, root.end)
        backward = root.name == "entire_backward_compile" or _find(root, "compile_fx.<locals>.bw_compiler") is not None \
            or root.data.get("is_backward") in (True, "True")  # runtime autotuning names its graph's direction
        bw_part, st.bw_part = st.bw_part, None
        cid = self.label(root.cid or "[?]")
        kernels_by = self._kernels_by_tag(root, st, ours_all)
        nodes_by = {tag: {n: round(ns / 1e6, 3) for n, ns in v.items()} for tag, v in st.nodes.items()}
        st.nodes = {}
        held_by = _held_by_tag(root, held)
        cache_by = _cache_states(root)
        tags = [t for t in out if t != _NO_TAG]
        parts = any(t[0] is not None for t in tags) and not backward
        # the root's own tag first (the frame: Dynamo, guards), then each part and subgraph in the order it came
        for tag in [_NO_TAG] + tags:
            stages = out.get(tag) or {}
            # a stop pauses inside one of our hooks: the hook's span holds the pause, so spans are merged
            # before they are measured (the pause counts once, as paused, never again as our hooks' time)
            spans = held_by.get(tag, [])
            paused = _length(_merge([(s, e) for s, e, k in spans if k == "paused"]))
            held_ns = _length(_merge([(s, e) for s, e, _ in spans]))
            if tag != _NO_TAG and not stages and not held_ns:
                continue
            c, kind = self._kind_of(tag, cid, backward, bw_part)
            msg = _message(root, c, kind, stages, held_ns, paused, top.get(tag) or {})
            if tag == _NO_TAG and parts:
                msg["frame_own"] = True
            if kernels_by.get(tag):
                msg["kernels"] = kernels_by[tag]
            if nodes_by.get(tag):
                msg["lowering_nodes"] = nodes_by[tag]
            if cache_by.get(tag):
                msg["cache"] = cache_by[tag]
            if tag == _NO_TAG:
                _add_frame(msg, root, ours_all)
            self.send(msg)

    def _kind_of(self, tag: Tag, cid: str, backward: bool, bw_part: int | None) -> tuple[str, str]:
        """(compile id, kind) of the graph ``tag`` stands for in compile ``cid``: ``"forward #2 › true_graph_0"``."""
        part, sub = tag
        if backward and part is None:
            part = bw_part
        k = self.graph_of(cid, backward, part) if part else self.graph_of(cid, backward)
        c = cid
        if isinstance(k, tuple):  # a what-if variant compiled on this thread: its own key (tracer.whatif)
            c, k = k
        key = GraphKey.parse_kind(k, c)
        if part and key.part is None:
            key = key.replace(part=part)
        return key.child(sub).pair if sub else key.pair

    def _kernels_by_tag(self, root: _Event, st: Any, ours_all: list[tuple[int, int]]) -> dict[Tag, list[dict[str, Any]]]:
        """The kernels built and autotuned during ``root``, by the graph (tag) they belong to; ``st``'s are taken."""
        kernels_by: dict[Tag, list[dict[str, Any]]] = {}
        for rec, k in zip(st.kernels, self._kernels(st.kernels)):
            if k is not None:
                kernels_by.setdefault(rec.get("tag") or _NO_TAG, []).append(k)
        for tag, k in _autotunings(root, ours_all):
            kernels_by.setdefault(tag, []).append(k)
        st.kernels = []
        return kernels_by

    def _kernels(self, recs: list[dict[str, Any]]) -> list[dict[str, Any] | None]:
        """Each kernel submitted during the root: its build time in the compile worker and cache verdict (one
        per record; None for a Triton submit whose compile record follows)."""
        out: list[dict[str, Any] | None] = []
        compiled = {r.get("name") for r in recs if r["kind"] == "triton" and "info" in r}
        asked = {r.get("name"): r.get("t0") for r in recs if r["kind"] == "triton" and "cached" in r}
        for r in recs:
            k: dict[str, Any] = {"name": r.get("name") or "?", "kind": r["kind"]}
            if r["kind"] == "triton" and "cached" in r:  # AsyncCompile.triton's submit
                if r["name"] in compiled:
                    out.append(None)
                    continue
                if r["cached"]:
                    k.update(compile_ms=0.0, cache="hit", cache_note="Inductor's compiled Triton kernel (loaded with "
                             "the FX graph cache entry by TritonBundler, or compiled earlier in this process): no "
                             "Triton compile", source="our hook on AsyncCompile.triton (CompiledTritonKernels)")
                else:
                    k.update(compile_ms=None, missing="no compile record came (torch's _add_triton_kernel_info)",
                             source="our hook on AsyncCompile.triton")
                out.append(k)
                continue
            if r["kind"] == "cpp":
                if r.get("memory_hit"):
                    k.update(cache="hit", cache_note="already loaded in this process", compile_ms=0.0)
                else:
                    with self.lock:
                        b = self.built.pop(str(r.get("key")), None)
                    if not b:
                        k.update(compile_ms=None, missing="its build was not seen (codecache._worker_compile_cpp)")
                    else:
                        runs = [x for x in b if x[2]] or b
                        k["compile_ms"] = round(sum(e - s for s, e, _ in runs) / 1e6, 3)
                        k.update(cache="miss", cache_note="compiled") if any(x[2] for x in b) else \
                            k.update(cache="hit", cache_note="its .so was already on disk (Inductor's C++ cache)")
                k["source"] = "our clock around codecache._worker_compile_cpp (the compile worker's build)"
            else:
                info = r.get("info") or {}
                us = info.get("compile_time_us")
                k["compile_ms"] = round(us / 1000, 3) if isinstance(us, (int, float)) else None
                if info.get("autotune_cache_state"):
                    k["autotune_cache"] = info["autotune_cache_state"]
                k.update(_triton_verdict(info.get("triton_cache"), asked.get(k["name"])))
                k["source"] = "torch's compile_time_us, measured in the compile worker (Triton compile incl. ptxas)"
            out.append(k)
        return out


def _message(root: _Event, cid: str, kind: str, stages: dict[str, float], held_ns: int, paused: int,
             top: dict[str, dict[str, float]]) -> dict[str, Any]:
    """One graph's ``compile_time`` message: its stages' times (ms), the time held in our hooks and paused,
    and each stage's longest events (``top``)."""
    total = sum(stages.values())
    return {
        "type": "compile_time", "compile_id": cid, "graph_kind": kind, "root": root.name,
        "total_ms": round(total, 3), "wall_ms": round(total + held_ns / 1e6, 3),
        "paused_ms": round(paused / 1e6, 3), "ours_ms": round((held_ns - paused) / 1e6, 3),
        "stages": {k: round(v, 3) for k, v in stages.items() if v >= 0.0005},
        "events": {k: sorted(([n, round(ms, 3)] for n, ms in v.items()), key=lambda x: -x[1])[:6]
                   for k, v in top.items()},
        "source": "torch's dynamo_timed events (ChromiumEventLogger), minus the time paused at our stops and "
                  "in our capture hooks (our clock, time.time_ns)",
    }


def _add_frame(msg: dict[str, Any], root: _Event, ours_all: list[tuple[int, int]]) -> None:
    """A Dynamo root's frame message gets the frame (function, file, line, its bytecode tracing's own time) and
    Dynamo's metrics."""
    metrics = _find(root, "dynamo")
    if metrics is None or root.name != "dynamo":
        return
    m = metrics.data
    frame = {"function": m.get("co_name"), "file": m.get("co_filename"), "line": m.get("co_firstlineno")}
    tracing = _find(root, "bytecode_tracing")
    if tracing is not None:
        end = tracing.end or root.end
        own = end - tracing.start - overlap(ours_all, tracing.start, end)
        frame["tracing_ms"] = round(own / 1e6, 3)
    msg["frame"] = {k: v for k, v in frame.items() if v is not None}
    msg["metrics"] = {k: v for k, v in m.items() if k.endswith(("_count", "_s", "_us"))
                      or k in ("graph_op_count", "fail_type", "fail_reason")}


def _triton_verdict(cache: Any, asked_ns: int | None) -> dict[str, Any]:
    """A Triton kernel's cache verdict when Inductor did not hold it: ``cache`` is
    ``tracer.adapter.compile_timers.triton_cache_entries``'s record, ``asked_ns`` when the output module asked
    for the kernel.  Every entry written before that -> ``hit`` (Triton's own on-disk cache served the
    binary: its ``compile()`` found the metadata group and compiled nothing); any written after -> ``miss``."""
    if not isinstance(cache, dict) or "entries" not in cache or not isinstance(asked_ns, int):
        why = cache.get("unavailable") if isinstance(cache, dict) else None
        return {"cache": "miss", "cache_note": "compiled by Triton (not in Inductor's compiled kernels); whether "
                "Triton's own on-disk cache served it is unknown: " + (why or "no record of when it was asked for")}
    written = [e.get("written_ns") for e in cache["entries"]]
    if not all(isinstance(w, int) for w in written):
        return {"cache": "miss", "cache_note": "compiled by Triton (not in Inductor's compiled kernels); whether "
                f"Triton's own on-disk cache served it is unknown: an entry under {cache.get('dir')} has no "
                "metadata group (__grp__*.json)"}
    if written and all(isinstance(w, int) and w < asked_ns for w in written):
        age = (asked_ns - max(written)) / 1e9
        return {"cache": "hit", "cache_note": f"served by Triton's own on-disk cache ({cache.get('dir')}): its "
                f"entr{'y was' if len(written) == 1 else 'ies were'} written {_age(age)} before Inductor asked for "
                "it, none during this compile (the time is the load and the cache lookup)"}
    earlier = [w for w in cache.get("other_keys") or [] if isinstance(w, int) and w < asked_ns]
    if earlier:  # the same kernel was compiled before, under another key: a key change, not a cold cache
        age = (asked_ns - max(earlier)) / 1e9
        return {"cache": "miss", "cache_note": "compiled by Triton under a new cache key: this kernel's entry "
                f"from {_age(age)} earlier ({len(earlier)} entr{'y' if len(earlier) == 1 else 'ies'} in "
                f"{cache.get('dir')}) has another key, so its source, specialization, options or Triton's "
                "environment differed; its new entry was written during this compile"}
    return {"cache": "miss", "cache_note": "compiled by Triton: its entry in Triton's on-disk cache "
            f"({cache.get('dir')}) was written during this compile"
            + (f" ({cache['index_note']})" if cache.get("index_note") else "")}


def _age(s: float) -> str:
    """``s`` seconds as a person says it: ``"3.2 s"``, ``"5 min"``, ``"2.0 h"``, ``"3 days"``."""
    if s < 120:
        return f"{s:.1f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h" if s < 172800 else f"{s / 86400:.0f} days"


def _stage_times(root: _Event, held: list[tuple[int, int]], now: int
                 ) -> tuple[dict[Tag, dict[str, float]], dict[Tag, dict[str, dict[str, float]]], int]:
    """ms per graph tag and stage under ``root`` (each event's own time, less ``held``, to its own tag; an open
    event ends ``now``), the events' own ms per tag and stage, and the root's ns less ``held``."""
    out: dict[Tag, dict[str, float]] = {}
    top: dict[Tag, dict[str, dict[str, float]]] = {}

    def walk(ev: _Event, stage: str, end_default: int) -> int:
        end = ev.end if ev.end is not None else end_default
        own = (end - ev.start) - overlap(held, ev.start, end)
        o = out.setdefault(ev.tag, {})  # (tags in the order their first event started)
        child = sum(walk(c, stage_of(c.name) or stage, end) for c in ev.children)
        self_ns = max(0, own - child)
        o[stage] = o.get(stage, 0.0) + self_ns / 1e6
        if self_ns:
            t = top.setdefault(ev.tag, {}).setdefault(stage, {})
            t[ev.name] = t.get(ev.name, 0.0) + self_ns / 1e6
        return own

    total = walk(root, stage_of(root.name) or "other", now)
    return out, top, total


def _held_by_tag(root: _Event, held: list[tuple[int, int, str]]) -> dict[Tag, list[tuple[int, int, str]]]:
    """Each held span (a stop's wait, our hook) under the tag of the innermost event it started in."""
    out: dict[Tag, list[tuple[int, int, str]]] = {}
    for s, e, k in held:
        ev = root
        while True:
            inner = next((c for c in ev.children if c.start <= s < (c.end or root.end)), None)
            if inner is None:
                break
            ev = inner
        out.setdefault(ev.tag, []).append((s, e, k))
    return out


def _autotunings(root: _Event, held: list[tuple[int, int]]) -> list[tuple[Tag, dict[str, Any]]]:
    """Each autotuning under ``root``, with its event's tag: a template's ``select_algorithm`` (lowering) or a
    Triton kernel's ``CachingAutotuner.benchmark_all_configs`` (its first call), with its time less ``held``."""
    out = []
    for ev in _iter(root):
        if ev.end is None or not (ev.name.startswith("select_algorithm ")
                                  or ev.name == "CachingAutotuner.benchmark_all_configs"):
            continue
        ms = ((ev.end - ev.start) - overlap(held, ev.start, ev.end)) / 1e6
        name = str(ev.data.get("kernel_name") or ev.name.removeprefix("select_algorithm "))
        out.append((ev.tag, {"name": name, "kind": "autotune", "compile_ms": round(ms, 3),
                    "source": f"torch's {ev.name} event" if not ev.name.startswith("select_algorithm ") else
                    "our clock around AlgorithmSelectorCache.__call__ (choices precompiled and benchmarked)"}))
    return out


def _find(ev: _Event, name: str) -> _Event | None:
    if ev.name == name:
        return ev
    for c in ev.children:
        f = _find(c, name)
        if f is not None:
            return f
    return None


def _iter(ev: _Event):
    yield ev
    for c in ev.children:
        yield from _iter(c)


#: torch's event that carries each cache's verdict (CompileEventLogger data: cache_state, cache_bypass_reason)
_CACHE_EVENTS = {"backend_compile": "aot_autograd", "inductor_compile": "fx_graph"}


def _cache_states(root: _Event) -> dict[Tag, dict[str, Any]]:
    """FX graph cache and AOTAutograd cache verdicts of this root's compile per graph tag, in torch's words."""
    by: dict[Tag, dict[str, Any]] = {}
    for ev in _iter(root):
        out = by.setdefault(ev.tag, {})
        which = _CACHE_EVENTS.get(ev.name)
        state = ev.data.get("cache_state")
        if which is None or not state:
            continue
        rec = {"status": str(state)}
        reason = ev.data.get("cache_bypass_reason")
        if reason not in (None, "None", ""):
            rec["reason"] = str(reason)
        if ev.data.get("is_backward") in (True, "True"):
            which = f"{which} (backward)"
        out[which] = rec
    return {t: v for t, v in by.items() if v}


class _Hold:
    """A span we keep the compile thread (see CompileClock.hold); nested spans count once."""

    def __init__(self, clock: CompileClock, kind: str):
        self.clock, self.kind = clock, kind

    def __enter__(self) -> "_Hold":
        st = self.clock._state()
        st.hold_depth += 1
        self.t0 = time.time_ns()
        if st.hold_depth == 1:
            st.hold_start = self.t0
        return self

    def __exit__(self, *exc: Any) -> None:
        st = self.clock._state()
        st.hold_depth -= 1
        if self.kind == "paused" or st.hold_depth == 0:
            st.held.append((self.t0, time.time_ns(), self.kind))
        if st.hold_depth == 0:
            st.hold_start = None
        if len(st.held) > 4096 and not st.stack:  # between compiles: nothing will subtract them
            st.held = []


def install_clock(state: Any) -> tuple[list[str], Callable[[Callable], Callable]]:
    """Make ``state.clock`` (``state``: the agent's :class:`tracer.agent_state.AgentState`) and install its torch
    hooks (tracer.adapter.compile_timers).  Returns the hooks installed (descriptions for the session header; an
    unavailable one says why) and ``ours``: a wrapper that brackets one of our capture hooks as time we keep the
    compile."""
    from inductor_step.tracer import adapter  # noqa: PLC0415
    from inductor_step.tracer.adapter import compile_timers as ct  # noqa: PLC0415

    def graph_of(cid: str, backward: bool, part: int | None = None) -> str | tuple[str, str]:
        variant = getattr(state.tl, "variant", None)  # (compile id, "forward · max_autotune=True")
        if variant is not None:
            return variant
        if backward:
            return "backward"
        key = f"{cid}{PART_SEP}{part}" if part else cid  # a part's frame entry (tracer.capture.Capture.new_part)
        return (state.frames.get(key) or state.frames.get(cid) or {}).get("kind") or "inference"

    scope = ct.subgraph_scope()
    clock = CompileClock(state.send, graph_of, adapter.label_compile_id, scope if callable(scope) else None)
    state.clock = clock
    hooks: list[str] = []
    for got in (ct.install_event_hook(clock.on_event), ct.install_node_timer(clock.on_node),
                ct.install_kernel_timers(clock.on_submit, clock.on_built, clock.on_triton),
                ct.install_autotune_timer(clock.on_event), ct.install_isa_probe_timer(clock.on_event),
                scope if isinstance(scope, dict) else "V.graph (the subgraph being compiled: its own compile time)"):
        if isinstance(got, dict):
            hooks.append(f"compile time: {got.get('unavailable')}")
        else:
            hooks += [got] if isinstance(got, str) else list(got)

    def ours(fn: Callable) -> Callable:
        def hook(*a: Any, **k: Any) -> Any:
            with clock.hold("ours"):
                return fn(*a, **k)
        return hook

    return hooks, ours
