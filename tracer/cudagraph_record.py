"""CUDA graphs as the script runs them (``mode="reduce-overhead"``): which graphs cudagraph trees capture, torch's reasons for those they skip, and the script's own calls timed."""

from __future__ import annotations

import re
from typing import Any

#: the script's calls of a graph timed with a pair of CUDA events each (after the profiled ones)
EVENT_CALLS = 10
_PARTITIONS = re.compile(r"^runner = Runner\(partitions=\[([^\]]*)\]\)", re.M)


def partitions_of(wrapper: str) -> dict[str, Any]:
    """How the output module splits a graph for CUDA graphs (Inductor's graph partitions,
    ``torch._inductor.config.graph_partition``): ``partitions`` (the functions cudagraph trees capture,
    from ``runner = Runner(partitions=[partition_0, ...])``) and ``outside`` (the statements of
    ``call`` that run between them, without a CUDA graph: a copy from the CPU, a CPU op).  ``{}`` for a
    wrapper without partitions (older torch, or no CUDA graphs)."""
    m = _PARTITIONS.search(wrapper or "")
    if not m:
        return {}
    names = [p.strip() for p in m.group(1).split(",") if p.strip()]
    if not names:  # no partitions: cudagraph trees capture the whole call
        return {}
    body = wrapper[wrapper.find("    def call(self, args):"):m.start()] if "    def call(self, args):" in wrapper else ""
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


class CudagraphRecord:
    """Mixed into the agent: ``graphs[(cid, kind)].cudagraphs`` is ``{"enabled", "skipped"}``, filled
    on the compile thread (:meth:`note_cudagraphs`) and by torch's skip messages
    (:meth:`on_cudagraph_skip`); :meth:`timed_call` times the script's calls with CUDA events and
    :meth:`cudagraphs_run_info` is what the run message says."""

    def note_cudagraphs(self, cid: str, kind: str) -> None:
        """On the compile thread inside compile_fx: whether this graph is compiled with CUDA graphs."""
        from inductor_step.tracer import adapter  # noqa: PLC0415

        g = self.graph(cid, kind)  # type: ignore[attr-defined]
        if g.cudagraphs is None:
            g.cudagraphs = {"enabled": adapter.cudagraphs_enabled(), "skipped": None}

    def on_cudagraph_skip(self, msg: str) -> None:
        """torch logged "skipping cudagraphs due to ...": at compile time (the graph being compiled)
        or at a graph's first calls (the graph the script is calling: ``tl.calling``)."""
        key = getattr(self.tl, "calling", None)  # type: ignore[attr-defined]
        target = None
        if key is not None:
            from inductor_step.tracer import adapter  # noqa: PLC0415

            for k, g in self.graphs.items():  # type: ignore[attr-defined]
                if g.output_path and adapter.output_module_key(g.output_path) == key:
                    target = k
                    break
        if target is None:
            target = self.current  # type: ignore[attr-defined]
        if target is None:
            return
        g = self.graph(*target)  # type: ignore[attr-defined]
        if g.cudagraphs is None:
            g.cudagraphs = {"enabled": True, "skipped": None}
        text = " ".join(line.strip() for line in msg.strip().splitlines() if line.strip())
        g.cudagraphs["skipped"] = g.cudagraphs["skipped"] or text

    def timed_call(self, rec: dict[str, Any], run: Any) -> Any:
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

    def cudagraphs_run_info(self, g: Any, rec: dict[str, Any] | None, wrapper: str | None) -> dict[str, Any]:
        """What the run message says of CUDA graphs for graph ``g``: ``enabled``, ``captured`` (True,
        False or None: not known), ``skipped`` (torch's reason), ``partitions`` / ``outside``
        (:func:`partitions_of`), ``script_call_ms`` / ``script_calls`` (median span of the script's
        calls :meth:`timed_call` timed) and ``how`` (one line: what was seen)."""
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
        if not info.get("enabled"):
            info["captured"] = False
            info["how"] = "not compiled with CUDA graphs (triton.cudagraphs off: mode is not reduce-overhead)"
        elif info.get("skipped"):
            info["captured"] = False
            info["how"] = f"torch skipped CUDA graphs for this graph: {info['skipped']}"
        elif calls >= 2:
            info["captured"] = True
            part = info.get("partitions")
            info["how"] = ("captured by cudagraph trees (warm-up on the first call, recorded on the second, replayed "
                           "after)" + (f"; {len(part)} partition(s) captured, {len(info.get('outside') or [])} "
                                       "statement(s) run outside them" if part else ""))
        else:
            info["captured"] = None
            info["how"] = (f"compiled with CUDA graphs; the script called it {calls} time(s): cudagraph trees record "
                           "on the second call")
        return info
