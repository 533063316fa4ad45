"""AOTAutograd's joint graph as the min-cut partitioner got it, kept to be partitioned again under other ``torch._functorch.config`` settings (``activation_memory_budget``)."""

from __future__ import annotations

import logging
from typing import Any, Callable

from inductor_step.tracer.adapter.base import install_wrapper, wrapped_by_us
from inductor_step.session.format import PARTITION_SETTINGS as FUNCTORCH_SETTINGS


def functorch_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``settings`` that are :data:`FUNCTORCH_SETTINGS` (``functorch.`` prefix allowed)."""
    return {k.removeprefix("functorch."): v for k, v in settings.items()
            if k.removeprefix("functorch.") in FUNCTORCH_SETTINGS}


def install_partition_hook(on_joint: Callable[[dict[str, Any]], None]) -> bool:
    """Wrap ``torch._inductor.compile_fx.min_cut_rematerialization_partition`` (compile_fx's ``partition_fn`` calls
    it by that module-level name after the joint graph passes): every call first gives ``on_joint`` a copy of the
    joint graph (``{"gm", "inputs", "compiler", "kw"}``: a GraphModule sharing the original's attributes and node
    meta, fake values included, so the partitioner's size estimates work on it again).  False where torch has no
    such function."""
    from torch._inductor import compile_fx as cfx  # noqa: PLC0415

    orig = getattr(cfx, "min_cut_rematerialization_partition", None)
    if orig is None or wrapped_by_us(orig):
        return orig is not None

    def partition(joint_module: Any, joint_inputs: Any, compiler: str = "inductor", **kw: Any) -> Any:
        try:
            on_joint({"gm": _copy(joint_module), "inputs": joint_inputs, "compiler": compiler, "kw": dict(kw),
                      "partition": orig})
        except Exception:  # noqa: BLE001 - never in the script's way
            logging.getLogger("inductor_step").debug("joint graph copy", exc_info=True)
        return orig(joint_module, joint_inputs, compiler, **kw)

    install_wrapper(cfx, "min_cut_rematerialization_partition", partition)
    return True


def _copy(gm: Any) -> Any:
    import torch  # noqa: PLC0415

    g = torch.fx.Graph()
    g.output(g.graph_copy(gm.graph, {}))
    return torch.fx.GraphModule(gm, g)


def partition_again(joint: dict[str, Any], settings: dict[str, Any]) -> tuple[Any, Any]:
    """The forward and backward GraphModules the min-cut partitioner makes of a kept joint graph
    (:func:`install_partition_hook`) under ``torch._functorch.config.patch(settings)``.  Raises what it raises."""
    import torch  # noqa: PLC0415

    with torch._functorch.config.patch(settings):
        return joint["partition"](_copy(joint["gm"]), joint["inputs"], joint["compiler"], **joint["kw"])
