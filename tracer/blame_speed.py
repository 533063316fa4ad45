"""Speed blame: which Inductor setting makes a graph slower, by what-if variants that switch one candidate each,
every variant timed round by round against the original (the what-if's interleaved rounds, contention judged).

Candidates: every ``torch._inductor.config`` setting the script changed from torch's default (set back to the
default: ``ConfigModule._is_default``), then the usual suspects switched the other way (:data:`TOGGLES`).  Each
step recompiles the graph with :func:`tracer.whatif.run_what_if` (Dynamo and AOTAutograd do not run again) and times
the variant and its original in the timing worker's process (``run_all``: its run message's ``interleaved``
figures).  The judgement of the rounds (an effect beyond noise, contention) is the session's
(session.blame.speed_verdict, with session.trust's rules): this module sends the measurements only.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from inductor_step.session.format import GraphKey, settings_label

#: settings tried the other way from their current value (bools), where the script did not change them
TOGGLES = ("split_reductions", "loop_ordering_after_fusion", "aggressive_fusion", "epilogue_fusion",
           "pattern_matcher", "benchmark_fusion")
#: the script's changed settings that are ours or not about the code (never candidates)
_NOT_CANDIDATES = ("cache", "provenance", "custom", "compile_threads", "worker", "debug", "trace", "_pass", "log",
                   "remote", "dir", "autotune_local")


def config_values() -> dict[str, Any]:
    """Every ``torch._inductor.config`` setting's value now (tracer.adapter.blame.config_values)."""
    from inductor_step.tracer.adapter.blame import config_values as values  # noqa: PLC0415

    return values()


def changed_settings(before: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{name: the value to set back}`` for the ``torch._inductor.config`` settings the script changed: those that
    differ from ``before`` (:func:`config_values` as the script started), else from torch's default."""
    from inductor_step.tracer.adapter.blame import config_default  # noqa: PLC0415

    out: dict[str, Any] = {}
    for name, value in config_values().items():
        if any(w in name for w in _NOT_CANDIDATES):
            continue
        if before is not None:
            if name in before and before[name] != value:
                out[name] = before[name]
            continue
        try:
            is_default, default = config_default(name)
        except Exception:  # noqa: BLE001
            continue
        if not is_default and (isinstance(default, (bool, int, float, str)) or default is None):
            out[name] = default
    return out


def candidates(before: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The variants to try, one setting each: the script's changes set back (``before``: the settings as the script
    started), then :data:`TOGGLES`."""
    from inductor_step.tracer import adapter  # noqa: PLC0415

    out = [{k: v} for k, v in changed_settings(before).items()]
    seen = {k for c in out for k in c}
    for name in TOGGLES:
        if name in seen:
            continue
        try:
            cur = adapter.inductor_setting(name)
        except KeyError:
            continue
        if isinstance(cur, bool):
            out.append({name: not cur})
    return out


def blame_speed(state: Any, run_all: Callable[..., None], graph: str, config_at_start: dict[str, Any] | None = None,
                cancel: threading.Event | None = None, limit: int | None = None) -> dict[str, Any]:
    """Try each candidate (:func:`candidates` of ``config_at_start``, the settings before the script ran) on graph
    ``graph`` (``"[0/0] forward"``) of the agent's ``state`` (tracer.agent_state.AgentState), each variant timed by
    ``run_all`` (the timing part's); sends ``blame`` messages (kind speed: start, one step per variant with its
    run's ``interleaved`` figures and the variant's graph key, then the verdict listing the steps) and returns the
    verdict.  ``limit``: at most that many candidates."""
    from inductor_step.tracer.whatif import run_what_if  # noqa: PLC0415

    cancel = cancel or threading.Event()
    cid, kind = GraphKey.parse(graph).pair
    head = {"type": "blame", "kind": "speed", "compile_id": cid, "graph_kind": kind}
    cands = candidates(config_at_start)[: limit or None]
    t0 = time.monotonic()
    state.send({**head, "event": "start", "message": f"timing {len(cands)} variant(s) of {graph}, one setting "
                                                     "switched each, round by round against the original"})
    steps: list[dict[str, Any]] = []
    runs: dict[str, dict[str, Any]] = {}

    def keep_run(msg: dict[str, Any]) -> None:
        if msg.get("type") == "run":
            runs[str(GraphKey.of(msg))] = msg

    with state.watching(keep_run):
        for i, settings in enumerate(cands):
            if cancel.is_set():
                break
            t = time.monotonic()
            label = settings_label(settings)
            rec: dict[str, Any] = {"index": i, "what": label, "level": "variant", "settings": settings}
            vkey = run_what_if(state, cid, kind, settings)
            if vkey is None:
                rec.update(outcome="crash", error=f"the variant with {label} did not compile")
            else:
                rec["variant"] = vkey
                run_all(only=[vkey])
                r = runs.get(vkey) or {}
                il = r.get("interleaved") or {}
                if r.get("error") or not il or il.get("unavailable"):
                    rec.update(outcome="crash", error=r.get("error") or il.get("unavailable") or "not timed")
                else:
                    rec["interleaved"] = {k: il[k] for k in ("rounds", "variant_ms", "original_ms", "eager_ms",
                                                             "variant_rounds_ms", "original_rounds_ms",
                                                             "speedup_vs_original", "reliable", "wait_share", "why")
                                          if k in il}
                    rec["outcome"] = "noise"  # the session judges it (session.blame.speed_verdict)
                    rec["kernels"] = len(r.get("kernels") or [])
            rec["seconds"] = round(time.monotonic() - t, 3)
            steps.append(rec)
            state.send({**head, "event": "step", "step": rec})
    verdict = {"found": False, "cancelled": cancel.is_set(), "steps": len(steps),
               "seconds": round(time.monotonic() - t0, 3), "variants": steps,
               "text": "cancelled" if cancel.is_set() else "judged by the session (session.blame.speed_verdict)"}
    state.send({**head, "event": "verdict", "verdict": verdict})
    return verdict


__all__ = ["TOGGLES", "blame_speed", "candidates", "changed_settings"]
