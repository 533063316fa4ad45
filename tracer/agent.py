"""The agent: runs the user's script as ``__main__`` and stops its compiles after each stage.

Started by the UI (or ``--headless``) as ``python -m inductor_step.tracer.agent --msg-fd W --ctl-fd R [--step]
SCRIPT [ARGS...]``.  It writes the session stream (:mod:`inductor_step.session.format`); the stage hooks are :mod:`inductor_step.tracer.capture` on fd ``W`` and reads
commands from fd ``R``.  The user's stdout/stderr are this process's own, which the UI reads from
pipes.  In step mode every stop blocks the compile thread until the UI sends ``continue``.
After the script ends the agent stays up to serve ``run`` (timing) requests until ``quit`` or
until the control pipe closes.

In a torchrun job torch's launcher starts one agent per rank as ``python -m
inductor_step.tracer.agent --connect SOCKET --step-rank R SCRIPT ...``: each makes its own pipes,
hands their far ends to the UI over the Unix socket SOCKET (:func:`connect`), and from then on
runs like an agent started with ``--msg-fd``/``--ctl-fd``.  Only rank R pauses at stops; the others
record every stop without pausing.
"""

from __future__ import annotations

import argparse
import os
import queue
import runpy
import signal
import sys
import threading
import traceback
from typing import Any

from inductor_step.session import format as protocol
from inductor_step.tracer.agent_state import AgentOptions, AgentState
from inductor_step.tracer.capture import Capture
from inductor_step.tracer.cudagraph_record import CudagraphRecord
from inductor_step.session.format import STAGES
from inductor_step.tracer import agent_start
from inductor_step.tracer.agent_process import (COLLECTIVE_TIMEOUT_S, _end_children, _end_now, _Quit,
                                                _run_exit_funcs, connect, user_traceback_text)
from inductor_step.tracer.agent_timing import TimingRequests
from inductor_step.tracer.blame import BlameRequests

def _chain(exc: BaseException | None) -> list[BaseException]:
    """An exception and its causes/contexts."""
    out: list[BaseException] = []
    while exc is not None and exc not in out:
        out.append(exc)
        exc = exc.__cause__ or exc.__context__
    return out


def adapter_compile_id() -> str | None:
    try:
        from inductor_step.tracer import adapter  # noqa: PLC0415

        cid = adapter.current_compile_id()
        return None if cid == "[?]" else cid
    except Exception:  # noqa: BLE001
        return None


