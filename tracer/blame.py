"""Blame: from a divergence to the backend, subsystem and single pass application or lowering that caused it, by
bisecting torch.compile in child processes, one per step, each with a deadline.

Every step runs the script again (:mod:`tracer.blame_step`: its own inputs, its own settings and custom passes) with
torch's compiler bisector's environment (``TORCH_BISECT_BACKEND``, ``TORCH_BISECT_SUBSYSTEM``, ``TORCH_BISECT_MAX``:
torch/_inductor/compiler_bisector.py, read alike by torch 2.11 and 2.13) and compares the target graph's first call
with its Dynamo graph run eagerly and in float64 (:func:`tracer.adapter.blame.compare_first_call`, the numerics
verdict: ``suspect`` or ``diverges`` is bad).  The search is torch's (``CompilerBisector.do_bisect``), driven
here so that each step is a process with a time limit, a crash is a verdict and the steps can be cancelled:

1. the baseline: Inductor as the script compiles it; it must reproduce the divergence (the first graph that
   diverges when none was named);
2. the backend level: ``aot_eager_decomp_partition`` (AOTAutograd, decompositions, the partitioner), then
   ``aot_eager``, then ``eager`` (Dynamo alone), until one is good: the one after it is blamed;
3. within Inductor, each candidate switched off whole: the user's own passes (``torch._inductor.config``'s
   ``post_grad_custom_post_pass`` and the others set to None: no bisector subsystem covers them), the bisector's
   subsystems that ran at all in the baseline (``pre_grad_passes``, ``joint_graph_passes``, ``post_grad_passes``,
   ``lowerings``; ``decomposition`` in ``aot_eager_decomp_partition``) and its config changes (``fallback_random``,
   ``emulate_precision_casts``); the first that makes it good is blamed;
4. a subsystem is then bisected over its applications (``TORCH_BISECT_MAX=n`` keeps applications 0..n): the first
   whose enabling makes it bad is named with what torch's bisector records for it (a pass's name, a lowered FX
   node, a decomposed op), the compile id and graph (forward, backward) it ran in, and for a pass the FX nodes it
   rewrote (the graph before that application against after it, tracer.adapter.blame).

Sends ``blame`` messages (:class:`session.format.Blame`): ``start``, one ``step`` each, then ``verdict``.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Callable

from inductor_step.session.format import GraphKey
from inductor_step.tracer.blame_procs import Cancelled, StepCold, fork_broke_it, StepForked, StepHandle, StepWarm

STEP_LIMIT_S = float(os.environ.get("INDUCTOR_STEP_BLAME_STEP_LIMIT", "300"))  # one step's deadline (s)
BAD = ("suspect", "diverges")
#: the subsystems tried whole, in torch's order (compiler_bisector.BACKENDS), lowerings last
SUBSYSTEMS = {"inductor": ("pre_grad_passes", "joint_graph_passes", "post_grad_passes", "lowerings"),
              "aot_eager_decomp_partition": ("decomposition",)}
#: torch's ConfigChange subsystems: Inductor settings whose change the bisector tries
CONFIG_CHANGES = {"inductor": ({"fallback_random": True}, {"emulate_precision_casts": True}),
                  "aot_eager_decomp_partition": ()}
BACKEND_LADDER = ("aot_eager_decomp_partition", "aot_eager", "eager")  # tried in this order below inductor
#: the variables torchrun sets for a rank: a step's own job (its own launcher) must not inherit the outer job's
_RANK_VARS = frozenset({"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE",
                        "ROLE_RANK", "ROLE_WORLD_SIZE", "ROLE_NAME", "MASTER_ADDR", "MASTER_PORT"})


def _measure(graph: dict[str, Any] | None) -> dict[str, Any] | None:
    w = (graph or {}).get("worst")
    if not w:
        return None
    return {k: w.get(k) for k in ("which", "status", "verdict", "max_abs", "tol_ratio", "nonfinite_mismatch", "dtype",
                                  "shape") if w.get(k) is not None}


class Bisect:
    """One blame search over a script (see the module's docstring).  ``send`` gets each ``blame`` message;
    ``cancel`` (set from another thread) ends the step in progress and the search."""

    def __init__(self, script: str, argv: list[str], send: Callable[[dict[str, Any]], None], *,
                 python: str | None = None, cancel: threading.Event | None = None, step_limit_s: float | None = None,
                 cwd: str | None = None, nproc: int | None = None):
        self.script, self.argv, self.send = os.path.abspath(script), list(argv), send
        self.nproc = nproc  # a torchrun job's processes on this node: each step is such a job (rank 0 compares)
        self.python = python or sys.executable
        self.cancel = cancel or threading.Event()
        self.limit = step_limit_s or STEP_LIMIT_S
        self.cwd = cwd or os.getcwd()
        self.steps: list[dict[str, Any]] = []
        self.warm: StepWarm | None = None
        self.cold: str | None = None  # why the steps start cold (no warm parent)
        self.head: dict[str, Any] = {"type": "blame", "kind": "numerics"}
        self.t0 = time.monotonic()

    # ------------------------------------------------------------------ one step
    def base_env(self) -> dict[str, str]:
        """The environment of every step: the FX-graph and AOTAutograd caches off (a hit skips the passes), the
        kernels' own code cache on (a kernel whose source did not change between steps is not built again), no
        profile of sizes kept between runs, no compile worker processes."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_BISECT_")
               and not (self.nproc and (k in _RANK_VARS or k.startswith("TORCHELASTIC_")))}
        env.update(TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0",
                   TORCH_DYNAMO_AUTOMATIC_DYNAMIC_LOCAL_PGO="0", TORCHINDUCTOR_COMPILE_THREADS="1")
        return env

    def _warm_up(self) -> None:
        """Start the steps' warm parent once (its start is not counted in the first step's time)."""
        if self.nproc and not self.cold:
            self.cold = f"a torchrun job: each step is a job of {self.nproc} processes"
        if self.warm is None and not self.cold:
            try:
                self.warm = StepWarm(self.python, self.base_env(), self.cwd, self.cancel)
            except Cancelled:
                raise
            except Exception as e:  # noqa: BLE001 - then each step starts its own interpreter
                self.cold = f"{type(e).__name__}: {e}"

    def _start(self, out: str, step_env: dict[str, str], errf: str) -> "StepHandle":
        """A step's process: forked from the warm parent (torch imported once, :func:`tracer.blame_step.zygote`),
        or, where that did not start, a fresh interpreter."""
        if self.warm is not None:
            try:
                return self.warm.start({"out": out, "script": self.script, "argv": self.argv, "env": step_env,
                                        "stderr": errf, "cwd": self.cwd})
            except Exception as e:  # noqa: BLE001
                self.cold = f"{type(e).__name__}: {e}"
                self.warm.close()
                self.warm = None
        launch = ([self.python, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(self.nproc),
                   "-m"] if self.nproc else [self.python, "-m"])
        with open(errf, "wb") as err:
            proc = subprocess.Popen([*launch, "inductor_step.tracer.blame_step", out, self.script, *self.argv],
                                    env={**self.base_env(), **step_env}, cwd=self.cwd,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        return StepCold(proc)

    def env(self, backend: str, subsystem: str | None = None, max_n: int | None = None) -> dict[str, str]:
        """The bisector's environment of a step (what a person sets to repeat it)."""
        env = {"TORCH_BISECT_BACKEND": backend}
        if subsystem:
            env["TORCH_BISECT_SUBSYSTEM"] = subsystem
            env["TORCH_BISECT_MAX"] = str(-1 if max_n is None else max_n)
        return env

    def step(self, what: str, level: str, bisect_env: dict[str, str], settings: dict[str, Any] | None = None,
             target: str | None = None) -> dict[str, Any]:
        """Run one step in a child process; returns (and sends) its record: ``outcome`` bad, good, crash
        (the compile or the script raised: ``error``), timeout or cancelled; ``measure`` (the target's worst output
        against eager); ``result`` (the child's answer, not sent).  Raises :class:`Cancelled` once cancelled."""
        if self.cancel.is_set():
            raise Cancelled()
        fd, out = tempfile.mkstemp(prefix="inductor-step-blame-", suffix=".json")
        os.close(fd)
        os.unlink(out)
        step_env = dict(bisect_env, INDUCTOR_STEP_BLAME_STEP=json.dumps({"target": target, "settings": settings or {}}))
        rec: dict[str, Any] = {"index": len(self.steps), "what": what, "level": level, "env": bisect_env,
                               "settings": settings or {}}
        self._warm_up()
        t = time.monotonic()
        errf = out + ".stderr"
        handle = self._start(out, step_env, errf)
        outcome = None
        while handle.poll() is None:
            if self.nproc and os.path.exists(out):  # rank 0 answered: the other ranks may wait on it forever
                handle.end()
                break
            if self.cancel.is_set() or time.monotonic() - t > self.limit:
                outcome = "cancelled" if self.cancel.is_set() else "timeout"
                handle.end()
                break
            time.sleep(0.05)
        try:
            with open(errf, encoding="utf-8", errors="replace") as f:
                err = f.read()[-20000:]
            os.unlink(errf)
        except OSError:
            err = ""
        rec["seconds"] = round(time.monotonic() - t, 3)
        result: dict[str, Any] = {}
        try:
            with open(out, encoding="utf-8") as f:
                result = json.load(f)
            os.unlink(out)
        except (OSError, ValueError):
            pass
        if outcome is None:
            outcome = self._outcome(result, target, handle.poll(), err, rec)
            if outcome == "crash" and isinstance(handle, StepForked) and fork_broke_it(rec.get("error", "") + err):
                # CUDA cannot run in a process forked after the driver was initialised: this step, and every later
                # one, starts its own interpreter
                self.cold = f"a forked step could not use the GPU ({rec.get('error', '')[:200]})"
                self.warm.close()
                self.warm = None
                return self.step(what, level, bisect_env, settings, target)
        elif outcome == "timeout":
            rec["error"] = f"the step ran past its {self.limit:g} s limit and was ended"
        rec["outcome"] = outcome
        graphs = result.get("graphs") or {}
        first_bad = next((k for k, g in graphs.items() if (_measure(g) or {}).get("status") in BAD), None)
        m = _measure(graphs.get(target or first_bad or ""))
        if m:
            rec["measure"] = m
        self.steps.append(rec)
        self.send({**self.head, "event": "step", "step": rec})
        if outcome == "cancelled":
            raise Cancelled()
        rec_full = dict(rec)
        rec_full["result"] = result
        return rec_full

    def _outcome(self, result: dict[str, Any], target: str | None, rc: int | None, stderr: str,
                 rec: dict[str, Any]) -> str:
        graphs = result.get("graphs") or {}
        if not result:
            tail = [x for x in stderr.strip().splitlines() if x.strip()][-1:] or [f"exit status {rc}"]
            rec["error"] = f"the step's process ended without an answer ({tail[0][:300]})"
            return "crash"
        if result.get("ended") == "script_error" and not graphs:  # the script raised before any graph was compared
            rec["error"] = result.get("error") or "the script raised"
            return "crash"
        if target is None:
            return "bad" if any((_measure(g) or {}).get("status") in BAD for g in graphs.values()) else "good"
        g = graphs.get(target)
        if g is None:
            rec["error"] = (result.get("error") or
                            f"{target} was not compiled and called in this step (the script ended first)")
            return "crash"
        if g.get("error"):
            rec["error"] = f"comparing its first call raised {g['error']}"
            return "crash"
        m = _measure(g) or {}
        return "bad" if m.get("status") in BAD or m.get("nonfinite_mismatch") else "good"

    # ------------------------------------------------------------------ the search
    def run(self, graph: str | None = None) -> dict[str, Any]:
        """Bisect the divergence of ``graph`` (a compile id ``"[0/0]"``, or a key ``"[0/0] forward"``; None: the
        first graph that diverges); sends ``start``, each ``step`` and the ``verdict``, and returns the verdict."""
        key = GraphKey.parse(graph) if graph else None
        cid = key.compile_id if key else None
        self.head.update(compile_id=cid or "?")
        if key and " " in graph:
            self.head["graph_kind"] = key.kind_text
        self.send({**self.head, "event": "start", "script": self.script, "argv": self.argv,
                   "step_limit_s": self.limit,
                   "message": f"bisecting {graph or 'the first divergent graph'}: each step runs the script again "
                              + (f"as a torchrun job of {self.nproc} processes (rank 0's graph compared)"
                                 if self.nproc else "in a child process") + f" (at most {self.limit:g} s)"})
        try:
            verdict = self._search(cid)
        except Cancelled:
            verdict = {"found": False, "cancelled": True, "text": "cancelled: the step in progress was ended"}
        except Exception as e:  # noqa: BLE001 - our failure, said as the verdict
            verdict = {"found": False, "error": f"{type(e).__name__}: {e}",
                       "text": f"the search itself failed: {type(e).__name__}: {e}"}
        finally:
            if self.warm is not None:
                self.warm.close()
        verdict["steps"] = len(self.steps)
        verdict["seconds"] = round(time.monotonic() - self.t0, 3)
        self.send({**self.head, "event": "verdict", "verdict": verdict})
        return verdict

    def _search(self, cid: str | None) -> dict[str, Any]:
        """Bisect graph ``cid``'s divergence (None: the first graph that diverges in the baseline step): the
        baseline, the backend level, then within the blamed backend the user's passes, each subsystem and each
        config change; returns the verdict."""
        base, cid, verdict = self._baseline(cid)
        if verdict is not None:
            return verdict
        baseline = base.get("measure")
        apps: dict[str, list] = base["result"].get("applications") or {}
        self.base_apps = apps
        custom = base["result"].get("custom_passes") or {}
        # 2. the backend level
        blamed, good_below, verdict = self._backend_level(cid, baseline)
        if verdict is not None:
            return verdict
        leaves = good_below.get("measure") if good_below else None
        if blamed in ("aot_eager",):
            return self._verdict(cid, "backend", blamed, None, None, None, baseline,
                                 "AOTAutograd's tracing (aot_eager) diverges; Dynamo's graph alone (eager) does not",
                                 leaves=leaves)
        # 3. within the blamed backend: the user's passes, each subsystem, each config change
        if blamed == "inductor" and custom:
            verdict = self._user_passes(cid, blamed, custom, base, baseline)
            if verdict is not None:
                return verdict
        for sub in SUBSYSTEMS.get(blamed, ()):
            mine = [a for a in apps.get(sub) or [] if a.get("backend") == blamed]
            if not mine:
                continue
            s = self.step(f"{sub} off ({len(mine)} applications)", "subsystem", self.env(blamed, sub, -1), target=cid)
            if s["outcome"] != "good":
                continue
            return self._bisect(cid, blamed, sub, len(mine), s, baseline)
        for change in CONFIG_CHANGES.get(blamed, ()):
            (k, v), = change.items()
            s = self.step(f"{k}={v}", "config", self.env(blamed), settings=change, target=cid)
            if s["outcome"] == "good":
                return self._verdict(cid, "config", blamed, None, None, f"{k}={v}", baseline,
                                     f"setting torch._inductor.config.{k}={v} removes the divergence",
                                     settings=change, leaves=s.get("measure"))
        below = BACKEND_LADDER[BACKEND_LADDER.index(blamed) + 1] if blamed != "inductor" else BACKEND_LADDER[0]
        return self._verdict(cid, "backend", blamed, None, None, None, baseline,
                             f"{blamed} diverges and {below} "
                             "does not, but switching off none of the subsystems torch's bisector knows removes it "
                             "(codegen or fusion, which it cannot switch off)", leaves=leaves)

    def _baseline(self, cid: str | None) -> tuple[dict[str, Any], str, dict[str, Any] | None]:
        """The baseline step (the script as it compiles): ``(its step, the graph blamed, None)``, or a verdict
        instead of None where there is nothing to blame (no graph diverged, or ``cid`` did not)."""
        base = self.step("the script as it compiles (Inductor)", "baseline", self.env("inductor"), target=cid)
        if cid is None:
            bad = [k for k, g in (base["result"].get("graphs") or {}).items()
                   if (_measure(g) or {}).get("status") in BAD]
            if not bad:
                return base, cid, {"found": False, "text": "no graph of the script diverged from eager in the "
                                                           "baseline step: nothing to blame"}
            cid = bad[0]
            self.head["compile_id"] = cid
            base["measure"] = _measure(base["result"]["graphs"][cid])
            self.steps[-1]["measure"] = base["measure"]
        elif base["outcome"] != "bad":
            why = {"good": "did not diverge from eager", "crash": f"crashed ({base.get('error')})",
                   "timeout": "ran out of time"}.get(base["outcome"], base["outcome"])
            return base, cid, {"found": False, "text": f"{cid} {why} in the baseline step: the divergence did not "
                                                       "reproduce in a fresh process (a random input, a setting made "
                                                       "at run time?)"}
        return base, cid, None

    def _backend_level(self, cid: str, baseline: dict[str, Any] | None
                       ) -> tuple[str, dict[str, Any] | None, dict[str, Any] | None]:
        """Down the backend ladder until a backend does not diverge: ``(the lowest that diverges, the step of the
        one below it, None)``, or a verdict instead of None where even Dynamo's eager backend diverges."""
        blamed, good_below = "inductor", None
        for b in BACKEND_LADDER:
            s = self.step(f"backend {b}", "backend", self.env(b), target=cid)
            if s["outcome"] == "good":
                good_below = s
                break
            blamed = b
        else:
            return blamed, good_below, self._verdict(
                cid, "backend", "eager", None, None, None, baseline,
                "Dynamo itself (the eager backend) diverges: the graph Dynamo captured computes "
                "another result than the script")
        return blamed, good_below, None

    def _user_passes(self, cid: str, blamed: str, custom: dict[str, Any], base: dict[str, Any],
                     baseline: dict[str, Any] | None) -> dict[str, Any] | None:
        """The user's own graph passes (``custom``: config name -> pass) switched off, all then each: the verdict
        naming the one whose absence removes the divergence, or None."""
        off = {k: None for k in custom}
        s = self.step(f"the user's own passes off ({', '.join(f'{k}={v}' for k, v in custom.items())})",
                      "config", self.env("inductor"), settings=off, target=cid)
        if s["outcome"] != "good":
            return None
        if len(custom) > 1:
            for k in custom:
                one = self.step(f"{k} off", "config", self.env("inductor"), settings={k: None}, target=cid)
                if one["outcome"] == "good":
                    s, off = one, {k: None}
                    break
        names = ", ".join(f"{k} ({custom[k]})" for k in off)
        rw = [base["result"].get("rewrites", {}).get(k) or {} for k in off]
        changed = [c for r in rw for c in r.get("changed") or []]
        nodes = [c.split(":")[0] for c in changed] + [n for r in rw for n in r.get("added") or []]
        what = f"{names}; rewrote {', '.join(changed[:6])}" if changed else names
        v = self._verdict(cid, "config", blamed, None, None, what, baseline,
                          f"the user's own graph pass {names}: with it off the graph no longer diverges",
                          settings=off, leaves=s.get("measure"))
        if nodes:
            v["fx_nodes"] = nodes
        return v

    def _bisect(self, cid: str, backend: str, sub: str, count: int, off: dict[str, Any],
                baseline: dict[str, Any] | None) -> dict[str, Any]:
        lo, hi = -1, count - 1  # TORCH_BISECT_MAX=lo is good, =hi is bad
        good, bad_res = off, None
        while hi - lo > 1:
            mid = (lo + hi) // 2
            s = self.step(f"{sub}: applications 0..{mid} of {count} on", "application", self.env(backend, sub, mid),
                          target=cid)
            if s["outcome"] == "good":
                lo, good = mid, s
            else:
                hi, bad_res = mid, s
        apps = [a for a in ((bad_res or {}).get("result") or {}).get("applications", {}).get(sub) or []
                if a.get("backend") == backend]
        if len(apps) <= hi:  # the baseline's log (the bisect's last bad step may have ended sooner)
            apps = [a for a in (self._baseline_apps().get(sub) or []) if a.get("backend") == backend]
        app = apps[hi] if hi < len(apps) else {}
        what = app.get("what") or "?"
        kind = {"lowerings": "the lowering of FX node", "post_grad_passes": "the post-grad pass",
                "joint_graph_passes": "the joint-graph pass", "pre_grad_passes": "the pre-grad pass",
                "decomposition": "the decomposition of"}.get(sub, sub)
        where = " ".join(x for x in (app.get("compile_id") or "?", app.get("graph_kind")) if x)
        text = (f"{backend} / {sub} #{hi} ({kind} {what}, in {where}): with applications "
                f"0..{hi - 1} on the graph does not diverge; with #{hi} on too it does")
        rw = app.get("rewrote") or {}
        words = rewrote_words(rw)
        if words:
            text += f"; the FX nodes it rewrote: {words}"
        v = self._verdict(cid, "application", backend, sub, hi, what, baseline, text, leaves=good.get("measure"),
                          app_compile_id=app.get("compile_id"), count=count)
        if app.get("graph_kind"):
            v["graph_kind"] = app["graph_kind"]
        nodes = [c.split(":")[0] for c in rw.get("changed") or []] + list(rw.get("added") or [])
        if nodes:  # a pass application: the FX nodes it changed or added (graph before it against after it)
            v["fx_nodes"] = nodes[:20]
        if rw:
            v["rewrote"] = rw
        return v

    def _baseline_apps(self) -> dict[str, list]:
        return getattr(self, "base_apps", {})

    def _verdict(self, cid: str, level: str, backend: str, sub: str | None, n: int | None, what: str | None,
                 baseline: dict[str, Any] | None, text: str, settings: dict[str, Any] | None = None,
                 leaves: dict[str, Any] | None = None, app_compile_id: str | None = None,
                 count: int | None = None) -> dict[str, Any]:
        env = self.env(backend, sub, (n - 1) if n is not None else None) if sub else {}
        repro_env = " ".join(f"{k}={v}" for k, v in env.items())
        launch = (["torchrun", "--standalone", "--nproc-per-node", str(self.nproc)] if self.nproc
                  else [os.path.basename(self.python)])
        cmd = " ".join(shlex.quote(x) for x in [*launch, self.script, *self.argv])
        v: dict[str, Any] = {"found": True, "level": level, "backend": backend, "compile_id": cid, "text": text}
        for k, x in (("subsystem", sub), ("application", n), ("what", what), ("baseline", baseline),
                     ("leaves", leaves), ("applications", count), ("application_compile_id", app_compile_id)):
            if x is not None:
                v[k] = x
        if sub == "lowerings" and what:
            v["fx_nodes"] = [what]
        if env:
            v["setting"] = {"env": env, "text": f"{repro_env} (keeps {sub} applications 0..{(n or 0) - 1}, switches "
                                                f"#{n} and the later ones off)"}
        elif settings:
            v["setting"] = {"config": {k: (repr(x) if not isinstance(x, (bool, int, float, str)) else x)
                                       for k, x in settings.items()},
                            "text": ", ".join(f"torch._inductor.config.{k} = {x!r}" for k, x in settings.items())}
        v["repro"] = cmd  # the script, its own inputs: the divergence as it compiles
        if env:
            v["repro_off"] = f"{repro_env} {cmd}"
        elif settings:
            v["repro_off"] = f"{cmd}  # with {v['setting']['text']} set before the compile"
        return v


def rewrote_words(rw: dict[str, Any]) -> str:
    """``changed add: aten.add.Tensor -> aten.sub.Tensor; added sin; removed cos`` (at most six of each), or ""."""
    parts = []
    for key in ("changed", "added", "removed"):
        xs = list(rw.get(key) or [])
        if xs:
            parts.append(f"{key} {', '.join(xs[:6])}" + (f" (+{len(xs) - 6})" if len(xs) > 6 else ""))
    return "; ".join(parts)


def blame_numerics(script: str, argv: list[str], send: Callable[[dict[str, Any]], None], graph: str | None = None,
                   cancel: threading.Event | None = None, **kw: Any) -> dict[str, Any]:
    """Bisect ``graph``'s divergence (None: the first graph that diverges) of ``script`` run with ``argv``; sends the
    ``blame`` messages and returns the verdict (:class:`Bisect`)."""
    return Bisect(script, argv, send, cancel=cancel, **kw).run(graph)


__all__ = ["Bisect", "BlameRequests", "Cancelled", "STEP_LIMIT_S", "blame_numerics"]


# ----------------------------------------------------------------------------- in the agent

class BlameRequests:
    """The agent's blame part (:class:`tracer.agent.Agent`'s ``blame``): the ``blame`` command (``B`` in the UI) and
    its cancel, and ``--blame`` after the script, one search at a time (``thread``, its ``cancel_event`` and
    ``kind``).  Over the shared :class:`tracer.agent_state.AgentState` (``send``, ``script``/``argv``,
    ``distributed``, ``graphs``/``variants`` for speed's first graph); ``timing`` is the timing part (speed blame
    times its variants with ``run_all``; a cancel ends its run); ``config_at_start`` the Inductor settings before
    the script ran (tracer.blame_speed.config_values, set by the agent), whose changes speed blame tries."""

    def __init__(self, state: Any, timing: Any):
        self.state = state  # tracer.agent_state.AgentState
        self.timing = timing  # tracer.agent_timing.TimingRequests
        self.config_at_start: dict[str, Any] | None = None
        self.thread: threading.Thread | None = None
        self.cancel_event: threading.Event | None = None
        self.kind: str | None = None

    def serve(self, msg: dict[str, Any]) -> None:
        """The ``blame`` command: start the search on a thread of its own (one at a time; a second while one runs
        is answered with a verdict saying so)."""
        if self.thread is not None and self.thread.is_alive():
            self.state.send({"type": "blame", "kind": msg.get("blame") or "numerics", "event": "verdict",
                             "compile_id": GraphKey.parse(str(msg.get("graph") or "?")).compile_id,
                             "verdict": {"found": False,
                                         "text": "a blame is already running (ctrl+c / cancel ends it)"}})
            return
        self.cancel_event = threading.Event()
        self.thread = threading.Thread(target=self.run, args=(msg.get("graph"), msg.get("blame")),
                                       daemon=True, name="inductor-step blame")
        self.thread.start()

    def cancel(self) -> None:
        """The ``cancel_blame`` command: end the step in progress and the search (its verdict says cancelled)."""
        if self.cancel_event is not None:
            self.cancel_event.set()
        if self.kind == "speed" and self.thread is not None and self.thread.is_alive():
            self.timing.cancel_gen += 1  # the variant's timing in progress ends too
            self.timing.cancel_run.set()

    def run(self, graph: str | None, kind: str | None) -> dict[str, Any]:
        """Blame ``graph`` of the agent's script (``--blame numerics``: after the script, the first graph that
        diverges; ``kind`` speed: the script's first compiled graph); returns the verdict."""
        ev = self.cancel_event or threading.Event()
        self.cancel_event = ev
        self.kind = kind or "numerics"
        if kind == "speed":
            return self._speed(graph, ev)
        dist = self.state.options.distributed or {}
        nproc = None
        if dist:  # a rank of a torchrun job: each step is a job of this node's ranks, rank 0's graph compared
            local = int(os.environ.get("LOCAL_WORLD_SIZE") or dist.get("world_size") or 1)
            if local != int(dist.get("world_size") or local):
                verdict = {"found": False, "text": f"a job over several nodes (world size {dist.get('world_size')}, "
                                                   f"{local} on this node): blame runs a job of one node only"}
                self.state.send({"type": "blame", "kind": "numerics", "event": "verdict", "compile_id": "?",
                                 "verdict": verdict})
                return verdict
            nproc = local
        opts = self.state.options
        return blame_numerics(opts.script, list(opts.argv), self.state.send, graph=graph, cancel=ev, nproc=nproc)

    def _speed(self, graph: str | None, ev: threading.Event) -> dict[str, Any]:
        """Speed blame of ``graph`` (None: the script's first compiled graph, not a variant or a subgraph)."""
        from inductor_step.tracer.blame_speed import blame_speed  # noqa: PLC0415

        if not graph:
            keys = [f"{c} {k}" for (c, k), g in self.state.graphs.items() if g.get("output_path") and " " not in k
                    and (c, k) not in self.state.variants.original]
            graph = keys[0] if keys else None
        if not graph:
            verdict = {"found": False, "text": "no compiled graph to time"}
            self.state.send({"type": "blame", "kind": "speed", "event": "verdict", "compile_id": "?",
                             "verdict": verdict})
            return verdict
        return blame_speed(self.state, self.timing.run_all, graph, self.config_at_start, ev)
