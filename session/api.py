"""The public entry points: load a session or a job file, its graphs, the ledgers, diffs and the comparison of ranks.

    >>> from inductor_step import session
    >>> s = session.load("tests/fixtures/demo.jsonl")
    >>> g = s.graph("[0/0] forward")
    >>> b = g.buffer("buf0"); b.kernel(), b.fx_nodes(), b.user_lines()

No Textual, no torch: a session recorded on a GPU box opens on a laptop.
"""

from __future__ import annotations

import os
from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterator

from inductor_step.session.graph import Graph
from inductor_step.session.store import Store, load_session

if TYPE_CHECKING:  # (the ledger is imported when first asked for)
    from inductor_step.session.ledger.rows import FusionRow, LineRow, RooflineRow


class Session:
    """A recorded session (``inductor-step --record``) as objects: ``header`` (the header message: torch version,
    device, script...), ``graphs`` (:class:`Graph`, in the order their first stop arrived), ``errors`` (error
    messages), ``log`` (the script's output as (stream, text)), ``store`` (the index under it, the one the UI,
    headless and the report read: :class:`inductor_step.session.store.Store`, keyed by graph label), ``label``
    and ``path`` (the file it came from).  Built by :func:`load` or :meth:`of`."""

    def __init__(self, store: Store, label: str = "", path: str | None = None) -> None:
        self.store = store
        self.label = label
        self.path = path

    @classmethod
    def of(cls, messages: list[dict[str, Any]], label: str = "") -> "Session":
        """A session holding ``messages`` (as session.format.read_session yields them)."""
        return cls(Store.of(messages), label)

    def __repr__(self) -> str:
        return f"<Session {self.label or '?'}: {len(self.graphs)} graphs>"

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from inductor_step.session.rich_views import render  # noqa: PLC0415 - Rich only when rendered

        yield render(self)

    @property
    def header(self) -> dict[str, Any]:
        """The header message (session.format.Header): ``torch``, ``device``, ``script``, ``argv``..."""
        return self.store.header

    @property
    def errors(self) -> list[dict[str, Any]]:
        """Error messages (session.format.Error), in order."""
        return self.store.errors

    @property
    def log(self) -> list[tuple[str, str]]:
        """The script's output, (stream, text) pairs."""
        return self.store.log

    @cached_property
    def _graphs(self) -> dict[str, Graph]:
        return {k: Graph(self, k) for k in self.store.graphs}

    @property
    def graphs(self) -> list[Graph]:
        """Every graph (subgraphs, parts and what-if variants included), in the order their first stop came."""
        return list(self._graphs.values())

    def __iter__(self) -> Iterator[Graph]:
        return iter(self.graphs)

    def __len__(self) -> int:
        return len(self._graphs)

    _MISSING: Any = object()

    def graph(self, key: str, default: Any = _MISSING) -> Graph:
        """Graph ``key`` (``"[0/0] forward"``; a compile id alone, ``"[0/0]"``, when it names one graph).
        Raises KeyError naming the session's graphs when there is none (unless ``default`` is given)."""
        g = self._graphs.get(key)
        if g is None:
            hits = [x for k, x in self._graphs.items() if x.compile_id == key and x.subgraph is None]
            if len(hits) == 1:
                return hits[0]
            if default is not self._MISSING:
                return default
            raise KeyError(f"no graph {key!r} in {self.label or 'this session'}: {', '.join(self._graphs) or 'none'}")
        return g

    def __getitem__(self, key: str) -> Graph:
        return self.graph(key)

    # ------------------------------------------------------------------ ledgers

    def roofline_rows(self) -> list[RooflineRow]:
        """Every timed kernel call's roofline, most wasted first (session.ledger.roofline_rows, each a
        session.ledger.rows.RooflineRow: times in ms, bytes in GB, each figure with its source).  Computed once."""
        from inductor_step.session.ledger import roofline_rows  # noqa: PLC0415

        return self.store.cache.get(("api_roofline",), (), lambda: roofline_rows(self.store))

    def line_rows(self) -> list[LineRow]:
        """Time by user line over every timed graph, most wasted first (session.ledger.line_rows, each a
        session.ledger.rows.LineRow)."""
        from inductor_step.session.ledger import line_rows  # noqa: PLC0415

        return self.store.cache.get(("api_lines",), (), lambda: line_rows(self.store))

    def fusion_rows(self) -> list[FusionRow]:
        """Missed fusions, costliest first (session.ledger.fusion_rows, each a session.ledger.rows.FusionRow)."""
        from inductor_step.session.ledger import fusion_rows  # noqa: PLC0415

        return self.store.cache.get(("api_fusions",), (), lambda: fusion_rows(self.store))

    # ------------------------------------------------------------------ diffs

    def diff(self, other: "Session") -> list[tuple[str | None, str | None, str, Any]]:
        """Every graph of this session paired with ``other``'s (by compile id and kind, then by content) and
        diffed: (key here or None, key there or None, how they were paired, session.diff.GraphDiff or
        None for a graph only one side has).  session.diff.render_sessions prints the list."""
        from inductor_step.session.diff import diff_sessions  # noqa: PLC0415

        return diff_sessions(self.store, other.store, self.label or "A", other.label or "B")

    def blames(self) -> list[Any]:
        """Each recorded blame (``--blame numerics``, B in the UI), oldest first: session.blame.BlameRun with its
        ``steps`` (session.blame.Step: what was switched off, good or bad, seconds) and ``verdict``
        (session.blame.Verdict: backend, subsystem, application, what, setting, repro); ``blame_where(run)`` ties
        it to this session's FX nodes and kernels."""
        from inductor_step.session.blame import runs  # noqa: PLC0415

        return runs(self.store.blames)

    def blame_where(self, run: Any) -> dict[str, Any]:
        """Where a blame's verdict is in this session: ``{"graph", "fx_nodes", "kernels"}`` ({} when it names none)."""
        from inductor_step.session.blame import located  # noqa: PLC0415

        return located(run, self.store).to_dict()

    def recompiles(self) -> list[Any]:
        """Each recompile (``[f/n]``, n > 0) diffed against its default partner (the compile it replaced):
        session.diff.GraphDiff items."""
        from inductor_step.session.diff import default_partner  # noqa: PLC0415

        out = []
        for g in self.graphs:
            cid = g.compile_id.strip("[]").split("/")
            if len(cid) == 2 and cid[1].split("_")[0].isdigit() and int(cid[1].split("_")[0]) > 0:
                p = default_partner(self.store.graphs, g.key)
                if p:
                    out.append(self.graph(p).diff(g))
        return out


