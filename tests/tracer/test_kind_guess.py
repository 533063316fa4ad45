"""A graph whose kind the agent guessed wrong at its dynamo stop (an input requires grad, but
AOTAutograd compiles an inference graph): the session shows one graph, ``[0/0] inference``, with
every stage, and no ``[0/0] forward`` holding only a dynamo stop (seen on the GPU box in
examples/ddp_train.py's ``global_mean``); and a graph whose outputs do not require grad (``global_mean``
itself) guessed right at once, with no correcting stop (a stepped rank pauses at every stop but a correction)."""

from __future__ import annotations

import os
import subprocess
import sys

from inductor_step.session.format import read_session, validate
from inductor_step.session.store import Store

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts", "kind_guess.py")


def test_a_wrong_kind_guess_leaves_one_graph_with_every_stage(tmp_path):
    rec = str(tmp_path / "s.jsonl")
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--record", rec, SCRIPT],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "[0/0] inference      dynamo      6 FX nodes (AOTAutograd compiles it as inference, not forward)" in p.stdout
    msgs = list(read_session(rec))
    assert not [e for m in msgs for e in validate(m)]
    s = Store.of(msgs)
    assert s.graphs == ["[0/0] inference", "[1/0] inference"]
    stages = ["dynamo", "aot", "lowering", "scheduling", "loopbody", "codegen"]
    assert [st["stage"] for st in s.stops if st["compile_id"] == "[0/0]"] == stages
    assert [(st["graph_kind"], st["stage"]) for st in s.stops if st["compile_id"] == "[1/0]"] == \
        [("inference", st) for st in stages]
    raw = [m for m in msgs if m.get("type") == "stop" and m["compile_id"] == "[1/0]"]
    assert [m["graph_kind"] for m in raw] == ["inference"] * 6 and not any(m.get("corrects") for m in raw)
