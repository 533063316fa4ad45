"""torch's launcher (``torch.distributed.run``, what ``torchrun`` runs), with our agent as each rank's entry point.

``python -m inductor_step.tracer.launch TORCHRUN_ARGS... SCRIPT ARGS...`` parses its arguments with
torchrun's own parser (``torch.distributed.run.get_args_parser``), so every torchrun option means
what it means to torchrun; it then makes each rank run ``python -m inductor_step.tracer.agent
AGENT_ARGS -- SCRIPT ARGS`` (``AGENT_ARGS``: the JSON list in ``INDUCTOR_STEP_AGENT_ARGS``, e.g.
``["--connect", SOCKET, "--step-rank", "0"]``) and hands over to ``torch.distributed.run.run``:
the rendezvous, the workers, their restarts and the failure summary are torch's.

Exit status: torchrun's; 2 with a one-line reason on stderr for what inductor-step cannot step
(``--no-python``, ``-m MODULE``).
"""

from __future__ import annotations

import json
import os
import sys


def main(argv: list[str] | None = None) -> int:
    """Run the job; returns the launcher's exit status (0, or 1 when a rank failed)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    from torch.distributed import run as torchrun  # noqa: PLC0415

    args = torchrun.get_args_parser().parse_args(argv)
    if getattr(args, "no_python", False):
        print("inductor-step: --no-python runs a program, not a Python script; inductor-step steps a Python script",
              file=sys.stderr)
        return 2
    if getattr(args, "module", False):
        print(f"inductor-step: -m {args.training_script} runs a module; give inductor-step the script's path",
              file=sys.stderr)
        return 2
    _end_with_parent()
    agent_args = json.loads(os.environ.get("INDUCTOR_STEP_AGENT_ARGS", "[]"))
    args.training_script_args = [*agent_args, "--", args.training_script, *args.training_script_args]
    args.training_script = "inductor_step.tracer.agent"
    args.module = True
    try:
        torchrun.run(args)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 1
    except Exception as e:  # noqa: BLE001 - torch's ChildFailedError: its text is the ranks' failure table
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


def _end_with_parent(poll_s: float = 0.5) -> None:
    """The UI that started this launcher gone (killed, its terminal closed: the launcher is then
    re-parented): SIGTERM to ourselves, so torch's launcher stops every rank (SIGTERM, then SIGKILL
    after its grace period: a rank stuck in C code with the GIL held cannot end itself) and exits."""
    import signal  # noqa: PLC0415
    import threading  # noqa: PLC0415
    import time  # noqa: PLC0415

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, daemon=True, name="inductor-step-parent-watch").start()


if __name__ == "__main__":
    sys.exit(main())
