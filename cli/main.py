"""``inductor-step``: step a script's torch.compile stage by stage (TUI, headless, or a recorded file).

Never imports torch: the script runs in the agent process (``python -m tracer.agent``).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import signal
import sys
import time
from typing import Any, NoReturn

from inductor_step.session import format as protocol
from inductor_step.cli.common import UsageError
from inductor_step.cli.signals import end_app_on_signal, ended_line, raise_ended, on_end_signals

DEMO = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tracer", "demo", "train_step.py")


class _Parser(argparse.ArgumentParser):
    """argparse with its errors as one line (``inductor-step: --nproc-per-node abc: not a whole number``),
    exit status 2, instead of the whole usage first."""

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        m = re.match(r"argument ([^:]+): invalid int value: '(.*)'$", message)
        if m:
            message = f"{m.group(1).split('/')[0]} {m.group(2)}: not a whole number"
        self.exit(2, f"{self.prog}: {message} (inductor-step -h lists the options)\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="inductor-step", allow_abbrev=False,
        description="Run a PyTorch script and stop its torch.compile after each stage: "
                    "dynamo, aot, lowering, scheduling, loopbody, codegen; then run and time the kernels.",
        epilog="Options go before SCRIPT; everything after SCRIPT is passed to it verbatim.  "
               "With no SCRIPT, steps the bundled demo (a small training step).  "
               "Also: `inductor-step report SESSION` (a bug-report bundle) and "
               "`inductor-step export SESSION DIR` (a TORCH_TRACE-style log for tlparse) and "
               "`inductor-step diff A B` (two sessions level by level; --headless prints it) and "
               "`inductor-step gate BASELINE NEW` (a CI gate: exit 1 when a compile regressed).",
    )
    p.add_argument("--headless", action="store_true", help="no UI: run straight through, print one line per stop")
    p.add_argument("--record", metavar="FILE", help="write the session (JSON lines) to FILE "
                   "(default: inductor-step-sessions/<script>-<time>.jsonl)")
    p.add_argument("--run", action="store_true", help="with --headless: time every compiled graph after the script "
                   "ends; in a torchrun job's UI too: every rank times its graphs as its script ends")
    p.add_argument("--numerics", action="store_true", help="with --headless: after the script, compare every buffer "
                   "of every compiled graph with eager and float64; print the first divergence and NaN first")
    p.add_argument("--blame", choices=("numerics", "speed"), default=None,
                   help="with --headless: after the script, numerics: bisect the first graph that diverges from eager "
                        "to the backend, subsystem and single pass or lowering that caused it (each step a child "
                        "process; in a torchrun job rank 0's graph, each step a job of the same ranks); speed: time what-if variants of the first graph, one setting switched each, and "
                        "name the setting whose change moves its time beyond noise")
    p.add_argument("--what-if", action="append", default=[], metavar="NAME=VALUE,...",
                   help="with --headless: after the script, recompile every graph with these torch._inductor.config "
                        "settings (e.g. 'max_autotune=True'; repeat for more variants); with --run, print the timing deltas")
    p.add_argument("--timing-limit", type=float, metavar="S", default=None,
                   help="timing (r, --run, a what-if's): one graph at most S seconds, then it is reported as timed "
                        "out with the step that took too long (default 600)")
    p.add_argument("--caches", choices=("on", "off"), default=None,
                   help="on: leave Inductor's FX-graph, AOTAutograd and autotune caches on (a cache hit skips the "
                        "stages after it) and record each cache's verdict; off (default): turned off so every stage "
                        "is captured")
    p.add_argument("--save-inputs", metavar="KERNEL|top", default=None,
                   help="after the script, save this kernel's real arguments at its launch (top: the slowest, with "
                        "--run) as repros/KERNEL.inputs.pt beside the session, and write its repro that loads them")
    p.add_argument("--open", metavar="FILE", help="view a recorded session (needs no torch)")
    p.add_argument("--screenshots", metavar="DIR", default=None,
                   help="where `s` saves screenshots (default: inductor-step-sessions/screenshots)")
    p.add_argument("--record-screens", action="store_true",
                   help="save a screenshot at every stop without key presses (live, or every stop of --open)")
    p.add_argument("--python", metavar="EXE", help="Python interpreter that runs the script (default: this one)")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=int, metavar="N", default=None,
                   help="run the script as a torchrun job of N processes (torch.distributed.run --standalone); "
                        "torchrun's own spelling works too: inductor-step -m torch.distributed.run "
                        "[TORCHRUN OPTIONS] SCRIPT, or inductor-step torchrun [TORCHRUN OPTIONS] SCRIPT")
    p.add_argument("--rank", type=int, metavar="N", default=None,
                   help="in a torchrun job, the rank the UI steps (default 0); the others record every stop "
                        "without pausing")
    p.add_argument("script", nargs="?", help="the PyTorch script to run as __main__")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    return p


#: torchrun's options that take no value (``torch.distributed.run.get_args_parser``; a test checks the list)
LAUNCHER_FLAGS = frozenset({"-h", "--help", "--standalone", "-m", "--module", "--no-python", "--no_python",
                            "--run-path", "--run_path", "--virtual-local-rank", "--virtual_local_rank"})
#: our own options that take a value (to find where a launcher spelling starts)
_VALUE_OPTIONS = frozenset({"--record", "--caches", "--what-if", "--open", "--screenshots", "--python", "--nproc-per-node",
                            "--nproc_per_node", "--rank", "--timing-limit",
                            "--save-inputs", "--blame"})
def split_script(argv: list[str]) -> tuple[list[str], list[str]]:
    """``(our options and SCRIPT, the script's arguments)``: everything after SCRIPT goes to the script
    verbatim -- ``--n 32``, ``--h``, ``--help``, ``-m x`` are the script's, never abbreviations of our
    options (protocol.split_at_script).  An unknown option before SCRIPT stays first, for argparse to reject."""
    return protocol.split_at_script(argv, _VALUE_OPTIONS)


#: the module names that spell torch's launcher after ``-m``
LAUNCHER_MODULES = ("torch.distributed.run", "torch.distributed.launch")


def split_launcher(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """``(our argv, launcher options)`` for ``inductor-step [OPTS] -m torch.distributed.run
    [TORCHRUN OPTS] SCRIPT ARGS`` or ``inductor-step [OPTS] torchrun [TORCHRUN OPTS] SCRIPT ARGS``:
    our argv is ``OPTS SCRIPT ARGS``; launcher options ``None`` when no launcher is spelled.
    The script is the first argument that is no torchrun option or option value (``--`` before it
    also works); torch's launcher parses the options again with its own parser."""
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-m" and i + 1 < len(argv) and argv[i + 1] in LAUNCHER_MODULES:
            start = i + 2
        elif a == "torchrun":
            start = i + 1
        elif a in _VALUE_OPTIONS:
            i += 2
            continue
        elif a.startswith("-") and a != "--":
            i += 1
            continue
        else:
            return argv, None
        j = start
        while j < len(argv):
            b = argv[j]
            if b == "--":
                return argv[:i] + argv[j + 1:], argv[start:j]
            if not b.startswith("-"):
                break
            j += 1 if ("=" in b or b in LAUNCHER_FLAGS) else 2
        return argv[:i] + argv[j:], argv[start:j]
    return argv, None


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


#: ``--open``: a stop over this many bytes is read as its head, its body parsed when first shown (or by the
#: app's preload after the first frame); 256 KB parsed the stops of a 1 MB session up front (~11 ms)
LAZY_OVER = 1 << 14

#: ``inductor-step SUBCOMMAND ...``: each its own entry point (a subcommand wins over a file or folder of
#: the same name; reach that one as ./export)
SUBCOMMANDS = ("report", "export", "diff", "gate", "lower")


def main(argv: list[str] | None = None) -> int:
    """Console entry point; returns the process exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:
        return run_subcommand(argv[0], argv[1:])
    argv, launcher = split_launcher(argv)
    head, script_args = split_script(argv)
    ns = build_parser().parse_args(head)
    ns.args = script_args  # verbatim: argparse never sees the script's arguments
    try:
        launcher = check_options(ns, launcher)
        if ns.open:
            return open_session(ns)
        return run_script(ns, launcher)
    except UsageError as e:
        print(f"inductor-step: {e}", file=sys.stderr)
        return 2


def run_subcommand(name: str, argv: list[str]) -> int:
    """``inductor-step NAME ARGV``, one of :data:`SUBCOMMANDS`; its exit status."""
    if name == "lower":  # Triton's lower stages, in a process that may import Triton
        import subprocess  # noqa: PLC0415

        return subprocess.call([sys.executable, "-m", "inductor_step.tracer.lower", *argv])
    if name == "diff":  # two sessions level by level (cli.diff over session.diff)
        from inductor_step.cli.diff import main_diff  # noqa: PLC0415

        return main_diff(argv)
    if name == "gate":  # the CI gate (cli.gate over session.gate)
        from inductor_step.cli.gate import main_gate  # noqa: PLC0415

        return main_gate(argv)
    if name == "report":
        from inductor_step.cli.report import main_report  # noqa: PLC0415

        return main_report(argv)
    from inductor_step.cli.export import main_export  # noqa: PLC0415

    return main_export(argv)


def check_options(ns: argparse.Namespace, launcher: list[str] | None) -> list[str] | None:
    """The checks of options that go together, for a script, a torchrun job and ``--open`` alike; returns
    the launcher options (``--nproc-per-node N`` spelled as torchrun's).  Sets the timing limit every agent
    reads, and ignores SIGPIPE in a job.  Raises UsageError with a one-line reason."""
    if ns.timing_limit is not None:
        if ns.timing_limit <= 0:
            raise UsageError(f"--timing-limit {ns.timing_limit:g}: needs a number of seconds above 0")
        # every agent this command starts (the script's, a job's ranks) reads it (tracer.agent_state.TIMING_LIMIT_S)
        os.environ["INDUCTOR_STEP_TIMING_TIMEOUT"] = f"{ns.timing_limit:g}"
    if ns.nproc_per_node is not None:
        if launcher is not None:
            raise UsageError("--nproc-per-node goes either to inductor-step or to torchrun, not both")
        if ns.nproc_per_node < 1:
            raise UsageError(f"--nproc-per-node {ns.nproc_per_node}: needs at least 1 process")
        launcher = ["--standalone", "--nproc-per-node", str(ns.nproc_per_node)]
        if ns.rank is not None and not 0 <= ns.rank < ns.nproc_per_node:
            raise UsageError(f"--rank {ns.rank}: a job of {ns.nproc_per_node} process(es) has ranks "
                             f"0 to {ns.nproc_per_node - 1}")
    if ns.rank is not None and launcher is None and not (ns.open and protocol.is_job_file(ns.open)):
        raise UsageError("--rank goes with a torchrun job (--nproc-per-node N, or -m torch.distributed.run ...)")
    if launcher is not None and ns.open:
        raise UsageError("--open views a recording; it starts no job")
    if launcher is not None and not ns.script:
        raise UsageError("a torchrun job needs a script: inductor-step --nproc-per-node 2 train.py")
    if launcher is not None and ns.blame == "speed":
        raise UsageError("--blame speed times one process's what-if variants while a torchrun job's other ranks "
                         "wait on its collectives: it is not for a job (--blame numerics is: rank 0's graphs)")
    if launcher is not None and hasattr(signal, "SIGPIPE"):
        # a rank that ended closes its control pipe: writing there must raise, not kill us
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    return launcher


def open_session(ns: argparse.Namespace) -> int:
    """``--open FILE``: a recorded session (or a torchrun job's ``.job.json``) in the UI; the exit status.
    Raises UsageError for options that run a script, a file that is not there or not a session, no terminal."""
    if ns.save_inputs:  # only the live agent has the script's inputs
        from inductor_step.session.saved_inputs import cannot_save  # noqa: PLC0415

        raise UsageError(f"--save-inputs: {cannot_save(False, False)}")
    if ns.script:
        raise UsageError("--open takes a session file, not a script")
    for flag, on in (("--headless", ns.headless), ("--run", ns.run), ("--what-if", ns.what_if),
                     ("--numerics", ns.numerics), ("--blame", ns.blame)):
        if on:  # they run a script; a recording is only viewed
            raise UsageError(f"{flag} runs a script; --open only views a recording (for its text summary: "
                             f"inductor-step report {ns.open})")
    if not os.path.isfile(ns.open):
        raise UsageError(f"no such session file: {ns.open}")
    from inductor_step.session.format import read_session  # noqa: PLC0415

    if protocol.is_job_file(ns.open):
        return open_job(ns.open, ns.rank, ns.screenshots, ns.record_screens)
    try:
        msgs = list(read_session(ns.open, lazy_over=LAZY_OVER))
    except (ValueError, OSError) as e:
        raise UsageError(str(e)) from None
    if not sys.stdout.isatty():
        raise UsageError("the UI needs a terminal; for a recording's text summary: "
                         f"inductor-step report {ns.open}")
    pause_gc()
    from inductor_step.tui.app import StepApp  # noqa: PLC0415
    from inductor_step.session.store import freeze_gc  # noqa: PLC0415

    freeze_gc()
    app = StepApp(messages=msgs, session_path=ns.open, screenshots=ns.screenshots,
                  record_screens=ns.record_screens)
    app.run()
    return 130 if app.interrupted else 0


def run_script(ns: argparse.Namespace, launcher: list[str] | None) -> int:
    """The script (or the bundled demo) run headless or in the UI, alone or as a torchrun job
    (``launcher``); the exit status.  Raises UsageError with a one-line reason."""
    script = ns.script or DEMO
    args = ns.args if ns.script else []
    if ns.caches:  # the agent reads it (tracer.agent: configure_inductor), ranks of a job too
        os.environ["INDUCTOR_STEP_CACHES"] = ns.caches
    check_script(script)
    check_torch(ns.python)
    record = ns.record or default_record_path(script)
    if ns.save_inputs:  # the agent reads them (tracer.save_inputs)
        from inductor_step.session.saved_inputs import repro_dir  # noqa: PLC0415

        os.environ.update(INDUCTOR_STEP_SAVE_INPUTS=ns.save_inputs, INDUCTOR_STEP_SAVE_INPUTS_DIR=repro_dir(record))
    if ns.headless:
        for w in ns.what_if:
            try:
                protocol.parse_settings(w)
            except ValueError as e:
                raise UsageError(f"--what-if: {e}") from None
        on_end_signals(raise_ended)
    if ns.headless:  # (imported here: --open's first frame does not wait for it)
        from inductor_step.cli.headless import run_headless, run_headless_job  # noqa: PLC0415
    if launcher is not None and ns.headless:
        return run_headless_job(script, args, launcher, record, ns.run, ns.python, ns.what_if,
                                ns.nproc_per_node, blame=ns.blame)
    if ns.headless:
        return run_headless(script, args, record, ns.run, ns.python, ns.what_if, ns.numerics, blame=ns.blame)
    if ns.run and launcher is None:
        raise UsageError("--run goes with --headless; in the UI press r")
    if ns.what_if:
        raise UsageError("--what-if goes with --headless; in the UI press w")
    if ns.blame:
        raise UsageError("--blame goes with --headless; in the UI press B on pane e")
    if not sys.stdout.isatty():
        raise UsageError("the UI needs a terminal; use --headless --record FILE to run without one")
    return run_ui(ns, script, args, record, launcher)


def run_ui(ns: argparse.Namespace, script: str, args: list[str], record: str, launcher: list[str] | None) -> int:
    """The UI stepping ``script`` (a torchrun job's with ``launcher``), recording to ``record``; the exit
    status: the script's, 130 after ctrl+c, 128 + N when ended by signal N."""
    from inductor_step.tui.app import StepApp  # noqa: PLC0415
    from inductor_step.tui.app import LiveJob  # noqa: PLC0415

    job = None
    if launcher is not None:  # --run: every rank times its graphs as its script ends
        job = LiveJob(launcher, ns.rank or 0, ns.nproc_per_node, bool(ns.run))
        record = protocol.job_paths(record)[0]
    app = StepApp(script=script, script_args=args, session_path=record, screenshots=ns.screenshots,
                  python=ns.python, record_screens=ns.record_screens, job=job)
    end_app_on_signal(app, record)
    app.run()
    app.end_agents()
    if getattr(app, "ended_by", None):
        print(ended_line(app.ended_by, record), file=sys.stderr)
        return 128 + app.ended_by
    if app.interrupted:  # ctrl+c: the status a shell expects after an interrupt
        print(f"inductor-step: interrupted (ctrl+c); session kept in {record}", file=sys.stderr)
        return 130
    print(f"inductor-step: {'job' if job else 'session'} written to {record}", file=sys.stderr)
    return app.script_rc or 0


def pause_gc() -> None:
    """The garbage collector off until the app's first frame (:class:`inductor_step.tui.app.StepApp` turns it
    back on then): while Textual is imported and lays out the screen, little is garbage, and the
    collector's passes over everything being built cost ~15 ms of the first frame."""
    import gc  # noqa: PLC0415

    gc.disable()


def open_job(path: str, rank: int | None, screenshots: str | None, record_screens: bool) -> int:
    """``--open JOB.job.json``: every rank's recorded session, rank ``rank`` (default: the stepped
    one, else 0) shown first.  Raises UsageError for a job file that names no readable session."""
    from inductor_step.session.format import read_job, read_session  # noqa: PLC0415

    try:
        job, paths = read_job(path)
    except (ValueError, OSError) as e:
        raise UsageError(str(e)) from None
    sessions: dict[int, list[dict[str, Any]]] = {}
    missing = []
    for r, p in sorted(paths.items()):
        try:
            sessions[r] = list(read_session(p, lazy_over=LAZY_OVER))
        except (ValueError, OSError) as e:
            missing.append(f"rank {r}: {e}")
    if not sessions:
        raise UsageError(f"{path}: no rank's session could be read ({'; '.join(missing) or 'it names none'})")
    for m in missing:
        print(f"inductor-step: {m}", file=sys.stderr)
    first = rank if rank is not None else (job.get("stepped_rank") or 0)
    if first not in sessions:
        if rank is not None:
            raise UsageError(f"--rank {rank}: the job has ranks {', '.join(map(str, sessions))}")
        first = min(sessions)
    pause_gc()
    from inductor_step.tui.app import StepApp  # noqa: PLC0415
    from inductor_step.tui.app import RecordedJob  # noqa: PLC0415
    from inductor_step.session.store import freeze_gc  # noqa: PLC0415

    freeze_gc()
    app = StepApp(messages=sessions[first], session_path=path, screenshots=screenshots,
                  record_screens=record_screens, job=RecordedJob(job, sessions, first))
    app.run()
    return 130 if app.interrupted else 0


def entry() -> None:
    """The ``inductor-step`` console script."""
    signal.signal(signal.SIGPIPE, signal.SIG_DFL) if hasattr(signal, "SIGPIPE") else None
    sys.exit(main())


if __name__ == "__main__":
    entry()
