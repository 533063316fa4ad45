"""CUDA graphs as the script runs them (``mode="reduce-overhead"``): which graphs cudagraph trees capture, torch's reasons for those they skip, and the script's own calls timed."""

from __future__ import annotations

import re
from typing import Any

from inductor_step.tracer.codeparse import partition_functions

#: the script's calls of a graph timed with a pair of CUDA events each (after the profiled ones)
EVENT_CALLS = 10
_PARTITIONS = re.compile(r"^runner = Runner\(partitions=\[([^\]]*)\]\)", re.M)


def partitions_of(wrapper: str) -> dict[str, Any]:
    """How the output module splits a graph for CUDA graphs (Inductor's graph partitions,
    ``torch._inductor.config.graph_partition``): ``partitions`` (the functions cudagraph trees capture,
    from ``runner = Runner(partitions=[partition_0, ...])``) and ``outside`` (the statements of
    ``call`` that run between them, without a CUDA graph: a copy from the CPU, a CPU op, ``.item()``).
    ``{"partitions": [], "outside": [...]}`` where the module has a Runner with no partition (nothing
    of the graph runs in a CUDA graph); ``{}`` for a wrapper without a Runner (older torch, or no graph
    partitions: cudagraph trees capture the whole ``call``)."""
    m = _PARTITIONS.search(wrapper or "")
    if not m:
        return {}
    names = partition_functions(wrapper)
    start = wrapper.find("    def call(self, args):")
    body = wrapper[start:m.start()] if start >= 0 else ""
    skip = ("del ", "args.clear()", "with torch.cuda._DeviceGuard", "torch.cuda.set_device", "return ", "def call",
            "assert_size_stride", "assert_alignment", "#", "stream", "partition")
    outside = []
    for line in body.splitlines():
        t = line.strip()
        if not t or t.startswith(skip) or re.match(r"^\(?[\w, ]+\)? = self\.partitions\[\d+\]", t) \
                or re.match(r"^\w+ = args$|^[\w, ]+ = args$", t) or "empty_strided" in t:
            continue
        outside.append(t)
    return {"partitions": names, "outside": outside}


def verdict(info: dict[str, Any]) -> tuple[str, str]:
    """One graph's CUDA-graph verdict from :meth:`CudagraphRecord.run_info`'s fields: ``("off" |
    "skipped" | "captured" | "partitioned" | "not captured" | "not yet", one line saying why)``.  Partitioned:
    the module runs statements outside its partitions (``outside``) or has several of them."""
    if not info.get("enabled"):
        return "off", "not compiled with CUDA graphs (triton.cudagraphs off: not reduce-overhead, max-autotune or the option)"
    if info.get("skipped"):
        return "skipped", f"torch skipped CUDA graphs for this graph: {info['skipped']}"
    parts, outside = info.get("partitions"), info.get("outside") or []
    if parts == [] and "partitions" in info:
        return "not captured", ("Inductor made no graph partition: every statement of call runs outside CUDA graphs"
                                + (f" ({len(outside)} statement(s))" if outside else ""))
    recorded = info.get("recordings")
    if info.get("captured") is None:
        return "not yet", info.get("how", "")
    if not info.get("captured"):
        return "not captured", info.get("how", "")
    what = (f"{len(recorded)} recording(s)" if isinstance(recorded, list) else "recorded on the second call") + \
        ", replayed after"
    if parts and (len(parts) > 1 or outside):
        return "partitioned", (f"{len(parts)} partition(s) captured ({what}); {len(outside)} statement(s) of call run "
                               "outside them" + (": " + "; ".join(outside[:4]) if outside else ""))
    return "captured", f"the whole graph is captured ({what})"


