"""A graph whose kind the agent guessed wrong at its dynamo stop (an input requires grad, but
AOTAutograd compiles an inference graph): the session shows one graph, ``[0/0] inference``, with
every stage, and no ``[0/0] forward`` holding only a dynamo stop (seen on the GPU box in
examples/ddp_train.py's ``global_mean``)."""

from __future__ import annotations

import os
import subprocess
import sys

from inductor_step.tracer.protocol import read_session, validate
from inductor_step.tui.session import Session

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts", "kind_guess.py")


def test_a_wrong_kind_guess_leaves_one_graph_with_every_stage(tmp_path):
    rec = str(tmp_path / "s.jsonl")
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--record", rec, SCRIPT],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "[0/0] inference      dynamo      5 FX nodes (AOTAutograd compiles it as inference, not forward)" in p.stdout
    msgs = list(read_session(rec))
    assert not [e for m in msgs for e in validate(m)]
    s = Session.of(msgs)
    assert s.graphs == ["[0/0] inference"]
    assert [st["stage"] for st in s.stops] == ["dynamo", "aot", "lowering", "scheduling", "loopbody", "codegen"]
