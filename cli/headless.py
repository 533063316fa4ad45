"""``inductor-step --headless``: run a script (or a torchrun job) straight through, one line per stop, then the summaries.

Never imports torch: the script runs in the agent process, as for the UI.
"""

from __future__ import annotations

import queue
import signal
import sys
import time
from typing import Any

from inductor_step.session import format as protocol
from inductor_step.session import trust
from inductor_step.session.format.records import Record, decode
from inductor_step.session.shape_events import ShapeEventLines
from inductor_step.cli.signals import Ended, _signal_name


def run_headless(script: str, args: list[str], record: str, run: bool, python: str | None,
                 what_if: list[str] | None = None, numerics: bool = False, blame: str | None = None) -> int:
    """Run straight through, print one line per stop and error; return the script's exit status."""
    from inductor_step.live.client import AgentProcess, SessionWriter  # noqa: PLC0415

    q: queue.Queue[dict[str, Any]] = queue.Queue()
    writer = SessionWriter(record, {"script": script, "argv": args})
    agent = AgentProcess(script, args, q.put, writer=writer, step=False, run_at_end=run, python=python,
                         what_if=what_if, numerics=numerics, blame=blame)
    seen = _Seen(bool(what_if))
    try:
        while not seen.take(decode(q.get())):  # the record of its type: its fields read as attributes
            pass
    except (KeyboardInterrupt, Ended) as e:
        agent.terminate()
        how = f"ended by {e.name}" if isinstance(e, Ended) else "interrupted (Ctrl+C)"
        writer.write({"type": "error", "stage": "script", "message": how, "traceback": ""})
        print(f"inductor-step: {how}; session kept in {record}", file=sys.stderr)
        writer.close()
        return 128 + e.signum if isinstance(e, Ended) else 130
    writer.close()
    agent.terminate()
    died = _agent_died(seen.rc, seen.script_rc, seen.last_status, record)
    if died is not None:
        return died
    return seen.finish(record, run)


