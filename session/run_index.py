"""The session's timings by graph (``Store.runs``): a mapping whose lazily read runs are decoded when looked up."""

from __future__ import annotations

import threading
from collections.abc import MutableMapping
from typing import Any, Callable, Iterator

from inductor_step.session.format import LAZY, GraphKey, graph_key, lazy_variant, load_lazy


def _base(key: GraphKey) -> str:
    return str(key.replace(variant=None))


class RunIndex(MutableMapping):
    """Graph key -> the latest ``run`` message of that graph, read as a dict (``get``, ``[]``, ``items``, in the
    order the graphs' first runs came).

    A large recorded run (``read_session(..., lazy_over=N)`` yields it as its packed head plus where its line lies)
    is added with :meth:`add_lazy` and decoded, in place, when a lookup may need it: ``get(key)`` decodes only the
    runs that can be ``key``'s, newest first, until one is; iterating, ``len`` and ``in`` decode all.  A run's
    what-if variant is in its head only in sessions written since the head kept it; without it, a run is a
    candidate for every variant of its graph.  At ``--open`` a 1.9 MB session holds 6.8 MB of run JSON, of
    which the first frame needs one graph's (BENCHMARKS.md, session 34)."""

    def __init__(self) -> None:
        self._runs: dict[str, list[Any]] = {}  # key -> [first arrival, latest arrival, run]
        self._pending: list[tuple[int, dict[str, Any]]] = []  # (arrival, lazy head), in arrival order
        self._seq = 0
        self._lock = threading.RLock()  # the app's background preload may decode while the UI looks one up

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
                if "variant" not in head and LAZY in head and _base(GraphKey.of(head)) == base:
                    lazy_variant(head)  # read off the end of its JSON (a what-if's ends so), or the run decoded
                hk = GraphKey.of(head)
                if LAZY in head and ((str(hk) != want) if "variant" in head else (_base(hk) != base)):
                    continue
                self._pending.remove(item)
                load_lazy(head)
                got = graph_key(head)
                self._put(got, seq, head)
                if got == want:
                    return

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
