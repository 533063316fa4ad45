"""Issue 27 point 11: everything after SCRIPT reaches the script verbatim, whatever it looks like.

``--n 32`` was "ambiguous option: --n could match --nproc-per-node, --nproc_per_node"; ``--r 1`` and
``--h`` likewise (argparse's prefix matching of our own options).  The parse stops at SCRIPT, in the
CLI and in the agent it starts; one real headless run carries every kind of argument at once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from inductor_step.tracer import protocol
from inductor_step.tracer.agent import AGENT_VALUE_OPTIONS
from inductor_step.tui.cli import build_parser, split_launcher, split_script

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(HERE)
SCRIPT = os.path.join(HERE, "scripts", "print_argv.py")

#: one of each kind: an abbreviation of one of our options with a value, of several (ambiguous), of
#: --help and --headless, our own spellings whole, -m with a module name, a lone --, an empty string
KINDS = ["--n", "32", "--r", "1", "--h", "--help", "-h", "-m", "torch.distributed.run", "--record", "x.jsonl",
         "--nproc-per-node", "2", "--headless", "--", "--lr=3e-4", "a b", ""]


@pytest.mark.parametrize("kind", [["--n", "32"], ["--r", "1"], ["--h"], ["--help"], ["-h"], ["-m", "x"],
                                  ["--rank", "1"], ["--", "--n"], ["--what-if=max_autotune=True"]])
def test_each_kind_after_the_script_is_the_scripts(kind: list[str]) -> None:
    head, tail = split_script(["--headless", "--record", "r.jsonl", "t.py", *kind])
    assert (head, tail) == (["--headless", "--record", "r.jsonl", "t.py"], kind)
    ns = build_parser().parse_args(head)
    assert ns.script == "t.py" and ns.headless and ns.record == "r.jsonl"
    # the agent's own command line keeps them too (its --run, --step, --serve are never abbreviated into)
    a_head, a_tail = protocol.split_at_script(["--msg-fd", "3", "--ctl-fd", "4", "--step", "t.py", *kind],
                                              AGENT_VALUE_OPTIONS)
    assert a_head[-1] == "t.py" and a_tail == kind


def test_options_before_the_script_are_ours_and_whole() -> None:
    # a job: the launcher's options are taken out first, then ours stop at the script
    argv, launcher = split_launcher(["--nproc-per-node", "2", "t.py", "--n", "32"])
    assert launcher is None and split_script(argv) == (["--nproc-per-node", "2", "t.py"], ["--n", "32"])
    argv, launcher = split_launcher(["torchrun", "--nproc-per-node=2", "t.py", "--r", "1"])
    assert launcher == ["--nproc-per-node=2"] and split_script(argv) == (["t.py"], ["--r", "1"])
    # `--` marks a script whose name starts with a dash; an abbreviation before SCRIPT is no option of ours
    assert split_script(["--", "-odd.py", "--h"]) == (["-odd.py"], ["--h"])
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--head", "t.py"])


def test_a_real_run_gets_every_kind_verbatim(tmp_path) -> None:
    record = str(tmp_path / "argv.jsonl")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--record", record, SCRIPT, *KINDS],
                       cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=120)
    assert "ARGV=" + json.dumps(KINDS) in p.stdout, p.stderr
    assert "ambiguous option" not in p.stderr and "usage:" not in p.stderr
    msgs = list(protocol.read_session(record))
    assert msgs[0]["argv"] == KINDS
    assert p.returncode == 0, p.stderr
