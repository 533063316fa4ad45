"""One kernel's real arguments saved at its launch: the graph's output module run once on the script's own
first-call inputs with the kernel hooked; its arguments are saved (``torch.save``) as they were when it launched, and
its outputs as it left them, for the standalone repro (``tracer.kernel_repro``, ``tracer.cpp_repro``) to load and
check against.  Runs in the agent (live); asked for by ``X`` in pane 6 or ``--save-inputs KERNEL|top``."""

from __future__ import annotations

import os
import threading
import traceback
from typing import Any

import torch

from inductor_step.session.format import GraphKey
from inductor_step.tracer.graph_device import on_graph_device

SAVE_ENV = "INDUCTOR_STEP_SAVE_INPUTS"  # --save-inputs: a kernel name (or part of one), or "top"
DIR_ENV = "INDUCTOR_STEP_SAVE_INPUTS_DIR"  # where: the session's repros/ folder
FORMAT = 1  # the saved file's layout (see :func:`save_kernel_inputs`)
OUT_PREFIXES = ("out_ptr", "in_out_ptr")  # Inductor's names for the pointers a kernel writes


def inputs_file(out_dir: str, kernel: str) -> str:
    """Where kernel ``kernel``'s saved arguments go: ``out_dir/<kernel>.inputs.pt`` (beside its repro)."""
    return os.path.join(out_dir, f"{kernel}.inputs.pt")


def _keep(t: torch.Tensor) -> dict[str, Any]:
    """A CPU copy of the memory a strided tensor spans (also a view that overlaps or skips elements):
    ``flat`` (1-D) with ``sizes``/``strides`` to view it again, ``dtype`` and the tensor's ``device``."""
    t = t.detach()
    need = 0 if t.numel() == 0 else 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride()))
    flat = torch.as_strided(t, (need,), (1,), t.storage_offset()).to("cpu", copy=True)
    return {"flat": flat, "sizes": list(t.shape), "strides": list(t.stride()), "dtype": str(t.dtype).replace("torch.", ""),
            "device": str(t.device)}


def _value(x: Any) -> dict[str, Any]:
    if isinstance(x, torch.Tensor) and x.layout == torch.strided:
        return {"tensor": _keep(x)}
    if isinstance(x, (bool, int, float, str)) or x is None:
        return {"value": x}
    return {"value": None, "unsaved": type(x).__name__}


def _sync(x: Any) -> None:
    if isinstance(x, torch.Tensor) and x.is_cuda:
        torch.cuda.synchronize(x.device)


def written_params(backend: str, source: str, params: list[str]) -> set[int]:
    """Indices of the kernel parameters it writes: Inductor's ``out_ptr``/``in_out_ptr`` names, and in C++
    every pointer not declared ``const`` (a C++ template kernel names its output as it likes: flex attention's
    ``float* output``)."""
    out = {i for i, n in enumerate(params) if n.startswith(OUT_PREFIXES)}
    if backend == "cpp":
        from inductor_step.tracer.links import _CPP_DEF  # noqa: PLC0415

        m = _CPP_DEF.search(source)
        decls = [p.strip() for p in m.group(1).split(",") if p.strip()] if m else []
        out |= {i for i, d in enumerate(decls) if "*" in d and not d.startswith("const ")}
    return out