def load(path: str, lazy: bool = False) -> Session:
    """The session recorded in ``path`` (a ``.jsonl`` session file, format ``inductor-step/1`` or ``/2``).
    ``lazy``: large stops are parsed when first looked at (as the UI does).  Raises FileNotFoundError,
    IsADirectoryError or OSError when it cannot be read and ValueError when it is not a session."""
    if lazy:
        from inductor_step.session.format import read_session  # noqa: PLC0415

        if os.path.isdir(path):
            raise IsADirectoryError(f"{path} is a directory, not a session file")
        messages = list(read_session(path, lazy_over=1 << 16))
    else:
        messages = load_session(path)
    return Session(Store.of(messages), os.path.basename(path), path)


class Job:
    """A recorded torchrun job (``inductor-step --nproc-per-node N``): ``job`` its job file
    (session.format.Job), ``ranks`` rank -> :class:`Session` (None for a rank whose session is missing or
    unreadable), ``states`` rank -> the job file's state (``finished``, ``failed``, ...)."""

    def __init__(self, path: str) -> None:
        from inductor_step.session.format import read_job  # noqa: PLC0415

        self.path = path
        self.job, paths = read_job(path)
        self.ranks: dict[int, Session | None] = {}
        for r, p in sorted(paths.items()):
            try:
                self.ranks[r] = load(p)
            except (OSError, ValueError):
                self.ranks[r] = None
        self.states = {int(jr["rank"]): str(jr["state"]) for jr in self.job.get("ranks") or []
                       if isinstance(jr, dict) and isinstance(jr.get("rank"), int) and jr.get("state")}

    def __repr__(self) -> str:
        return f"<Job {os.path.basename(self.path)}: ranks {sorted(self.ranks)}>"

    def compare(self, time_ratio: float | None = None) -> Any:
        """The ranks compared (session.ranks.compare_job): a session.ranks.RankComparison, per graph which
        ranks compiled it, where they first diverge, whose kernels are slower by more than ``time_ratio``
        (default session.ranks.TIME_RATIO, 1.25); session.ranks.text prints it."""
        from inductor_step.session.ranks import TIME_RATIO, compare_job  # noqa: PLC0415

        return compare_job(self.path, time_ratio or TIME_RATIO)


def load_job(path: str) -> Job:
    """The job recorded in ``path`` (``x.job.json``, format ``inductor-step-job/1``) with each rank's session.
    Raises OSError / ValueError when the job file cannot be read or is not one."""
    return Job(path)


def diff_graphs(a: Graph, b: Graph) -> Any:
    """Graph ``a`` against ``b`` level by level (:meth:`Graph.diff`): a session.diff.GraphDiff."""
    return a.diff(b)
