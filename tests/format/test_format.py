"""The session format (session/format/): every message typed once, fixtures and a fresh recording
valid against those types, packed (compressed) sessions written by the UI's writer and read back,
lazily, like the uncompressed ``inductor-step/1`` files in tests/fixtures/."""

from __future__ import annotations

import glob
import json
import os
import typing

import pytest

from inductor_step.session import format as protocol
from inductor_step.session.format import (FORMAT, LAZY, STOP_HEAD_KEYS, load_lazy, read_session, stop_head,
                                           validate)
from inductor_step.live.client import SessionWriter
from inductor_step.session.format.reader import _STOP_HEAD

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = sorted(glob.glob(os.path.join(ROOT, "tests", "fixtures", "*.jsonl")))


def _problems(messages: list[dict]) -> list[str]:
    out = []
    for i, m in enumerate(messages):
        out += [f"message {i} ({m.get('type')} {m.get('stage', '')}): {p}" for p in validate(m)]
    return out


# ----------------------------------------------------------------------------- the types themselves

@pytest.mark.parametrize("path", FIXTURES, ids=os.path.basename)
def test_every_fixture_line_matches_the_types(path):
    """Each line of each recorded fixture (``inductor-step/1`` uncompressed, or ``/2`` with packed lines)
    is a message typed in protocol.py: no missing required key, no key the types do not know, every
    value of its type."""
    with open(path, "rb") as f:
        lines = [line for line in f if line.strip()]
    messages = [protocol.decode(line) for line in lines]
    assert None not in messages
    assert messages[0]["format"] in protocol.FORMATS_READ
    assert _problems(messages) == []
    # read_session yields the same messages (the /1 reader still works)
    assert list(read_session(path)) == messages


def test_validator_names_what_is_wrong_and_where():
    codegen = next(m for m in read_session(os.path.join(ROOT, "tests", "fixtures", "demo.jsonl"))
                   if m.get("stage") == "codegen")
    assert validate(codegen) == []
    bad = json.loads(json.dumps(codegen))
    bad["graph_kind"] = "sideways"
    bad["colour"] = "red"
    del bad["seq"]
    buf = next(iter(bad["links"]["buffers"]))
    bad["links"]["buffers"][buf]["kernel_lines"] = {"k": [["1", 2]]}
    bad["kernels"][0]["backend"] = "fortran"
    problems = validate(bad)
    text = "\n".join(problems)
    assert "missing 'seq'" in text
    assert "unknown key 'colour'" in text
    assert "stop.graph_kind: 'sideways' is not one of ('inference', 'forward', 'backward')" in text
    assert f"stop.links.buffers['{buf}'].kernel_lines['k'][0][0]: '1' is not int" in text
    assert "stop.kernels[0].backend: 'fortran'" in text
    assert len(problems) == 5, problems
    assert validate({"type": "telegram"}) == ["unknown message type 'telegram'"]
    assert validate({"type": "stop", "stage": "linking"}) == ["unknown message type 'stop' (stage 'linking')"]
    # a capture the torch version lacks stands in as {"unavailable": ...}
    assert validate({**stop_head(1, "[0/0]", "inference", "loopbody", True),
                     "bodies": {"unavailable": "LoopBody: not available on torch 2.11 (AttributeError)"}}) == []


def test_control_commands_are_typed():
    """The commands the UI sends (tui/app.py, live/client.py) are the typed ones."""
    allowed = typing.get_args(typing.get_type_hints(protocol.Command)["cmd"])
    for name in ("CMD_CONTINUE", "CMD_CAN_FUSE", "CMD_RUN", "CMD_CANCEL_RUN", "CMD_QUIT"):
        assert getattr(protocol, name) in allowed
    assert protocol.validate_command({"cmd": "can_fuse", "a": "op1", "b": "op2"}) == []
    assert protocol.validate_command({"cmd": "run", "graph": "[0/0] forward"}) == []
    assert protocol.validate_command({"cmd": "run_through"}) != []
    assert not hasattr(protocol, "CMD_RUN_THROUGH") and not hasattr(protocol, "GRAPH_KINDS")