class Agent:
    """One run of a user script (one process, one script): the shared :class:`tracer.agent_state.AgentState`
    (``state``: the stream, the graphs, the options) and the parts built on it, each with its own hooks and
    state: ``capture`` (the stage hooks, tracer.capture, with AOTInductor's ``capture.aoti`` and the higher-order
    ops' ``capture.subgraphs``), ``timing`` (the script's calls and the run requests, tracer.agent_timing),
    ``cudagraphs`` (tracer.cudagraph_record) and ``blame`` (tracer.blame.BlameRequests).  The agent itself reads
    the UI's commands (its control loop), pauses at stops, runs the script and does the end-of-script work; the
    what-if, numerics, pair-timing and save-inputs requests get the state and the parts they use.

    Graphs are keyed by (compile id ``"[0/0]"``, graph kind; ``"forward #2"`` for a part, protocol.graph_key).
    All hooks run on the thread that compiles (the script's main thread, or the autograd thread of a lazy backward).
    """

    def __init__(self, msg_fd: int, ctl_fd: int | None, options: AgentOptions):
        """``msg_fd``: the session stream's file descriptor (written); ``ctl_fd``: the UI's commands (read; None: no
        control loop, as a recording has none); ``options``: the run's (:class:`tracer.agent_state.AgentOptions`)."""
        self.state = AgentState(os.fdopen(msg_fd, "wb", buffering=0), options, wait_at_stop=self._wait_at_stop)
        self.cudagraphs = CudagraphRecord(self.state)  # its parts, each over the shared state
        self.capture = Capture(self.state, self.cudagraphs)
        self.timing = TimingRequests(self.state, self.cudagraphs, self.capture.subgraphs.runs, self._numerics_call)
        self.blame = BlameRequests(self.state, self.timing)
        self.ctl_fd = ctl_fd
        self.resume: queue.Queue[str] = queue.Queue()  # the UI's commands to a paused compile
        self.quitting = False

    def _wait_at_stop(self) -> None:
        """Block at a stop until the UI continues (answering queries and what-ifs meanwhile)."""
        while True:
            cmd = self.resume.get()
            if isinstance(cmd, dict) and cmd.get("cmd") == protocol.CMD_WHAT_IF:
                self.what_if_command(cmd)  # this compile waits while the variant compiles
                continue
            if isinstance(cmd, dict):  # a query answered on this thread, where V.graph is live
                self.answer_query(cmd)
                continue
            if cmd == protocol.CMD_QUIT:
                raise _Quit()
            break

    def answer_query(self, q: dict[str, Any]) -> None:
        """``can_fuse`` for two scheduler nodes of the paused graph, in Inductor's own words."""
        from inductor_step.tracer import adapter  # noqa: PLC0415

        a, b = q.get("a"), q.get("b")
        fusion = self.state.fusion
        with fusion.kept():  # the paused graph's own log goes on after the query
            fusion.lines, fusion.on = [], True
            try:
                verdict = adapter.can_fuse(a, b)
            finally:
                lines = fusion.lines
        self.state.send({"type": "fusion_query", "a": a, "b": b, "compile_id": (self.state.current or ("?",))[0],
                         "graph_kind": (self.state.current or ("?", "?"))[1], "verdict": verdict, "reasons": lines})

    # ------------------------------------------------------------------ control
    def _control_loop(self) -> None:
        f = os.fdopen(self.ctl_fd, "rb", buffering=0)
        buf = b""
        while True:
            try:
                chunk = f.read(65536) if hasattr(f, "read") else b""
            except OSError:
                chunk = b""
            if not chunk:
                # the UI is gone: nothing can continue us, so end now, and every process we started
                _end_children()
                os._exit(0)
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                msg = protocol.decode(line)
                if msg is None:
                    continue
                cmd = msg.get("cmd")
                if cmd == protocol.CMD_CONTINUE:
                    self.resume.put(cmd)
                elif cmd == protocol.CMD_CAN_FUSE:
                    self.resume.put(msg)
                elif cmd == protocol.CMD_CANCEL_RUN:
                    self.timing.cancel_gen += 1
                    self.timing.cancel_run.set()
                    if not self.timing.run_active and not self.timing.run_waiting:
                        self.state.send(protocol.RunStatus.finished("nothing to cancel: no timing run in progress",
                                                                    cancelled=True).to_message())
                elif cmd == protocol.CMD_WHAT_IF:
                    # paused: on the compile thread at its stop (tracer.whatif); after the script: now
                    if self.state.script_done or not self.state.options.step:
                        threading.Thread(target=self.what_if_command, args=(msg,), daemon=True).start()
                    else:
                        self.resume.put(msg)
                elif cmd == protocol.CMD_NUMERICS:  # tracer.numerics_run
                    threading.Thread(target=self.numerics_all, kwargs={"only": msg.get("graph")}, daemon=True).start()
                elif cmd == protocol.CMD_SAVE_INPUTS:  # X in pane 6 (tracer.save_inputs)
                    from inductor_step.tracer.save_inputs import serve  # noqa: PLC0415

                    serve(self.state, self.timing.run_lock, msg)
                elif cmd == protocol.CMD_BLAME:  # B (tracer.blame)
                    self.blame.serve(msg)
                elif cmd == protocol.CMD_CANCEL_BLAME:
                    self.blame.cancel()
                elif cmd == protocol.CMD_RUN:
                    threading.Thread(target=self.timing.run_all, kwargs={"only": msg.get("graph")}, daemon=True).start()
                elif cmd == protocol.CMD_TIME_PAIR:  # r in the diff view (tracer.pair_timing)
                    from inductor_step.tracer.pair_timing import time_pair  # noqa: PLC0415

                    threading.Thread(target=time_pair, args=(self.state, self.timing, msg.get("graphs")),
                                     daemon=True).start()
                elif cmd == protocol.CMD_QUIT:
                    self.quitting = True
                    self.state.send({"type": "quit"})
                    if self.state.script_done:
                        _run_exit_funcs(timeout=1.0)
                    _end_children()
                    os._exit(0)

    # ------------------------------------------------------------------ requests
    def numerics_all(self, only: str | list[str] | None = None) -> None:
        """Compare every compiled graph's buffers with eager (or the one named); one ``numerics`` message each."""
        from inductor_step.tracer.numerics_run import numerics_all  # noqa: PLC0415

        numerics_all(self.state, only)

    # ------------------------------------------------------------------ what if
    def what_if_command(self, cmd: dict[str, Any]) -> None:
        """``what_if``: recompile one graph with Inductor settings changed (tracer.whatif.run_what_if)."""
        from inductor_step.tracer.whatif import run_what_if  # noqa: PLC0415

        part = cmd.get("part") if isinstance(cmd.get("part"), int) else None
        kind = protocol.with_part(str(cmd.get("graph_kind")), part)
        try:
            run_what_if(self.state, str(cmd.get("compile_id")), kind, dict(cmd.get("settings") or {}),
                        time_with=self.timing.run_all if cmd.get("run") else None)
        except Exception as e:  # noqa: BLE001 - never takes the agent down
            self.state.send({"type": "what_if", "compile_id": str(cmd.get("compile_id")),
                             "graph_kind": kind, "status": "failed",
                             "message": f"{type(e).__name__}: {e}"})

    def what_if_all(self) -> None:
        """``--what-if``: every settings set on every compiled graph of the script (not on variants)."""
        from inductor_step.tracer.whatif import run_what_if  # noqa: PLC0415

        originals = [k for k, g in self.state.graphs.items()
                     if g.get("output_path") and protocol.GraphKey.parse_kind(k[1]).variant is None]
        for settings in self.state.options.what_if:
            for cid, kind in originals:
                run_what_if(self.state, cid, kind, settings)

    def _pending_what_ifs(self) -> None:
        """what_if commands queued for a stop that never came (the script ended first): run now."""
        while True:
            try:
                cmd = self.resume.get_nowait()
            except queue.Empty:
                return
            if isinstance(cmd, dict) and cmd.get("cmd") == protocol.CMD_WHAT_IF:
                threading.Thread(target=self.what_if_command, args=(cmd,), daemon=True).start()

    def _numerics_call(self, key: str) -> None:
        """The script's first call of output module ``key`` while ``e`` waits for it: compare now."""
        from inductor_step.tracer.numerics_run import on_first_call  # noqa: PLC0415

        on_first_call(self.state, key)

    # ------------------------------------------------------------------ the script's own calls
    def failing_stage(self, exc: BaseException) -> tuple[str | None, str | None, str]:
        """Where an exception came from: ``(compile id, kind, stage)``.

        A compile failure (Dynamo's BackendCompilerFailed / InductorError, or a traceback through
        torch._inductor) belongs to the stage after the current graph's last stop, or to codegen
        when the generated code itself failed to build; anything else is the script's own error.
        """
        tb = "".join(traceback.format_exception(exc))
        names = {type(e).__name__ for e in _chain(exc)}
        compile_error = bool(names & {"BackendCompilerFailed", "InductorError", "LoweringException",
                                      "CppCompileError", "Unsupported", "TorchRuntimeError", "UserError"}) \
            or any(type(e).__module__.startswith(("torch._dynamo", "torch._inductor")) for e in _chain(exc)) \
            or "torch/_inductor/" in tb.replace("\\", "/").split("Traceback")[-1]
        if not compile_error:
            return None, None, "script"
        if self.state.current is None or self.state.current[0] != (adapter_compile_id() or self.state.current[0]):
            # failed before this compile reached any stop of ours: Dynamo itself
            return adapter_compile_id(), "inference", "dynamo"
        cid, kind = self.state.current
        last = self.state.graphs.get(self.state.current, {}).get("last_stage")
        if last == "codegen":
            return cid, kind, "codegen"
        nxt = STAGES[STAGES.index(last) + 1] if last in STAGES else "dynamo"
        return cid, kind, nxt

    def main(self) -> int:
        """Run the script as ``__main__`` under our hooks and return its exit status: the hooks installed and the
        header sent (:mod:`inductor_step.tracer.agent_start`), the script run and its exit classified, the
        end-of-script work, then either the script's ``atexit`` functions or (``--serve``) the UI's requests."""
        from inductor_step.tracer import lifetime  # noqa: PLC0415

        # ended (SIGTERM, SIGHUP) or orphaned (the UI killed): every process we started goes with us
        lifetime.on_signals(_end_now)
        lifetime.die_with_parent(on_orphan=lambda: _end_now(signal.SIGHUP), use_prctl=False)
        if agent_start.torch_missing(self.state):
            return 2
        from inductor_step.tracer import adapter  # noqa: PLC0415

        info = adapter.versions()
        self.state.device = info["device"]
        caches = os.environ.get("INDUCTOR_STEP_CACHES", "off") == "on"  # --caches on
        settings = adapter.configure_inductor(caches=caches)
        hooks = agent_start.install_hooks(self.state, self.capture, self.cudagraphs, self.timing)
        agent_start.add_log_handlers(self.capture)
        self.state.send(agent_start.header(self.state, info, settings, hooks, caches))
        if self.ctl_fd is not None:
            threading.Thread(target=self._control_loop, daemon=True).start()
        sys.argv = [self.state.options.script] + list(self.state.options.argv)
        sys.path.insert(0, os.path.dirname(os.path.abspath(self.state.options.script)))
        if self.state.options.distributed is not None:  # a rank: say when the script waits inside a collective
            from inductor_step.tracer import rank_watch  # noqa: PLC0415

            rank_watch.start(self.state.send)
        try:
            rc, error = self._run_script()
        except _Quit:
            self.state.send({"type": "quit"})
            return 130
        compiled = self._send_done(rc, error)
        self._after_script(compiled)
        if not self.state.options.serve:
            _run_exit_funcs()
        if self.state.options.serve and self.ctl_fd is not None:
            # stay up to serve timing requests until the UI says quit or goes away, the main thread running the
            # timings that must run where the script ran (tracer.main_thread)
            from inductor_step.tracer.main_thread import WORK  # noqa: PLC0415

            WORK.serve()
        return rc

    def _run_script(self) -> tuple[int, dict[str, Any] | None]:
        """Run the script and classify how it ended: ``(exit status, error message or None)``; the script's own
        exception is printed as ``python script.py`` would.  ``_Quit`` (the UI ended the agent at a stop) passes."""
        rc = 0
        error: dict[str, Any] | None = None
        from inductor_step.tracer.blame_speed import config_values  # noqa: PLC0415

        self.blame.config_at_start = config_values()  # speed blame: the settings the script changes are candidates
        try:
            runpy.run_path(self.state.options.script, run_name="__main__")
        except _Quit:
            raise
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except KeyboardInterrupt:
            rc = 130
            error = {"stage": "script", "message": "KeyboardInterrupt", "traceback": ""}
        except BaseException as e:  # noqa: BLE001 - the user's exception, reported as theirs
            rc = 1
            tb = user_traceback_text(e)
            sys.stderr.write(tb)
            sys.stderr.flush()
            cid, kind, stage = self.failing_stage(e)
            text = f"{type(e).__name__}: {e}"
            error = {"stage": stage, "message": text.strip().splitlines()[0] if text.strip() else type(e).__name__,
                     "full_message": text[:20000], "traceback": tb,
                     "compile_id": cid if stage != "script" else None,
                     "graph_kind": kind if stage != "script" else None}
        return rc, error

    def _send_done(self, rc: int, error: dict[str, Any] | None) -> int:
        """Send the script's error (if any) and ``done`` (with why nothing reached Inductor, when nothing did);
        returns how many graphs were compiled."""
        from inductor_step.tracer import backends  # noqa: PLC0415

        if error:
            error["type"] = "error"
            self.state.send(error)
        sys.stdout.flush()
        sys.stderr.flush()
        compiled = sum(1 for g in self.state.graphs.values() if g.get("last_stage"))
        extra = backends.done_fields(self.state)  # other backends; nothing reached Inductor, and why
        if compiled and extra.get("inductor_graphs"):
            done_msg = None
        elif error and error.get("stage") == "script" and not compiled:
            done_msg = f"the script stopped with {error['message']} before any torch.compile"
        elif extra.get("message"):
            done_msg = extra["message"]
        else:
            done_msg = "the script never compiled a graph with torch.compile"
        extra.pop("message", None)
        after = self.state.breaks_before("").get("breaks_before")  # frames after the last graph that gave none
        if after:
            extra["breaks_after"] = after
        self.state.send({"type": "done", "returncode": rc, "graphs": compiled, "message": done_msg, **extra})
        return compiled

    def _after_script(self, compiled: int) -> None:
        """The end-of-script work the options asked for, once ``compiled`` graphs exist: pending and ``--what-if``
        variants, numerics waiting for calls, ``--save-inputs`` or ``--run``, ``--numerics`` and ``--blame``."""
        self.state.script_done = True
        self._pending_what_ifs()
        if self.state.numerics_waiting:  # e asked for graphs the script never called
            from inductor_step.tracer.numerics_run import flush_waiting  # noqa: PLC0415

            threading.Thread(target=flush_waiting, args=(self.state,), daemon=True).start()
        if self.state.options.what_if and compiled:
            self.what_if_all()
        if compiled and os.environ.get("INDUCTOR_STEP_SAVE_INPUTS"):  # --save-inputs (times first)
            from inductor_step.tracer.save_inputs import run_then_save  # noqa: PLC0415

            run_then_save(self.state, self.timing)
        elif self.state.options.run_at_end and compiled:
            from inductor_step.tracer.main_thread import WORK  # noqa: PLC0415

            WORK.beside(self.timing.run_all)  # the main thread takes the timings handed to it (tracer.main_thread)
        if self.state.options.numerics_at_end and compiled:
            self.numerics_all()
        if self.state.options.blame_at_end and compiled and (self.state.options.distributed or {}).get("rank", 0) == 0:
            # --blame numerics (tracer.blame); in a torchrun job rank 0 blames, each step a job of the same ranks
            self.blame.run(None, self.state.options.blame_at_end)


