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
from inductor_step.cli.signals import Ended, _signal_name


def run_headless(script: str, args: list[str], record: str, run: bool, python: str | None,
                 what_if: list[str] | None = None, numerics: bool = False, blame: str | None = None) -> int:
    """Run straight through, print one line per stop and error; return the script's exit status."""
    from inductor_step.live.client import AgentProcess, SessionWriter  # noqa: PLC0415
    from inductor_step.session.store import summarize_stop  # noqa: PLC0415

    q: queue.Queue[dict[str, Any]] = queue.Queue()
    writer = SessionWriter(record, {"script": script, "argv": args})
    agent = AgentProcess(script, args, q.put, writer=writer, step=False, run_at_end=run, python=python,
                         what_if=what_if, numerics=numerics, blame=blame)
    runs: dict[str, dict[str, Any]] = {}
    numerics_msgs: dict[str, dict[str, Any]] = {}  # graph key -> numerics message (--numerics)
    shapes: dict[str, dict[str, int]] = {}  # graph key -> scheduler nodes after fusion, kernels (--what-if)
    rc: int | None = None
    script_rc = None
    failed = False
    failed_runs: list[str] = []  # timing raised, crashed or ran out of time: the command fails (README)
    last_status = None
    ctimes: list[dict[str, Any]] = []  # the compile's own time, summed up at the end
    saved: list[dict[str, Any]] = []  # inputs_saved messages (--save-inputs)
    from inductor_step.live.children import write_repro  # noqa: PLC0415
    from inductor_step.session.saved_inputs import saved_line  # noqa: PLC0415
    try:
        while True:
            msg = q.get()
            t = msg.get("type")
            if t == "compile_time" or (t == "stop" and msg.get("stage") == "codegen"):
                ctimes.append(msg)  # (a codegen stop's links roll the lowering time up to the user's lines)
            if t == "stop":
                print(summarize_stop(msg), flush=True)
                if what_if and msg.get("stage") in ("scheduling", "codegen"):
                    items = msg.get("after") if msg["stage"] == "scheduling" else msg.get("kernels")
                    if isinstance(items, list):
                        shapes.setdefault(protocol.graph_key(msg), {})[
                            "fused" if msg["stage"] == "scheduling" else "kernels"] = len(items)
            elif t == "output":
                stream = sys.stderr if msg["stream"] == "stderr" else sys.stdout
                print(msg["text"], file=stream, flush=True)
            elif t == "error":
                failed = True
                where = (f"{protocol.graph_key(msg) if msg.get('graph_kind') else msg['compile_id']} "
                         if msg.get("compile_id") else "")
                print(f"error in {where}{msg.get('stage')}: {msg.get('message')}", file=sys.stderr, flush=True)
            elif t == "what_if":
                if msg.get("status") != "compiling":
                    print(f"{protocol.graph_key(msg):<20} what if     {msg.get('status')}: {msg.get('message')}",
                          file=sys.stderr if msg.get("status") == "failed" else sys.stdout, flush=True)
            elif t == "run":
                runs[protocol.graph_key(msg)] = msg
                if msg.get("error"):
                    # a timing that raised, crashed or ran out of time is a failure of the run (a jagged
                    # graph's NameError exited 0); a graph timing cannot rebuild is timed in the agent instead
                    failed_runs.append(protocol.graph_key(msg))
                    print(f"{protocol.graph_key(msg):<20} run         failed: {msg['error']}", flush=True)
                elif msg.get("not_timed"):  # by design, not a failure (a subgraph lowered inline)
                    print(f"{protocol.graph_key(msg):<20} run         not timed: {msg['not_timed']}", flush=True)
                else:
                    eager = (f", eager {msg['eager_ms']:.4f} ms" if msg.get("eager_ms") is not None else
                             f", eager not timed ({msg.get('eager_error') or msg.get('eager_note') or 'no reason given'})")
                    if msg.get("in_process"):
                        eager += f" [{msg['in_process']}]"
                    print(f"{protocol.graph_key(msg):<20} run         compiled {msg['compiled_ms']:.4f} ms{eager}, "
                          f"{len(msg.get('kernels') or [])} kernels, " + _kernel_sum(msg)
                          + (f"  (NOT RELIABLE: {trust.unreliable(msg)})" if trust.unreliable(msg) else
                             "  (reliable)" if msg.get("reliable") else "")
                          + (f"; {trust.interleaved_text(msg)}" if msg.get("interleaved") else ""), flush=True)
                    from inductor_step.session.gpu_modes import cudagraph_lines, eager_note_lines, user_kernel_lines  # noqa: PLC0415

                    for line in eager_note_lines(msg) + cudagraph_lines(msg) + user_kernel_lines(msg):
                        print(f"{'':<20}             {line}", flush=True)
            elif t == "numerics":  # the answer first, then the short table (session.numerics)
                from inductor_step.session.numerics import headless_lines  # noqa: PLC0415

                for line in headless_lines(msg):
                    print(line, flush=True)
                numerics_msgs[protocol.graph_key(msg)] = msg
            elif t == "blame":  # --blame: each step as it ends, then the verdict (session.blame)
                from inductor_step.session.blame import headless_lines as blame_lines  # noqa: PLC0415

                for line in blame_lines(msg):
                    print(line, flush=True)
            elif t == "run_status" and msg.get("done"):
                last_status = msg.get("message")
            elif t == "inputs_saved":  # --save-inputs; its repro is written after the session
                saved.append(msg)
                print(saved_line(msg), file=sys.stderr if msg.get("error") else sys.stdout, flush=True)
            elif t == "done":
                script_rc = msg.get("returncode")
                if msg.get("message") and not failed:
                    print(f"inductor-step: {msg['message']}", file=sys.stderr, flush=True)
            elif t == "agent_exit":
                rc = msg["returncode"]
                break
    except (KeyboardInterrupt, Ended) as e:
        agent.terminate()
        how = f"ended by {e.name}" if isinstance(e, Ended) else "interrupted (Ctrl+C)"
        writer.write({"type": "error", "stage": "script", "message": how, "traceback": ""})
        print(f"inductor-step: {how}; session kept in {record}", file=sys.stderr)
        writer.close()
        return 128 + e.signum if isinstance(e, Ended) else 130
    writer.close()
    agent.terminate()
    if script_rc is None:
        # the agent died without finishing: os._exit, a signal, a crash in torch
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
    if what_if:
        from inductor_step.session.whatif import what_if_deltas  # noqa: PLC0415

        for line in what_if_deltas(runs, shapes):
            print(line, flush=True)
        from inductor_step.session.numerics import what_if_lines  # noqa: PLC0415
        for line in what_if_lines(numerics_msgs):
            print(line, flush=True)
    from inductor_step.session.compile_time import summary_line  # noqa: PLC0415
    from inductor_step.session.store import Session  # noqa: PLC0415

    try:  # the session just written, decoded once: the summary counts its graphs as --open does
        recorded = Session.of(list(protocol.read_session(record)))
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        recorded = None
    line = summary_line(recorded or Session.of(ctimes))
    if line:
        print(line, flush=True)
    if recorded is not None:
        print_memory(recorded)  # each graph's planned peak and saved-for-backward bytes
    print(f"inductor-step: session written to {record}", file=sys.stderr)
    for m in (m for m in saved if not m.get("error")):  # the repro that loads them (needs the session written)
        print(write_repro(record, protocol.graph_key(m), m["kernel"]), flush=True)
    if run:
        _print_ledger(record)
    if failed_runs:
        print(f"inductor-step: {len(failed_runs)} graph(s) could not be timed (the timing raised, crashed or ran out "
              f"of time; each run line says why): {', '.join(failed_runs)}", file=sys.stderr)
    if script_rc == 0 and (failed or failed_runs):
        return 1
    return int(script_rc)


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
    launcher_rc: int | None = None
    deadline = float("inf")  # after the launcher ended: a few seconds for the ranks' streams to close
    try:
        while launcher_rc is None or (len(rcs) < len(job.ranks) and time.monotonic() < deadline):
            try:
                rank, msg = q.get(timeout=0.2)
            except queue.Empty:
                continue
            t = msg.get("type")
            tag = f"[rank{rank}]" if rank is not None else ""
            if t == "stop":
                print(f"{tag} {summarize_stop(msg)}", flush=True)
            elif t == "output":
                stream = sys.stderr if msg["stream"] == "stderr" else sys.stdout
                print(f"{tag}: {msg['text']}" if tag else msg["text"], file=stream, flush=True)
            elif t == "error":
                where = (f"{protocol.graph_key(msg) if msg.get('graph_kind') else msg['compile_id']} "
                         if msg.get("compile_id") else "")
                print(f"{tag} error in {where}{msg.get('stage')}: {msg.get('message')}", file=sys.stderr, flush=True)
            elif t == "run" and rank is not None:
                if msg.get("error"):
                    print(f"{tag} {protocol.graph_key(msg):<20} run failed: {msg['error']}", flush=True)
                else:
                    coll = msg.get("collectives_stubbed") or []
                    print(f"{tag} {protocol.graph_key(msg):<20} run compiled {msg['compiled_ms']:.4f} ms, "
                          f"{len(msg.get('kernels') or [])} kernels, " + _kernel_sum(msg)
                          + (f" ({len(coll)} collective call(s) not timed, left out)" if coll else ""), flush=True)
            elif t == "blame":  # --blame numerics: rank 0's steps and verdict (session.blame)
                from inductor_step.session.blame import headless_lines as blame_lines  # noqa: PLC0415

                for line in blame_lines(msg):
                    print(f"{tag} {line}", flush=True)
            elif t == "agent_exit" and rank is not None:
                rcs[rank] = msg["returncode"]
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
    each graph's wrapper in ``session`` (session.store.Session, the one just written); not measured."""
    from inductor_step.session.memory_text import summary_lines  # noqa: PLC0415

    try:
        for line in summary_lines(session):
            print(line, flush=True)
    except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
        print(f"inductor-step: no memory summary ({type(e).__name__}: {e})", file=sys.stderr)


def _print_ledger(record: str) -> None:
    """``--headless --run``: the ledger's short summary from the session just written."""
    from inductor_step.session.ledger import summary  # noqa: PLC0415
    from inductor_step.session.store import Session  # noqa: PLC0415

    try:
        print(summary(Session.of(list(protocol.read_session(record)))), flush=True)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"inductor-step: no ledger summary ({type(e).__name__}: {e})", file=sys.stderr)


def _kernel_sum(msg: dict[str, Any]) -> str:
    """``sum 0.0123 ms``, or why the kernels have no sum (an AOTInductor package is timed whole)."""
    ksum = msg.get("kernel_sum_ms")
    return f"sum {ksum:.4f} ms" if isinstance(ksum, (int, float)) else f"no kernel sum ({msg.get('kernels_note') or 'not timed'})"