class CudagraphRecord:
    """The agent's CUDA-graph part, over the shared :class:`tracer.agent_state.AgentState` (``graph``,
    ``graphs``, ``current``, ``tl``, ``script_calls``): ``graphs[(cid, kind)].cudagraphs`` is
    ``{"enabled", "skipped"}``, filled on the compile thread (:meth:`note_cudagraphs`) and by torch's
    skip messages (:meth:`on_cudagraph_skip`); cudagraph trees' recordings are kept per output module
    key (:meth:`on_cudagraph_record`, in ``recordings``; ``recording_hook`` says whether its hook is
    in); :meth:`timed_call` times the script's calls with CUDA events and :meth:`run_info` is what the
    run message says."""

    def __init__(self, state: Any):
        self.state = state  # tracer.agent_state.AgentState
        self.recording_hook: dict[str, Any] | None = None  # tracer.adapter.install_recording_hook's answer
        # output module key -> each recording cudagraph trees made in the script's calls: {"call", "cause"}
        self.recordings: dict[str, list[dict[str, Any]]] = {}

    def note_cudagraphs(self, cid: str, kind: str) -> None:
        """On the compile thread inside compile_fx: whether this graph is compiled with CUDA graphs."""
        from inductor_step.tracer import adapter  # noqa: PLC0415

        g = self.state.graph(cid, kind)
        if g.cudagraphs is None:
            g.cudagraphs = {"enabled": adapter.cudagraphs_enabled(), "skipped": None}

    def on_cudagraph_skip(self, msg: str) -> None:
        """torch logged "skipping cudagraphs due to ...": at compile time (the graph being compiled)
        or at a graph's first calls (the graph the script is calling: ``tl.calling``)."""
        key = getattr(self.state.tl, "calling", None)
        target = None
        if key is not None:
            from inductor_step.tracer import adapter  # noqa: PLC0415

            for k, g in self.state.graphs.items():
                if g.output_path and adapter.output_module_key(g.output_path) == key:
                    target = k
                    break
        if target is None:
            target = self.state.current
        if target is None:
            return
        g = self.state.graph(*target)
        if g.cudagraphs is None:
            g.cudagraphs = {"enabled": True, "skipped": None}
        text = " ".join(line.strip() for line in msg.strip().splitlines() if line.strip())
        g.cudagraphs["skipped"] = g.cudagraphs["skipped"] or text

    def on_cudagraph_record(self, cause: str | None) -> None:
        """cudagraph trees record a CUDA graph inside the script's call of a graph (``tl.calling``,
        tracer.adapter.install_recording_hook): kept per output module key with the script's call number and
        ``cause`` (torch's failed check; None for a first recording or a new place in the tree)."""
        key = getattr(self.state.tl, "calling", None)
        if key is None:
            return
        calls = (self.state.script_calls.get(key) or {}).get("calls")
        self.recordings.setdefault(key, []).append({"call": calls, "cause": cause})

    @staticmethod
    def timed_call(rec: dict[str, Any], run: Any) -> Any:
        """One of the script's calls of a graph between a pair of CUDA events on the current stream:
        the span the GPU sees, from the call's first work (an input copy into a CUDA graph's static
        buffer, a launch) to its last, including any time the GPU waits for the CPU to launch."""
        import torch  # noqa: PLC0415

        try:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
        except Exception:  # noqa: BLE001 - never in the script's way
            return run()
        out = run()
        try:
            end.record()
            rec.setdefault("call_events", []).append((start, end))
        except Exception:  # noqa: BLE001
            pass
        return out

    def run_info(self, g: Any, rec: dict[str, Any] | None, wrapper: str | None,
                 key: str | None = None) -> dict[str, Any]:
        """What the run message says of CUDA graphs for graph ``g`` (output module key ``key``): ``enabled``,
        ``captured`` (True, False or None: not known), ``skipped`` (torch's reason), ``partitions`` /
        ``outside`` (:func:`partitions_of`), ``recordings`` (each ``{"call", "cause"}`` cudagraph trees
        recorded it in, where tracer.adapter.install_recording_hook is in) and ``rerecordings`` (those after
        the first, each with its cause), ``script_call_ms`` / ``script_calls`` (median span of the script's
        calls :meth:`timed_call` timed), ``verdict`` and ``how`` (:func:`verdict`)."""
        info: dict[str, Any] = dict(g.cudagraphs or {"enabled": False, "skipped": None})
        calls = (rec or {}).get("calls", 0)
        ms = []
        for s, e in (rec or {}).get("call_events") or []:
            try:
                e.synchronize()
                ms.append(float(s.elapsed_time(e)))
            except Exception:  # noqa: BLE001
                pass
        if ms:
            info["script_call_ms"] = sorted(ms)[len(ms) // 2]
            info["script_calls"] = len(ms)
        info.update(partitions_of(wrapper or "") if info.get("enabled") else {})
        info["calls"] = calls
        hooked = "installed" in (self.recording_hook or {})
        recs = self.recordings.get(key) if key else None
        if hooked and info.get("enabled"):
            info["recordings"] = list(recs or [])
            info["rerecordings"] = [dict(r, cause=r.get("cause") or "a new place in cudagraph trees' tree (another "
                                         "graph ran before it, or its earlier recording's outputs were still alive)")
                                    for r in (recs or [])[1:]]
        if not info.get("enabled"):
            info["captured"] = False
        elif info.get("skipped"):
            info["captured"] = False
        elif hooked and info.get("enabled") and calls >= 2:
            info["captured"] = bool(recs)
            if not recs:
                info["how"] = (f"the script called it {calls} times and cudagraph trees recorded no CUDA graph of it "
                               "(they run a function eagerly while its inputs mutate memory they do not manage, or "
                               "past the re-recording limit)")
        elif calls >= 2:
            info["captured"] = True
        else:
            info["captured"] = None
            info["how"] = (f"compiled with CUDA graphs; the script called it {calls} time(s): cudagraph trees record "
                           "on the second call")
        info["verdict"], how = verdict(info)
        info["how"] = how if info["verdict"] != "not yet" else info["how"]
        return info
