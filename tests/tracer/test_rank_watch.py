"""A rank whose script waits inside a torch.distributed call says where: the
rank row reads "waiting at <collective>", not "recording".  Real torch.distributed: rank 0 of a gloo
world of 2 whose rank 1 never comes, so its process group's set-up waits (4 s timeout) in the
script's thread while tracer.rank_watch samples it."""

from __future__ import annotations

import datetime
import threading

import pytest

dist = pytest.importorskip("torch.distributed")

from inductor_step.tracer import rank_watch  # noqa: E402
from inductor_step.tui.panes.ranks import rank_state  # noqa: E402
from inductor_step.session.store import Store  # noqa: E402


def test_a_rank_waiting_in_a_collective_says_which():
    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("no gloo in this torch")
    sent: list[dict] = []
    stop = rank_watch.start(sent.append)
    try:
        with pytest.raises(Exception):  # noqa: B017 - gloo's timeout error type differs between versions
            dist.init_process_group("gloo", rank=0, world_size=2, store=dist.HashStore(),
                                    timeout=datetime.timedelta(seconds=4))
        threading.Event().wait(1.2)
    finally:
        stop.set()
        if dist.is_initialized():
            dist.destroy_process_group()
    waits = [m for m in sent if m.get("collective")]
    assert waits and waits[0]["collective"] == "init_process_group", sent
    assert waits[0]["where"].startswith("test_rank_watch.py:") and waits[0]["since_s"] >= rank_watch.WAIT_S
    assert sent[-1] == {"type": "blocked", "collective": None}, sent  # it left the call: no longer waiting

    class St:  # what the job screen keeps per rank
        rank, view = 0, type("V", (), {"paused": None})()
    st = St()
    st.session = Store.of([{"type": "header", "distributed": {"rank": 0, "world_size": 2, "local_rank": 0}},
                             {"type": "blocked", "collective": "all_reduce", "where": "train.py:47", "since_s": 2.0}])
    row = rank_state(st, stepped=False, live=True, job_file=None)
    assert row.state == "waiting at all_reduce" and row.note.startswith("train.py:47: for another rank"), row
    st.session.add({"type": "blocked", "collective": None})
    assert rank_state(st, stepped=False, live=True, job_file=None).state == "running"


def test_the_watch_never_keeps_the_scripts_locals_alive():
    """The sampler reads the script thread's stack every ``every_s`` seconds; between samples it holds no
    frame of it.  A held frame keeps its function's locals alive after the function returns: under a job,
    examples/ddp_train.py's second DDP bucket then failed to compile ("FakeTensorDeviceMismatchError ...
    meta and cpu!"), on the CPU and on the GPU box alike.  Here a local sampled mid-call must be freed
    as soon as its function returns, while the sampler sleeps."""
    import time
    import weakref

    class Local:
        pass

    ref: list = []
    sampled = threading.Event()

    def script_call() -> None:
        obj = Local()
        ref.append(weakref.ref(obj))
        sampled.wait(2.0)  # the sampler has read this frame (the innermost of this thread) by then
        time.sleep(0.05)

    stop = threading.Event()
    t = threading.Thread(target=script_call)
    t.start()
    sends: list = []

    # samples at 0.2 s (mid-call) and 0.4 s; the call returns at about 0.3 s
    threading.Timer(0.25, sampled.set).start()
    w = threading.Thread(target=rank_watch.watch, args=(t.ident, sends.append, stop), kwargs={"every_s": 0.2},
                         daemon=True)
    w.start()
    t.join(5)
    try:
        assert ref and ref[0]() is None, "the sampler kept the script's frame (and its locals) alive"
    finally:
        stop.set()
        w.join(2)
