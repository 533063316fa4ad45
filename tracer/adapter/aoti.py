"""AOTInductor and the C++ wrapper: the AOTI calls observed, the flag that a compile is one, loading what it made, and a C++ wrapper's kernel built on its own for timing."""

from __future__ import annotations

import functools
import os
import tempfile
import threading
from typing import Any, Callable

import torch

from inductor_step.tracer.adapter.base import install_wrapper, log, wrapped_by_us

_INSIDE = threading.local()  # a hooked call under way on this thread (aoti_compile_and_package calls aot_compile)


def aot_compiling() -> bool:
    """Whether the compile on this thread is an AOTInductor compile (``V.aot_compilation``, set by
    ``torch._inductor.compile_fx.compile_fx_aot``); False where this torch does not say."""
    try:
        from torch._inductor.virtualized import V  # noqa: PLC0415

        return bool(V.aot_compilation)
    except Exception:  # noqa: BLE001
        return False


def _tensors(args: Any) -> list | None:
    """A flat list of positional example inputs, copied (None where one is not a tensor)."""
    out = []
    for a in args or ():
        if not isinstance(a, torch.Tensor):
            return None
        out.append(a.detach().clone(memory_format=torch.preserve_format))
    return out


def install_aoti_hook(on_start: Callable[[str, str | None], None],
                      on_done: Callable[[str, str, dict[str, Any]], None]) -> list[str]:
    """Observe the script's AOTInductor compiles: ``on_start(api, path)`` before one compiles (``path``:
    the package or ``.so`` path asked for, or None), ``on_done(api, path, info)`` after it returns
    (``path``: what torch returned; ``info``: ``inputs`` (copies of the example inputs, a list of tensors,
    or None), ``kwargs`` (whether there were keyword inputs), ``eager`` (the exported program's module,
    or None), ``device``).  ``api`` is ``"aoti_compile_and_package"`` or ``"aot_compile"``.

    Wraps ``torch._inductor.aoti_compile_and_package(exported_program, ..., package_path=None, ...)`` and
    ``torch._inductor.aot_compile(gm, args, kwargs=None, options=None)`` (torch/_inductor/__init__.py), so a
    script that imports them after the agent started gets the wrapped ones.  The hooks never stand in
    the script's way: an error inside them is logged.  Returns the names wrapped."""
    import torch._inductor as ind  # noqa: PLC0415

    wrapped = []

    def wrap(name: str, start: Callable[[tuple, dict], tuple[str | None, Any, Any]]) -> None:
        real = getattr(ind, name, None)
        if real is None or wrapped_by_us(real):
            return

        @functools.wraps(real)
        def hooked(*a: Any, **k: Any) -> Any:
            if getattr(_INSIDE, "on", False):  # the outer call reports this one
                return real(*a, **k)
            try:
                path, ex_args, eager = start(a, k)
                on_start(name, path)
            except Exception:  # noqa: BLE001
                log.debug("aoti hook", exc_info=True)
                ex_args, eager = None, None
            _INSIDE.on = True
            try:
                out = real(*a, **k)
            finally:
                _INSIDE.on = False
            try:
                path = out if isinstance(out, str) else next((p for p in out or [] if isinstance(p, str)
                                                              and p.endswith(".so")), None)
                inputs = _tensors(ex_args[0]) if ex_args else None
                device = next((str(t.device) for t in inputs or [] if isinstance(t, torch.Tensor)), "cpu")
                on_done(name, path, {"inputs": inputs, "kwargs": bool(ex_args and ex_args[1]), "eager": eager,
                                     "device": device})
            except Exception:  # noqa: BLE001
                log.debug("aoti hook", exc_info=True)
            return out

        install_wrapper(ind, name, hooked)
        wrapped.append(f"torch._inductor.{name}")

    def package_start(a: tuple, k: dict) -> tuple[str | None, Any, Any]:
        ep = a[0] if a else k.get("exported_program")
        ex = getattr(ep, "example_inputs", None)
        try:
            eager = SavedProgram.of(ep)
        except Exception:  # noqa: BLE001
            log.debug("exported program not saved", exc_info=True)
            eager = None
        return k.get("package_path"), (tuple(ex[0]), dict(ex[1] or {})) if ex else None, eager

    def aot_start(a: tuple, k: dict) -> tuple[str | None, Any, Any]:
        gm = a[0] if a else k.get("gm")
        args = a[1] if len(a) > 1 else k.get("args")
        kwargs = a[2] if len(a) > 2 else k.get("kwargs")
        options = (a[3] if len(a) > 3 else k.get("options")) or {}
        return options.get("aot_inductor.output_path"), (tuple(args or ()), dict(kwargs or {})), ModuleState.of(gm)

    wrap("aoti_compile_and_package", package_start)
    wrap("aot_compile", aot_start)
    return wrapped


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


