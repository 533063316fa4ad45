"""Two graphs a diff compares, timed round by round on request (``r`` in the diff view).

Timing two graphs one after the other (``r``, the run stage) measures each at its own moment of the machine:
on a shared CPU box a recompile ``[0/1]`` can read 40x slower than ``[0/0]`` only because other processes held
the cores while it was timed.  :func:`time_pair` times both compiled graphs and both post-grad graphs run eagerly
in one timing process, round by round (:func:`tracer.timing.interleave.pair_rounds`), so the machine's moves
fall on both sides alike.  It takes the agent's timing lock like ``r`` (waits for a run in progress; ``c``
cancels it), runs under the per-graph limit (``--timing-limit``) and always ends with a ``pair_timing``
message, ``done`` or ``failed``, and a ``run_status`` with ``done``.
"""

from __future__ import annotations

import traceback
from typing import Any

from inductor_step.session import format as protocol
from inductor_step.session.format import GraphKey


def _pair(graphs: dict[tuple[str, str], Any], a: str, b: str) -> tuple[str | None, Any, Any]:
    """``(None, graph A's state, graph B's)`` (tracer.agent_state.GraphState) where both can be timed as a pair in a
    timing process, else ``(why not, None, None)``."""
    from inductor_step.tracer.timing.inprocess import in_process_reason  # noqa: PLC0415

    found = {key: graphs.get(GraphKey.parse(str(key)).pair) for key in (a, b)}
    for key, g in found.items():
        if g is None:
            return f"no graph {key!r} in this session", None, None
        if not g.get("output_path"):
            return f"{key} has no compiled code yet (codegen not reached)", None, None
        if (here := in_process_reason(g["output_path"], g.get("gm"))) is not None:
            return f"{key} cannot be timed in a timing process: {here}", None, None
    g_a, g_b = found[a], found[b]
    if g_a.get("device", "cpu") != g_b.get("device", "cpu"):
        return f"they ran on different devices ({g_a.get('device')} and {g_b.get('device')})", None, None
    return None, g_a, g_b


def _inputs(script_calls: dict[str, dict[str, Any]], g: dict[str, Any]) -> dict[str, Any] | None:
    """The script's first-call inputs of graph ``g`` (what timing uses where shapes match), or None."""
    from inductor_step.tracer import adapter  # noqa: PLC0415

    rec = script_calls.get(adapter.output_module_key(g["output_path"]))
    return {"inputs": rec.get("inputs") or {}} if rec else None


def time_pair(state: Any, timing: Any, graphs: list[str] | None) -> None:
    """Time graphs ``graphs`` (``["[0/0] inference", "[0/1] inference"]``, A then B) of the agent's ``state``
    (tracer.agent_state.AgentState: its graphs, the script's calls, the limit, the stream) round by round in a
    timing process, as one request of the timing part ``timing`` (tracer.agent_timing.TimingRequests: its lock,
    ``cancel_run``, ``run_done``); sends ``pair_timing`` (``timing``, then ``done`` with ``rounds``, or ``failed``
    with ``message``) and ``run_status`` messages, the last one ``done``.  Runs on a thread of its own (the agent's
    control loop starts it)."""
    from inductor_step.tracer import adapter  # noqa: PLC0415
    from inductor_step.tracer.timing.isolate import TimingFailed, TimingWorker  # noqa: PLC0415

    a, b = (list(graphs or []) + ["", ""])[:2]
    head = {"type": "pair_timing", "a": a, "b": b}
    where = f"timing {a} and {b} round by round"

    def end(status: str, message: str, **extra: Any) -> None:
        state.send({**head, "status": status, "message": message, **extra})
        timing.run_done(protocol.RunStatus.finished(
            f"{where}: {message}" if status == "failed" else message, timed=2 if status == "done" else 0,
            failed=() if status == "done" else (a, b), of=2, cancelled=bool(extra.get("cancelled"))))

    with timing.one_run() as held:
        if not held:
            state.send({**head, "status": "failed", "message": "cancelled before it started", "cancelled": True})
            return
        try:
            why, g_a, g_b = _pair(state.graphs, a, b)
            if why is not None:
                end("failed", why)
                return
            limit = state.options.timing_limit_s
            state.send({**head, "status": "timing", "message": f"{where} (limit {limit:g} s)"})
            timing.say(f"{where}: starting (limit {limit:g} s)", limit)
            worker = TimingWorker()
            try:
                result = worker.time(
                    g_a["output_path"], adapter.portable_graph_module(g_a.get("gm")), g_a.get("device", "cpu"),
                    cancel=timing.cancel_run, timeout_s=limit,
                    script=_inputs(state.script_calls, g_a),
                    pair={"output_path": g_b["output_path"], "eager_gm": adapter.portable_graph_module(g_b.get("gm")),
                          "script": _inputs(state.script_calls, g_b)},
                    progress=lambda text: timing.say(f"{where}: {text}"))
            except TimingFailed as e:
                end("failed", e.reason, **({"cancelled": True} if e.cancelled else {}))
                return
            finally:
                worker.close()
            result.pop("isolated", None)
            if timing.cancel_run.is_set():  # c between two rounds: the worker stopped early
                end("failed", f"cancelled after {result.get('rounds')} round(s)", cancelled=True)
                return
            ratio = result.get("b_vs_a")
            end("done", f"{a} and {b} timed round by round ({result.get('rounds')} rounds)"
                + (f": B/A {ratio:.2f}x" if isinstance(ratio, (int, float)) else ""), rounds=result)
        except Exception as e:  # noqa: BLE001 - never takes the agent down; the request still ends
            end("failed", f"{type(e).__name__}: {e}", traceback=traceback.format_exc()[-4000:])


__all__ = ["time_pair"]