def save_kernel_inputs(output_path: str, kernel: str, out_path: str, script: dict[str, Any] | None) -> dict[str, Any]:
    """Run graph ``output_path`` (Inductor's output-code file) once on the script's first-call inputs
    (``script["inputs"]``: position -> tensor, tracer.timing.script_inputs; where one is missing the
    output module's own ``get_args()`` random tensor stands in, and ``how`` says so) and save kernel
    ``kernel``'s first launch to ``out_path``: ``{"format", "kernel", "backend", "args": [{"tensor": {flat,
    sizes, strides, dtype, device}} | {"value": int/float}], "params", "outputs": {index: tensor} (the
    ``out_ptr``/``in_out_ptr`` arguments after the launch), "how", "torch"}``.  Returns ``path``, ``bytes``
    (the file's size), ``tensors``, ``real`` (every graph input was the script's own) and ``how``; raises
    LookupError when the graph never launches ``kernel``, and whatever loading or running the module raises."""
    from inductor_step.tracer import adapter  # noqa: PLC0415
    from inductor_step.tracer.codeparse import parse_wrapper  # noqa: PLC0415
    from inductor_step.tracer.links import _params  # noqa: PLC0415
    from inductor_step.tracer.timing.harness import _graph_args, _use_script_inputs  # noqa: PLC0415
    from inductor_step.tracer.timing.hooks import _hooked  # noqa: PLC0415

    with open(output_path, encoding="utf-8") as f:
        source = f.read()
    parsed = {k["name"]: k for k in parse_wrapper(source)}
    if kernel not in parsed:
        raise LookupError(f"{kernel} is not a kernel of this graph's output code")
    backend = parsed[kernel]["backend"]
    params = _params(backend, parsed[kernel]["source"]) if backend in ("cpp", "triton") else []
    written = written_params(backend, parsed[kernel]["source"], params)
    mod = adapter.load_output_module(output_path)
    got: dict[str, Any] = {}

    def hook(name: str, fn: Any, a: tuple, k: dict) -> Any:
        if name != kernel or got:
            return fn(*a, **k)
        for x in a:
            _sync(x)
        got["args"] = [_value(x) for x in a]
        out = fn(*a, **k)
        for x in a:
            _sync(x)
        names = params[: len(a)]  # the kernel's parameters, in the order the wrapper passes them
        got["outputs"] = {str(i): _keep(x) for i, x in enumerate(a)
                          if isinstance(x, torch.Tensor) and i < len(names) and i in written}
        got["names"] = names[: len(a)]
        return out

    with torch.no_grad(), adapter.stand_ins_in_module(mod, source):
        args = _graph_args(mod)
        n_tensors = sum(1 for t in args if isinstance(t, torch.Tensor))
        kept = (script or {}).get("inputs") or {}
        ints, floats = _use_script_inputs(args, kept)
        with _hooked(mod, {n: k["backend"] for n, k in parsed.items()}, hook):
            mod.call(list(args))
    if not got:
        raise LookupError(f"{kernel} was not launched when the graph ran")
    own = ints + floats
    if not kept:
        how = "the graph ran on random inputs of its compiled shapes (none of the script's were given)"
    elif own == n_tensors:
        how = f"the graph ran on the script's own inputs of its first call (all {n_tensors} tensors)"
    else:
        how = (f"the graph ran on the script's own inputs of its first call for {own} of {n_tensors} tensors; "
               "the rest were random (over the agent's keep budget, tracer.timing.INPUT_BYTES)")
    data = {"format": FORMAT, "kernel": kernel, "backend": backend, "args": got["args"], "params": got["names"],
            "outputs": got["outputs"], "how": how, "torch": str(torch.version.__version__)}
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    torch.save(data, out_path)
    return {"path": os.path.abspath(out_path), "bytes": os.path.getsize(out_path),
            "tensors": sum(1 for v in got["args"] if "tensor" in v), "real": bool(kept) and own == n_tensors,
            "how": how}


def _graph_of(graphs: dict[tuple[str, str], Any], key: str | None,
              kernel: str) -> tuple[tuple[str, str], dict[str, Any]] | None:
    """The graph of ``graphs`` (AgentState's: ``(cid, kind)`` -> its state) whose output code defines ``kernel`` (the
    one named ``key``, ``"[0/0] forward"``, when given), with its key."""
    want = GraphKey.parse(key).pair if key else None
    for (cid, kind), g in list(graphs.items()):
        path = g.get("output_path")
        if not path or (want and (cid, kind) != want):
            continue
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError:
            continue
        if f"\n{kernel} = " in text:
            return (cid, kind), g
    return None


