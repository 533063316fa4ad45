"""The run stage of an AOTInductor graph: its package (or ``.so``) loaded the way a deployment loads it and timed
whole, beside the exported program run eagerly."""

from __future__ import annotations

import os
import re
import threading
from typing import Any, Callable

import torch

from inductor_step.tracer import adapter
from inductor_step.tracer.timing.roofs import device_peaks
from inductor_step.tracer.timing.rounds import whole_graph_rounds

CPP_WRAPPER_NOTE = ("the C++ wrapper (cpp_wrapper=True) calls its kernels from compiled C++, where no Python call can be "
                    "timed one at a time, and its kernels' symbols are hidden in its .so: the graph is timed whole")
KERNELS_NOTE = ("AOTInductor's model calls its kernels from C++ inside its .so, where no Python call can be timed "
                "one at a time: the model is timed whole")


def time_aoti(path: str, eager: Any, device: str, script: dict[str, Any] | None = None,
              cancel: threading.Event | None = None, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Time what AOTInductor made at ``path`` (a ``.pt2`` package through ``torch._inductor.aoti_load_package``,
    a ``.so`` through ``torch._export.aot_load``; tracer.adapter.load_aoti) on the example inputs it was
    exported with (``script["inputs"]``: position -> tensor, kept by tracer.capture_aoti), and ``eager`` (the
    exported program's module, or None) on the same inputs.

    Returns the shape of :func:`tracer.timing.harness.time_graph`'s result: ``compiled_ms``, ``eager_ms``
    (medians over rounds that agree, ms; :func:`tracer.timing.rounds.whole_graph_rounds`), ``kernels`` (empty,
    with ``kernels_note`` saying why) and ``kernel_sum_ms`` None, ``aoti`` (what was loaded and how), and
    ``settled``/``warnings`` (tracer.timing.harness.settled).  Raises ValueError without inputs, and whatever
    loading or running the package raises."""
    from inductor_step.tracer.timing.harness import settled  # noqa: PLC0415
    from inductor_step.tracer.timing.rounds import cpu_quantiles  # noqa: PLC0415

    kept = (script or {}).get("inputs") or {}
    if not kept:
        raise ValueError("no example inputs were kept for this package")
    args = [kept[i] for i in sorted(kept)]
    cuda = device.startswith("cuda")
    if progress is not None:
        progress(f"loading {os.path.basename(path)} ({'aoti_load_package' if path.endswith('.pt2') else 'aot_load'})")
    runner = adapter.load_aoti(path, device)
    b = adapter.benchmarker()

    def bench(fn: Callable) -> float:
        return cpu_quantiles(b, fn, warmup_ms=5)[0]

    with torch.no_grad():
        runner(*args)  # the first call loads constants and warms up
        eager_fn = None
        eager_why = "no exported program was kept"
        if eager is not None:
            try:
                eager(*args)
                eager_fn = lambda: eager(*args)  # noqa: E731
            except Exception as e:  # noqa: BLE001 - the eager side is a comparison only
                eager_why = f"{type(e).__name__}: {e}"
        if progress is not None:
            progress("timing the package in rounds")
        rounds = whole_graph_rounds(lambda: runner(*args), eager_fn, cuda, bench)
    out: dict[str, Any] = {"compiled_ms": rounds["compiled_ms"], "eager_ms": rounds.get("eager_ms"),
                           "kernel_sum_ms": None, "kernels": [], "kernels_note": KERNELS_NOTE,
                           "aoti": {"path": path, "loaded_with": "torch._inductor.aoti_load_package" if path.endswith(".pt2")
                                    else "torch._export.aot_load",
                                    "eager": "the exported program's module (ExportedProgram.module())" if eager_fn
                                    else f"not timed ({eager_why})"},
                           "inputs": f"the example inputs the program was exported with ({len(args)} tensors)",
                           "peak": device_peaks(device), "cancelled": False,
                           "method": "triton.testing.do_bench (median, L2 flushed)" if cuda else
                           "benchmarker.benchmark_cpu (median, 20-80% spread of the same calls)",
                           "threads": torch.get_num_threads(), "pid": os.getpid(),
                           "in_graph": "AOTInductor: not applicable", "in_graph_cupti": "AOTInductor: not applicable",
                           "eager_nodes_ms": {}, "eager_nodes": "not measured: AOTInductor package"}
    out["graph_rounds"] = {k: v for k, v in rounds.items() if k.endswith("_rounds_ms") or k in ("rounds_stable", "load")}
    out.update(settled(rounds, rounds["compiled_ms"], 0.0, cuda))
    if not cuda:
        try:
            out = _package_kernel_times(path, out, args, eager, runner, cancel, progress)
        except Exception as e:  # noqa: BLE001 - the package's own time stands
            out["kernels_note"] = f"{KERNELS_NOTE}; replaying its calls one by one failed ({type(e).__name__}: {e})"
    return out


_CONSTANT = re.compile(r"auto& (constant_\w+) = constants_->at\((\d+)\);")
_FQN = re.compile(r'constants_info_\[(\d+)\]\.original_fqn = "([^"]*)";')


def _package_kernel_times(path: str, out: dict[str, Any], args: list, eager: Any, runner: Any,
                          cancel: threading.Event | None, progress: Callable[[str], None] | None) -> dict[str, Any]:
    """``out`` with each call of the package's C++ wrapper timed alone (tracer.timing.cpp_kernels), the wrapper
    and kernels read from the package (``data/aotinductor/<model>/*.wrapper.cpp``, ``*.kernel.cpp``) and the
    constants (``constant_0_weight = constants_->at(0)``, ``constants_info_[0].original_fqn = "0.weight"``) from
    the exported program (``aot_compile``'s ``.so``: its NAME.wrapper.cpp beside it, the module's state).  Raises
    ValueError where the package has no single wrapper source."""
    import zipfile  # noqa: PLC0415

    from inductor_step.tracer.timing.cpp_kernels import _check, replay_calls, with_kernel_times  # noqa: PLC0415

    if path.endswith(".so"):  # aot_compile: the sources lie beside the .so (NAME.wrapper.so <- NAME.wrapper.cpp)
        import glob  # noqa: PLC0415

        kernel = glob.glob(os.path.join(os.path.dirname(path), "*.kernel.cpp"))
        with open(path[:-3] + ".cpp", encoding="utf-8") as f:
            source = f.read() + "\n"
        if len(kernel) == 1:
            with open(kernel[0], encoding="utf-8") as f:
                source += f.read()
    else:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            wrapper = [n for n in names if n.endswith(".wrapper.cpp")]
            kernel = [n for n in names if n.endswith(".kernel.cpp")]
            if len(wrapper) != 1:
                raise ValueError(f"{len(wrapper)} wrapper sources in the package")
            source = z.read(wrapper[0]).decode() + "\n" + (z.read(kernel[0]).decode() if len(kernel) == 1 else "")
    fqn = dict(_FQN.findall(source))
    known = {}
    for name, i in _CONSTANT.findall(source):
        t = eager.tensor(fqn[i]) if eager is not None and i in fqn and hasattr(eager, "tensor") else None
        if t is not None:
            known[name] = t.detach()
    if progress is not None:
        progress("replaying the package's C++ wrapper calls one by one (its C++ kernels built on their own)")
    with torch.no_grad():
        calls, outputs = replay_calls(source, [a.clone() for a in args], known)
        check = _check(outputs, runner(*args))
    out = with_kernel_times(out, source, calls, check, cancel)
    out["kernels_note"] = ("read from the package's wrapper source: " + out["kernels_note"] +
                           f"; constants from the exported program's state ({len(known)} of {len(_CONSTANT.findall(source))})")
    return out


def mark_cpp_wrapper(output_path: str, result: dict[str, Any], device: str = "cpu",
                     cancel: threading.Event | None = None,
                     progress: Callable[[str], None] | None = None,
                     script: dict[str, Any] | None = None) -> dict[str, Any]:
    """``result`` (tracer.timing.harness.time_graph's, for the output module at ``output_path``) where the
    module's wrapper is C++ (``cpp_wrapper=True``) and no kernel call was timed (its kernels run inside compiled
    code, so an empty list is not "no kernels"): on the CPU each call timed alone by replaying the wrapper
    (tracer.timing.cpp_kernels); elsewhere, or where the replay fails, ``kernels_note`` says why there are no
    kernel times and ``kernel_sum_ms`` is None."""
    from inductor_step.tracer.codeparse_cpp import is_cpp_wrapper  # noqa: PLC0415

    try:
        with open(output_path, encoding="utf-8") as f:
            cpp = is_cpp_wrapper(f.read())
    except OSError:
        cpp = False
    if not cpp or result.get("kernels"):
        return result
    if not device.startswith("cuda"):
        try:
            from inductor_step.tracer.timing.cpp_kernels import time_cpp_wrapper_kernels  # noqa: PLC0415

            return time_cpp_wrapper_kernels(output_path, result, cancel=cancel, progress=progress, script=script)
        except Exception as e:  # noqa: BLE001 - the graph's own times stand
            result.update(kernels=[], kernel_sum_ms=None, kernels_note=f"{CPP_WRAPPER_NOTE} (replaying its calls one by "
                          f"one failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})")
            return result
    result.update(kernels_note=CPP_WRAPPER_NOTE + " (a GPU wrapper's Triton launches are not replayed)",
                  kernel_sum_ms=None)
    return result
