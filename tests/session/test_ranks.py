"""Compare the ranks of a job ("compare ranks"), on sessions recorded from real compiles:
tests/scripts/ranks_job.py run with ``--rank 0`` and ``--rank 1`` (``inductor-step --headless --run``),
standing for two ranks of a torchrun job whose code does rank-dependent things: rank 1 runs [1/0]
under ``max_fusion_size=1``, recompiles [2/1] on a bigger input, and its shard of [3/0] has twice the
rows; and ``--rank 1 --die``, a rank 1 that exits while Inductor fuses [0/0] backward's nodes.

The tests assert the lines a person reads (the divergences) and what the pane needs (which ranks
compiled a graph, what differs, the slowest rank per kernel), with the names the compile chose read
from the sessions themselves.
"""

from __future__ import annotations

import json
import os
import re

import pytest

from inductor_step.session import ranks
from inductor_step.session.diff import session_of
from inductor_step.session.store import Store, load_session

FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")


def load(name: str) -> Store:
    return session_of(load_session(os.path.join(FIX, name)))


@pytest.fixture(scope="module")
def job() -> dict[int, Store]:
    return {0: load("ranks_r0.jsonl"), 1: load("ranks_r1.jsonl")}


@pytest.fixture(scope="module")
def cmp(job) -> ranks.RankComparison:
    return ranks.compare_ranks(job)


def lines(c: ranks.RankComparison) -> list[str]:
    return [d.line for d in c.divergences]


def test_identical_training_step_agrees_on_both_ranks(cmp):
    for key in ("[0/0] forward", "[0/0] backward", "[2/0] inference"):
        g = cmp.graph(key)
        assert g is not None and g.ranks == [0, 1] and not g.absent
        assert g.differs == {1: []}, key
        assert g.agree and "agree" in g.summary
        assert not g.divergences
    assert cmp.states[0].state == cmp.states[1].state == "done"


def test_a_recompile_on_one_rank_only_is_named_with_its_reason(cmp, job):
    g = cmp.graph("[2/1] inference")
    assert g.ranks == [1] and g.absent == {0: "not compiled"}
    reason = job[1].stop_for("[2/1] inference", "dynamo")["recompile_reasons"][0]
    assert reason.startswith("2/0: tensor 'x' size mismatch at index 0")
    assert g.recompile == {1: [reason]}
    want = f"rank 1 recompiled [2/1] inference (guard of [2/0] failed: {reason.split(': ', 1)[1]})"
    assert want in lines(cmp)
    # its diff: rank 0's [2/0], which ran the bigger input there, against rank 1's recompile
    d = next(d for d in g.divergences if d.level == "recompile")
    assert d.pair == (0, 1)
    ka, kb, how, diff = ranks.diff_pair(job, "[2/1] inference", *d.pair)
    assert (ka, kb) == ("[2/0] inference", "[2/1] inference")
    assert how == "[2/1] inference compiled on rank 1 only; rank 0 ran [2/0] inference there"
    why = diff.level("why")
    assert why.changed and "recompiled on B only: guard of [2/0] failed: tensor 'x' size mismatch" in why.changes[0].what
    assert any("became symbolic" in n for n in why.notes)


def test_a_different_fusion_is_the_line_for_that_graph(cmp, job):
    fused = [n["name"] for n in job[0].stop_for("[1/0] inference", "scheduling")["after"] if "_" in n["name"]]
    assert fused == ["op0_op1_op2_op3"]
    assert all("_" not in n["name"] for n in job[1].stop_for("[1/0] inference", "scheduling")["after"])
    g = cmp.graph("[1/0] inference")
    # the same Dynamo and post-grad graphs and buffers: the fusion is where they part
    assert g.differs[1][0] == "scheduling" and not {"dynamo", "post_grad", "buffers"} & set(g.differs[1])
    line = next(d.line for d in g.divergences if d.level == "scheduling")
    assert line.startswith("rank 1: [1/0] inference different fusion (op0 op1 op2 op3 fused on rank 0 only)")
    assert next(d.pair for d in g.divergences if d.level == "scheduling") == (0, 1)


