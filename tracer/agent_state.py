"""What every part of the agent shares: the session stream, the graphs and frames the stage hooks keep, the options.

:class:`AgentState` is the one object the agent's parts (tracer.capture's stage hooks, tracer.agent_timing's
requests, tracer.cudagraph_record, tracer.capture_aoti) are built on; :class:`tracer.agent.Agent` makes it and
its parts.  Everything here runs in the script's process; nothing here imports torch.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from inductor_step.session import format as protocol
from inductor_step.tracer.agent_process import _nothing

#: one graph's timing, at most (s): ``--timing-limit``, else INDUCTOR_STEP_TIMING_TIMEOUT, else 600
TIMING_LIMIT_S = float(os.environ.get("INDUCTOR_STEP_TIMING_TIMEOUT", "600"))

@dataclass
class GraphState:
    """What the stage hooks keep about one graph (compile id, kind) between its stops.

    Filled in stage order: ``last_stage`` (the last stop sent), ``gm`` (the post-grad
    GraphModule, for timing), ``post_grad_nodes`` (the aot stop's nodes, for links),
    ``pending_aot`` (the aot stop waiting for GraphLowering.run), ``device``, ``buffers``
    (lowering), ``before``/``after``/``fusion_log``/``pending_scheduling`` (scheduling),
    ``output_path`` and ``num_gb`` (codegen).  ``get``/``[]`` read a field by name, as the
    timing code does.
    """

    last_stage: str | None = None
    gm: Any = None
    post_grad_nodes: list[dict] = field(default_factory=list)
    pending_aot: dict[str, Any] | None = None
    device: str = "cpu"
    buffers: list[dict] = field(default_factory=list)
    before: Any = None
    after: list[dict] = field(default_factory=list)
    fusion_log: list[str] = field(default_factory=list)
    pending_scheduling: list | None = None
    output_path: str | None = None
    num_gb: dict[str, float] = field(default_factory=dict)
    cudagraphs: dict[str, Any] | None = None  # tracer.cudagraph_record: {"enabled", "skipped"}
    # a higher-order op's subgraph (tracer.subgraphs): its Dynamo snapshot, its function in the parent's
    # output module, and what the scheduler knew at its codegen (its GraphLowering is gone by the parent's)
    dynamo: Any = None
    function: str | None = None
    owners: dict[str, dict[str, str]] | None = None
    mutations: dict[str, Any] | None = None
    links: dict[str, Any] | None = None  # the codegen stop's links (tracer.numerics reads them)

    def get(self, name: str, default: Any = None) -> Any:
        value = getattr(self, name, None)
        return default if value is None else value

    def __getitem__(self, name: str) -> Any:
        return getattr(self, name)


@dataclass
class AgentOptions:
    """The options of one run, set once at the start (tracer.agent.main; a recording: its own): ``step`` (pause at
    every stop), the ``script`` and its ``argv``, ``run_at_end`` (--run), ``serve`` (stay up for the UI's requests),
    ``what_if`` (--what-if: settings sets to try on every graph at the end), ``distributed`` (a rank of a torchrun
    job, protocol.Distributed: the header says so, process groups are watched), ``timing_limit_s``
    (--timing-limit: one graph's timing, at most), ``numerics_at_end`` (--numerics) and ``blame_at_end``
    (--blame numerics|speed, tracer.blame)."""

    step: bool = False
    script: str = ""
    argv: list[str] = field(default_factory=list)
    run_at_end: bool = False
    serve: bool = False
    what_if: list[dict[str, Any]] = field(default_factory=list)
    distributed: dict[str, Any] | None = None
    timing_limit_s: float = TIMING_LIMIT_S
    numerics_at_end: bool = False
    blame_at_end: str | None = None


@dataclass
class FusionLog:
    """The scheduler's fusion log (Inductor's reasons not to fuse, tracer.agent_start.FusionHandler): ``lines``
    kept while ``on`` (between a graph's lowering and scheduling stops, and while a ``can_fuse`` query runs)."""

    lines: list[str] = field(default_factory=list)
    on: bool = False

    @contextlib.contextmanager
    def kept(self) -> Iterator[None]:
        """Inside the block the log may be switched and refilled (a what-if variant's compile, a query); after it,
        ``lines`` and ``on`` are what they were before."""
        saved = (self.lines, self.on)
        try:
            yield
        finally:
            self.lines, self.on = saved


@dataclass
class Variants:
    """What the what-if and numerics recompiles (tracer.whatif, tracer.whatif_partition, tracer.numerics_run)
    share: ``snapshots`` (graph ``(cid, kind)`` -> its post-grad graph as ``compile_fx_inner`` got it,
    tracer.adapter.graph_snapshot, taken by the capture part), ``original`` (a variant ``(cid, "forward ·
    max_autotune=True")`` -> the graph it varies, ``(cid, "forward")``), ``joints`` (frame key -> its training
    compile's joint graph) and ``lock`` (one variant compiles at a time).  The thread compiling a variant has
    ``AgentState.tl.variant`` = its key."""

    snapshots: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    original: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    joints: dict[str, Any] = field(default_factory=dict)
    lock: Any = field(default_factory=threading.Lock)


class Stream:
    """The session stream's writer: ``out`` (a binary file: the agent's pipe, a session file), its ``lock``, and
    ``t0`` (time.monotonic at the start: each message's ``t``)."""

    def __init__(self, out: Any):
        self.out = out
        self.lock = threading.Lock()
        self.t0 = time.monotonic()

    def write(self, data: bytes) -> None:
        """Write one encoded message; a closed pipe (UI gone) ends the agent (exit status 3)."""
        with self.lock:
            try:
                self.out.write(data)
            except (BrokenPipeError, OSError):
                os._exit(3)


class AgentState:
    """The state the agent's parts share, for one run of one script (or one in-process recording).

    The stream: ``send`` writes one message on ``stream`` (:class:`Stream`), ``stop`` sends a stage's stop
    (numbered by ``seq``) and, in step mode, blocks the compiling thread in ``wait_at_stop``.
    The graphs: ``frames`` (compile id ``"[0/0]"``, or a part's ``"[4/0] #2"`` -> per-frame data) and
    ``graphs`` (``(compile id, kind)`` -> :class:`GraphState`); ``current`` is the graph whose stop went
    out last.  ``options`` (:class:`AgentOptions`) are set once at the start; the tables the parts fill
    (``script_calls``, ``variants``, ``other_backends``), the fusion log (``fusion``) and the flags
    (``script_done``) are read across parts.

    All hooks run on the thread that compiles (the script's main thread, or the autograd thread of a
    lazy backward); a what-if or numerics variant compiles on a thread of its own (``tl.variant``).
    """

    def __init__(self, out: Any, options: AgentOptions, wait_at_stop: Callable[[], None] | None = None):
        self.stream = Stream(out)
        self.options = options
        self.wait_at_stop = wait_at_stop or (lambda: None)  # the agent's: answers the UI until it continues
        self.seq = 0
        # compile id (or "[4/0] #2", a part: frame_key) -> per-frame data
        self.frames: dict[str, dict[str, Any]] = {}
        self.graphs: dict[tuple[str, str], GraphState] = {}  # (cid, kind) -> what the hooks keep
        self._current: tuple[str, str] | None = None  # the script's compile's graph: see current
        self.fusion = FusionLog()
        self.script_done = False  # the script returned: its atexit functions are due when we exit
        self.numerics_waiting: set[str] = set()  # graphs e asked for before the script called them (numerics_run)
        self.device = "cpu"
        # output module key (file name of output_path) -> the script's own calls of that graph (see on_graph_call)
        self.script_calls: dict[str, dict[str, Any]] = {}
        self.final_hooks: dict[str, bool] = {}  # tracer.adapter.install_final_hooks's hooks that exist here
        self.variants = Variants()  # what-if and numerics recompiles (tracer.whatif)
        self.tl = threading.local()
        # graphs Dynamo handed to another backend, "[0/0] inference" -> "aot_eager" (tracer.backends)
        self.other_backends: dict[str, str] = {}
        self.clock: Any = None  # tracer.compile_time.CompileClock, from main()
        self._watchers: list[Callable[[dict[str, Any]], None]] = []  # see watching

    @property
    def current(self) -> tuple[str, str] | None:
        """The graph ``(compile id, kind)`` whose stop was sent last, e.g. ``("[0/0]", "backward")``: the
        script's compile, or, on a thread compiling a what-if or numerics variant (``tl.variant`` set), that
        thread's own.  A variant compiles on another thread while the script's compile may be paused
        mid-graph; sharing one value let it move the script's graph (its next stop went out under the
        variant's or a restored older graph)."""
        if getattr(self.tl, "variant", None) is not None:
            return getattr(self.tl, "current", None)
        return self._current

    @current.setter
    def current(self, value: tuple[str, str] | None) -> None:
        if getattr(self.tl, "variant", None) is not None:
            self.tl.current = value
        else:
            self._current = value

    @contextlib.contextmanager
    def watching(self, see: Callable[[dict[str, Any]], None]) -> Iterator[None]:
        """Inside the block, ``see`` gets every message :meth:`send` is given (on any thread, before it is written;
        a numerics recompile's unsent stops too): how a request collects the ``run`` messages of the timing it asks
        for (tracer.blame_speed, tracer.save_inputs)."""
        self._watchers.append(see)
        try:
            yield
        finally:
            self._watchers.remove(see)

    def send(self, msg: dict[str, Any]) -> None:
        """Write one message on the session stream; a closed pipe (UI gone) ends the agent."""
        for see in list(self._watchers):
            see(msg)
        if getattr(self.tl, "silent", False):  # a numerics recompile's own stops stay unsent
            return
        msg.setdefault("t", round(time.monotonic() - self.stream.t0, 4))
        if isinstance(msg.get("graph_kind"), str):
            # our graph kinds carry a what-if variant ("forward · max_autotune=True"), a part
            # ("forward #2": protocol.graph_key) and a subgraph ("inference › true_graph_0"): sent as
            # kind + part + subgraph + variant, right after a stop's
            # head (where the lazy reader finds them: protocol.read_session)
            k = protocol.GraphKey.parse_kind(msg["graph_kind"])
            extra = ([("part", k.part)] if k.part else []) + ([("subgraph", k.subgraph)] if k.subgraph else []) \
                + ([("variant", k.variant)] if k.variant is not None else [])
            if extra:
                msg["graph_kind"] = k.kind
                at = list(msg).index("paused") + 1 if "paused" in msg else len(msg)
                items = list(msg.items())
                msg = dict(items[:at] + extra + items[at:])
        self.stream.write(protocol.encode(msg))

    def frame(self, cid: str) -> dict[str, Any]:
        """The frame entry of compile ``cid`` (``"[0/0]"``, a part's ``"[4/0] #2"``), made empty on first use."""
        return self.frames.setdefault(cid, {"aot": {}, "graph_breaks": [], "recompile_reasons": [],
                                            "dynamo": None, "kind": None})

    def breaks_before(self, cid: str) -> dict[str, Any]:
        """A dynamo stop's ``breaks_before`` (protocol.DynamoStop): the graph breaks of the frames that gave no graph,
        in the order Dynamo met them, each ``{"compile_id", "text"}``, sent once, with the next graph's dynamo stop
        (``cid``'s).  Only a frame with a graph sent its breaks: Mixtral's ``with lock:`` in Hugging Face's output
        capturing broke eleven frames off before any op, and their reasons were never seen."""
        with_graph = {c for c, _ in self.graphs}
        out: list[dict[str, str]] = []
        for fcid, fr in self.frames.items():
            if (fcid == cid or fcid.split(" #")[0] in with_graph or fr.get("dynamo") is not None or fr.get("cur")
                    or fr.get("part") or fr.get("breaks_sent") or not fr.get("graph_breaks")):
                continue
            fr["breaks_sent"] = True
            out.extend({"compile_id": fcid, "text": str(t)} for t in fr["graph_breaks"])
        return {"breaks_before": out} if out else {}

    def graph(self, cid: str, kind: str) -> GraphState:
        """The :class:`GraphState` of graph ``(cid, kind)``, made empty on first use."""
        return self.graphs.setdefault((cid, kind), GraphState())

    def stop(self, cid: str, kind: str, stage: str, payload: dict[str, Any], pause: bool = True) -> None:
        """Send a stop and, in step mode, block this (compile) thread until the UI continues
        (``pause=False``: never, e.g. a stop sent again under a corrected kind)."""
        g = self.graph(cid, kind)
        g.last_stage = stage
        self.current = (cid, kind)
        self.seq += 1
        # a what-if variant never pauses
        paused = pause and self.options.step and getattr(self.tl, "variant", None) is None
        msg = protocol.stop_head(self.seq, cid, kind, stage, paused)
        attempt = self.frames.get(cid, {}).get("attempt")
        if attempt:  # Dynamo restarted this frame's analysis: torch logs the compile as [0/0_1]
            msg["attempt"] = attempt
            raw, sep, reset = cid.partition(protocol.RESET_SEP)
            msg["trace_id"] = f"{raw[:-1]}_{attempt}]{sep}{reset}"
        msg.update(payload)
        if self.clock is not None:  # the compile's own time so far, per stage (the stage bar)
            msg["compile_ms"] = self.clock.so_far()
        self.send(msg)
        if paused:
            with self.clock.hold("paused") if self.clock else _nothing():  # not compile time
                self.wait_at_stop()

    def frame_key(self, cid: str, kind: str) -> str:
        """The frame entry of graph ``(cid, kind)``: ``cid``, or ``"[4/0] #2"`` for a part."""
        part = protocol.GraphKey.parse_kind(kind).part
        return f"{cid}{protocol.PART_SEP}{part}" if part else cid