def test_stop_head_order_is_what_the_lazy_reader_matches():
    head = stop_head(7, "[1/0]", "backward", "lowering", False)
    assert tuple(head) == STOP_HEAD_KEYS == ("type", "seq", "compile_id", "graph_kind", "stage", "paused")
    line = protocol.encode({**head, "buffers": [{"name": "buf0", "text": "x" * 5000}]})
    assert _STOP_HEAD.match(line)


# ----------------------------------------------------------------------------- packed sessions

def _write(path, messages):
    w = SessionWriter(str(path))
    for m in messages:
        w.write(m, protocol.encode(m).rstrip(b"\n"))
    w.close()


def test_writer_packs_long_lines_and_they_read_back(tmp_path):
    """The demo fixture written again by the UI's writer: under a fifth of the size, every line
    still one JSON object, messages read back equal, big stops yielded lazily and loaded equal."""
    src = os.path.join(ROOT, "tests", "fixtures", "demo.jsonl")
    messages = list(read_session(src))
    messages[0] = {**messages[0], "format": FORMAT}
    out = tmp_path / "demo2.jsonl"
    _write(out, messages)
    assert os.path.getsize(out) < os.path.getsize(src) / 5
    with open(out, "rb") as f:
        raw = [json.loads(line) for line in f]
    packed = [r for r in raw if "zlib" in r]
    assert any(r["type"] == "stop" for r in packed) and all(r["size"] >= protocol.PACK_OVER for r in packed)
    assert raw[0]["type"] == "header" and "zlib" not in raw[0]
    assert list(read_session(str(out))) == messages
    lazy = list(read_session(str(out), lazy_over=4096))
    heads = [m for m in lazy if LAZY in m and m["type"] == "stop"]
    assert heads and all(set(m) == set(STOP_HEAD_KEYS) | {LAZY} for m in heads)
    assert {m["type"] for m in lazy if LAZY in m} <= {"stop", "run", "artifact", "provenance"}
    assert [load_lazy(m) for m in lazy] == messages


def test_a_parts_stop_opens_lazily_with_its_key(tmp_path):
    """A stop of one of a frame's several graphs (a DDP bucket's submodule: ``part`` after
    ``paused``, a what-if variant's after that), long (packed) and short: its lazily read head
    keeps part and variant, so the session's key is ``"[4/0] forward #2 · max_autotune=True"``;
    an ordinary stop's key has no part."""
    def stop(seq, part, variant, size):
        head = stop_head(seq, "[4/0]", "forward", "lowering", False)
        head.update({"part": part} if part else {})
        head.update({"variant": variant} if variant else {})
        return {**head, "buffers": [{"name": f"buf{i}", "text": f"x{i} " * 40} for i in range(size)]}
    messages = [{"type": "header", "format": FORMAT}, stop(1, 2, None, 200), stop(2, 2, "max_autotune=True", 200),
                stop(3, None, None, 200), stop(4, 3, None, 2)]
    out = tmp_path / "parts.jsonl"
    _write(out, messages)
    with open(out, "rb") as f:
        assert sum(b'"zlib":"' in line for line in f) == 3
    lazy = list(read_session(str(out), lazy_over=1000))
    assert [LAZY in m for m in lazy] == [False, True, True, True, False]
    assert [protocol.graph_key(m) for m in lazy[1:]] == ["[4/0] forward #2", "[4/0] forward #2 · max_autotune=True",
                                                         "[4/0] forward", "[4/0] forward #3"]
    assert [load_lazy(m) for m in lazy] == messages
    assert protocol.split_part("backward #2") == ("backward", 2)
    assert protocol.split_part("backward") == ("backward", None)
    assert protocol.with_part("backward", 2) == "backward #2" and protocol.with_part("backward", None) == "backward"


def _noise(seed: str) -> str:
    """64 hex digits that zlib cannot shrink: a packed line long enough to be read lazily."""
    import hashlib  # noqa: PLC0415

    return hashlib.sha256(seed.encode()).hexdigest()


