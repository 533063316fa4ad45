"""What a training graph's forward saves for its backward, and what the backward recomputes (no torch, no Textual).

AOTAutograd's partitioner splits the joint graph: the forward returns the user's outputs (after any mutated
inputs) and then the tensors the backward needs; the backward takes those as its first placeholders, then
``tangents_*``.  Both graphs' post-grad FX nodes are in their AOT stops (shape, stride, dtype, stack trace),
and the forward's wrapper ``return`` names the buffers that hold them (session.memory.Plan.outputs).
Bytes are planned from those layouts, not measured.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from inductor_step.session.format import VARIANT_SEP
from inductor_step.session.memory import Plan, _dims, plan, storage_bytes


#: ops that only view their input (no bytes of their own when recomputed)
_VIEWS = ("view", "reshape", "permute", "t.", "transpose", "expand", "squeeze", "unsqueeze", "slice", "select",
          "alias", "as_strided", "_unsafe_view", "split", "unbind", "detach")


@dataclass
class SavedTensor:
    """One tensor the forward saves for the backward: ``fx_node`` the forward's post-grad FX node it is (the
    forward graph returns it after the user's outputs), ``backward_name`` the backward placeholder that
    receives it, ``buffer`` the wrapper's name returned in its place (``buf7``; a ``primals_N`` input),
    ``storage`` the buffer whose storage it is in, ``bytes`` its storage extent x dtype size from the FX
    node's shape / stride / dtype, ``is_input`` True for a graph input (a parameter or the batch: held by the
    caller anyway), ``user_line`` its node's innermost user frame (node.meta["stack_trace"])."""

    index: int
    fx_node: str
    backward_name: str
    buffer: str | None
    storage: str | None
    bytes: int | None
    shape: list[str]
    dtype: str | None
    is_input: bool
    user_line: str | None


@dataclass
class Saved:
    """What a training graph's forward saves for its backward (AOTAutograd's partition): ``tensors`` largest first;
    ``total_bytes`` their bytes summed (views of one storage each counted: FX's view), ``storage_bytes`` the
    distinct storages of the non-input ones in the wrapper (what the saving really holds beyond the inputs),
    ``inputs_bytes`` the saved inputs' (parameters; held anyway); ``recomputed`` the backward's post-grad
    nodes that recompute forward values (no ``tangents_*`` among their ancestors), ``recompute_how`` how that
    was determined; ``note`` why something is missing."""

    forward: str
    backward: str | None
    user_outputs: int
    tensors: list[SavedTensor]
    total_bytes: int
    storage_bytes: int
    inputs_bytes: int
    recomputed: list[tuple[str, str, str | None]] = field(default_factory=list)  # (node, target, user line)
    recompute_how: str = ("a backward post-grad node with a forward node's target whose inputs are that node's "
                          "inputs (saved tensors, by name, or nodes recomputed before it) redoes it: the min-cut "
                          "partitioner chose to recompute it rather than save it (views left out: free; scalar "
                          "constants are not recorded, so mul(x, 0.5) and mul(x, 2) look alike)")
    note: str = ""


def _nodes(stop: dict[str, Any] | None) -> list[dict[str, Any]]:
    pg = (stop or {}).get("post_grad") or {}
    return [n for n in pg.get("nodes") or [] if isinstance(n, dict)] if isinstance(pg, dict) else []


def backward_key(key: str) -> str:
    """The backward's graph key for a forward's (``"[0/0] forward"`` -> ``"[0/0] backward"``)."""
    from inductor_step.session.format import GraphKey  # noqa: PLC0415

    k = GraphKey.parse(key)
    return str(k.replace(kind=k.kind.replace("forward", "backward", 1)))


def saved_for_backward(session: Any, key: str, the_plan: Plan | None = None) -> Saved | None:
    """What forward graph ``key`` saves for its backward, from both graphs' AOT stops (the forward's post-grad
    output node: user outputs then saved values; the backward's placeholders: saved values then ``tangents_*``)
    and the forward's wrapper ``return`` (which buffers hold them).  None for a graph that is not a forward."""
    if " forward" not in key:
        return None
    fwd = _nodes(session.stop_for(key, "aot"))
    bkey = backward_key(key)
    bwd = _nodes(session.stop_for(bkey, "aot")) if bkey in getattr(session, "by_graph", {bkey: 1}) else []
    the_plan = the_plan or plan(session, key)
    if not bwd:
        return Saved(key, None, 0, [], 0, 0, 0, note="the backward is not recorded yet (it compiles at "
                     ".backward()): the user's outputs cannot be told from the saved tensors")
    ph = [n for n in bwd if n.get("op") == "placeholder" and not str(n.get("name")).startswith("tangents_")]
    # the wrapper's return is positional (the FX output node's recorded args name each node once)
    out = next((n for n in fwd if n.get("op") == "output"), None)
    outs = list(the_plan.outputs) if the_plan and the_plan.outputs else list((out or {}).get("args") or [])
    n_user = len(outs) - len(ph)
    if n_user < 0:
        return Saved(key, bkey, 0, [], 0, 0, 0, note=f"the forward returns {len(outs)} values, the backward takes "
                     f"{len(ph)} saved: they do not pair")
    by = {n.get("name"): n for n in fwd}
    links = session.links(key) or {}
    lfx, lbuf = links.get("fx_nodes") or {}, links.get("buffers") or {}
    tensors: list[SavedTensor] = []
    for i, bp in enumerate(ph):
        name = str(bp.get("name"))
        node = by.get(name) or {}
        shape, dt = bp.get("shape"), bp.get("dtype")
        if not isinstance(shape, list) or (shape and isinstance(shape[0], list)) or not dt:
            continue  # a SymInt saved for the backward: no bytes
        size, stride = _dims(shape, {}), _dims(bp.get("stride"), {})
        nbytes = storage_bytes(size, stride if stride is not None and len(stride) == len(size or []) else None,
                               dt) if size is not None else None
        buf = outs[n_user + i] if n_user + i < len(outs) else None
        buf = buf if the_plan and buf in the_plan.buffers else None
        storage = the_plan.buffers[buf].storage if the_plan and buf else None
        line = node.get("user_line") or (lfx.get(name) or {}).get("user_line") or \
            next(iter((lbuf.get(storage or "") or {}).get("user_lines") or []), None)
        fx = name if node else ((lbuf.get(storage or "") or {}).get("fx_nodes") or [name])[0]
        tensors.append(SavedTensor(i, str(fx), name, buf, storage, nbytes, [str(x) for x in shape], dt,
                                   the_plan.buffers[storage].how == "input" if the_plan and storage else
                                   name.startswith(("primals_", "arg")),
                                   line))
    total = sum(t.bytes or 0 for t in tensors)
    inputs = sum(t.bytes or 0 for t in tensors if t.is_input)
    seen: dict[str, int] = {}
    for t in tensors:
        if not t.is_input and t.storage and the_plan and t.storage in the_plan.buffers:
            seen[t.storage] = the_plan.buffers[t.storage].bytes or 0
    storage = sum(seen.values()) if seen else total - inputs
    tensors.sort(key=lambda t: -(t.bytes or 0))
    return Saved(key, bkey, n_user, tensors, total, storage, inputs, recomputed=_recomputed(fwd, bwd))


