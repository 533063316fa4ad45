"""Graph keys as users see them ("[0/0] forward #2"): built from a message and split back into their parts."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GraphKey:
    """One compiled graph's identity: Dynamo's ``compile_id`` (``"[0/1]"``, ``"[0/0]@reset1"``),
    AOTAutograd's ``kind`` (``inference`` / ``forward`` / ``backward``), DDPOptimizer's ``part``
    (1-based, None when the compile was not split), a higher-order op's ``subgraph`` path
    (``"true_graph_0"``, nested ones joined by :data:`SUBGRAPH_SEP`), a what-if ``variant``'s
    settings (``"max_autotune=True"``) and, in a torchrun job, the ``rank`` that compiled it.

    ``str(key)`` is the label users see (:func:`graph_key`): ``"[4/0] forward #2"``,
    ``"[0/0] inference › true_graph_0 · max_autotune=True"``; the rank is not in the label (each rank
    has its own session).  :meth:`parse` reads a label back; :meth:`of` builds a key from a message's
    ``compile_id``, ``graph_kind``, ``part``, ``subgraph`` and ``variant`` fields."""

    compile_id: str
    kind: str
    part: int | None = None
    subgraph: str | None = None
    variant: str | None = None
    rank: int | None = None

    def __str__(self) -> str:
        key = f"{self.compile_id} {self.kind}"
        if self.part:
            key += f"{PART_SEP}{self.part}"
        if self.subgraph:
            key += f"{SUBGRAPH_SEP}{self.subgraph}"
        return f"{key}{VARIANT_SEP}{self.variant}" if self.variant else key

    @classmethod
    def of(cls, msg: Any, rank: int | None = None) -> "GraphKey":
        """The key of the graph a message (a stop, run, error, numerics ... dict) belongs to; a
        missing compile id reads ``"[?]"``, a missing kind ``"?"``."""
        key = cls(str(msg.get("compile_id", "[?]")), str(msg.get("graph_kind", "?")), msg.get("part") or None,
                   msg.get("subgraph") or None, msg.get("variant") or None, rank)
        if PART_SEP in key.kind or SUBGRAPH_SEP in key.kind or VARIANT_SEP in key.kind:
            return cls.parse(str(key), rank)  # a kind that carries its part / subgraph / variant in its text
        return key

    @classmethod
    def parse(cls, label: str, rank: int | None = None) -> "GraphKey":
        """``"[4/0] forward #2 › true_graph_0 · max_autotune=True"`` -> its parts; the inverse of
        ``str``.  A label without a kind (``"[0/0]"``) gets kind ``""``."""
        base, sep, variant = str(label).partition(VARIANT_SEP)
        cid, _sp, kind = base.partition(" ")
        kind, sub = split_subgraph(kind)
        kind, part = split_part(kind)
        return cls(cid, kind, part, sub, variant if sep else None, rank)

    @classmethod
    def parse_kind(cls, kind: str, compile_id: str = "?", rank: int | None = None) -> "GraphKey":
        """A kind as the tracer carries it, with its part, subgraph and variant in its text (``"forward #2 ›
        true_graph_0 · max_autotune=True"``; the tracer keys a graph by ``(compile id, that text)``) -> the key of
        that graph under ``compile_id``; the inverse of :attr:`kind_text`."""
        kind, sep, variant = str(kind).partition(VARIANT_SEP)
        kind, sub = split_subgraph(kind)
        kind, part = split_part(kind)
        return cls(compile_id, kind, part, sub, variant if sep else None, rank)

    @property
    def kind_text(self) -> str:
        """The label less its compile id: ``"forward #2 › true_graph_0 · max_autotune=True"`` (the kind text the
        tracer keys its graphs by, with the compile id: :attr:`pair`)."""
        return f"{self.kind_label}{VARIANT_SEP}{self.variant}" if self.variant else self.kind_label

    @property
    def pair(self) -> tuple[str, str]:
        """``(compile id, kind text)``: how the tracer keys its graphs (``tracer.agent.Agent.graphs``)."""
        return self.compile_id, self.kind_text

    def under(self, path: "list[str] | tuple[str, ...]") -> "GraphKey":
        """The key of subgraph ``path`` (names, outermost first) of this key's top-level graph, variant kept:
        ``[0/0] inference`` under ``["true_graph_0"]`` -> ``[0/0] inference › true_graph_0``."""
        return self.replace(subgraph=SUBGRAPH_SEP.join(path) or None)

    def child(self, name: str) -> "GraphKey":
        """The key of this graph's subgraph ``name`` (a subgraph's: the path one name longer)."""
        return self.under(self.subgraphs + (name,))

    @property
    def label(self) -> str:
        """``str(self)``: the label users see."""
        return str(self)

    @property
    def frame(self) -> int | None:
        """The frame id, ``N`` of ``[N/M]`` (None for a compile id of another form)."""
        head = self.compile_id.split("/", 1)[0].lstrip("[")
        return int(head) if head.isdigit() else None

    @property
    def subgraphs(self) -> tuple[str, ...]:
        """The subgraph path as names, outermost first: ``("true_graph_0",)``; ``()`` for a top-level graph."""
        return tuple(self.subgraph.split(SUBGRAPH_SEP)) if self.subgraph else ()

    @property
    def kind_label(self) -> str:
        """The kind as the label writes it, without compile id and variant: ``"forward #2 › true_graph_0"``."""
        return with_subgraph(with_part(self.kind, self.part), self.subgraph)

    def replace(self, **changes: Any) -> "GraphKey":
        """This key with some fields changed (``key.replace(variant=None)``: the original of a what-if variant)."""
        from dataclasses import replace  # noqa: PLC0415

        return replace(self, **changes)

    @property
    def original(self) -> "GraphKey":
        """The graph a what-if variant recompiled (itself when no variant)."""
        return self.replace(variant=None) if self.variant else self

    @property
    def parent(self) -> "GraphKey | None":
        """The graph whose higher-order op this subgraph is (a nested one's: the path less its last
        name); None for a top-level graph."""
        if not self.subgraph:
            return None
        return self.replace(subgraph=None)

    @property
    def whole(self) -> "GraphKey":
        """The key less its part and subgraph: every part of a split compile has the same whole."""
        return self.replace(part=None, subgraph=None)


def graph_key(msg: dict[str, Any]) -> str:
    """The graph a message belongs to, as shown to users: ``"[0/0] forward"``; a what-if variant's:
    ``"[0/0] forward · max_autotune=True"``.

    One compile id can hand Inductor several graphs of one kind: Dynamo's DDPOptimizer splits a
    DistributedDataParallel model's graph at DDP's bucket boundaries and compiles each submodule on
    its own (``compile_fx`` once per submodule, all under the frame's compile id).  Each is a graph
    of its own, told apart by its message's ``part`` (1-based, in compile order; a forward's backward
    has its forward's part): ``"[4/0] forward #2"``, ``"[4/0] backward #2"``.  Ordinary compiles have
    no ``part`` and keep their keys.

    A higher-order op's subgraph (a ``torch.cond`` branch, an ``invoke_subgraph`` / nested compile
    region, a ``while_loop`` body, flex attention's score and mask mods) is a graph of its own under its
    parent, named as the parent's post-grad module names it (``subgraph``; a subgraph of a subgraph
    joins the names with :data:`SUBGRAPH_SEP`): ``"[0/0] inference › true_graph_0"``."""
    return str(GraphKey.of(msg))


PART_SEP = " #"  # between a graph's kind and its part: "[4/0] forward #2" (graph_key)
RESET_SEP = "@reset"  # in a compile id after the script's Nth torch._dynamo.reset(): "[0/0]@reset1"


def split_part(kind: str) -> tuple[str, int | None]:
    """``"forward #2"`` (a kind as a graph key ends) -> ``("forward", 2)``; ``"forward"`` -> ``("forward", None)``."""
    base, sep, part = str(kind).rpartition(PART_SEP)
    return (base, int(part)) if sep and part.isdigit() else (str(kind), None)


def with_part(kind: str, part: int | None) -> str:
    """``("forward", 2)`` -> ``"forward #2"``; no part -> ``kind`` (the inverse of :func:`split_part`)."""
    return f"{kind}{PART_SEP}{part}" if part else kind


SUBGRAPH_SEP = " › "  # between a graph's kind (and part) and its subgraph: "[0/0] inference › true_graph_0"


def split_subgraph(kind: str) -> tuple[str, str | None]:
    """``"inference › true_graph_0"`` (a kind as a graph key ends, no variant) -> ``("inference", "true_graph_0")``;
    ``"inference"`` -> ``("inference", None)``.  A nested subgraph keeps its whole path: ``"a › b"``."""
    base, sep, sub = str(kind).partition(SUBGRAPH_SEP)
    return (base, sub) if sep and sub else (str(kind), None)


def kind_of(msg: dict[str, Any]) -> str:
    """A message's graph kind as its graph key ends (without the variant): ``"forward #2"``,
    ``"inference › true_graph_0"`` (:func:`graph_key` less the compile id)."""
    return GraphKey.of(msg).kind_label if "graph_kind" in msg else \
        with_subgraph(with_part("None", msg.get("part")), msg.get("subgraph"))


def with_subgraph(kind: str, subgraph: str | None) -> str:
    """``("inference", "true_graph_0")`` -> ``"inference › true_graph_0"`` (the inverse of :func:`split_subgraph`)."""
    return f"{kind}{SUBGRAPH_SEP}{subgraph}" if subgraph else kind


# ----------------------------------------------------------------------------- what if

VARIANT_SEP = " · "  # between a graph's key and its what-if variant's settings


def parse_settings(text: str) -> dict[str, Any]:
    """``"max_autotune=True, realize_opcount_threshold=1"`` -> ``{"max_autotune": True, ...}``: each
    value a Python literal (``True``, ``1``, ``0.5``, ``'x'``), else the text itself.  Raises
    ValueError with a one-line reason on an item without ``=`` or a bad name (whether torch has
    the setting is checked by the agent)."""
    import ast  # noqa: PLC0415

    out: dict[str, Any] = {}
    for item in (p.strip() for p in re.split(r",(?![^\[\](){}]*[\])}])", text)):
        if not item:
            continue
        name, eq, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not eq or not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", name):
            raise ValueError(f"not a setting: {item!r} (want name=value, e.g. max_autotune=True)")
        try:
            out[name] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            out[name] = value
    if not out:
        raise ValueError(f"no setting given in {text!r} (want name=value, e.g. max_autotune=True)")
    return out


def settings_label(settings: dict[str, Any]) -> str:
    """A variant's name from its settings: ``"max_autotune=True,realize_opcount_threshold=1"``."""
    return ",".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in settings.items())


#: torch._functorch.config settings a training graph's what-if partitions its joint graph again under (tracer.whatif_partition)
PARTITION_SETTINGS = ("activation_memory_budget", "activation_memory_budget_solver",
                      "activation_memory_budget_runtime_estimator", "aggressive_recomputation")


def repartitioned(key: str) -> bool:
    """True for a what-if variant whose settings include a :data:`PARTITION_SETTINGS` one: its forward and backward
    come from a new partition, so their outputs past the user's (the saved tensors) and the backward's inputs are
    not the original's, position by position."""
    variant = split_variant(key)[1] or ""
    return any(part.split("=", 1)[0].removeprefix("functorch.") in PARTITION_SETTINGS for part in variant.split(","))


def split_variant(key: str) -> tuple[str, str | None]:
    """``"[0/0] forward · max_autotune=True"`` -> ``("[0/0] forward", "max_autotune=True")``."""
    base, sep, variant = key.partition(VARIANT_SEP)
    return base, (variant if sep else None)