def test_a_slower_kernel_names_the_rank_and_the_ratio(cmp, job):
    g = cmp.graph("[3/0] inference")
    (k0,) = job[0].runs["[3/0] inference"]["kernels"]
    (k1,) = job[1].runs["[3/0] inference"]["kernels"]
    t = next(t for t in g.times if t.kernel == k0["name"])
    assert t.counts and t.slowest == 1 and t.fastest == 0 and not t.noise
    assert t.ratio == pytest.approx(k1["median_ms"] / k0["median_ms"])
    assert 1.5 < t.ratio < 3  # twice the rows
    assert f"[3/0] inference {k1['name']} {t.ratio:.1f}x slower on rank 1 " in "\n".join(lines(cmp))
    # and why: rank 1 compiled the graph for its bigger shard
    top = next(d for d in g.divergences if d.level != "timing")
    assert top.level == "why" and re.search(r"size\(\)\[0\] was 512, now 1024", top.line)


def test_kernel_times_a_noisy_run_flags_are_not_counted(cmp, job):
    # rank 0's backward: one mm timed alone took ms while the whole graph took µs (a loaded CPU)
    g = cmp.graph("[0/0] backward")
    run0 = job[0].runs["[0/0] backward"]
    assert run0["sum_vs_graph"] > ranks.SUM_VS_GRAPH and run0["settled"] is True
    noisy = [t for t in g.times if t.ratio > ranks.TIME_RATIO]
    assert noisy and all(not t.counts and "sum to" in t.noise for t in noisy)
    assert not [d for d in cmp.divergences if d.key == "[0/0] backward"]
    # a CPU run the tracer says did not settle: its 2x slower kernel no longer counts
    msgs = [dict(m) for m in load_session(os.path.join(FIX, "ranks_r1.jsonl"))]
    for m in msgs:
        if m.get("type") == "run" and m.get("compile_id") == "[3/0]":
            m["settled"] = False
    c = ranks.compare_ranks({0: job[0], 1: session_of(msgs)})
    t = c.graph("[3/0] inference").times[0]
    assert not t.counts and "rank 1's run: its time did not settle" in t.noise
    assert not [d for d in c.divergences if d.level == "timing"]


def test_a_rank_that_died_is_named_at_its_stage(job):
    died = load("ranks_r1_died.jsonl")
    assert died.done is None and died.agent_exit == 1
    last = died.stops[-1]
    assert (last["compile_id"], last["graph_kind"], last["stage"]) == ("[0/0]", "backward", "lowering")
    c = ranks.compare_ranks({0: job[0], 1: died, 2: None})
    assert c.states[1].state == "died" and c.states[1].where == ("[0/0] backward", "scheduling")
    assert lines(c)[:2] == ["rank 1 died at [0/0] backward scheduling", "rank 2: no session recorded"]
    assert c.graph("[1/0] inference").absent == {1: "died before", 2: "no session"}
    # what it compiled before it died still compares: its forward is rank 0's
    fw = c.graph("[0/0] forward")
    assert fw.ranks == [0, 1] and fw.differs[1] == []
    bw = c.graph("[0/0] backward")
    assert bw.incomplete == {1: "died in scheduling"} and not bw.agree
    assert bw.summary == "ranks 0,1: died in scheduling on rank 1; not on rank 2"
    assert "\n      rank 1: died in scheduling\n" in ranks.text(c)
    # the job file's state wins: a rank it says is running is not dead
    live = ranks.compare_ranks({0: job[0], 1: died}, states={1: "running"})
    assert live.states[1].line == "rank 1 is running at [0/0] backward scheduling"
    assert live.graph("[1/0] inference").absent == {1: "not reached yet"} and not live.divergences


