"""The timing worker process (started by :class:`tracer.timing.isolate.TimingWorker`).

``python -m inductor_step.tracer.timing.worker FD FAULT_FILE``: reads job files (``torch.save``'d
dicts of :func:`tracer.timing.harness.time_graph`'s arguments) one path a line from stdin, times each
and writes JSON lines to file descriptor FD: ``{"progress": text}`` while it works, then
``{"result": {...}}`` or ``{"error": "Type: message", "traceback": ...}``.  A line ``cancel`` on
stdin stops the graph being timed between kernels.  ``faulthandler`` writes to FAULT_FILE, so a
crash leaves the Python stack that the parent turns into the reason.  The worker never outlives the
agent that started it (:func:`tracer.lifetime.die_with_parent`).
"""

from __future__ import annotations

import faulthandler
import json
import os
import queue
import sys
import threading
import traceback
from typing import Any, Callable


def main(argv: list[str]) -> int:
    """Serve job files from stdin until it closes (see the module's docstring); returns the exit status."""
    from inductor_step.tracer.lifetime import die_with_parent  # noqa: PLC0415

    die_with_parent()
    out = os.fdopen(int(argv[0]), "w", encoding="utf-8", buffering=1)
    fault = open(argv[1], "w", encoding="utf-8")  # noqa: SIM115 - open for the process's life
    faulthandler.enable(file=fault, all_threads=False)
    jobs: queue.Queue[str | None] = queue.Queue()
    cancel = threading.Event()

    def read_stdin() -> None:
        for line in sys.stdin:
            line = line.strip()
            if line == "cancel":
                cancel.set()
            elif line:
                jobs.put(line)
        jobs.put(None)

    threading.Thread(target=read_stdin, daemon=True).start()

    def send(msg: dict) -> None:
        out.write(json.dumps(msg, default=str) + "\n")
        out.flush()

    import torch  # noqa: PLC0415

    from inductor_step.tracer import adapter  # noqa: PLC0415
    from inductor_step.tracer.graph_device import make_current  # noqa: PLC0415
    from inductor_step.tracer.timing.harness import time_graph  # noqa: PLC0415
    from inductor_step.tracer.timing.ingraph import cupti_detached  # noqa: PLC0415

    del torch, make_current, time_graph, cupti_detached  # loaded before the first job; used by _job and its parts
    adapter.register_inductor_ops()

    while True:
        path = jobs.get()
        if path is None:
            return 0
        cancel.clear()
        try:
            _job(path, send, cancel)
        except BaseException as e:  # noqa: BLE001 - reported to the agent as this graph's failure
            send({"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()})


def _job(path: str, send: Callable[[dict], None], cancel: threading.Event) -> None:
    """Time the job file ``path`` (a pair of graphs, an AOTInductor package or one graph, a what-if variant
    compared with its original too) and send its result; raises what loading or timing raises."""
    import torch  # noqa: PLC0415

    from inductor_step.tracer.timing.ingraph import cupti_detached  # noqa: PLC0415

    send({"progress": "loading the graph's inputs"})
    spec = torch.load(path, weights_only=False)
    side_note = _apply_settings(spec)
    if spec.get("pair"):  # two graphs a diff compares, timed round by round (r in the diff)
        from inductor_step.tracer.timing.interleave import pair_rounds  # noqa: PLC0415

        p = spec["pair"]
        with cupti_detached(str(spec["device"])):  # (see below)
            send({"result": pair_rounds(spec["output_path"], p["output_path"], spec.get("eager_gm"),
                                        p.get("eager_gm"), spec.get("script"), p.get("script"), cancel=cancel,
                                        progress=lambda text: send({"progress": text}))})
        return
    # the graphs timed before this one ran profiler sessions in this process (in-graph kernel times under
    # CUPTI), which leave CUPTI attached: every kernel launch of this graph would pay for its callbacks
    with cupti_detached(str(spec["device"])) as cupti:
        result = _time_spec(spec, send, cancel)
    result["cupti"] = cupti
    if side_note:
        result["eager_user_kernels"] = side_note
    if spec.get("compare"):  # a what-if variant: its outputs against the original's
        _compare_variant(spec, result, send)
    send({"result": result})


def _apply_settings(spec: dict[str, Any]) -> str | None:
    """Put this process in the script's state for the job ``spec``: its device, matmul precision, cuDNN's TF32 and
    the user Triton kernels of its eager graph (what restoring them says, or None)."""
    import torch  # noqa: PLC0415

    from inductor_step.tracer.graph_device import make_current  # noqa: PLC0415

    make_current(spec.get("device"))  # this process starts on cuda:0; rank 1's graph is on cuda:1 (39.3)
    if spec.get("float32_matmul_precision"):
        torch.set_float32_matmul_precision(spec["float32_matmul_precision"])
    if spec.get("cudnn_allow_tf32") is not None:
        torch.backends.cudnn.allow_tf32 = spec["cudnn_allow_tf32"]
    side_note = None
    if spec.get("triton_side_table"):  # user Triton kernels of the eager graph (tracer.adapter.user_triton)
        from inductor_step.tracer import adapter  # noqa: PLC0415

        side_note = adapter.restore_triton_side_table(spec["triton_side_table"])
    return side_note


def _time_spec(spec: dict[str, Any], send: Callable[[dict], None], cancel: threading.Event) -> dict[str, Any]:
    """Time the job's compiled graph against its eager: an AOTInductor package or .so whole, else the output
    module (tracer.timing.harness.time_graph, a C++ wrapper's marked)."""
    from inductor_step.tracer.timing.harness import time_graph  # noqa: PLC0415

    if spec["output_path"].endswith((".pt2", ".so")):  # an AOTInductor package or .so: timed whole
        from inductor_step.tracer.timing.aoti import time_aoti  # noqa: PLC0415

        return time_aoti(spec["output_path"], spec.get("eager_gm"), spec["device"], script=spec.get("script"),
                         cancel=cancel, progress=lambda text: send({"progress": text}))
    from inductor_step.tracer.timing.aoti import mark_cpp_wrapper  # noqa: PLC0415

    return mark_cpp_wrapper(spec["output_path"], time_graph(
        spec["output_path"], spec.get("eager_gm"), spec["device"], cancel=cancel, num_gb=spec.get("num_gb"),
        script=spec.get("script"), progress=lambda text: send({"progress": text}),
        dynamo=spec.get("dynamo")), spec["device"],
        cancel=cancel, progress=lambda text: send({"progress": text}), script=spec.get("script"))


def _compare_variant(spec: dict[str, Any], result: dict[str, Any], send: Callable[[dict], None]) -> None:
    """A what-if variant's ``result`` gets its outputs compared with its original's and eager's (``numerics``) and
    the three timed round by round (``interleaved``); each says why where it could not be had."""
    send({"progress": "comparing outputs with the original and eager"})
    try:
        from inductor_step.tracer.whatif import compare_outputs  # noqa: PLC0415

        result["numerics"] = compare_outputs(spec["output_path"], spec["compare"]["original_path"],
                                             spec["compare"].get("eager_gm"), spec.get("script"),
                                             random_ops=spec["compare"].get("random_ops"))
    except Exception as e:  # noqa: BLE001
        result["numerics"] = {"unavailable": f"{type(e).__name__}: {e}"}
    send({"progress": "timing the variant, the original and eager round by round"})
    try:  # the setting's effect, measured at one moment of the machine
        from inductor_step.tracer.whatif import interleaved_rounds  # noqa: PLC0415

        result["interleaved"] = interleaved_rounds(spec["output_path"], spec["compare"]["original_path"],
                                                   spec["compare"].get("eager_gm"), spec.get("script"))
    except Exception as e:  # noqa: BLE001
        result["interleaved"] = {"unavailable": f"{type(e).__name__}: {e}"}


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
