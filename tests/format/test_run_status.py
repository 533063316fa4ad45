"""The ``run_status`` message as a typed object (session.format.RunStatus): its TypedDict made from the dataclass,
every recorded status read back into it and written out unchanged, a newer writer's extra key read past, and the
session store keeping the object (the agent's, or one the UI notes)."""

from __future__ import annotations

import dataclasses
import glob
import os
import typing

from inductor_step.session import format as protocol
from inductor_step.session.format import RunStatus, read_session, validate
from inductor_step.session.store import Store

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = sorted(glob.glob(os.path.join(ROOT, "tests", "fixtures", "**", "*.jsonl"), recursive=True))


def test_the_message_type_is_made_from_the_dataclass_fields():
    """One definition: the TypedDict validate and the records read has ``type`` and the dataclass's fields (not the
    UI's ``local``), each with its type less None, ``failed`` a list."""
    hints = typing.get_type_hints(protocol.RunStatusMessage)
    wire = [f.name for f in dataclasses.fields(RunStatus) if f.name != "local"]
    assert list(hints) == ["type", *wire]
    assert hints["failed"] == list[str] and hints["timed"] is int and hints["limit_s"] is float
    assert protocol.MESSAGES["run_status"] is protocol.RunStatusMessage
    assert not protocol.RunStatusMessage.__required_keys__


def test_every_recorded_status_round_trips_through_the_typed_object():
    """Sessions written by earlier versions: each ``run_status`` line reads into a RunStatus whose message is the
    line again, key for key."""
    seen = 0
    for path in FIXTURES:
        for m in read_session(path):
            if m.get("type") != "run_status":
                continue
            st = RunStatus.from_message(m)
            assert st.to_message() == m, (path, m, st)
            assert not st.local and st.message == m["message"] and st.done == bool(m.get("done"))
            seen += 1
    assert seen > 100


def test_what_the_agent_sends_is_what_it_sent_as_dict_literals():
    """The constructors the tracer uses give the messages it wrote before as dicts: progress with only its text
    (and the limit on a graph's start), a done status with all its counts, ``cancelled`` only when set."""
    assert RunStatus.progress("timing [0/0] forward (1/3): loading").to_message() == \
        {"type": "run_status", "message": "timing [0/0] forward (1/3): loading"}
    assert RunStatus.progress("starting (limit 60 s per graph)", 60).to_message() == \
        {"type": "run_status", "message": "starting (limit 60 s per graph)", "limit_s": 60}
    assert RunStatus.finished("timing cancelled before it started", cancelled=True).to_message() == \
        {"type": "run_status", "message": "timing cancelled before it started", "done": True, "cancelled": True,
         "timed": 0, "failed": [], "of": 0}
    failed = ["[1/0] backward"]
    done = RunStatus.finished("timed 1 of 2 graph(s); 1 failed: [1/0] backward", 1, failed, 2)
    failed.append("later")  # the status keeps what was failed when it was made
    assert done.to_message() == {"type": "run_status", "message": "timed 1 of 2 graph(s); 1 failed: [1/0] backward",
                                 "done": True, "timed": 1, "failed": ["[1/0] backward"], "of": 2}
    assert validate(done.to_message()) == [] and RunStatus.from_message(done.to_message()) == done
    assert hash(done) == hash(RunStatus.from_message(done.to_message()))  # frozen: a pane's stamp can hold it


def test_a_newer_writers_extra_key_and_a_wrong_value_do_not_break_reading():
    """A key this version does not know is read past (validate still names it); a value of the wrong type reads
    as left out; the store keeps the typed status either way."""
    newer = {"type": "run_status", "message": "timed 2 of 2 graph(s)", "done": True, "timed": 2, "failed": [],
             "of": 2, "t": 1.5, "eta_s": 3.0, "graphs": {"[0/0] forward": "timed"}}
    st = RunStatus.from_message(newer)
    assert st == RunStatus("timed 2 of 2 graph(s)", done=True, timed=2, failed=(), of=2, t=1.5)
    assert [p for p in validate(newer) if "unknown key" in p] == \
        ["run_status: unknown key 'eta_s' (RunStatusMessage)", "run_status: unknown key 'graphs' (RunStatusMessage)"]
    odd = RunStatus.from_message({"type": "run_status", "message": "x", "done": "yes", "timed": True, "failed": "a"})
    assert odd == RunStatus("x")
    s = Store.of([newer])
    assert s.run_status == st and s.run_status.done and s.run_status.message == "timed 2 of 2 graph(s)"


def test_the_store_keeps_the_agents_status_and_the_one_the_ui_notes():
    """``note_run_status`` (the UI's ``"timing requested…"``) is a local status until the agent's next message."""
    s = Store()
    assert s.run_status == RunStatus() and s.run_status.message == ""
    s.note_run_status("timing requested…")
    assert s.run_status.local and s.run_status.message == "timing requested…" and not s.run_status.done
    s.add(RunStatus.progress("timing [0/0] inference (1/1): starting (limit 60 s per graph)", 60.0).to_message())
    assert not s.run_status.local and s.run_status.limit_s == 60.0
    s.add(RunStatus.finished("timed 1 of 1 graph(s)", 1, [], 1).to_message())
    assert s.run_status.done and (s.run_status.timed, s.run_status.of, s.run_status.failed) == (1, 1, ())
