"""inductor-step's pytest plugin (entry point ``pytest11``): the ``compile_record`` fixture records the torch.compile compiles a test makes and lets it assert on them.

::

    def test_mlp_compiles_once(compile_record):
        f = torch.compile(mlp)
        f(torch.randn(8, 16))
        assert len(compile_record.graphs) == 1 and not compile_record.graph_breaks
        assert compile_record.fusions >= 1
        assert compile_record.kernel_of("buf2").startswith("cpp_fused_")

The fixture is a :class:`CompileRecord` (:class:`inductor_step.session.compiled.Compiled` read live from
the session file the test is recording): ``graphs``, ``graph_breaks``, ``recompiles``, ``kernels``,
``fused``, ``fusions``, ``kernel_of(buffer, graph)``, ``graph(key)``, ``summary()``, ``path``.  The
recording is :func:`inductor_step.tracer.record.recording`: the agent's own capture inside the test's
process, on a fresh Dynamo (``torch._dynamo.reset()`` first), every torch setting put back when the test
ends; nothing is timed.  The session file stays in the test's ``tmp_path`` (``inductor-step --open`` it);
a failed test's report gets a section with the counts and that path.

Why here and not in ``inductor_step.session``: the library reads recordings and imports neither torch
nor Textual; recording needs the tracer (torch), and this module joins the two.  It imports torch only
when a test asks for the fixture, so registering the plugin costs a test run nothing.
"""

from __future__ import annotations

import os
from typing import Any, Iterator

import pytest

from inductor_step.session.compiled import Compiled

_PATH = pytest.StashKey[str]()


class CompileRecord(Compiled):
    """The compiles recorded so far into the session file ``path`` (re-read whenever the file grew)."""

    def __init__(self, path: str):  # noqa: D107 - no Compiled.__init__: ``session`` is read live
        self.path = path
        self._size = -1
        self._session: Any = None

    @property  # type: ignore[override]
    def session(self) -> Any:
        """The recording's index (:class:`inductor_step.session.store.Store`), as far as it has come."""
        size = os.path.getsize(self.path) if os.path.exists(self.path) else 0
        if size != self._size or self._session is None:
            from inductor_step.session.format import read_session  # noqa: PLC0415
            from inductor_step.session.store import Store  # noqa: PLC0415

            self._session = Store.of(list(read_session(self.path)))
            self._size = size
        return self._session

    @session.setter
    def session(self, value: Any) -> None:
        self._session = value


@pytest.fixture
def compile_record(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[CompileRecord]:
    """Record the torch.compile compiles this test makes (in its own process, on a fresh Dynamo) and
    give them as a :class:`CompileRecord`; the session file is ``tmp_path / "compiles.jsonl"``."""
    from inductor_step.tracer.record import recording  # noqa: PLC0415 - imports torch

    path = str(tmp_path / "compiles.jsonl")
    request.node.stash[_PATH] = path
    with recording(path, label=request.node.nodeid):
        yield CompileRecord(path)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """A failed test that recorded compiles: its report gets the counts and the session file's path."""
    outcome = yield
    report = outcome.get_result()
    path = item.stash.get(_PATH, None)
    if path is None or not report.failed or call.when != "call":
        return
    try:
        text = CompileRecord(path).summary()
    except Exception as e:  # noqa: BLE001 - a report section never breaks the report
        text = f"(the recording could not be read: {type(e).__name__}: {e})"
    report.sections.append(("inductor-step compiles", f"{text}\nsession: {path}  (inductor-step --open {path})"))


__all__ = ["CompileRecord", "compile_record"]
