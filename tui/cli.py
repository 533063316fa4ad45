"""``inductor-step``: step a script's torch.compile stage by stage (TUI, headless, or a recorded file).

Never imports torch: the script runs in the agent process (``python -m tracer.agent``).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import queue
import signal
import sys
import time
from typing import Any

from inductor_step.tracer import protocol

DEMO = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tracer", "demo", "train_step.py")


class UsageError(Exception):
    """Bad input: printed as one line, exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="inductor-step",
        description="Run a PyTorch script and stop its torch.compile after each stage: "
                    "dynamo, aot, lowering, scheduling, loopbody, codegen; then run and time the kernels.",
        epilog="Options go before SCRIPT; everything after SCRIPT is passed to it verbatim.  "
               "With no SCRIPT, steps the bundled demo (a small training step).  "
               "Also: `inductor-step report SESSION` (a bug-report bundle) and "
               "`inductor-step export SESSION DIR` (a TORCH_TRACE-style log for tlparse) and "
               "`inductor-step diff A B` (two sessions level by level; --headless prints it).",
    )
    p.add_argument("--headless", action="store_true", help="no UI: run straight through, print one line per stop")
    p.add_argument("--record", metavar="FILE", help="write the session (JSON lines) to FILE "
                   "(default: inductor-step-sessions/<script>-<time>.jsonl)")
    p.add_argument("--run", action="store_true", help="with --headless: time every compiled graph after the script ends")
    p.add_argument("--what-if", action="append", default=[], metavar="NAME=VALUE,...",
                   help="with --headless: after the script, recompile every graph with these torch._inductor.config "
                        "settings (e.g. 'max_autotune=True'; repeat for more variants); with --run, print the timing deltas")
    p.add_argument("--open", metavar="FILE", help="view a recorded session (needs no torch)")
    p.add_argument("--screenshots", metavar="DIR", default=None,
                   help="where `s` saves screenshots (default: inductor-step-sessions/screenshots)")
    p.add_argument("--record-screens", action="store_true",
                   help="save a screenshot at every stop without key presses (live, or every stop of --open)")
    p.add_argument("--python", metavar="EXE", help="Python interpreter that runs the script (default: this one)")
    p.add_argument("script", nargs="?", help="the PyTorch script to run as __main__")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    return p


def check_script(path: str) -> None:
    """Raise UsageError with a one-line reason if ``path`` is not a runnable Python script."""
    if not os.path.exists(path):
        raise UsageError(f"no such script: {path}")
    if os.path.isdir(path):
        raise UsageError(f"{path} is a directory, not a Python script")
    try:
        with open(path, "rb") as f:
            src = f.read()
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror}") from None
    if b"\0" in src[:4096]:
        raise UsageError(f"{path} is not a Python file (binary content)")
    try:
        compile(src, path, "exec")
    except SyntaxError as e:
        raise UsageError(f"{path}:{e.lineno}: SyntaxError: {e.msg} (the script does not parse)") from None
    except ValueError as e:
        raise UsageError(f"{path} is not a Python file ({e})") from None


def check_torch(python: str | None) -> None:
    """Raise UsageError if the interpreter that will run the agent has no torch."""
    if python and os.path.realpath(python) != os.path.realpath(sys.executable):
        return  # another interpreter: the agent reports a missing torch itself
    if importlib.util.find_spec("torch") is None:
        raise UsageError(f"torch is not installed for {sys.executable}: pip install torch "
                         "(viewing a recorded session with --open needs no torch)")


def default_record_path(script: str) -> str:
    stem = os.path.splitext(os.path.basename(script))[0]
    return os.path.join("inductor-step-sessions", f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}.jsonl")


