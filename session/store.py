"""The session's index (``Store``): every message, decoded once and indexed by graph and stage (no Textual, no torch)."""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from inductor_step.session.format import (ALL_STAGES, LAZY, STAGES, GraphKey, graph_key, load_lazy, read_session,
                                          split_variant)
from inductor_step.session.format.messages import Header
from inductor_step.session.format.types import Links
from inductor_step.session.format.records import Record, decode, record_class
from inductor_step.session.format.run_status import RunStatus
from inductor_step.session.run_index import RunIndex

_WORD = re.compile(r"\w+")
# a kernel's definition in Inductor's wrapper: NAME = async_compile.triton('NAME', '''...''', ...)
_DEF = re.compile(r"^(?P<name>\w+) = async_compile\.\w+\(.*?(?P<q>r?''')(?P<src>.*?)'''", re.S | re.M)


class IdentityCache:
    """Values computed from session objects, kept while those very objects (by identity) are the
    inputs: a stop's text is megabytes and its table 28,000 rows, and the same stop is shown again
    and again.  ``get(key, parts, build)`` returns ``build()``'s value for ``key``, computed again
    only when any of ``parts`` is a different object than last time; at most ``size`` keys are kept
    (the oldest go first)."""

    def __init__(self, size: int = 16) -> None:
        self.size = size
        self._items: dict[Any, tuple[tuple, Any]] = {}

    def __contains__(self, key: Any) -> bool:
        return key in self._items

    def get(self, key: Any, parts: tuple, build: Callable[[], Any]) -> Any:
        hit = self._items.get(key)
        if hit is not None and len(hit[0]) == len(parts) and all(a is b for a, b in zip(hit[0], parts)):
            return hit[1]
        value = build()
        self._items[key] = (parts, value)
        while len(self._items) > self.size:
            del self._items[next(iter(self._items))]
        return value