def test_a_long_timing_opens_lazily_under_its_variant(tmp_path):
    """A long (packed) timing of a graph and of its what-if variant, written now (the variant and the outcome kept
    in the packed head) and as earlier versions wrote it (neither there): read lazily, the session's timing of each
    graph is that graph's, as when the file is read whole, and the runs keep their order.  What each timing came to
    (the stage bar's mark) is read off a head written now without decoding a run; of an older file's, not without
    uncompressing them ("unknown" when not allowed to)."""
    import re  # noqa: PLC0415

    from inductor_step.session.store import Store  # noqa: PLC0415

    def run(variant, ms, eager=None):
        msg = {"type": "run", "compile_id": "[1/0]", "graph_kind": "forward", "compiled_ms": ms,
               "kernels": [{"name": f"k{i}", "median_ms": ms / (i + 1), "note": _noise(f"{ms}{i}")} for i in range(60)]}
        msg = {**msg, "eager_ms": eager} if eager else msg
        return {**msg, "variant": variant} if variant else msg

    variant_stop = {**stop_head(1, "[1/0]", "forward", "dynamo", False), "variant": "max_autotune=True"}
    messages = [{"type": "header", "format": FORMAT}, variant_stop, run(None, 1.0),
                run("max_autotune=True", 0.5), run(None, 2.0, eager=3.0)]
    new = tmp_path / "new.jsonl"
    _write(new, messages)
    old = tmp_path / "old.jsonl"  # the same lines with the variant and outcome left out of the clear head
    with open(new, "rb") as f, open(old, "wb") as g:
        g.write(re.sub(rb',"outcome":"[a-z_]+"', b"", f.read()).replace(b'"variant":"max_autotune=True","size"',
                                                                         b'"size"'))
    assert b'"variant":"max_autotune=True","size"' not in old.read_bytes()  # the variant only in the packed JSON
    assert b'"outcome"' in new.read_bytes() and b'"outcome"' not in old.read_bytes()
    whole = Store.of(list(read_session(str(new))))
    for path in (new, old):
        lazy = Store.of(list(read_session(str(path), lazy_over=1000)))
        bar = {g: lazy.run_outcome(g, decode=False) for g in ("[1/0] forward", "[1/0] forward · max_autotune=True")}
        assert len(lazy.runs._pending) == 3 and all(LAZY in h for _, h in lazy.runs._pending)  # nothing decoded
        assert bar == ({"[1/0] forward": "timed", "[1/0] forward · max_autotune=True": "no_eager"} if path == new
                       else {"[1/0] forward": "unknown", "[1/0] forward · max_autotune=True": "unknown"})
        assert lazy.runs.get("[1/0] forward · max_autotune=True") == run("max_autotune=True", 0.5)
        assert lazy.runs.get("[1/0] forward") == run(None, 2.0, eager=3.0)  # the latest timing of the original
        assert lazy.run_outcome("[1/0] forward") == "timed"
        assert dict(lazy.runs.items()) == dict(whole.runs.items()) and list(lazy.runs) == list(whole.runs)


def test_an_older_timing_without_variants_is_decoded_once_for_the_stage_bar(tmp_path):
    """An older file's long timing (no outcome in its packed head) of a graph no what-if variant was compiled
    of: it can only be that graph's, so the stage bar's first frame decodes it (as the run pane would) rather than
    leave its mark out, and it reads as it does read whole."""
    import re  # noqa: PLC0415

    from inductor_step.session.store import Store  # noqa: PLC0415

    run = {"type": "run", "compile_id": "[1/0]", "graph_kind": "forward", "compiled_ms": 1.0, "error": "boom",
           "kernels": [{"name": f"k{i}", "note": _noise(str(i))} for i in range(60)]}
    old = tmp_path / "old.jsonl"
    _write(old, [{"type": "header", "format": FORMAT}, run])
    old.write_bytes(re.sub(rb',"outcome":"[a-z_]+"', b"", old.read_bytes()))
    lazy = Store.of(list(read_session(str(old), lazy_over=1000)))
    assert lazy.runs._pending and lazy.run_outcome("[1/0] forward", decode=False) == "failed"
    assert lazy.stages_done("[1/0] forward", decode=False) == [] and lazy.runs.get("[1/0] forward") == run