def _recomputed(fwd: list[dict[str, Any]], bwd: list[dict[str, Any]]) -> list[tuple[str, str, str | None]]:
    """The backward's call_function nodes that redo a forward node: no ``tangents_*`` among their ancestors, the
    same target as a forward node, and inputs that are that forward node's inputs (saved tensors by their
    shared names, or nodes recomputed before them); views are left out (free)."""
    by_sig: dict[tuple, str] = {}
    for n in fwd:
        if n.get("op") == "call_function":
            by_sig.setdefault((n.get("target"), tuple(n.get("args") or [])), str(n.get("name")))
    fnames = {n.get("name") for n in fwd}
    same: dict[str, str] = {str(n.get("name")): str(n.get("name")) for n in bwd
                            if n.get("op") == "placeholder" and n.get("name") in fnames}
    out = []
    for n in bwd:
        if n.get("op") != "call_function":
            continue
        args = [same.get(a) for a in n.get("args") or []]
        if any(a is None for a in args):
            continue
        f = by_sig.get((n.get("target"), tuple(args)))
        if f is None:
            continue
        same[str(n.get("name"))] = f
        t = str(n.get("target"))
        if not any(t.split("aten.")[-1].startswith(v) for v in _VIEWS):
            out.append((str(n.get("name")), t, n.get("user_line")))
    return out


RELEASED_HOW = ("AOTAutograd hands the backward its saved tensors and drops its own references "
                "(ctx.maybe_clear_saved_tensors, steal_args; not under retain_graph=True), so the wrapper's del of a "
                "saved activation frees it: the forward's saved tensors that are neither graph inputs (parameters, "
                "the batch: the caller's) nor the user's outputs")


def backward_releases(session: Any, key: str) -> tuple[dict[str, str], dict[str, int | None], set[str], str]:
    """For backward graph ``key``: which of its inputs the graph frees by its own ``del``.  Returns (input name ->
    storage group, group -> bytes, the groups that are also the forward's user outputs, how): a group is one
    forward storage (two saved views of it are freed when both names are gone), its bytes the forward plan's
    allocation of it.  From the forward's saved tensors (:func:`saved_for_backward`): those that are not graph
    inputs (parameters, the batch); a user output also saved (nanoGPT's logits) is freed only where the user
    dropped it, which the session cannot tell, so it is its own set.  Where the forward is not recorded, the
    inputs named neither ``primals_*`` nor ``tangents_*``.  Empty for any other graph."""
    if " backward" not in key:
        return {}, {}, set(), ""
    cid, rest = key.split(" ", 1)
    fkey = f"{cid} {rest.replace('backward', 'forward', 1)}"
    if fkey not in getattr(session, "by_graph", {fkey: 1}) and VARIANT_SEP in fkey:
        fkey = fkey.split(VARIANT_SEP, 1)[0]  # an Inductor setting's variant of the backward: the same inputs
    fplan = plan(session, fkey) if fkey in getattr(session, "by_graph", {fkey: 1}) else None
    sv = saved_for_backward(session, fkey, fplan) if fplan is not None else None
    if sv is None or not sv.tensors:
        low = session.stop_for(key, "lowering") or {}
        names = [str(i.get("name")) for i in low.get("graph_inputs") or [] if isinstance(i, dict)]
        names = [n for n in names if not n.startswith(("primals_", "tangents_")) and not re.match(r"^[su]\d+$", n)]
        return ({n: n for n in names}, {n: None for n in names}, set(),
                RELEASED_HOW + "; the forward's pairing is not recorded: by name (neither primals_* nor tangents_*)")
    user = {fplan.buffers[o].storage for o in fplan.outputs[:sv.user_outputs] if o in fplan.buffers}
    groups: dict[str, str] = {}
    sizes: dict[str, int | None] = {}
    kept: set[str] = set()
    for t in sv.tensors:
        if t.is_input:
            continue
        g = t.storage or t.backward_name
        groups[t.backward_name] = g
        if t.storage and t.storage in user:
            kept.add(g)
        own = fplan.buffers.get(t.storage or "")
        sizes[g] = own.bytes if own is not None and own.bytes else max(sizes.get(g) or 0, t.bytes or 0)
    return groups, sizes, kept, RELEASED_HOW
