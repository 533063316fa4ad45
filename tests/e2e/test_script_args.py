"""Everything after SCRIPT reaches the script verbatim, whatever it looks like.

``--n 32`` was "ambiguous option: --n could match --nproc-per-node, --nproc_per_node"; ``--r 1`` and
``--h`` likewise (argparse's prefix matching of our own options).  The parse stops at SCRIPT, in the
CLI and in the agent it starts.  A real run with such arguments is part of the one recording of
tests/tracer/test_timing_modes.py (its script prints its argv).
"""

from __future__ import annotations

import pytest

from inductor_step.session import format as protocol
from inductor_step.tracer.agent import AGENT_VALUE_OPTIONS
from inductor_step.cli.main import build_parser, split_launcher, split_script


@pytest.mark.parametrize("kind", [["--n", "32"], ["--r", "1"], ["--h"], ["--help"], ["-h"], ["-m", "x"],
                                  ["--rank", "1"], ["--", "--n"], ["--what-if=max_autotune=True"],
                                  ["--record", "x.jsonl", "--headless"], ["--timing-limit", "3"], ["a b", ""]])
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