def legacy_kernel_spans(stop: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Where each kernel of a codegen stop lies in its wrapper, for sessions recorded before the
    tracer shipped ``kernel_spans`` (format ``inductor-step/1`` files): the same shape, 1-based
    wrapper lines: ``{"def": [first, last], "body": line}`` for a generated kernel (its
    ``async_compile`` definition and the line of its source's first line), ``{"call": line}`` for an
    extern or fallback call.  Computed once per stop when the session is looked at."""
    wrapper = stop.get("wrapper") or ""
    spans: dict[str, dict[str, Any]] = {}
    defs = {}
    for m in _DEF.finditer(wrapper):
        first = wrapper.count("\n", 0, m.start()) + 1
        body = wrapper.count("\n", 0, m.start("src")) + 1
        defs[m.group("name")] = {"def": [first, wrapper.count("\n", 0, m.end()) + 1], "body": body}
    calls: dict[str, int] | None = None
    for k in stop.get("kernels") or []:
        name = k.get("name")
        if name in defs:
            d = dict(defs[name])
            src = k.get("source") or ""
            # the source starts on the definition's line (r'''#include ...) or the next one
            if src and not wrapper.split("\n", d["body"])[d["body"] - 1].endswith(src.split("\n", 1)[0]):
                d["body"] += 1
            spans[name] = d
        elif k.get("source"):
            if calls is None:  # each stripped line, and what follows "x = ", -> its first line (one pass)
                calls = {}
                for i, ln in enumerate(wrapper.split("\n")):
                    ln = ln.strip()
                    calls.setdefault(ln, i + 1)
                    if " = " in ln:
                        calls.setdefault(ln.split(" = ", 1)[1], i + 1)
            line = calls.get(k["source"].strip())
            if line:
                spans[name] = {"call": line}
    return spans


@dataclass
class Store:
    """The index of one session's messages (each decoded once into its record), in arrival order, with the
    lookups the views need: what the UI, headless, the report, the diff and the ledger read.  The public
    object over it is :class:`inductor_step.session.api.Store` (graphs as :class:`Graph` objects, the
    ledgers, diffs); this is the index, keyed by graph label.

    ``graphs`` lists graph keys (``"[0/0] forward"``) in the order their first stop arrived;
    ``stops`` every stop; ``by_graph[key][stage]`` the stop of that graph at that stage;
    ``runs[key]`` the latest timing of a graph; ``errors`` error messages; ``log`` the user's
    output as (stream, text) pairs; ``done`` the agent's end-of-script message; ``run_status`` where the
    latest timing request stands (the agent's last ``run_status`` message, or what the UI noted with
    :meth:`note_run_status`);
    ``process_groups`` the process groups a rank of a torchrun job made.
    """

    header: Record = field(default_factory=lambda: record_class(Header)())  # empty until the header came
    stops: list[dict[str, Any]] = field(default_factory=list)
    graphs: list[str] = field(default_factory=list)
    by_graph: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    runs: RunIndex = field(default_factory=RunIndex)  # a dict to read; large recorded runs decoded when looked up
    numerics: dict[str, dict[str, Any]] = field(default_factory=dict)  # graph key -> numerics message
    errors: list[dict[str, Any]] = field(default_factory=list)
    guards: dict[str, str] = field(default_factory=dict)
    log: list[tuple[str, str]] = field(default_factory=list)
    done: Record | None = None
    #: where timing stands: the ``run_status`` property; the agent's latest message is decoded when first read
    _run_status: RunStatus = field(default_factory=RunStatus, repr=False)  # "" message: no timing asked for yet
    _run_status_msg: Record | None = field(default=None, repr=False)
    agent_exit: int | None = None
    #: the process groups the script made (a torchrun job's rank: protocol.ProcessGroup messages)
    process_groups: list[dict[str, Any]] = field(default_factory=list)
    blocked: dict[str, Any] | None = None  # the collective the rank waits in now (tracer.rank_watch)
    #: (A, B) graph keys -> their latest ``pair_timing`` message: timed round by round (r in the diff)
    pair_timings: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    #: the compile's own time, one message per finished compile (session.compile_time adds them up)
    compile_times: list[dict[str, Any]] = field(default_factory=list)
    #: ``blame`` messages, in order (session.blame.runs reads them into steps and verdicts)
    blames: list[dict[str, Any]] = field(default_factory=list)
    cache: IdentityCache = field(default_factory=lambda: IdentityCache(32), repr=False)
    _load_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _fusion_idx: dict[int, tuple[dict[str, Any], dict[str, list[int]]]] = field(default_factory=dict, repr=False)
    _variant_bases: tuple[int, set[str]] = field(default=(-1, set()), repr=False)  # (len(graphs), has_variants' bases)

    def __post_init__(self) -> None:
        self.runs.has_variants = self.has_variants

    def has_variants(self, base: str) -> bool:
        """Whether a what-if variant of graph ``base`` (a key without variant) was compiled in this session."""
        n = len(self.graphs)
        if self._variant_bases[0] != n:
            self._variant_bases = (n, {b for b, v in map(split_variant, self.graphs) if v})
        return base in self._variant_bases[1]

    def run_outcome(self, key: str, decode: bool = True) -> str | None:
        """What graph ``key``'s latest timing came to (:meth:`RunIndex.outcome`: ``"timed"``, ``"no_eager"``,
        ``"failed"``, ``"not_timed"``, None for none; ``"unknown"`` with ``decode=False`` where telling would mean
        uncompressing runs)."""
        return self.runs.outcome(key, decode)

    @classmethod
    def of(cls, messages: list[dict[str, Any]]) -> "Store":
        """A session holding ``messages`` (as :func:`read_session` yields them)."""
        s = cls()
        for m in messages:
            s.add(m)
        return s

    def add(self, msg: dict[str, Any]) -> Record:
        """Decode one message into its record (:func:`inductor_step.session.format.records.decode`: once;
        the same record is what the session holds) and index it by its ``type`` (:data:`INDEX`; a type
        not there is kept only in the file).  Returns the record."""
        rec = decode(msg)
        index = INDEX.get(rec.type)
        if index is not None:
            index(self, rec)
        return rec

    def _add_stop(self, msg: Record) -> None:
        key = graph_key(msg)
        if msg.get("corrects"):  # the dynamo stop again, under the kind AOTAutograd chose
            self.drop_guess(str(GraphKey.of(msg).replace(kind=str(msg["corrects"]))))
        if key not in self.by_graph:
            self.by_graph[key] = {}
            self.graphs.append(key)
        old = self.by_graph[key].get(msg["stage"])
        if old is not None:  # Dynamo restarted the frame's analysis: the stop again supersedes the old one
            self.stops = [s for s in self.stops if s is not old]
        self.by_graph[key][msg["stage"]] = msg
        self.stops.append(msg)

    def _add_header(self, msg: Record) -> None:
        self.header = msg

    def _add_run(self, msg: Record) -> None:
        if LAZY in msg:  # read as its head (read_session's lazy_over): decoded when first looked up
            self.runs.add_lazy(msg)
        else:
            self.runs[graph_key(msg)] = msg

    def _add_numerics(self, msg: Record) -> None:
        if msg.get("compile_id") != "?":
            self.numerics[graph_key(msg)] = msg

    def _add_run_status(self, msg: Record) -> None:
        self._run_status_msg = msg  # a recorded run has hundreds: only the last is ever read

    @property
    def run_status(self) -> RunStatus:
        """Where the latest timing request stands (:class:`RunStatus`): the agent's last ``run_status`` message,
        or what the UI noted since (:meth:`note_run_status`); an empty message before any."""
        if self._run_status_msg is not None:
            self._run_status, self._run_status_msg = RunStatus.from_message(self._run_status_msg), None
        return self._run_status

    def note_run_status(self, text: str) -> None:
        """Show ``text`` as where timing stands (``"timing requested…"``, ``"cancelling…"``, a what-if's step) until
        the agent's next ``run_status`` message: a status the UI notes itself (:meth:`RunStatus.noted`)."""
        self._run_status, self._run_status_msg = RunStatus.noted(text), None

    def _add_guards(self, msg: Record) -> None:
        self.guards[msg.get("compile_id", "?")] = msg.get("text", "")

    def _add_output(self, msg: Record) -> None:
        self.log.append((msg.get("stream", "stdout"), msg.get("text", "")))

    def _add_done(self, msg: Record) -> None:
        self.done = msg

    def _add_agent_exit(self, msg: Record) -> None:
        self.agent_exit = msg.get("returncode")

    def _add_pair_timing(self, msg: Record) -> None:
        self.pair_timings[(str(msg.get("a")), str(msg.get("b")))] = msg

    def _add_blocked(self, msg: Record) -> None:  # tracer.rank_watch: the rank waits inside a collective
        self.blocked = msg if msg.get("collective") else None  # None: no longer

    def drop_guess(self, key: str) -> None:
        """Forget graph ``key`` if all it has is a dynamo stop: the kind the agent guessed there,
        which a later dynamo stop ``corrects``."""
        stages = self.by_graph.get(key)
        if stages is None or set(stages) - {"dynamo"}:
            return
        del self.by_graph[key]
        self.graphs.remove(key)
        self.stops = [s for s in self.stops if not (s.get("stage") == "dynamo" and graph_key(s) == key)]

    def stop_for(self, key: str, stage: str) -> dict[str, Any] | None:
        """The stop of graph ``key`` at ``stage``, or None if the compile has not reached it.
        A stop read lazily from a large session file is parsed here, on first use."""
        stop = self.by_graph.get(key, {}).get(stage)
        if stop is None:
            return None
        if LAZY in stop:
            with self._load_lock:  # the background preload may be parsing this very stop
                load_lazy(stop)
        return stop

    def fusion_index(self, stop: dict[str, Any]) -> dict[str, list[int]]:
        """Scheduler node name (``op3``, ``op3_op4``) -> indices of the lines of a scheduling stop's
        ``fusion_log`` that name it (fusion decisions only), built once per stop: a large graph
        logs tens of thousands of lines."""
        hit = self._fusion_idx.get(id(stop))
        if hit is not None and hit[0] is stop:
            return hit[1]
        idx: dict[str, list[int]] = {}
        for i, line in enumerate(stop.get("fusion_log") or []):
            if "fus" in line or "cannot" in line or "can " in line:
                for tok in set(_WORD.findall(line)):
                    idx.setdefault(tok, []).append(i)
        self._fusion_idx[id(stop)] = (stop, idx)
        return idx

    def preload(self, cancelled: Callable[[], bool] = lambda: False) -> int:
        """Parse every stop still unparsed (see ``read_session(..., lazy_over=N)``), in stop order;
        meant for a background thread after the first frame, so stepping later finds each stop
        ready; then every run still undecoded.  Stops when ``cancelled()`` is true; returns how many stops it
        parsed."""
        n = 0
        for stop in list(self.stops):
            if cancelled():
                break
            if LAZY in stop:
                with self._load_lock:
                    if LAZY in stop:
                        load_lazy(stop)
                        n += 1
                if stop.get("stage") == "scheduling":
                    self.fusion_index(stop)
        self.runs.load_all(cancelled)
        return n

    def kernel_spans(self, key: str | None) -> dict[str, dict[str, Any]]:
        """Graph ``key``'s kernels as they lie in its wrapper (1-based lines; see
        :func:`legacy_kernel_spans` for the shape): the codegen stop's ``kernel_spans`` as the
        tracer shipped it, or for older sessions computed once; {} before codegen."""
        stop = self.stop_for(key, "codegen") if key else None
        if not stop:
            return {}
        if isinstance(stop.get("kernel_spans"), dict):
            return stop["kernel_spans"]
        return self.cache.get(("kernel_spans", id(stop)), (stop,), lambda: legacy_kernel_spans(stop))

    def line_buffers(self, key: str | None) -> dict[str, dict[int, str]]:
        """Graph ``key``'s reverse index: kernel -> 1-based line of its source -> the buffer whose
        lines (``links["buffers"][b]["kernel_lines"]``) include it (the first such buffer)."""
        links = self.links(key)

        def build() -> dict[str, dict[int, str]]:
            out: dict[str, dict[int, str]] = {}
            for name, b in (links.get("buffers") or {}).items():
                for kernel, ranges in (b.get("kernel_lines") or {}).items():
                    per = out.setdefault(kernel, {})
                    for a, e in ranges or []:
                        for i in range(a, e + 1):
                            per.setdefault(i, name)
            return out

        return self.cache.get(("line_buffers", key), (links,), build)

    def links(self, key: str | None) -> dict[str, Any]:
        """The cross-level index of graph ``key`` (its codegen stop's ``links``, a ``Links`` record); an empty
        ``Links`` record before codegen (falsy, its fields None)."""
        stop = self.stop_for(key, "codegen") if key else None
        links = stop.links if isinstance(stop, Record) else (stop or {}).get("links")
        return links if links and "buffers" in links else record_class(Links)()

    @property
    def script_dir(self) -> str | None:
        """The folder of the session's script: paths under it are shown relative to it
        (:func:`inductor_step.session.paths.short_path`)."""
        from inductor_step.session.paths import script_dir  # noqa: PLC0415

        return script_dir(self.header)

    def stage_links(self, key: str | None) -> dict[str, Any]:
        """The links the panes follow the selection by: the codegen stop's once it came, before that
        what the lowering, scheduling, loopbody, aot and dynamo stops tell (:func:`inductor_step.session.prelinks.stop_links`,
        with ``partial`` set), a ``Links`` record either way (read by attribute); empty before lowering."""
        links = self.links(key)
        if links or not key:
            return links
        from inductor_step.session.prelinks import stop_links  # noqa: PLC0415

        parts = tuple(self.stop_for(key, s) for s in ("lowering", "scheduling", "loopbody", "aot", "dynamo"))
        if parts[0] is None:
            return {}
        return self.cache.get(("stage_links", key), parts, lambda: record_class(Links)(stop_links(*parts)))

    def stages_done(self, key: str, decode: bool = True) -> list[str]:
        """Stages of graph ``key`` that have a stop (plus ``run`` once it was timed: a timing that failed
        or was cancelled is not a done run stage; with ``decode=False`` not while that is unknown, see
        :meth:`run_outcome`)."""
        done = [s for s in STAGES if s in self.by_graph.get(key, {})]
        if self.run_outcome(key, decode) in ("timed", "no_eager"):
            done.append("run")
        return done

    def error_for(self, key: str | None) -> dict[str, Any] | None:
        """The last error attributed to graph ``key`` (or a script-level one when key is None)."""
        for e in reversed(self.errors):
            if key is None or (e.get("compile_id") and graph_key(e) == key):
                return e
        return None

    def graph_note(self, key: str) -> str:
        """Why a graph exists, in full: recompile reasons, the graph break that ended it (reason, hint,
        user line), the break it resumes after (:func:`inductor_step.session.text.graph_note`)."""
        from inductor_step.session.text import graph_note  # noqa: PLC0415

        from inductor_step.session.text import skipped_frames_text  # noqa: PLC0415

        from inductor_step.session.text import after_frames_text  # noqa: PLC0415

        stop = self.stop_for(key, "dynamo")
        note = graph_note(stop, self.script_dir)
        return "; ".join(x for x in (note, skipped_frames_text(stop, self.skipped_frames(key), self.script_dir),
                                     after_frames_text(self.breaks_after(key), self.script_dir)) if x)

    def breaks_after(self, key: str) -> list[dict[str, str]]:
        """The graph breaks of the frames after graph ``key`` that gave no graph (``{"compile_id", "text"}``, the
        ``done`` message's ``breaks_after``), when ``key`` is the session's last graph of its compile ids; else []."""
        after = (self.done.get("breaks_after") if self.done is not None else None) or []
        if not after or not self.graphs:
            return []
        last = max(self.graphs, key=lambda g: (GraphKey.parse(g).frame or 0, GraphKey.parse(g).compile_id))
        return list(after) if GraphKey.parse(key).compile_id == GraphKey.parse(last).compile_id else []

    def skipped_frames(self, key: str) -> list[int]:
        """The frame ids (``[N/0]``'s N) below graph ``key``'s that no graph of this session has, when
        ``key`` is the first graph of the session: frames Dynamo looked at and compiled nothing for."""
        if not self.graphs or key != self.graphs[0]:
            return []
        n = GraphKey.parse(key).frame
        seen = {GraphKey.parse(g).frame for g in self.graphs}
        return [i for i in range(n or 0) if i not in seen]


#: how :meth:`Store.add` indexes each message type: the one place the session dispatches on ``type``
INDEX: dict[str, Callable[[Store, Record], None]] = {
    "header": Store._add_header, "stop": Store._add_stop, "run": Store._add_run,
    "numerics": Store._add_numerics, "run_status": Store._add_run_status,
    "error": lambda s, m: s.errors.append(m), "guards": Store._add_guards, "output": Store._add_output,
    "done": Store._add_done, "agent_exit": Store._add_agent_exit,
    "process_group": lambda s, m: s.process_groups.append(m), "pair_timing": Store._add_pair_timing,
    "compile_time": lambda s, m: s.compile_times.append(m), "blocked": Store._add_blocked,
    "blame": lambda s, m: s.blames.append(m),
}


def __getattr__(name: str) -> Any:
    """``fmt_ms``, which the report imports from here (session.text's, imported on first use)."""
    if name == "fmt_ms":
        from inductor_step.session.text import fmt_ms  # noqa: PLC0415

        return fmt_ms
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def summarize_stop(stop: dict[str, Any]) -> str:
    """One line about a stop, as ``--headless`` prints it (:func:`inductor_step.session.text.stop_summary`)."""
    from inductor_step.session.text import stop_summary  # noqa: PLC0415

    return stop_summary(stop)


__all__ = ["Store", "summarize_stop", "ALL_STAGES", "STAGES"]


# --------------------------------------------------------------------------- for report and export

def load_session(session_path: str) -> list[dict[str, Any]]:
    """All messages of a session file.

    Raises FileNotFoundError / IsADirectoryError / OSError if it cannot be read and ValueError if
    it is not an ``inductor-step`` session.
    """
    if os.path.isdir(session_path):
        raise IsADirectoryError(f"{session_path} is a directory, not a session file")
    return list(read_session(session_path))


def freeze_gc() -> None:
    """Move every object alive now out of the garbage collector's sight (``gc.freeze``), and make full
    collections rarer: a large session is millions of parsed JSON objects that live as long as the
    app, and a full collection over them stalled a key by ~0.5 s (BENCHMARKS.md (b))."""
    import gc  # noqa: PLC0415

    gc.freeze()
    t0, t1, t2 = gc.get_threshold()
    gc.set_threshold(t0, t1, max(t2, 1000))