class SavedProgram:
    """The exported program an AOTInductor package was compiled from, saved (``torch.export.save``) so the
    timing process can run it eagerly: ``ExportedProgram.module()`` itself does not pickle.  Calling it loads
    the program once (``torch.export.load(path).module()``) and runs it."""

    def __init__(self, path: str):
        self.path = path
        self._module: Any = None

    @classmethod
    def of(cls, ep: Any) -> "SavedProgram":
        import atexit  # noqa: PLC0415

        fd, path = tempfile.mkstemp(prefix="inductor-step-exported-", suffix=".pt2")
        os.close(fd)
        atexit.register(_remove, path)  # the agent's exit, after its last timing run
        torch.export.save(ep, path)
        return cls(path)

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "_module": None, "_ep": None}

    def __call__(self, *args: Any) -> Any:
        if self._module is None:
            self._module = torch.export.load(self.path).module()
        return self._module(*args)

    def tensor(self, fqn: str) -> Any:
        """The program's parameter, buffer or constant ``fqn`` (``"0.weight"``), or None."""
        if getattr(self, "_ep", None) is None:
            self._ep = torch.export.load(self.path)
        return self._ep.state_dict.get(fqn, self._ep.constants.get(fqn))


class ModuleState:
    """What the timing process gets of the module ``aot_compile`` compiled: its parameters and buffers by name
    (``tensor(fqn)``, for the wrapper's constants), since the exported GraphModule itself does not pickle; calling
    it raises TypeError (no eager run)."""

    def __init__(self, state: dict[str, Any]):
        self.state = state

    @classmethod
    def of(cls, gm: Any) -> "ModuleState":
        return cls({k: v.detach().clone() for k, v in gm.state_dict().items()} if hasattr(gm, "state_dict") else {})

    def tensor(self, fqn: str) -> Any:
        return self.state.get(fqn)

    def __call__(self, *args: Any) -> Any:
        raise TypeError("aot_compile's module is not sent to the timing process (it does not pickle): no eager run")


def load_aoti(path: str, device: str = "cpu") -> Callable[..., Any]:
    """A callable running what AOTInductor made: ``torch._inductor.aoti_load_package(path)`` for a ``.pt2``
    package, ``torch._export.aot_load(path, device)`` for a ``.so``.  Raises what torch raises."""
    if path.endswith(".so"):
        from torch._export import aot_load  # noqa: PLC0415

        return aot_load(path, device)
    return torch._inductor.aoti_load_package(path)


def cpp_kernel_binding(argtypes: list[str], source: str) -> Callable[..., Any]:
    """A C++ kernel's source (``extern "C" void kernel(...)``, after ``#include <torch/csrc/inductor/cpp_prefix.h>``)
    built into a Python callable taking tensors for its pointers, the way Inductor's Python wrapper builds
    each kernel (``async_compile.cpp_pybinding`` -> ``torch._inductor.codecache.CppPythonBindingsCodeCache
    .load_pybinding(argtypes, source)``; cached on disk by source).  ``argtypes``: the parameters' C types
    (``"float*"``, ``"const float*"``, ``"int64_t"``).  Raises what the build raises (g++ errors)."""
    from torch._inductor.codecache import CppPythonBindingsCodeCache  # noqa: PLC0415

    return CppPythonBindingsCodeCache.load_pybinding(argtypes, source)