def test_graph_key_parses_back_every_recorded_label():
    """``GraphKey.parse(label)`` is the inverse of ``str``: over every message with a graph of every
    checked-in session (parts, subgraphs, what-if variants, resets) and made-up ones, the parts come
    back and print the same label."""
    import glob  # noqa: PLC0415

    labels = set()
    for path in glob.glob(os.path.join(ROOT, "tests", "fixtures", "*.jsonl")):
        for m in read_session(path):
            if m.get("compile_id") and m.get("graph_kind"):
                k = protocol.GraphKey.of(m)
                assert str(k) == protocol.graph_key(m)
                labels.add(str(k))
    assert any(" › " in x for x in labels) and any(" · " in x for x in labels)
    labels |= {"[4/0] forward #2 › cond_true_0 › body_0 · max_autotune=True", "[0/0]@reset1 backward #3"}
    for label in labels:
        assert str(protocol.GraphKey.parse(label)) == label
    k = protocol.GraphKey.parse("[4/0] forward #2 › a › b · max_autotune=True")
    assert (k.compile_id, k.kind, k.part, k.subgraph, k.variant, k.frame) == \
        ("[4/0]", "forward", 2, "a › b", "max_autotune=True", 4)
    assert str(k.original) == "[4/0] forward #2 › a › b" and str(k.parent) == "[4/0] forward #2 · max_autotune=True"
    assert str(k.whole) == "[4/0] forward · max_autotune=True"
    assert protocol.GraphKey.of({"compile_id": "[0/0]", "graph_kind": "forward #2 · x=1"}) == \
        protocol.GraphKey("[0/0]", "forward", 2, None, "x=1")


