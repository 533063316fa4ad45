"""The typed data panes 0, T, M, e and B take from the library, on recorded sessions: each a frozen dataclass read by
attribute (rank rows, compile-time verdicts and frames, the memory view, the numerics rows and error stats, where a
blame's verdict lies).  No torch, no Textual."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest

from inductor_step.session import blame as sb
from inductor_step.session import compile_time as ct
from inductor_step.session.memory_view import MemoryView, SettingRow, forward_backward, memory_view
from inductor_step.session.numerics import ErrorStats, NumericsRow, comparisons, first_buffer, pane_rows
from inductor_step.session.ranks.rows import RankRow, job_ranks, rank_row
from inductor_step.session.store import Store, load_session
from inductor_step.session.diff import session_of

FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")


def load(name: str) -> Store:
    return session_of(load_session(os.path.join(FIX, name)))


def _frozen(x: object) -> None:
    assert dataclasses.is_dataclass(x)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(x, dataclasses.fields(x)[0].name, None)  # type: ignore[arg-type]


def test_numerics_rows_are_typed_and_mark_the_first_divergence():
    s = load("numerics.jsonl")
    msg = next(iter(s.numerics.values()))
    rows = pane_rows(msg)
    assert rows and all(isinstance(r, NumericsRow) for r in rows)
    _frozen(rows[0])
    assert all(len(r.cells()) == 11 and r.cells()[1] == r.buffer for r in rows)
    marked = [r.buffer for r in rows if r.mark == ">"]
    assert marked == [first_buffer(msg)], marked
    compared = [r for r in msg.rows if r.vs_eager]
    assert compared
    stats = comparisons(compared[0])
    assert stats[0][0] == "vs eager" and isinstance(stats[0][1], ErrorStats)
    assert stats[0][1].max_abs == compared[0].vs_eager.get("max_abs")


def test_blame_located_is_a_dataclass_and_the_api_keeps_its_dict():
    from inductor_step import session

    s = load("blame.jsonl")
    run = next(r for r in sb.runs(s.blames) if r.verdict is not None and r.verdict.found)
    where = sb.located(run, s)
    assert isinstance(where, sb.Located) and where and where.fx_nodes
    _frozen(where)
    assert where.to_dict() == {"graph": where.graph, "fx_nodes": list(where.fx_nodes), "kernels": list(where.kernels)}
    assert session.load(os.path.join(FIX, "blame.jsonl")).blame_where(run) == where.to_dict()
    assert not sb.located(sb.BlameRun(run.kind, run.compile_id), s) and sb.Located().to_dict() == {}
    lines = sb.verdict_lines(run, where)
    assert any(line.startswith(f"  FX nodes: {', '.join(where.fx_nodes)} (post-grad graph of {where.graph})")
               for line in lines), lines


def test_compile_time_verdicts_frames_kernels_and_line_nodes():
    s = load("memory_whatif.jsonl")
    times = ct.graph_times(s)
    assert times
    for g in times.values():
        assert [c.cache for c in g.cache_verdicts()] == list(g.cache)
        assert all(c.status == g.cache[c.cache].get("status") for c in g.cache_verdicts())
        f = g.traced()
        assert (f is None) == (not g.frame)
        if f is not None:
            assert (f.function, f.file, f.line) == (g.frame.get("function"), g.frame.get("file"), g.frame.get("line"))
        for k in g.kernels:
            got = g.kernel(k["name"])
            assert got is not None and got.name == k["name"] and dict(got) == dict(
                next(x for x in g.kernels if x["name"] == k["name"]))
        assert g.kernel("no_such_kernel") is None
    key = next(k for k in s.graphs if s.links(k).fx_nodes)
    links = s.links(key)
    line = next(v.user_line for v in links.fx_nodes.values() if v.user_line)
    nodes = ct.line_nodes(links, line)
    assert nodes and all(links.fx_nodes[n].user_line == line for n in nodes)


def test_memory_view_of_a_forward():
    s = load("demo.jsonl")
    v = memory_view(s, "[0/0] forward")
    assert isinstance(v, MemoryView) and v.plan is not None and v.key == "[0/0] forward"
    assert v.lowered == () and v.saved is not None and v.saved.tensors
    assert v.change and all(isinstance(c, SettingRow) for c in v.change)
    assert forward_backward("[0/0] forward") == "[0/0] backward" and forward_backward("[1/0] inference") is None


def test_rank_rows_read_the_job_file():
    with open(os.path.join(FIX, "ranks_failed.job.json")) as f:
        job = json.load(f)
    entries = job_ranks(job)
    assert set(entries) == {r["rank"] for r in job["ranks"]}
    s0 = load("ranks_failed.rank0.jsonl")
    row = rank_row(s0, 0, paused=False, stepped=True, live=False, job=job)
    assert isinstance(row, RankRow) and row.rank == 0 and row.stops == str(len(s0.stops))
    _frozen(row)
    assert row.detail.startswith(f"rank 0: {row.state}")
    assert rank_row(s0, 0, paused=True, stepped=True, live=True, job=None).state == "paused"
    assert rank_row(Store(), 3, paused=False, stepped=False, live=True, job=None).state == "waiting"