def test_diff_pair_feeds_the_diff_screen(job):
    from inductor_step.tui.screens.diff import DiffPair  # noqa: PLC0415

    p = DiffPair(*ranks.diff_pair(job, "[1/0] inference", 0, 1))
    assert p.key_a == p.key_b == "[1/0] inference"
    assert p.diff.a == "rank 0 [1/0] inference" and p.diff.b == "rank 1 [1/0] inference"
    changed = [lv.key for lv in p.diff.changed_levels]
    assert "scheduling" in changed and "dynamo" not in changed and "why" not in changed
    split = p.diff.level("scheduling").changes[0]
    assert split.a == "op0_op1_op2_op3" and split.what.startswith("fused group split")


def test_text_summary(cmp):
    t = ranks.text(cmp)
    assert "where the ranks diverge (4):" in t
    for line in lines(cmp):
        assert f"  {line}" in t
    assert re.search(r"\[0/0\] forward +ranks 0,1: agree, kernel times too", t)
    assert re.search(r"\[3/0\] inference .*\n +compiled graph 0\.2\d+ ms on rank 0 \.\. 0\.5\d+ ms on rank 1 \(2\.0x\)", t)
    assert re.search(r"\[2/1\] inference +rank 1: recompiled there only \(not on rank 0\)", t)


def test_a_real_torchrun_job_with_a_collective_in_the_graph():
    """``inductor-step --headless --nproc-per-node 2 tests/scripts/ranks_dist.py`` (gloo), each rank
    recording its own session: the graph with the all_reduce agrees on both ranks; rank 1's short
    last batch recompiles [1/1] there only; an ``if rank == 0:`` branch gives rank 0's [2/0] one
    node more.  Read through the job file, as ``--open x.job.json`` does."""
    c = ranks.compare_job(os.path.join(FIX, "ranks_torchrun.job.json"))
    assert c.ranks == [0, 1] and {s.state for s in c.states.values()} == {"done"}
    g = c.graph("[0/0] inference")
    assert g.ranks == [0, 1] and g.differs == {1: []} and g.agree
    s0 = load("ranks_torchrun.rank0.jsonl")
    assert s0.header["distributed"]["world_size"] == 2
    targets = [n.get("target") for n in s0.stop_for("[0/0] inference", "aot")["post_grad"]["nodes"]]
    assert "_c10d_functional.all_reduce_.default" in targets and "_c10d_functional.wait_tensor.default" in targets
    added = next(n for n in s0.stop_for("[2/0] inference", "dynamo")["graph"]["nodes"] if n["target"] == "_operator.add")
    assert added["user_line"].endswith("ranks_dist.py:29")  # y = y + 1, under `if rank == 0:`
    assert lines(c) == ["rank 1 recompiled [1/1] inference (guard of [1/0] failed: tensor 'x' size mismatch at index 0. "
                        "expected 8, actual 5)",
                        f"rank 1: [2/0] inference different Dynamo graph ({added['name']} on rank 0 only: call_function "
                        "_operator.add [8] float32, ranks_dist.py:29); also post-grad graph, kernels"]
    assert c.graph("[1/0] inference").differs == {1: []}
    assert c.graph("[2/0] inference").differs == {1: ["dynamo", "post_grad", "kernels"]}
    # the world size comes from the sessions' headers: a rank without one is named
    alone = ranks.compare_ranks({0: s0})
    assert alone.ranks == [0, 1] and lines(alone) == ["rank 1: no session recorded"]
    assert alone.graph("[0/0] inference").absent == {1: "no session"}

def test_ranks_that_differ_alike_share_one_line(job):
    # ranks 1 and 2 ran the same rank-dependent code (rank 1's session standing for both)
    c = ranks.compare_ranks({0: job[0], 1: job[1], 2: job[1]})
    got = lines(c)
    assert len(got) == 4, got
    assert got[0].startswith("ranks 1,2: [1/0] inference different fusion (op0 op1 op2 op3 fused on rank 0 only)")
    assert got[1].startswith("ranks 1,2 recompiled [2/1] inference (guard of [2/0] failed: tensor 'x' size mismatch")
    assert got[2].startswith("ranks 1,2: [3/0] inference different compile inputs (rank 0 -> ranks 1,2: a size changed")
    assert re.match(r"\[3/0\] inference cpp_fused_\w+ 2\.\dx slower on ranks 1,2 \(", got[3])
    assert [d.ranks for d in c.divergences] == [[1, 2]] * 4
    assert c.graph("[2/1] inference").absent == {0: "not compiled"}


