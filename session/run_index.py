"""The session's timings by graph (``Store.runs``): a mapping whose lazily read runs are decoded when looked up."""

from __future__ import annotations

import threading
from collections.abc import MutableMapping
from typing import Any, Callable, Iterator

from inductor_step.session.format import LAZY, OUTCOME, GraphKey, graph_key, lazy_variant, load_lazy, run_outcome

#: :meth:`RunIndex.outcome`'s answer when telling would mean uncompressing runs (``decode=False``)
UNKNOWN = "unknown"


def _base(key: GraphKey) -> str:
    return str(key.replace(variant=None))


class RunIndex(MutableMapping):
    """Graph key -> the latest ``run`` message of that graph, read as a dict (``get``, ``[]``, ``items``, in the
    order the graphs' first runs came).

    A large recorded run (``read_session(..., lazy_over=N)`` yields it as its packed head plus where its line lies)
    is added with :meth:`add_lazy` and decoded, in place, when a lookup may need it: ``get(key)`` decodes only the
    runs that can be ``key``'s, newest first, until one is; iterating, ``len`` and ``in`` decode all.  A run's
    what-if variant is in its head only in sessions written since the head kept it; without it, a run is a
    candidate for every variant of its graph, unless ``has_variants(base)`` (the session's, set by its store) says
    no variant of that graph was compiled.  At ``--open`` a 1.9 MB session holds 6.8 MB of run JSON, of
    which the first frame needs one graph's (BENCHMARKS.md, session 34); the stage bar reads only
    :meth:`outcome`, which a head written since heads keep it holds."""

    def __init__(self) -> None:
        self._runs: dict[str, list[Any]] = {}  # key -> [first arrival, latest arrival, run]
        self._pending: list[tuple[int, dict[str, Any]]] = []  # (arrival, lazy head), in arrival order
        self._seq = 0
        self._lock = threading.RLock()  # the app's background preload may decode while the UI looks one up
        #: base graph key -> whether any what-if variant of it is in the session (None: assume there may be)
        self.has_variants: Callable[[str], bool] | None = None

    def _may_be_variant(self, head: dict[str, Any], base: str) -> bool:
        """Whether a pending head of graph ``base`` without ``variant`` may still be a what-if variant's run: it
        is from an older file (no outcome in its head) and the session compiled a variant of ``base``."""
        return OUTCOME not in head and (self.has_variants is None or self.has_variants(base))

    def _put(self, key: str, seq: int, run: dict[str, Any]) -> None:
        have = self._runs.get(key)
        if have is None:
            self._runs[key] = [seq, seq, run]
            return
        have[0] = min(have[0], seq)
        if seq > have[1]:
            have[1], have[2] = seq, run

    def __setitem__(self, key: str, run: dict[str, Any]) -> None:
        with self._lock:
            self._seq += 1
            self._put(key, self._seq, run)

    def add_lazy(self, head: dict[str, Any]) -> None:
        """A run read as its head (``LAZY`` in it): decoded when a lookup needs it."""
        with self._lock:
            self._seq += 1
            self._pending.append((self._seq, head))

    def _decode(self, want: str | None = None, cancelled: Callable[[], bool] = lambda: False) -> None:
        """Decode the pending runs that can be ``want``'s, newest first, until one is; all of them for None (until
        ``cancelled()``)."""
        if want is None:
            while self._pending and not cancelled():  # one at a time: a lookup on the UI thread waits for one at most
                with self._lock:
                    if not self._pending:
                        return
                    seq, head = self._pending.pop(0)
                    load_lazy(head)
                    self._put(graph_key(head), seq, head)
            return
        with self._lock:
            if not self._pending:
                return
            base = _base(GraphKey.parse(want))
            for item in reversed(list(self._pending)):
                seq, head = item
                if "variant" not in head and LAZY in head and _base(GraphKey.of(head)) == base \
                        and self._may_be_variant(head, base):
                    lazy_variant(head)  # read off the end of its JSON (a what-if's ends so), or the run decoded
                hk = GraphKey.of(head)
                known = "variant" in head or OUTCOME in head  # its graph is known from its head
                if LAZY in head and ((str(hk) != want) if known else (_base(hk) != base)):
                    continue
                self._pending.remove(item)
                load_lazy(head)
                got = graph_key(head)
                self._put(got, seq, head)
                if got == want:
                    return

    def outcome(self, key: str, decode: bool = True) -> str | None:
        """What graph ``key``'s latest run came to (:func:`inductor_step.session.format.run_outcome`: ``"timed"``,
        ``"no_eager"``, ``"failed"``, ``"not_timed"``; None: no run), read off its head where the head holds it
        (no decoding); with ``decode=False``, :data:`UNKNOWN` where telling would mean uncompressing runs (an
        older file's runs of a graph that has what-if variants, whose heads do not say which is which)."""
        with self._lock:
            have = self._runs.get(key)
            base = _base(GraphKey.parse(key))
            for seq, head in reversed(self._pending):
                if have is not None and seq < have[1]:
                    break  # older than the run already decoded for it
                hk = GraphKey.of(head)
                if "variant" in head or OUTCOME in head:  # its graph is known from its head
                    if str(hk) != key:
                        continue
                    if OUTCOME in head:
                        return head[OUTCOME]
                elif _base(hk) != base or (key != base and not self._may_be_variant(head, base)):
                    continue  # another graph's, or the original's while a variant is asked for
                elif not decode and self._may_be_variant(head, base):
                    return UNKNOWN
                break  # this head is (or may be) the latest run of key: decode as get does
        return run_outcome(self.get(key))

    def load_all(self, cancelled: Callable[[], bool] = lambda: False) -> None:
        """Decode every run still pending (the app's preload, after the first frame), until ``cancelled()``."""
        self._decode(cancelled=cancelled)

    def __getitem__(self, key: str) -> Any:
        self._decode(key)
        return self._runs[key][2]

    def get(self, key: Any, default: Any = None) -> Any:
        if not isinstance(key, str):
            return default
        self._decode(key)
        have = self._runs.get(key)
        return default if have is None else have[2]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def __delitem__(self, key: str) -> None:
        self._decode()
        del self._runs[key]

    def __iter__(self) -> Iterator[str]:
        self._decode()
        return iter(sorted(self._runs, key=lambda k: self._runs[k][0]))

    def __len__(self) -> int:
        self._decode()
        return len(self._runs)

    def __bool__(self) -> bool:
        return bool(self._pending) or bool(self._runs)

    def __repr__(self) -> str:
        return f"RunIndex({dict(self.items())!r})"
