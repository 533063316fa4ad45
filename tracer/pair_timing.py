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

from inductor_step.session.format import GraphKey


def _graph(agent: Any, key: str) -> tuple[tuple[str, str], dict[str, Any]] | None:
    pair = GraphKey.parse(str(key)).pair
    g = agent.state.graphs.get(pair)
    return (pair, g) if g is not None else None


def _inputs(agent: Any, g: dict[str, Any]) -> dict[str, Any] | None:
    """The script's first-call inputs of graph ``g`` (what timing uses where shapes match), or None."""
    from inductor_step.tracer import adapter  # noqa: PLC0415

    rec = agent.state.script_calls.get(adapter.output_module_key(g["output_path"]))
    return {"inputs": rec.get("inputs") or {}} if rec else None


def time_pair(agent: Any, graphs: list[str] | None) -> None:
    """Time graphs ``graphs`` (``["[0/0] inference", "[0/1] inference"]``, A then B) of ``agent`` (a
    :class:`tracer.agent.Agent`) round by round in a timing process; sends ``pair_timing`` (``timing``, then
    ``done`` with ``rounds``, or ``failed`` with ``message``) and ``run_status`` messages, the last one
    ``done``.  Runs on a thread of its own (the agent's control loop starts it)."""
    from inductor_step.tracer import adapter  # noqa: PLC0415
    from inductor_step.tracer.timing.inprocess import in_process_reason  # noqa: PLC0415
    from inductor_step.tracer.timing.isolate import TimingFailed, TimingWorker  # noqa: PLC0415

    a, b = (list(graphs or []) + ["", ""])[:2]
    head = {"type": "pair_timing", "a": a, "b": b}
    where = f"timing {a} and {b} round by round"

    def end(status: str, message: str, **extra: Any) -> None:
        agent.state.send({**head, "status": status, "message": message, **extra})
        agent.timing.run_done({"type": "run_status", "message": f"{where}: {message}" if status == "failed" else message,
                         "done": True, "timed": 2 if status == "done" else 0,
                         "failed": [] if status == "done" else [a, b], "of": 2,
                         **({"cancelled": True} if extra.get("cancelled") else {})})

    if not agent.timing.wait_for_run_lock():
        agent.state.send({**head, "status": "failed", "message": "cancelled before it started", "cancelled": True})
        return
    agent.timing.cancel_run.clear()
    agent.timing.run_active = True
    try:
        ga, gb = _graph(agent, a), _graph(agent, b)
        why = None
        for key, found in ((a, ga), (b, gb)):
            if found is None:
                why = f"no graph {key!r} in this session"
            elif not found[1].get("output_path"):
                why = f"{key} has no compiled code yet (codegen not reached)"
            elif (here := in_process_reason(found[1]["output_path"], found[1].get("gm"))) is not None:
                why = f"{key} cannot be timed in a timing process: {here}"
            if why:
                break
        if why is not None or ga is None or gb is None:
            end("failed", why or "no such graphs")
            return
        g_a, g_b = ga[1], gb[1]
        if (g_a.get("device", "cpu") != g_b.get("device", "cpu")):
            end("failed", f"they ran on different devices ({g_a.get('device')} and {g_b.get('device')})")
            return
        agent.state.send({**head, "status": "timing", "message": f"{where} (limit {agent.state.timing_limit_s:g} s)"})
        agent.state.send({"type": "run_status",
                          "message": f"{where}: starting (limit {agent.state.timing_limit_s:g} s)",
                          "limit_s": agent.state.timing_limit_s})
        worker = TimingWorker()
        try:
            result = worker.time(
                g_a["output_path"], adapter.portable_graph_module(g_a.get("gm")), g_a.get("device", "cpu"),
                cancel=agent.timing.cancel_run, timeout_s=agent.state.timing_limit_s, script=_inputs(agent, g_a),
                pair={"output_path": g_b["output_path"], "eager_gm": adapter.portable_graph_module(g_b.get("gm")),
                      "script": _inputs(agent, g_b)},
                progress=lambda text: agent.state.send({"type": "run_status", "message": f"{where}: {text}"}))
        except TimingFailed as e:
            end("failed", e.reason, **({"cancelled": True} if e.cancelled else {}))
            return
        finally:
            worker.close()
        result.pop("isolated", None)
        if agent.timing.cancel_run.is_set():  # c between two rounds: the worker stopped early
            end("failed", f"cancelled after {result.get('rounds')} round(s)", cancelled=True)
            return
        ratio = result.get("b_vs_a")
        end("done", f"{a} and {b} timed round by round ({result.get('rounds')} rounds)"
            + (f": B/A {ratio:.2f}x" if isinstance(ratio, (int, float)) else ""), rounds=result)
    except Exception as e:  # noqa: BLE001 - never takes the agent down; the request still ends
        end("failed", f"{type(e).__name__}: {e}", traceback=traceback.format_exc()[-4000:])
    finally:
        agent.timing.run_active = False
        agent.timing.run_lock.release()


__all__ = ["time_pair"]