class _Seen:
    """What :func:`run_headless` prints as the agent's messages come (:meth:`take`) and keeps for the lines
    after the script (:meth:`finish`).  ``what_if``: the run has what-if variants (their fused nodes and
    kernels are counted per graph)."""

    def __init__(self, what_if: bool):
        from inductor_step.session.store import summarize_stop  # noqa: PLC0415
        from inductor_step.session.saved_inputs import saved_line  # noqa: PLC0415

        self._summarize_stop, self._saved_line = summarize_stop, saved_line
        self.what_if = what_if
        self.runs: dict[str, Record] = {}
        self.numerics_msgs: dict[str, Record] = {}  # graph key -> numerics message (--numerics)
        self.shapes: dict[str, dict[str, int]] = {}  # graph key -> scheduler nodes after fusion, kernels (--what-if)
        self.rc: int | None = None
        self.script_rc: int | None = None
        self.failed = False
        self.failed_runs: list[str] = []  # timing raised, crashed or ran out of time: the command fails (README)
        self.last_status: str | None = None
        self.ctimes: list[Record] = []  # the compile's own time, summed up at the end
        self.saved: list[Record] = []  # inputs_saved messages (--save-inputs)
        self.shape_events = ShapeEventLines()  # a compile's specializations and constraints, until its next stop

    def take(self, msg: Record) -> bool:
        """Print ``msg``'s lines and keep what the end needs; True once the agent exited."""
        t = msg.get("type")  # (a type this version does not know is a plain Record)
        if self.shape_events.take(msg):
            return False
        if t in ("stop", "done", "agent_exit"):  # a compile's shape events, before its stop's line
            for line in self.shape_events.flush(msg.get("compile_id") if t == "stop" else None):
                print(line, flush=True)
        if t == "compile_time" or (t == "stop" and msg.stage == "codegen"):
            self.ctimes.append(msg)  # (a codegen stop's links roll the lowering time up to the user's lines)
        if t == "stop":
            print(self._summarize_stop(msg), flush=True)
            if self.what_if and msg.stage in ("scheduling", "codegen"):
                items = msg.after if msg.stage == "scheduling" else msg.kernels
                if isinstance(items, list):
                    self.shapes.setdefault(protocol.graph_key(msg), {})[
                        "fused" if msg.stage == "scheduling" else "kernels"] = len(items)
        elif t == "output":
            print(msg.text, file=sys.stderr if msg.stream == "stderr" else sys.stdout, flush=True)
        elif t == "error":
            self.failed = True
            print(f"error in {_error_where(msg)}{msg.stage}: {msg.message}", file=sys.stderr, flush=True)
        elif t == "what_if":
            if msg.status != "compiling":
                print(f"{protocol.graph_key(msg):<20} what if     {msg.status}: {msg.message}",
                      file=sys.stderr if msg.status == "failed" else sys.stdout, flush=True)
        elif t == "run":
            self._run(msg)
        elif t == "numerics":  # the answer first, then the short table (session.numerics)
            from inductor_step.session.numerics import headless_lines  # noqa: PLC0415

            for line in headless_lines(msg):
                print(line, flush=True)
            self.numerics_msgs[protocol.graph_key(msg)] = msg
        elif t == "blame":  # --blame: each step as it ends, then the verdict (session.blame)
            from inductor_step.session.blame import headless_lines as blame_lines  # noqa: PLC0415

            for line in blame_lines(msg):
                print(line, flush=True)
        elif t == protocol.RUN_STATUS and (status := protocol.RunStatus.from_message(msg)).done:
            self.last_status = status.message
        elif t == "inputs_saved":  # --save-inputs; its repro is written after the session
            self.saved.append(msg)
            print(self._saved_line(msg), file=sys.stderr if msg.error else sys.stdout, flush=True)
        elif t == "done":
            self.script_rc = msg.returncode
            if msg.message and not self.failed:
                print(f"inductor-step: {msg.message}", file=sys.stderr, flush=True)
        elif t == "agent_exit":
            self.rc = msg.returncode
            return True
        return False

    def _run(self, msg: Record) -> None:
        """A graph's timing: its line, or why it was not timed."""
        key = protocol.graph_key(msg)
        self.runs[key] = msg
        if msg.error:
            # a timing that raised, crashed or ran out of time is a failure of the run (a jagged
            # graph's NameError exited 0); a graph timing cannot rebuild is timed in the agent instead
            self.failed_runs.append(key)
            print(f"{key:<20} run         failed: {msg.error}", flush=True)
        elif msg.not_timed:  # by design, not a failure (a subgraph lowered inline); once "not timed", not twice
            why = msg.not_timed if msg.not_timed.startswith("not timed") else f"not timed: {msg.not_timed}"
            print(f"{key:<20} run         {why}", flush=True)
        else:
            _print_timed(key, msg)

    def finish(self, record: str, run: bool) -> int:
        """The lines after the script (what-if deltas, summaries, the session written, saved inputs' repros,
        the ledger with ``run``, the graphs not timed); the command's exit status: 1 when the script
        succeeded but a stage or a timing failed."""
        from inductor_step.live.children import write_repro  # noqa: PLC0415

        if self.what_if:
            from inductor_step.session.whatif import what_if_deltas  # noqa: PLC0415

            for line in what_if_deltas(self.runs, self.shapes):
                print(line, flush=True)
            from inductor_step.session.numerics import what_if_lines  # noqa: PLC0415
            for line in what_if_lines(self.numerics_msgs):
                print(line, flush=True)
        _print_summaries(record, self.ctimes)
        print(f"inductor-step: session written to {record}", file=sys.stderr)
        for m in (m for m in self.saved if not m.error):  # the repro that loads them (needs the session written)
            print(write_repro(record, protocol.graph_key(m), m.kernel), flush=True)
        if run:
            _print_ledger(record)
        if self.failed_runs:
            print(f"inductor-step: {len(self.failed_runs)} graph(s) could not be timed (the timing raised, crashed or "
                  f"ran out of time; each run line says why): {', '.join(self.failed_runs)}", file=sys.stderr)
        if self.script_rc == 0 and (self.failed or self.failed_runs):
            return 1
        return int(self.script_rc)  # type: ignore[arg-type]