def run_headless(script: str, args: list[str], record: str, run: bool, python: str | None,
                 what_if: list[str] | None = None) -> int:
    """Run straight through, print one line per stop and error; return the script's exit status."""
    from inductor_step.tui.client import AgentProcess, SessionWriter  # noqa: PLC0415
    from inductor_step.tui.session import summarize_stop  # noqa: PLC0415

    q: queue.Queue[dict[str, Any]] = queue.Queue()
    writer = SessionWriter(record, {"script": script, "argv": args})
    agent = AgentProcess(script, args, q.put, writer=writer, step=False, run_at_end=run, python=python,
                         what_if=what_if)
    runs: dict[str, dict[str, Any]] = {}
    shapes: dict[str, dict[str, int]] = {}  # graph key -> scheduler nodes after fusion, kernels (--what-if)
    rc: int | None = None
    script_rc = None
    failed = False
    failed_runs: list[str] = []
    last_status = None
    try:
        while True:
            msg = q.get()
            t = msg.get("type")
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
                where = f"{msg['compile_id']} {msg['graph_kind']} " if msg.get("compile_id") else ""
                print(f"error in {where}{msg.get('stage')}: {msg.get('message')}", file=sys.stderr, flush=True)
            elif t == "what_if":
                if msg.get("status") != "compiling":
                    print(f"{protocol.graph_key(msg):<20} what if     {msg.get('status')}: {msg.get('message')}",
                          file=sys.stderr if msg.get("status") == "failed" else sys.stdout, flush=True)
            elif t == "run":
                runs[protocol.graph_key(msg)] = msg
                if msg.get("error"):
                    failed_runs.append(protocol.graph_key(msg))
                    print(f"{protocol.graph_key(msg):<20} run         failed: {msg['error']}", flush=True)
                else:
                    eager = f", eager {msg['eager_ms']:.4f} ms" if msg.get("eager_ms") is not None else ""
                    print(f"{protocol.graph_key(msg):<20} run         compiled {msg['compiled_ms']:.4f} ms{eager}, "
                          f"{len(msg.get('kernels') or [])} kernels, sum {msg['kernel_sum_ms']:.4f} ms"
                          + (f"  (not reliable: {'; '.join(msg.get('warnings') or ['the timing rounds never agreed'])})"
                             if msg.get("settled") is False or (msg.get("graph_rounds") or {}).get("rounds_stable") is False
                             else ""), flush=True)
            elif t == "run_status" and msg.get("done"):
                last_status = msg.get("message")
            elif t == "done":
                script_rc = msg.get("returncode")
                if msg.get("message") and not failed:
                    print(f"inductor-step: {msg['message']}", file=sys.stderr, flush=True)
            elif t == "agent_exit":
                rc = msg["returncode"]
                break
    except KeyboardInterrupt:
        agent.terminate()
        writer.write({"type": "error", "stage": "script", "message": "interrupted (Ctrl+C)", "traceback": ""})
        print(f"inductor-step: interrupted; session kept in {record}", file=sys.stderr)
        writer.close()
        return 130
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
        from inductor_step.tui.whatif import what_if_deltas  # noqa: PLC0415

        for line in what_if_deltas(runs, shapes):
            print(line, flush=True)
    print(f"inductor-step: session written to {record}", file=sys.stderr)
    if run:
        _print_ledger(record)
    if failed_runs:
        print(f"inductor-step: {len(failed_runs)} graph(s) could not be timed: {', '.join(failed_runs)}", file=sys.stderr)
    if script_rc == 0 and (failed or failed_runs):
        return 1
    return int(script_rc)


def _print_ledger(record: str) -> None:
    """``--headless --run``: the ledger's short summary (issue 20) from the session just written."""
    from inductor_step.tui.ledger import summary  # noqa: PLC0415
    from inductor_step.tui.session import Session  # noqa: PLC0415

    try:
        print(summary(Session.of(list(protocol.read_session(record)))), flush=True)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"inductor-step: no ledger summary ({type(e).__name__}: {e})", file=sys.stderr)


def _signal_name(rc: int) -> str:
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return f"signal {-rc}"


