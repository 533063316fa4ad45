"""What to change, on a recorded what-if session (tests/fixtures/memory_whatif.jsonl: tests/scripts/memory_whatif.py
under ``--run --what-if=inplace_buffers=False --what-if=activation_memory_budget=0.5``): each memory setting's
variant priced against its original, counted by hand from the shapes; no torch needed."""

from __future__ import annotations

import os

import pytest

from inductor_step import session
from inductor_step.session import memory as mem
from inductor_step.session import memory_whatif as mw
from inductor_step.session.memory_saved import saved_for_backward

FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "memory_whatif.jsonl")
INFER, INPLACE = "[0/0] inference", "[0/0] inference · inplace_buffers=False"
FWD, BUDGET = "[1/0] forward", "[1/0] forward · activation_memory_budget=0.5"


@pytest.fixture(scope="module")
def s():
    return session.load(FIX).store


def test_writing_in_place_is_what_keeps_the_chains_peak_at_two_buffers(s):
    row = 128 * 256 * 4  # one 128 x 256 float32 activation
    by = {p.key: p for p in mw.priced(s, INFER)}
    p = by[INPLACE]
    # in place: the residual x and the matmul's output, which GELU + add overwrite, then the scalar sum (4 B) at the
    # end; without: the GELU + add output is a third 128 x 256 buffer mid-graph, where the peak then is
    assert p.peak == (2 * row + 4, 3 * row)
    wrapper = s.stop_for(INPLACE, "codegen")["wrapper"]
    orig = s.stop_for(INFER, "codegen")["wrapper"]
    assert wrapper.count("empty_strided_cpu((128, 256)") > orig.count("empty_strided_cpu((128, 256)")
    assert p.ms[0] is not None and p.ms[1] is not None  # both timed (--run)
    assert p.line().startswith(f"what if {INPLACE}: planned peak 262.1 kB -> 393.2 kB (+50%); time ")


def test_a_lower_activation_budget_saves_fewer_bytes_and_recomputes_in_the_backward(s):
    a, b = saved_for_backward(s, FWD), saved_for_backward(s, BUDGET)
    assert b.backward == "[1/0] backward · activation_memory_budget=0.5"  # the new partition's own backward
    assert b.storage_bytes < a.storage_bytes and len(b.tensors) < len(a.tensors)
    # the activations are 1024 x 256 float32 (1 MiB each) and the 1024 x 32 output: the new partition keeps fewer
    assert a.storage_bytes - b.storage_bytes >= 1024 * 256 * 4
    def ops(key):  # the backward's post-grad call_function nodes: it now computes again what is no longer saved
        return sum(1 for n in s.stop_for(key, "aot")["post_grad"]["nodes"] if n.get("op") == "call_function")
    assert ops("[1/0] backward · activation_memory_budget=0.5") > ops("[1/0] backward")
    p = next(x for x in mw.priced(s, FWD) if x.key == BUDGET)
    assert p.saved == (a.storage_bytes, b.storage_bytes)
    assert "saved for backward 2.2 MB -> 1.0 MB (-53%)" in p.line()


def test_the_backward_of_a_new_partition_frees_its_own_saved_tensors(s):
    b = mem.plan(s, "[1/0] backward · activation_memory_budget=0.5")
    sv = saved_for_backward(s, BUDGET)
    assert b.released == sv.storage_bytes > 0  # the variant's backward frees what the variant's forward saved


def test_headless_lines_report_and_candidates(s):
    from inductor_step.session.memory_text import report_section, summary_lines
    from inductor_step.session.whatif import numerics_lines

    lines = [x for x in summary_lines(s) if x.startswith("memory: what if ")]
    assert [x.split(":")[1].strip() for x in lines] == [
        "what if [0/0] inference · inplace_buffers=False", "what if [1/0] forward · inplace_buffers=False",
        "what if [1/0] backward · inplace_buffers=False", "what if [1/0] forward · activation_memory_budget=0.5",
        "what if [1/0] backward · activation_memory_budget=0.5"]
    assert "What to change" in report_section(s) and f"- what if {BUDGET}: " in report_section(s)
    why = dict((st.name, w) for st, w in mw.candidates(s, INFER))
    assert "no backward" not in why["inplace_buffers"] and not why["inplace_buffers"]
    assert why["activation_memory_budget"].startswith("only a training graph")
    assert not dict((st.name, w) for st, w in mw.candidates(s, FWD))["activation_memory_budget"]
    # a new partition's outputs past the user's are other tensors: not compared position by position
    assert numerics_lines(s.runs[BUDGET])[0].startswith("numerics: outputs not compared: the partitioner")