def _print_timed(key: str, msg: Record) -> None:
    """A timed graph's ``run`` line (compiled and eager ms, kernels, their sum, the verdict) and its notes
    (eager, CUDA graphs, user kernels: session.gpu_modes) under it; ``msg`` a run record without error."""
    from inductor_step.session.gpu_modes import cudagraph_lines, eager_note_lines, user_kernel_lines  # noqa: PLC0415
    from inductor_step.session.script_call import script_call_lines  # noqa: PLC0415

    eager = (f", eager {msg.eager_ms:.4f} ms" if msg.eager_ms is not None else
             f", eager not timed ({msg.eager_error or msg.eager_note or 'no reason given'})")
    if msg.in_process:
        eager += f" [{msg.in_process}]"
    print(f"{key:<20} run         compiled {msg.compiled_ms:.4f} ms{eager}, "
          f"{len(msg.kernels or [])} kernels, " + _kernel_sum(msg)
          + (f"  (NOT RELIABLE: {trust.unreliable(msg)})" if trust.unreliable(msg) else
             "  (reliable)" if msg.reliable else "")
          + (f"; {trust.interleaved_text(msg)}" if msg.interleaved else ""), flush=True)
    for line in script_call_lines(msg) + eager_note_lines(msg) + cudagraph_lines(msg) + user_kernel_lines(msg):
        print(f"{'':<20}             {line}", flush=True)


def _agent_died(rc: int | None, script_rc: int | None, last_status: str | None, record: str) -> int | None:
    """The exit status when the agent died (``rc``: its exit status, negative for a signal) before the script
    finished (``script_rc`` None: os._exit, a signal, a crash in torch) or after it, while timing; says so on
    stderr.  None when it did not."""
    if script_rc is None:
        if rc is not None and rc < 0:
            try:
                name = signal.Signals(-rc).name
            except ValueError:
                name = f"signal {-rc}"
            how, code = f"was killed by {name}", 128 - rc
        else:
            how, code = f"exited with status {rc}", (rc if rc else 1)
        print(f"inductor-step: the script's process {how} before it finished; session kept in {record}", file=sys.stderr)
        return code
    if rc is not None and rc != 0 and (rc < 0 or script_rc == 0):
        # the script finished, then the agent died (timing): the session has what came before
        how = f"was killed by {_signal_name(rc)}" if rc < 0 else f"exited with status {rc}"
        print(f"inductor-step: the agent {how} after the script ended ({last_status or 'while timing'}); "
              f"session kept in {record}", file=sys.stderr)
        return 128 - rc if rc < 0 else rc
    return None


def _print_summaries(record: str, ctimes: list[Record]) -> None:
    """After the script: the compile-time summary line (session.compile_time) and each graph's memory line, from
    the session just written (decoded once, so its graphs count as --open counts them); from ``ctimes`` (the
    compile_time messages and codegen stops seen) when it cannot be read back."""
    from inductor_step.session.compile_time import summary_line  # noqa: PLC0415
    from inductor_step.session.store import Store  # noqa: PLC0415

    try:
        recorded = Store.of(list(protocol.read_session(record)))
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        recorded = None
    line = summary_line(recorded or Store.of(ctimes))
    if line:
        print(line, flush=True)
    if recorded is not None:
        print_memory(recorded)  # each graph's planned peak and saved-for-backward bytes


