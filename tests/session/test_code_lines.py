"""Pane 6's line numberings and marks, as the library computes them (session.code_lines), on recorded sessions."""

from __future__ import annotations

import os

import pytest

from inductor_step import session
from inductor_step.session.code_lines import (
    ShownWrapper, buffer_source_lines, instruction_counts, instruction_summary, stage_lines, stage_marks,
)

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures")


@pytest.fixture(scope="module")
def demo():
    return session.load(os.path.join(FIX, "demo.jsonl"))


def test_a_buffers_marks_are_its_kernel_lines_in_every_numbering(demo):
    """Kernel.marks_for (source lines) and ShownWrapper.marks_for (shown lines, under a head and notes)
    mark the same lines, and the shown line reads back as that kernel's source line."""
    checked = 0
    for g in demo.graphs:
        spans, links = g.kernel_spans(), g.links()
        plain, noted = ShownWrapper(0, [], spans), ShownWrapper(4, [(1, 3)], spans)
        for k in g.kernels:
            body = (spans.get(k.name) or {}).get("body")
            for b in k.buffers():
                ranges = k.marks_for(b.name)
                if not body or not ranges:
                    continue
                assert plain.marks_for(links, k.name, b.name) == [(body + a - 1, body + e - 1) for a, e in ranges]
                shown = noted.marks_for(links, k.name, b.name)
                assert shown == [(body + a + 6, body + e + 6) for a, e in ranges]  # 4 head lines, 3 notes above
                assert noted.kernel_line_at(shown[0][0]) == (k.name, ranges[0][0])
                assert set(range(ranges[0][0], ranges[0][1] + 1)) <= buffer_source_lines(links, b.name, k.name)
                checked += 1
    assert checked > 5
    assert noted.wrapper(4) is None and noted.wrapper(5) is None  # a head line, a note line


def test_stage_marks_join_adjacent_lines():
    assert stage_marks([1, 2, 2, None, 3, 2], {2}, 10) == [(12, 13), (16, 16)]
    assert stage_marks([None, 5], {1}, 0) == []


def test_instruction_counts_per_source_line_of_a_recorded_cpp_kernel():
    """x86 asm of a C++ kernel timed by the run stage: each summarized source line's counts are the
    recorded ones, every kind listed."""
    s = session.load(os.path.join(FIX, "cpu_asm.jsonl"))
    run = next(g.run for g in s.graphs if g.run)
    k = next(k for k in run["kernels"] if k.get("stages"))
    st, src = k["stages"], next(x.source for g in s.graphs for x in g.kernels if x.name == k["name"])
    lines = instruction_summary(st, "asm", src)
    assert lines and all(ln.startswith("// line ") for ln in lines)
    first = int(lines[0].split()[2])
    counts = instruction_counts(st, "asm", first)
    assert counts and all(f"{kind} x{n}" in lines[0] for kind, n in counts.items())
    assert any(x == first for x in stage_lines(st, "asm"))
    assert instruction_summary(st, "source", src) == []


def test_a_ptx_line_tells_its_triton_line_and_that_lines_instructions():
    """The recorded PTX of a Triton kernel (tests/fixtures/gpu_stages.jsonl, timed on an H200): each PTX line the
    maps tie to a Triton line reads back (session.kernel_stages.stage_line) as that line's text and its
    instructions by kind, ``other`` left out; the head lines above the PTX tell nothing."""
    from inductor_step.session.kernel_stages import recorded_stages, stage_line  # noqa: PLC0415

    s = session.load(os.path.join(FIX, "gpu_stages.jsonl"))
    g = next(g for g in s.graphs if g.run)
    k = next(k for k in g.kernels if recorded_stages(g.run, k.name) is not None)
    st = recorded_stages(g.run, k.name)
    head = st.head("PTX", k.name, "ptx", k.source)
    top = head.count("\n")
    assert head.startswith(f"// PTX of {k.name} (") and stage_line(st, "ptx", "PTX", 1, k.source, {}, None) is None
    said = []
    for i, kl in enumerate(st.lines("ptx")):
        at = stage_line(st, "ptx", "PTX", top + 1 + i, k.source, {}, None)
        assert (at is None) == (kl is None), (i, kl)
        if at is not None:
            assert at.line == i + 1 and at.source_line == kl and at.text == k.source.split("\n")[kl - 1].strip()
            assert "other" not in at.counts and all(st.counts("ptx", kl)[c] == n for c, n in at.counts.items())
            said.append(at.said)
    assert any(" [" in x and " x" in x for x in said), said[:5]
