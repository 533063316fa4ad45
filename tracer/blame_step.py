"""One bisect step of blame, a process of its own: the script run again under one setting of torch's compiler
bisector (``TORCH_BISECT_BACKEND`` / ``TORCH_BISECT_SUBSYSTEM`` / ``TORCH_BISECT_MAX``, read by torch at import) and
optional Inductor settings, each graph's first call compared with eager; the answer written as JSON.

Started by :mod:`tracer.blame` as ``python -m inductor_step.tracer.blame_step RESULT.json SCRIPT ARGS...`` with
``INDUCTOR_STEP_BLAME_STEP`` holding ``{"target": "[0/0]" | null, "settings": {name: value}}``.  With a target the
process ends as soon as that graph's first call was compared (the rest of the script does not run).  In a torchrun
job of its own (``RANK`` set: a blame of a job) every rank runs and compares alike; rank 0 alone writes RESULT.json.

RESULT.json: ``{"graphs": {compile id: compare answer | {"error": ...}}, "applications": {subsystem: [{backend,
compile_id, what}...]}, "custom_passes": {setting: name}, "rewrites": {setting: {changed, added, removed}} (the FX nodes
each user pass rewrote), "ended": "target" | "script" | "script_error",
"error": str}``.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import traceback
from typing import Any

ENV = "INDUCTOR_STEP_BLAME_STEP"


def _write(path: str, result: dict[str, Any]) -> None:
    from inductor_step.tracer.numerics import _clean  # noqa: PLC0415 - JSON has no inf

    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(_clean(result), f)
    os.replace(tmp, path)


def main(argv: list[str]) -> int:
    """Run one step (see the module's docstring); returns the exit status (0: the answer was written)."""
    if len(argv) < 2:
        print("usage: python -m inductor_step.tracer.blame_step RESULT.json SCRIPT [ARGS...]", file=sys.stderr)
        return 2
    out_path, script, args = argv[0], argv[1], argv[2:]
    spec = json.loads(os.environ.get(ENV) or "{}")
    target = spec.get("target")
    import torch  # noqa: F401, PLC0415 - the bisector's environment is read as torch imports it

    from inductor_step.tracer.adapter import blame  # noqa: PLC0415

    result: dict[str, Any] = {"graphs": {}, "applications": {}, "custom_passes": {}, "rewrites": {}, "ended": "script"}
    blame.install_application_log(result["applications"])

    # a rank of a torchrun job (the step is a job of its own): every rank compares alike (a graph's collectives need
    # every rank), rank 0 alone answers
    answers = os.environ.get("RANK", "0") == "0"

    def on_first_call(cid: str, compare: Any) -> None:
        result["custom_passes"].update(blame.custom_passes())
        if target and cid != target:
            return
        try:
            result["graphs"][cid] = compare()
        except Exception as e:  # noqa: BLE001 - the step's answer: it could not compare
            result["graphs"][cid] = {"error": f"{type(e).__name__}: {e}".splitlines()[0][:500],
                                     "traceback": traceback.format_exc()[-3000:]}
        if target:
            result["ended"] = "target"
            if answers:
                _write(out_path, result)
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)

    blame.install_compare_hook(on_first_call, spec.get("settings") or {}, result["rewrites"])
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit:
        pass
    except BaseException as e:  # noqa: BLE001 - a compile that crashed under this setting: the step's verdict
        result["ended"] = "script_error"
        text = f"{type(e).__name__}: {e}".strip()
        result["error"] = text.splitlines()[0][:500] if str(e).strip() else type(e).__name__
        result["traceback"] = traceback.format_exc()[-3000:]
    if answers:
        _write(out_path, result)
    return 0




# ----------------------------------------------------------------------------- the warm parent of the steps

def zygote() -> int:
    """``python -m inductor_step.tracer.blame_step --zygote``: import torch, Dynamo and Inductor once, then for each
    request line on stdin (``{"out", "script", "argv", "env", "stderr"}``) fork a step (:func:`main` under that
    environment, its stderr to the file ``stderr``), print ``{"pid": N}`` at once and ``{"pid": N, "exit": rc}`` when
    it ends.  A step's process is this one's child, so the steps pay no import; the driver ends a step by its pid."""
    from inductor_step.tracer.adapter.blame import preload, reset_bisector  # noqa: PLC0415

    preload()
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        try:
            req = json.loads(line)
        except ValueError:
            continue
        pid = os.fork()
        if pid == 0:  # the step
            try:
                fd = os.open(req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.dup2(fd, 2)
                null = os.open(os.devnull, os.O_RDWR)
                os.dup2(null, 0)
                os.dup2(null, 1)
                for k in [k for k in os.environ if k.startswith("TORCH_BISECT_")]:
                    del os.environ[k]
                os.environ.update(req.get("env") or {})
                if req.get("cwd"):
                    os.chdir(req["cwd"])
                reset_bisector()
                code = main([req["out"], req["script"], *(req.get("argv") or [])])
            except BaseException:  # noqa: BLE001
                traceback.print_exc()
                code = 1
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        print(json.dumps({"pid": pid}), flush=True)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"pid": pid, "exit": os.waitstatus_to_exitcode(status)}), flush=True)
    return 0


if __name__ == "__main__":
    code = zygote() if sys.argv[1:2] == ["--zygote"] else main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