def main(argv: list[str] | None = None) -> int:
    """Console entry point; returns the process exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # a subcommand wins over a file or folder of the same name (reach that one as ./export)
    if argv and argv[0] in ("report", "export", "diff"):
        if argv[0] == "diff":
            return main_diff(argv[1:])
        if argv[0] == "report":
            from inductor_step.tui.report import main_report  # noqa: PLC0415

            return main_report(argv[1:])
        from inductor_step.tui.export import main_export  # noqa: PLC0415

        return main_export(argv[1:])
    ns = build_parser().parse_args(argv)
    try:
        if ns.open:
            if ns.script:
                raise UsageError("--open takes a session file, not a script")
            if not os.path.isfile(ns.open):
                raise UsageError(f"no such session file: {ns.open}")
            from inductor_step.tracer.protocol import read_session  # noqa: PLC0415

            try:
                msgs = list(read_session(ns.open, lazy_over=1 << 18))
            except (ValueError, OSError) as e:
                raise UsageError(str(e)) from None
            from inductor_step.tui.app import StepApp  # noqa: PLC0415
            from inductor_step.tui.session import freeze_gc  # noqa: PLC0415

            freeze_gc()
            app = StepApp(messages=msgs, session_path=ns.open, screenshots=ns.screenshots,
                          record_screens=ns.record_screens)
            app.run()
            return 130 if app.interrupted else 0
        script = ns.script or DEMO
        args = ns.args if ns.script else []
        if args and args[0] == "--":
            args = args[1:]
        check_script(script)
        check_torch(ns.python)
        record = ns.record or default_record_path(script)
        if ns.headless:
            for w in ns.what_if:
                try:
                    protocol.parse_settings(w)
                except ValueError as e:
                    raise UsageError(f"--what-if: {e}") from None
            return run_headless(script, args, record, ns.run, ns.python, ns.what_if)
        if ns.run:
            raise UsageError("--run goes with --headless; in the UI press r")
        if ns.what_if:
            raise UsageError("--what-if goes with --headless; in the UI press w")
        if not sys.stdout.isatty():
            raise UsageError("the UI needs a terminal; use --headless --record FILE to run without one")
        from inductor_step.tui.app import StepApp  # noqa: PLC0415

        app = StepApp(script=script, script_args=args, session_path=record, screenshots=ns.screenshots,
                      python=ns.python, record_screens=ns.record_screens)
        app.run()
        if app.agent is not None:
            app.agent.terminate()
        if app.interrupted:  # ctrl+c: the status a shell expects after an interrupt
            print(f"inductor-step: interrupted (ctrl+c); session kept in {record}", file=sys.stderr)
            return 130
        print(f"inductor-step: session written to {record}", file=sys.stderr)
        return app.script_rc or 0
    except UsageError as e:
        print(f"inductor-step: {e}", file=sys.stderr)
        return 2


def main_diff(argv: list[str]) -> int:
    """``inductor-step diff A.jsonl B.jsonl``: the diff view of two recorded sessions (graphs paired by
    compile id and kind, then by content); ``--headless`` prints the same diff as text.  One file
    given twice diffs its recompiles.  Needs no torch."""
    p = argparse.ArgumentParser(prog="inductor-step diff",
                                description="Diff two recorded sessions level by level: why it recompiled, "
                                            "Dynamo and post-grad graphs, IR buffers, scheduler nodes, kernels, "
                                            "timings.")
    p.add_argument("a", metavar="A", help="the earlier session (.jsonl)")
    p.add_argument("b", metavar="B", help="the later session (.jsonl)")
    p.add_argument("--headless", action="store_true", help="print a plain-text summary instead of the view")
    p.add_argument("--no-source", action="store_true", help="with --headless: leave out the kernels' source diffs")
    ns = p.parse_args(argv)
    try:
        for f in (ns.a, ns.b):
            if not os.path.isfile(f):
                raise UsageError(f"no such session file: {f}")
        if ns.headless:
            from inductor_step.tui.diff import diff_files  # noqa: PLC0415

            try:
                print(diff_files(ns.a, ns.b, diffs=not ns.no_source))
            except (ValueError, OSError) as e:
                raise UsageError(str(e)) from None
            return 0
        if not sys.stdout.isatty():
            raise UsageError("the diff view needs a terminal; use --headless to print the diff")
        try:
            msgs_a = list(protocol.read_session(ns.a))
            msgs_b = list(protocol.read_session(ns.b, lazy_over=1 << 18))
        except (ValueError, OSError) as e:
            raise UsageError(str(e)) from None
        from inductor_step.tui.app import StepApp  # noqa: PLC0415

        app = StepApp(messages=msgs_b, session_path=ns.b, diff_against=(ns.a, msgs_a))
        app.run()
        return 130 if app.interrupted else 0
    except UsageError as e:
        print(f"inductor-step: {e}", file=sys.stderr)
        return 2


def entry() -> None:
    """The ``inductor-step`` console script."""
    signal.signal(signal.SIGPIPE, signal.SIG_DFL) if hasattr(signal, "SIGPIPE") else None
    sys.exit(main())


if __name__ == "__main__":
    entry()
