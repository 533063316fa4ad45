"""What a recorded session compiled, counted: graphs, graph breaks, recompiles, kernels, fusions, a buffer's kernel (the CI gate's and the pytest fixture's numbers).

No Textual, no torch: it reads a session's messages (:mod:`inductor_step.session.format`).  Where each
number comes from:

- graphs: the session's graph keys (``"[0/0] forward"``: a stop's compile id and kind, protocol.graph_key),
  what-if variants and higher-order-op subgraphs left out (listed apart in :attr:`Compiled.subgraphs`);
- graph breaks: the dynamo stops' ``graph_breaks`` (Dynamo's ``dynamo_graph_break_reason`` text), once per
  compile id, each read as reason and user line (the same reading pane 1 shows), and their ``breaks_before``
  (the breaks of frames that gave no graph, under those frames' ids);
- recompiles: the compile ids whose dynamo stop has ``recompile_reasons`` (Dynamo's ``recompile_reasons``
  artifact: compile ``[f/n]`` with n > 0), once per compile id (a recompile's forward and backward are one);
- kernels (subgraphs' included): the codegen stops' ``kernels`` Inductor generated (Triton or C++; ``extern`` library calls such as
  ``aten.mm`` are counted apart in :attr:`GraphCount.extern`);
- fusions: the scheduling stops' ``after`` nodes (after fusion): a fused node of n scheduler nodes is n - 1
  fusions, so the count is the scheduler nodes before fusion minus those after, and a fused group split in
  two lowers it;
- errors: the ``error`` messages (a compile that failed at a stage, the script's own exception);
- a buffer's kernel: the codegen stop's cross-level links (``links["buffers"][buf]["kernels"]``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from inductor_step.session.format import GraphKey
from inductor_step.session.store import Store, load_session
from inductor_step.session.text import break_reasons


@dataclass
class Break:
    """One graph break: ``compile_id`` of the graph it ended (``"[0/0]"``), ``reason`` (Dynamo's, one
    line), ``where`` (the user line, ``path:line``; "" where Dynamo gave none), ``text`` (Dynamo's whole
    text)."""

    compile_id: str
    reason: str
    where: str
    text: str

    @property
    def key(self) -> tuple[str, str]:
        """What two sessions' breaks are matched by: the reason and the user file (its line number left
        out, so an edit above the break does not make it new)."""
        return (self.reason, os.path.basename(self.where.rsplit(":", 1)[0]) if self.where else "")

    def __str__(self) -> str:
        return f"{self.compile_id} {self.reason}" + (f" at {self.where}" if self.where else "")


@dataclass
class Fused:
    """A fused scheduler node: ``graph`` (its graph key), ``name`` (``op0_op1``), ``members`` (``op0``,
    ``op1``), ``type`` (``FusedSchedulerNode``, CPU's ``OuterLoopFusedSchedulerNode``)."""

    graph: str
    name: str
    members: list[str]
    type: str = ""


@dataclass
class GraphCount:
    """One graph's counts: ``kernels`` (generated kernel names, in the wrapper's order), ``extern``
    (library calls), ``nodes_before`` / ``nodes_after`` (scheduler nodes before / after fusion; None where
    the scheduling stop is missing), ``fused`` (its fused nodes), ``missing`` (stages not recorded, e.g.
    ``["scheduling", "codegen"]`` for a compile that failed or went to another backend)."""

    key: str
    kernels: list[str] = field(default_factory=list)
    extern: list[str] = field(default_factory=list)
    nodes_before: int | None = None
    nodes_after: int | None = None
    fused: list[Fused] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @property
    def fusions(self) -> int | None:
        """Scheduler nodes merged by fusion (sum of members - 1 over the nodes after fusion); None without
        a scheduling stop."""
        if self.nodes_after is None:
            return None
        return sum(len(f.members) - 1 for f in self.fused)


#: a recompile whose dynamo stops carry no reason
NO_REASON = "(Dynamo gave no reason)"


def _is_graph(key: str) -> bool:
    k = GraphKey.parse(key)
    return k.variant is None and k.subgraph is None


class Compiled:
    """The counts of one recorded session (a :class:`inductor_step.session.store.Store`); build with
    :meth:`load` (a session file) or :meth:`of` (a Store).  Every list is in the session's order."""

    def __init__(self, session: Any, path: str = ""):
        self.session = session
        self.path = path

    @classmethod
    def load(cls, path: str) -> "Compiled":
        """The counts of session file ``path``.  Raises OSError if it cannot be read and ValueError if it is
        not an inductor-step session (:func:`inductor_step.session.store.load_session`)."""
        return cls(Store.of(load_session(path)), path)

    @classmethod
    def of(cls, session: Any) -> "Compiled":
        """The counts of a session already loaded: a :class:`inductor_step.session.store.Store`, or the public
        API's (``inductor_step.session.load(path)``, whose ``store`` it reads)."""
        return cls(getattr(session, "store", session))

    @property
    def graphs(self) -> list[str]:
        """Graph keys (``"[0/0] forward"``), what-if variants and subgraphs left out."""
        return [g for g in self.session.graphs if _is_graph(g)]

    @property
    def all_graphs(self) -> list[str]:
        """Graph keys and their higher-order ops' subgraph keys, in the session's order (what-if variants left
        out): the graphs whose kernels and fusions :attr:`kernels`, :attr:`fused` and :attr:`fusions` count."""
        return [g for g in self.session.graphs if GraphKey.parse(g).variant is None]

    @property
    def subgraphs(self) -> list[str]:
        """Higher-order ops' subgraph keys (``"[0/0] inference › true_graph_0"``)."""
        return [g for g in self.session.graphs if (k := GraphKey.parse(g)).variant is None and k.subgraph]

    @property
    def dynamo_graphs(self) -> list[str]:
        """The compile ids Dynamo made a graph for (``"[0/0]"``, ``"[1/0]"``: a forward and its backward are one)."""
        out: list[str] = []
        for g in self.graphs:
            cid = GraphKey.parse(g).compile_id
            if cid not in out:
                out.append(cid)
        return out

    @property
    def graph_breaks(self) -> list[Break]:
        """Every graph break, once per compile id (a forward and its backward share their dynamo stop's)."""
        out: list[Break] = []
        seen: set[str] = set()
        for g in self.graphs:
            cid = GraphKey.parse(g).compile_id
            stop = self.session.stop_for(g, "dynamo")
            if cid in seen or not stop:
                continue
            seen.add(cid)
            raws = list(stop.get("graph_breaks") or [])
            for raw, b in zip(raws, break_reasons(stop)):
                out.append(Break(cid, b.get("reason") or str(raw).split("\n", 1)[0], b.get("where") or "", str(raw)))
            for gb in stop.get("breaks_before") or []:  # in frames that gave no graph, under their own ids
                if isinstance(gb, dict) and str(gb.get("compile_id")) not in seen:
                    raw = str(gb.get("text", ""))
                    b = break_reasons({"graph_breaks": [raw]})[0]
                    out.append(Break(str(gb.get("compile_id")), b["reason"], b["where"], raw))
        done = getattr(self.session, "done", None) or {}
        for gb in done.get("breaks_after") or []:  # in frames after the last graph that gave none
            if isinstance(gb, dict):
                raw = str(gb.get("text", ""))
                b = break_reasons({"graph_breaks": [raw]})[0]
                out.append(Break(str(gb.get("compile_id")), b["reason"], b["where"], raw))
        return out

    @property
    def recompiles(self) -> dict[str, list[str]]:
        """{compile id (``"[0/1]"``): Dynamo's recompile reasons} for every frame compiled again (``[f/n]``,
        n > 0): one recompile, however many graphs it gave (its forward and backward counted twice)."""
        out: dict[str, list[str]] = {}
        for g in self.graphs:
            cid = GraphKey.parse(g).compile_id
            stop = self.session.stop_for(g, "dynamo") or {}
            reasons = list(stop.get("recompile_reasons") or [])
            m = re.match(r"\[\d+/(\d+)", g)
            if not (reasons or (m and int(m.group(1)) > 0)):
                continue
            if reasons and out.get(cid, [NO_REASON]) == [NO_REASON]:
                out[cid] = reasons
            else:
                out.setdefault(cid, [NO_REASON])
        return out

    @property
    def errors(self) -> list[str]:
        """Every error the recording holds, one line each (``"[0/0] inference codegen: InductorError: ..."``,
        ``"script: RuntimeError: ..."``): a compile that failed at a stage, or the script's own."""
        out = []
        for e in self.session.errors:
            where = f"{e['compile_id']} {e.get('graph_kind') or ''}".strip() + " " if e.get("compile_id") else ""
            out.append(f"{where}{e.get('stage') or 'script'}: {str(e.get('message') or '').splitlines()[0] if e.get('message') else '?'}")
        return out

    def graph(self, key: str) -> GraphCount:
        """Graph ``key``'s counts.  Raises KeyError naming the graphs there are when it has no such graph."""
        if key not in self.session.graphs:
            raise KeyError(f"no graph {key!r} (graphs: {', '.join(self.session.graphs) or 'none'})")
        c = GraphCount(key)
        sched = self.session.stop_for(key, "scheduling")
        if sched is None or not isinstance(sched.get("after"), list):
            c.missing.append("scheduling")
        else:
            after = sched["after"]
            c.nodes_after = len(after)
            c.fused = [Fused(key, str(n.get("name")), list(n.get("members") or [n.get("name")]), str(n.get("type") or ""))
                       for n in after if len(n.get("members") or []) > 1]
            c.nodes_before = c.nodes_after + sum(len(f.members) - 1 for f in c.fused)
        code = self.session.stop_for(key, "codegen")
        if code is None or not isinstance(code.get("kernels"), list):
            c.missing.append("codegen")
        else:
            for k in code["kernels"]:
                name = str(k.get("name"))
                into = c.extern if k.get("backend") == "extern" else c.kernels
                if name not in into:
                    into.append(name)
        return c

    @property
    def counts(self) -> list[GraphCount]:
        """Every graph's and subgraph's counts (:attr:`all_graphs`), in the session's order."""
        return [self.graph(g) for g in self.all_graphs]

    @property
    def kernels(self) -> list[str]:
        """Every generated kernel's name, graph by graph, subgraphs included (a name two graphs share is
        listed twice)."""
        return [k for c in self.counts for k in c.kernels]

    @property
    def fused(self) -> list[Fused]:
        """Every fused scheduler node, graph by graph, subgraphs included."""
        return [f for c in self.counts for f in c.fused]

    @property
    def fusions(self) -> int:
        """Scheduler nodes merged by fusion over all graphs and subgraphs (see :attr:`GraphCount.fusions`; a
        graph with no scheduling stop adds 0)."""
        return sum(c.fusions or 0 for c in self.counts)

    def kernel_of(self, buffer: str, graph: str | None = None) -> str:
        """The kernel that computes IR buffer ``buffer`` (``"buf3"``) in ``graph`` (a graph key; may be left
        out when only one graph has that buffer), from the codegen stop's links: the first kernel that
        writes it (a buffer Inductor fused into several kernels lists them all in
        :meth:`kernels_of_buffer`).  Raises KeyError when no graph has it, ValueError when several do and
        ``graph`` is not given."""
        ks = self.kernels_of_buffer(buffer, graph)
        if not ks:
            raise KeyError(f"{buffer} has no kernel in {graph or 'any graph'} (a buffer Inductor removed, or "
                           "computed in registers inside another buffer's kernel)")
        return ks[0]

    def kernels_of_buffer(self, buffer: str, graph: str | None = None) -> list[str]:
        """Every kernel that ``buffer``'s links name, in ``graph`` (see :meth:`kernel_of` for the errors)."""
        if graph is None:
            having = [g for g in self.all_graphs if buffer in (self.session.links(g).get("buffers") or {})]
            if not having:
                raise KeyError(f"no graph has a buffer {buffer} (graphs: {', '.join(self.all_graphs) or 'none'})")
            if len(having) > 1:
                raise ValueError(f"{buffer} is in {len(having)} graphs ({', '.join(having)}): say which, "
                                 f"kernel_of({buffer!r}, graph={having[0]!r})")
            graph = having[0]
        elif graph not in self.session.graphs:
            raise KeyError(f"no graph {graph!r} (graphs: {', '.join(self.session.graphs) or 'none'})")
        b = (self.session.links(graph).get("buffers") or {}).get(buffer)
        if b is None:
            raise KeyError(f"{graph} has no buffer {buffer}")
        return list(b.get("kernels") or [])

    def summary(self) -> str:
        """One line per graph and a total, as a failed assertion shows it."""
        lines = []
        for c in self.counts:
            lines.append(f"{c.key}: {len(c.kernels)} kernel(s)"
                         + (f" + {len(c.extern)} extern call(s)" if c.extern else "")
                         + (f", {c.fusions} fusion(s) ({c.nodes_before} -> {c.nodes_after} scheduler nodes)"
                            if c.fusions is not None else "")
                         + (f"; no {', no '.join(c.missing)} stop" if c.missing else ""))
        breaks = self.graph_breaks
        lines.append(f"{len(self.graphs)} graph(s), {len(breaks)} graph break(s), {len(self.recompiles)} "
                     f"recompile(s), {len(self.kernels)} kernel(s), {self.fusions} fusion(s)")
        lines += [f"graph break: {b}" for b in breaks]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path or 'session'}: {self.summary().splitlines()[-1]}>"


__all__ = ["Break", "Compiled", "Fused", "GraphCount"]