#: the agent's options that take a value (to find SCRIPT: protocol.split_at_script)
AGENT_VALUE_OPTIONS = frozenset({"--msg-fd", "--ctl-fd", "--connect", "--step-rank", "--what-if", "--timing-limit",
                                 "--blame"})


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m tracer.agent``; returns the script's exit status."""
    p = argparse.ArgumentParser(prog="inductor_step.tracer.agent", description="inductor-step agent (started by the UI)",
                                allow_abbrev=False)
    p.add_argument("--msg-fd", type=int, default=None)
    p.add_argument("--ctl-fd", type=int, default=None)
    p.add_argument("--connect", metavar="SOCKET", default=None,
                   help="a rank of a torchrun job: hand this rank's pipes to the UI on this Unix socket")
    p.add_argument("--step-rank", type=int, default=None,
                   help="with --connect: the rank that pauses at every stop (the others record without pausing)")
    p.add_argument("--step", action="store_true", help="pause at every stop until the UI continues")
    p.add_argument("--run", action="store_true", help="time every compiled graph after the script ends")
    p.add_argument("--serve", action="store_true", help="after the script, stay up for timing requests until quit")
    p.add_argument("--what-if", action="append", default=[], metavar="NAME=VALUE,...",
                   help="after the script, recompile every graph with these torch._inductor.config settings")
    p.add_argument("--numerics", action="store_true",
                   help="after the script, compare every graph's buffers with eager")
    p.add_argument("--blame", choices=("numerics", "speed"), default=None,
                   help="after the script, bisect the first graph that diverges from eager (tracer.blame)")
    p.add_argument("--timing-limit", type=float, default=None, metavar="S",
                   help="one graph's timing, at most S seconds (default 600)")
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    head, script_args = protocol.split_at_script(list(sys.argv[1:] if argv is None else argv), AGENT_VALUE_OPTIONS)
    ns = p.parse_args(head)
    ns.args = script_args  # verbatim: the script's --n, --r, --help are never read as ours
    distributed = None
    step = ns.step
    if ns.connect:
        from inductor_step.tracer.adapter.distributed import rank_env  # noqa: PLC0415

        try:
            distributed = rank_env(dict(os.environ))
        except ValueError as e:
            p.error(str(e))
        distributed["stepped_rank"] = ns.step_rank
        distributed["collective_timeout_s"] = COLLECTIVE_TIMEOUT_S if ns.step_rank is not None else None
        hello = {k: distributed[k] for k in ("rank", "local_rank", "world_size", "restart_count") if k in distributed}
        hello["pid"] = os.getpid()
        try:
            ns.msg_fd, ns.ctl_fd = connect(ns.connect, hello)
        except OSError as e:
            print(f"inductor-step agent (rank {distributed['rank']}): cannot reach the UI at {ns.connect}: {e}",
                  file=sys.stderr)
            return 2
        step = ns.step_rank == distributed["rank"]
    elif ns.msg_fd is None:
        p.error("one of --msg-fd or --connect is required")
    options = AgentOptions(step=step, script=ns.script, argv=ns.args, run_at_end=ns.run, serve=ns.serve,
                           what_if=[protocol.parse_settings(w) for w in ns.what_if], distributed=distributed,
                           numerics_at_end=ns.numerics, blame_at_end=ns.blame)
    if ns.timing_limit is not None:
        options.timing_limit_s = ns.timing_limit
    return Agent(ns.msg_fd, ns.ctl_fd, options).main()


if __name__ == "__main__":
    try:
        code = main()
    except BaseException:  # noqa: BLE001 - an error of ours: said, then the same os._exit (an interpreter
        traceback.print_exc()  # shutdown would run the destructors of what the script loaded, e.g. an
        code = 1               # AOTInductor model on CUDA, which died of SIGSEGV there)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code if isinstance(code, int) else 1)