def test_a_rank_whose_compile_failed_is_named_at_its_stage_with_the_error():
    # tests/scripts/cpp_compile_error.py: torch's own fault injection fails the C++ compile in codegen
    bad = load("codegen_error.jsonl")
    c = ranks.compare_ranks({0: None, 1: bad})
    assert c.states[1].state == "failed" and c.states[1].where == ("[0/0] inference", "codegen")
    assert lines(c) == ["rank 1 failed at [0/0] inference codegen: InductorError: CppCompileError: C++ compile error",
                        "rank 0: no session recorded"]
    assert not c.graph("[0/0] inference").agree
    assert c.graph("[0/0] inference").incomplete == {1: "failed in codegen"}


def test_cells_of_a_graphs_by_ranks_table(cmp, job):
    assert [cmp.graph("[0/0] forward").cell(r) for r in (0, 1)] == ["reference", "same"]
    assert [cmp.graph("[1/0] inference").cell(r) for r in (0, 1)] == ["reference", "fusion, kernels"]
    assert [cmp.graph("[2/1] inference").cell(r) for r in (0, 1)] == ["not compiled", "reference; recompiled"]
    assert cmp.graph("[3/0] inference").cell(1).endswith("; slower")
    died = ranks.compare_ranks({0: job[0], 1: load("ranks_r1_died.jsonl")})
    assert [died.graph("[0/0] backward").cell(r) for r in (0, 1)] == ["reference", "died in scheduling"]
    assert died.graph("[3/0] inference").cell(1) == "died before"


def test_a_cache_kept_between_calls_reuses_the_diffs_while_the_stops_stay(job):
    from inductor_step.session.store import IdentityCache  # noqa: PLC0415

    cache = IdentityCache(256)
    a = ranks.compare_ranks(job, cache=cache)
    b = ranks.compare_ranks(job, cache=cache)
    assert b.graph("[1/0] inference").diffs[1] is a.graph("[1/0] inference").diffs[1]
    assert [d.line for d in a.divergences] == [d.line for d in b.divergences] == lines(ranks.compare_ranks(job))
    # a new stop (the session read again: other objects) is diffed again
    c = ranks.compare_ranks({0: job[0], 1: load("ranks_r1.jsonl")}, cache=cache)
    assert c.graph("[1/0] inference").diffs[1] is not a.graph("[1/0] inference").diffs[1]


def test_a_ddp_training_job_with_an_uneven_last_batch():
    """``inductor-step --headless --nproc-per-node 2 --run tests/scripts/ranks_ddp.py`` (gloo): DDP
    around a compiled model; rank 1's short last batch recompiles forward and backward there only.
    Both ranks timed at once on 2 cores, so the tracer flagged their runs (contended): the times
    still agree, and the text says they come from noisy runs."""
    c = ranks.compare_job(os.path.join(FIX, "ranks_ddp.job.json"))
    assert [(d.key, d.level, d.ranks) for d in c.divergences] == [("[0/1] forward", "recompile", [1]),
                                                                  ("[0/1] backward", "recompile", [1])]
    assert c.divergences[0].line == ("rank 1 recompiled [0/1] forward (guard of [0/0] failed: tensor 'args[0]' size "
                                     "mismatch at index 0. expected 8, actual 5)")
    for key in ("[0/0] forward", "[0/0] backward"):
        g = c.graph(key)
        assert g.differs == {1: []} and g.times and not any(t.counts for t in g.times)
        assert set(g.noisy) == {0, 1} and all("competed for the cores" in w for w in g.noisy.values())
        assert g.summary == "ranks 0,1: agree, kernel times too (on runs flagged noisy)"
    assert "runs flagged noisy: ranks 0,1: its time did not settle; other processes competed for the cores" \
        in ranks.text(c)