def run_headless_job(script: str, args: list[str], launcher: list[str], record: str, run: bool,
                     python: str | None, what_if: list[str] | None = None, nproc: int | None = None,
                     blame: str | None = None) -> int:
    """A torchrun job straight through (no rank pauses): one line per stop, ``[rankN]``-prefixed,
    every rank recorded (``blame``: rank 0 bisects its first divergent graph after the script, each step a job of
    the same ranks); returns the launcher's exit status, else the first failing rank's."""
    from inductor_step.live.client import JobProcess  # noqa: PLC0415
    from inductor_step.session.store import summarize_stop  # noqa: PLC0415

    q: queue.Queue[tuple[int | None, dict[str, Any]]] = queue.Queue()
    job = JobProcess(script, args, launcher, lambda r, m: q.put((r, m)), record, stepped_rank=None,
                     run_at_end=run, serve=False, python=python, what_if=what_if, nproc_per_node=nproc,
                     blame=blame)
    rcs: dict[int, int] = {}
    shape_events: dict[int | None, ShapeEventLines] = {}  # each rank's (session.shape_events)
    launcher_rc: int | None = None
    deadline = float("inf")  # after the launcher ended: a few seconds for the ranks' streams to close
    try:
        while launcher_rc is None or (len(rcs) < len(job.ranks) and time.monotonic() < deadline):
            try:
                rank, raw = q.get(timeout=0.2)
            except queue.Empty:
                continue
            msg = decode(raw)  # the record of its type (launcher_exit, the job's own, is a plain Record)
            t = msg.get("type")
            tag = f"[rank{rank}]" if rank is not None else ""
            shapes = shape_events.setdefault(rank, ShapeEventLines())
            if shapes.take(msg):
                continue
            if t in ("stop", "done", "agent_exit"):  # a compile's shape events, before its stop's line
                for line in shapes.flush(msg.get("compile_id") if t == "stop" else None):
                    print(f"{tag} {line}", flush=True)
            if t == "stop":
                print(f"{tag} {summarize_stop(msg)}", flush=True)
            elif t == "output":
                stream = sys.stderr if msg.stream == "stderr" else sys.stdout
                print(f"{tag}: {msg.text}" if tag else msg.text, file=stream, flush=True)
            elif t == "error":
                print(f"{tag} error in {_error_where(msg)}{msg.stage}: {msg.message}", file=sys.stderr, flush=True)
            elif t == "run" and rank is not None:
                if msg.error:
                    print(f"{tag} {protocol.graph_key(msg):<20} run failed: {msg.error}", flush=True)
                else:
                    coll = msg.collectives_stubbed or []
                    print(f"{tag} {protocol.graph_key(msg):<20} run compiled {msg.compiled_ms:.4f} ms, "
                          f"{len(msg.kernels or [])} kernels, " + _kernel_sum(msg)
                          + (f" ({len(coll)} collective call(s) not timed, left out)" if coll else ""), flush=True)
            elif t == "blame":  # --blame numerics: rank 0's steps and verdict (session.blame)
                from inductor_step.session.blame import headless_lines as blame_lines  # noqa: PLC0415

                for line in blame_lines(msg):
                    print(f"{tag} {line}", flush=True)
            elif t == "agent_exit" and rank is not None:
                rcs[rank] = msg.returncode
            elif t == "launcher_exit":
                launcher_rc = msg["returncode"]
                deadline = time.monotonic() + 5
    except (KeyboardInterrupt, Ended) as e:
        job.terminate()
        how = f"ended by {e.name}" if isinstance(e, Ended) else "interrupted"
        print(f"inductor-step: {how}; the job's sessions are kept in {job.job_path}", file=sys.stderr)
        return 128 + e.signum if isinstance(e, Ended) else 130
    job.terminate()
    print(f"inductor-step: job written to {job.job_path} ({len(job.ranks)} rank session(s))", file=sys.stderr)
    _print_ranks(job.job_path)
    if launcher_rc:
        return launcher_rc
    bad = [rc for _, rc in sorted(rcs.items()) if rc]
    return bad[0] if bad else 0


def _print_ranks(job_path: str) -> None:
    """After a headless job: how its ranks compare (session.ranks), from the sessions just written."""
    try:
        from inductor_step.session.ranks import compare_job_file, text  # noqa: PLC0415
    except ImportError:
        return
    try:
        print(text(compare_job_file(job_path)), flush=True)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"inductor-step: no rank comparison ({type(e).__name__}: {e})", file=sys.stderr)


def print_memory(session: Any) -> None:
    """A ``memory: [0/0] forward planned peak ...`` line per graph (session.memory_text.summary_lines), planned from
    each graph's wrapper in ``session`` (session.store.Store, the one just written); not measured."""
    from inductor_step.session.memory_text import summary_lines  # noqa: PLC0415

    try:
        for line in summary_lines(session):
            print(line, flush=True)
    except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
        print(f"inductor-step: no memory summary ({type(e).__name__}: {e})", file=sys.stderr)


def _print_ledger(record: str) -> None:
    """``--headless --run``: the ledger's short summary from the session just written."""
    from inductor_step.session.ledger import summary  # noqa: PLC0415
    from inductor_step.session.store import Store  # noqa: PLC0415

    try:
        print(summary(Store.of(list(protocol.read_session(record)))), flush=True)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"inductor-step: no ledger summary ({type(e).__name__}: {e})", file=sys.stderr)


def _kernel_sum(msg: Record) -> str:
    """``sum 0.0123 ms``, or why the kernels have no sum (an AOTInductor package is timed whole); ``msg`` a run record."""
    ksum = msg.kernel_sum_ms
    return f"sum {ksum:.4f} ms" if isinstance(ksum, (int, float)) else f"no kernel sum ({msg.kernels_note or 'not timed'})"


def _error_where(msg: Record) -> str:
    """Where an error record happened, as the error line starts it: ``"[0/0] forward "``, ``"[0/0] "`` (a compile
    id without a graph kind), ``""`` (the script's own)."""
    if not msg.compile_id:
        return ""
    return f"{protocol.graph_key(msg) if msg.graph_kind else msg.compile_id} "