def test_torn_packed_line_is_skipped(tmp_path):
    """The writer died in the middle of a packed stop: the session up to that line opens, lazily too."""
    messages = list(read_session(os.path.join(ROOT, "tests", "fixtures", "demo.jsonl")))
    out = tmp_path / "torn.jsonl"
    _write(out, messages)
    big = max((m for m in messages if m["type"] == "stop"), key=lambda m: len(protocol.encode(m)))
    line = protocol.pack(protocol.encode(big).rstrip(b"\n"))
    assert b'"zlib":"' in line
    with open(out, "ab") as f:
        f.write(line[:len(line) // 2])
    assert list(read_session(str(out))) == messages
    assert [load_lazy(m) for m in read_session(str(out), lazy_over=4096)] == messages


# ----------------------------------------------------------------------------- a fresh recording

@pytest.fixture(scope="module")
def recorded(demo_run):
    """A fresh ``--headless --run`` recording: the bundled demo's, shared by the test run (tests/conftest.py)."""
    return demo_run


def test_a_fresh_recording_matches_the_types(recorded):
    """What the agent and the writer write today is what protocol.py types: a failure here means a
    field was added or changed without its type (add it to session/format/)."""
    messages = list(read_session(recorded))
    assert messages[0]["format"] == FORMAT
    kinds = {(m["type"], m.get("stage")) for m in messages}
    assert {("stop", s) for s in protocol.STAGES} <= kinds
    assert {("run", None), ("done", None), ("agent_exit", None), ("output", None)} <= kinds
    assert _problems(messages) == []


def test_a_fresh_recording_is_packed_and_opens_lazily(recorded):
    messages = list(read_session(recorded))
    plain = sum(len(protocol.encode(m)) for m in messages)
    assert os.path.getsize(recorded) < plain / 3
    with open(recorded, "rb") as f:
        lines = f.read().splitlines()
    stops = [line for line in lines if line.startswith(b'{"type":"stop"')]
    assert len(stops) == sum(1 for m in messages if m["type"] == "stop")
    # every stop line starts with the head the lazy reader matches: with lazy_over=0 all are lazy (packed runs too)
    lazy = list(read_session(recorded, lazy_over=0))
    assert sum(1 for m in lazy if LAZY in m and m["type"] == "stop") == len(stops)
    assert sum(1 for m in lazy if LAZY in m and m["type"] == "run") == \
        sum(1 for line in lines if line.startswith(b'{"type":"run"') and b'"zlib":"' in line)
    assert [load_lazy(m) for m in lazy] == messages


def test_a_newer_format_is_refused_with_its_name(tmp_path):
    path = tmp_path / "future.jsonl"
    path.write_text('{"type":"header","format":"inductor-step/3","torch":null,"triton":null,"python":null,'
                    '"device":null}\n')
    with pytest.raises(ValueError, match=r"session format inductor-step/3 is not one this inductor-step reads "
                                         r"\(inductor-step/1, inductor-step/2\)"):
        list(read_session(str(path)))


def test_packing_a_packed_line_leaves_it_as_it_is():
    stop = next(m for m in read_session(os.path.join(ROOT, "tests", "fixtures", "demo.jsonl"))
                if m.get("stage") == "lowering")
    once = protocol.pack(protocol.encode(stop).rstrip(b"\n"))
    assert b'"zlib":"' in once and protocol.pack(once) == once
    assert protocol.decode(once) == stop


def test_records_read_every_recorded_message_by_attribute_and_stay_the_message():
    """Each message of a recorded session decodes into the record of its type: a dict equal to the
    message (JSON the same), every field of its TypedDict an attribute (None where absent), typed
    pieces decoded in place on first read (``stop.graph.nodes[0].name``; ``stop["graph"]`` is then
    that record)."""
    from inductor_step.session.format.records import Record, decode  # noqa: PLC0415

    msgs = [load_lazy(m) for m in read_session(os.path.join(ROOT, "tests", "fixtures", "demo.jsonl"))]
    before = json.dumps(msgs, sort_keys=True)
    recs = [decode(m) for m in msgs]
    assert type(recs[0]).__name__ == "Header"
    dyn = next(r for r in recs if r.get("stage") == "dynamo")
    assert type(dyn).__name__ == "DynamoStop"
    node = dyn.graph.nodes[0]
    assert isinstance(node, Record) and node.name == dyn["graph"]["nodes"][0]["name"] and dyn["graph"] is dyn.graph
    assert dyn.backend is None and dyn.stage == "dynamo"
    sched = next(r for r in recs if r.get("stage") == "scheduling")
    assert all(isinstance(n, Record) and n.name for n in sched.after)  # list[SchedulerNode] | Unavailable
    cg = next(r for r in recs if r.get("stage") == "codegen")
    assert all(b.kernels is not None for b in cg.links.buffers.values())  # dict[str, LinkBuffer]
    assert json.dumps(recs, sort_keys=True) == before and decode(dyn) is dyn
    assert type(decode({"type": "no_such_type", "x": 1})) is Record


def test_one_splitter_for_call_arguments_and_wrapper_statements():
    """session.format.split_args serves the wrapper parsers (a call's arguments) and the memory plan (a wrapper line's
    statements, its comment left out): quotes and brackets hold their separators, an empty middle item stays."""
    from inductor_step.session.format import split_args

    assert split_args("buf0, 'sum', (4, 8), s0") == ["buf0", "'sum'", "(4, 8)", "s0"]
    assert split_args("buf0, 'a,b', [1, 2]") == ["buf0", "'a,b'", "[1, 2]"]  # a quoted comma is not a separator
    assert split_args("x, '\\'', y") == ["x", "'\\''", "y"]  # C++'s quote character
    assert split_args("a,,b,") == ["a", "", "b"] and split_args("") == []
    assert split_args("buf1 = buf0; del buf0  # reuse", ";") == ["buf1 = buf0", "del buf0"]
    assert split_args("print('a; b  # c'); x = 1", ";") == ["print('a; b  # c')", "x = 1"]