def test_what_the_ranks_pane_reads_per_graph(cmp):
    # the pair Enter diffs (diff_pair), and the detail text
    assert cmp.graph("[1/0] inference").pair == (0, 1)
    assert cmp.graph("[2/1] inference").pair == (0, 1)  # rank 0's stand-in [2/0] against rank 1's [2/1]
    d = cmp.graph("[1/0] inference").detail.split("\n")
    assert d[0] == "[1/0] inference: ranks 0,1: fusion, kernels differ on rank 1"
    assert d[2].startswith("rank 1: [1/0] inference different fusion (op0 op1 op2 op3 fused on rank 0 only)")
    assert "diff  A: rank 0 [1/0] inference  ->  B: rank 1 [1/0] inference" in d
    assert ranks.compare_job_file is ranks.compare_job  # the name cli/headless.py calls


def test_a_recorded_job_whose_rank_1_failed_and_rank_0_was_stopped():
    """``inductor-step --headless -m torch.distributed.run --nproc-per-node 2 --standalone job_step.py
    --die-rank 1`` (the job launcher; tests/scripts/job_step.py): rank 1's Inductor fails lowering
    [1/0]; torch's launcher then stops rank 0, waiting at its next collective.  The failure comes
    first, with its stage; rank 0's line says how it ended, from the job file."""
    c = ranks.compare_job(os.path.join(FIX, "ranks_failed.job.json"))
    assert [(d.rank, d.level) for d in c.divergences] == [(1, "failed"), (0, "died")]
    assert lines(c)[0] == ("rank 1 failed at [1/0] inference lowering: InductorError: LoweringException: RuntimeError: "
                           "injected lowering failure for aten.sin on rank 1")
    assert lines(c)[1].startswith("rank 0 died after compiling [1/0] inference (running the script): exit code -15")
    assert lines(c)[1].endswith("(SIGTERM): stopped by torch's launcher after rank 1 failed")
    g = c.graph("[1/0] inference")
    assert g.incomplete == {1: "failed in lowering"} and g.reference == 0
    assert g.summary == "ranks 0,1: failed in lowering on rank 1"
    assert [c.graph(k).agree for k in ("[0/0] forward", "[0/0] backward")] == [True, True]


def test_a_two_gpu_ddp_job_each_rank_on_its_own_gpu_agrees():
    """``inductor-step --headless --run --nproc-per-node 2 examples/ddp_train.py`` on 2 H100s (torch
    2.11, NCCL): rank 1 runs on cuda:1, so its parameters, nodes, loop groups, kernels' triton_meta
    and wrapper name index 1 where rank 0's name 0.  The rank's own GPU is the same
    input on every rank: no divergence.  (Rank 1's timing failed in this recording, before the
    timing thread set the graph's device: its runs are said as failed, not compared.)"""
    s1 = load("ranks_ddp_gpu.rank1.jsonl")
    assert s1.header["distributed"]["local_rank"] == 1
    code = json.dumps(s1.stop_for("[5/0] inference", "codegen"))
    assert "get_raw_stream(1)" in code and "_DeviceGuard(1)" in code  # what the comparison must see through
    c = ranks.compare_job(os.path.join(FIX, "ranks_ddp_gpu.job.json"))
    assert c.ranks == [0, 1] and {s.state for s in c.states.values()} == {"done"}
    assert lines(c) == []
    assert len(c.graphs) == 7
    for g in c.graphs:
        assert g.ranks == [0, 1] and g.differs == {1: []}, (g.key, g.differs)
        assert "differ" not in g.summary
        assert g.untimed[1].startswith("timing failed: RuntimeError: CUDA driver error: invalid argument")
    # the diff Enter opens: the devices read as each rank's own
    ka, kb, how, d = ranks.diff_pair({0: load("ranks_ddp_gpu.rank0.jsonl"), 1: s1}, "[5/0] inference", 0, 1)
    assert not any(lv.changed for lv in d.levels if lv.key in ranks.GRAPH_LEVELS)