def save_for(state: Any, run_lock: Any, key: str | None, kernel: str, out_dir: str) -> dict[str, Any]:
    """Save ``kernel``'s arguments from the agent's ``state`` (tracer.agent_state.AgentState: its graphs, the
    script's calls, the stream) and send the ``inputs_saved`` message (with ``error`` when it could not); returns
    the message.  Holds ``run_lock`` (the timing part's) while it runs the kernel: not while a timing run uses the
    device."""
    from inductor_step.tracer import adapter  # noqa: PLC0415

    found = _graph_of(state.graphs, key, kernel)
    msg: dict[str, Any] = {"type": "inputs_saved", "kernel": kernel}
    if found is None:
        named = GraphKey.parse(key or "?")
        msg.update(compile_id=named.compile_id, graph_kind=named.kind_text or "?",
                   error=f"no compiled graph{' ' + key if key else ''} of this process defines {kernel}")
        state.send(msg)
        return msg
    (cid, kind), g = found
    msg.update(compile_id=cid, graph_kind=kind)
    script = state.script_calls.get(adapter.output_module_key(g["output_path"]))
    if not (script or {}).get("inputs"):  # random inputs are what the repro allocates anyway: say why not real
        msg["error"] = (f"the script has not called {cid} {kind} yet (its inputs are kept at its first call): let it "
                        "run past the compile (n), then ask again" if not (script or {}).get("calls") else
                        f"the agent kept none of the script's inputs of {cid} {kind} "
                        f"({(script or {}).get('status') or 'none were tensors'})")
        state.send(msg)
        return msg
    with run_lock:
        try:
            with on_graph_device(g.get("device")):  # this thread starts on cuda:0
                msg.update(save_kernel_inputs(g["output_path"], kernel, inputs_file(out_dir, kernel), script))
        except Exception as e:  # noqa: BLE001 - said in the message, never the agent's end
            msg.update(error=f"{type(e).__name__}: {e}", traceback=traceback.format_exc())
    state.send(msg)
    return msg


def serve(state: Any, run_lock: Any, cmd: dict[str, Any]) -> None:
    """The ``save_inputs`` command (``X`` in pane 6): :func:`save_for` on a thread of its own."""
    threading.Thread(target=save_for, args=(state, run_lock, cmd.get("graph"), str(cmd.get("kernel")),
                                            str(cmd.get("dir"))), daemon=True).start()


def _top_kernel(runs: list[dict[str, Any]]) -> tuple[str, str] | None:
    best: tuple[float, str, str] | None = None
    for m in runs:
        for k in m.get("kernels") or []:
            if k.get("backend") in ("triton", "cpp") and k.get("median_ms") is not None:
                cand = (float(k["median_ms"]), str(GraphKey.of(m)), k["name"])
                best = cand if best is None or cand[0] > best[0] else best
    return (best[1], best[2]) if best else None


def run_then_save(state: Any, timing: Any) -> None:
    """After the script (``--save-inputs SPEC``): time the graphs first (the timing part ``timing``'s ``run_all``)
    when ``--run`` asked for it, then save the arguments of kernel SPEC (the first kernel whose name contains it),
    or with ``top`` of the kernel with the largest run-stage median; a one-line ``inputs_saved`` error when there is
    none.  ``state``: the agent's tracer.agent_state.AgentState."""
    spec = os.environ.get(SAVE_ENV, "")
    out_dir = os.environ.get(DIR_ENV) or os.path.join(os.getcwd(), "repros")
    runs: list[dict[str, Any]] = []
    if state.options.run_at_end:
        def keep_run(msg: dict[str, Any]) -> None:
            if msg.get("type") == "run" and not msg.get("error"):
                runs.append(dict(msg))

        with state.watching(keep_run):
            timing.run_all()
    if spec == "top":
        top = _top_kernel(runs)
        if top is None:
            state.send({"type": "inputs_saved", "compile_id": "?", "graph_kind": "?", "kernel": "top",
                        "error": "--save-inputs top picks the kernel with the largest run-stage time and "
                                       "nothing was timed: with --headless add --run (in the UI: r, then X on the "
                                       "kernel in pane 6)"})
            return
        save_for(state, timing.run_lock, top[0], top[1], out_dir)
        return
    from inductor_step.tracer.codeparse import parse_wrapper  # noqa: PLC0415

    for (cid, kind), g in list(state.graphs.items()):
        try:
            with open(g.get("output_path") or "", encoding="utf-8") as f:
                names = [k["name"] for k in parse_wrapper(f.read()) if k["backend"] in ("cpp", "triton")]
        except OSError:
            continue
        hit = next((n for n in names if n == spec), None) or next((n for n in names if spec in n), None)
        if hit:
            save_for(state, timing.run_lock, f"{cid} {kind}", hit, out_dir)
            return
    state.send({"type": "inputs_saved", "compile_id": "?", "graph_kind": "?", "kernel": spec,
                "error": f"--save-inputs {spec}: no Triton or C++ kernel of this run's graphs has it in its "
                               "name"})