def _on_gpus(name: str, rank: int, device: int, tmp_path) -> str:
    """Rank ``rank``'s session of fixture job ``name`` (gloo, CPU) as if it ran on ``cuda:device``: every
    CPU device name in its messages rewritten as Inductor spells a CUDA one."""
    from inductor_step.session.format import codec  # noqa: PLC0415

    out = tmp_path / f"{name}.rank{rank}.jsonl"
    with open(os.path.join(FIX, f"{name}.rank{rank}.jsonl"), "rb") as f, open(out, "wb") as o:
        for line in f:
            msg = codec.decode(line)
            if msg is None:
                continue
            text = json.dumps(msg).replace('"cpu"', f'"cuda:{device}"').replace(
                "device(type='cpu')", f"device(type='cuda', index={device})")
            o.write(codec.encode(json.loads(text)))
    return str(out)


def test_a_cpu_job_rewritten_onto_each_ranks_gpu_agrees_and_another_ranks_gpu_differs(tmp_path):
    """ranks_torchrun (gloo): [0/0] agrees on both ranks.  Rewritten as if rank N ran on cuda:N, it
    still agrees; with rank 1's graph on cuda:0 (rank 0's GPU, not its own) it is a real difference."""
    from inductor_step.session.store import load_session as _load  # noqa: PLC0415

    def job(dev1: int) -> dict[int, Store]:
        return {r: session_of(_load(_on_gpus("ranks_torchrun", r, d, tmp_path / f"{r}{d}")))
                for r, d in ((0, 0), (1, dev1))}

    for r in (0, 1):
        for d in (0, 1):
            (tmp_path / f"{r}{d}").mkdir(exist_ok=True)
    own = job(1)
    assert "cuda:1" in json.dumps(own[1].stop_for("[0/0] inference", "dynamo"))
    c = ranks.compare_ranks(own)
    assert c.graph("[0/0] inference").differs == {1: []}
    assert c.graph("[1/0] inference").differs == {1: []}
    other = ranks.compare_ranks(job(0))  # rank 1 (local rank 1) computing on cuda:0
    g = other.graph("[0/0] inference")
    assert g.differs[1] and g.differs[1][0] in ("why", "dynamo")
    assert "cuda:0" in next(d.line for d in g.divergences)


@pytest.mark.parametrize("text, want", [
    ("cuda:1", "cuda:LOCAL_RANK"), ("cuda:10", "cuda:10"), ("cuda:0", "cuda:0"),
    ("(device(type='cuda', index=1), (1, 1))", "(device(type='cuda', index=LOCAL_RANK), (1, 1))"),
    ("'device': DeviceProperties(type='cuda', index=1, multi_processor_count=132",
     "'device': DeviceProperties(type='cuda', index=LOCAL_RANK, multi_processor_count=132"),
    ("stream1 = get_raw_stream(1)", "streamLOCAL_RANK = get_raw_stream(LOCAL_RANK)"),
    ("with torch.cuda._DeviceGuard(1):", "with torch.cuda._DeviceGuard(LOCAL_RANK):"),
    ("torch.cuda.set_device(1)", "torch.cuda.set_device(LOCAL_RANK)"),
    ("x = y[1]; index=1", "x = y[1]; index=1"),  # not a device
])
def test_a_ranks_own_device_index_as_inductor_spells_it(text, want):
    from inductor_step.session.ranks.devices import own_device_text, own_device_value

    assert own_device_text(text, 1) == want
    stop = {"a": [text, {"k": text}], "n": 1}
    out = own_device_value(stop, 1)
    assert out["a"][0] == want and out["a"][1]["k"] == want and out["n"] == 1
    assert (out is stop) == (want == text)  # a recorded stop is never changed: a new one where anything differs
