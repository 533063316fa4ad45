"""Higher-order ops' subgraphs are graphs (on CPU): ``torch.cond``, a
``nested_compile_region``, ``while_loop`` and ``flex_attention``, recorded once with ``--run``
(tests/scripts/hop_all.py), checked as a person checks them: every graph and subgraph has its stages,
every generated kernel is linked to a buffer, every graph is timed or says why, the script's output is
unchanged, and the graph list shows the subgraph keys.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

from inductor_step.session.format import STAGES, graph_key, validate
from test_tracer import ROOT, Run, headless

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")

SCRIPT = os.path.join(ROOT, "tests", "scripts", "hop_all.py")

#: the subgraphs of the script's four compiled functions, by parent ("cond": the first), as torch names them
SUBGRAPHS = {"cond": ["true_graph_0", "false_graph_0"], "nested": ["repeated_subgraph0"],
             "while_loop": ["while_loop_cond_graph_0", "while_loop_body_graph_0"], "flex": ["sdpa_score0", "sdpa_mask0"]}
#: subgraphs Inductor lowers inline into their parent's kernel: no stages of their own after aot
INLINED_NAMES = {"sdpa_score0", "sdpa_mask0"}
#: Dynamo's name for each subgraph, as the dynamo stop's note gives it
DYNAMO_NAMES = {"true_graph_0": "cond_true_0", "false_graph_0": "cond_false_0", "repeated_subgraph0": "subgraph_0",
                "while_loop_cond_graph_0": "cond_fn_0", "while_loop_body_graph_0": "body_fn_0",
                "sdpa_score0": "score_mod_0", "sdpa_mask0": "mask_fn_0"}


@pytest.fixture(scope="module")
def hops(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return headless(tmp_path_factory, "hops", SCRIPT, run=True)


@pytest.fixture(scope="module")
def graphs(hops: Run) -> list[str]:
    """Every graph key the script should have: each compiled function's ``[N/0] inference`` (in compile
    order) and its subgraphs' ``[N/0] inference › name``."""
    # torch 2.11 runs the script's own eager torch.cond / while_loop / flex_attention calls through
    # torch.compile(backend="eager"): those graphs are recorded as another backend's, not Inductor's
    other = (hops.of_type("done")[-1].get("other_backends") or {}) if hops.of_type("done") else {}
    parents = [k for k in hops.graphs() if " › " not in k and k not in other]
    assert len(parents) == len(SUBGRAPHS), hops.graphs()
    out = []
    for p, subs in zip(parents, SUBGRAPHS.values()):
        # torch 2.11 makes one repeated_subgraphN per call of the nested region; 2.13+ one for both calls
        extra = [k.partition(" › ")[2] for k in hops.graphs() if k.startswith(f"{p} › repeated_subgraph")]
        out += [p, *(f"{p} › {s}" for s in dict.fromkeys(subs + extra))]
    return out


def inlined(key: str) -> bool:
    return key.partition(" › ")[2] in INLINED_NAMES


def key_of(graphs: list[str], sub: str) -> str:
    return next(k for k in graphs if k.endswith(f" › {sub}"))


def test_the_script_runs_unchanged_and_exits_0(hops: Run) -> None:
    assert hops.returncode == 0, hops.stderr[-3000:]
    assert hops.user_output() == ["cond True", "nested True", "while_loop True", "flex True"]
    assert not [m for m in hops.messages if validate(m)], [validate(m) for m in hops.messages if validate(m)][:3]
    assert not hops.of_type("error")


def test_every_graph_and_subgraph_has_its_own_key_and_every_stage(hops: Run, graphs: list[str]) -> None:
    other = hops.of_type("done")[-1].get("other_backends") or {}
    assert sorted(k for k in hops.graphs() if k not in other) == sorted(graphs)
    assert all(v == "eager" for v in other.values()), other  # (torch 2.11: the script's eager HOP calls)
    for key in graphs:
        assert hops.stages_of(key) == list(STAGES), key  # each stage once: nothing piles up under the parent
        if inlined(key):
            for stage in ("lowering", "scheduling", "loopbody", "codegen"):
                assert "inline" in hops.stop(key, stage)["unavailable"]
    # the graph list shows them: the keys headless prints are the app's (session.store.Store.graphs)
    for key in graphs:
        assert key in hops.stdout


def test_a_subgraph_names_its_dynamo_graph_and_has_its_own_levels(hops: Run, graphs: list[str]) -> None:
    for key in graphs:
        sub = key.partition(" › ")[2]
        if not sub:
            continue
        dyn = hops.stop(key, "dynamo")
        # torch 2.11 traces the region once per call: repeated_subgraph1 is Dynamo's subgraph_1
        dyn_name = DYNAMO_NAMES.get(sub) or "subgraph_" + sub.removeprefix("repeated_subgraph")
        assert f"traced it as {dyn_name!r}" in dyn["note"], dyn["note"]
        assert dyn["graph"]["nodes"], key
        assert hops.stop(key, "aot")["post_grad"]["nodes"], key
        if inlined(key):
            continue
        bufs = [b["name"] for b in hops.stop(key, "lowering")["buffers"]]
        assert bufs and all(b.startswith(sub + "_buf") for b in bufs), (key, bufs)  # as Inductor names them
        cg = hops.stop(key, "codegen")
        assert cg["function"] == sub and f"def {sub}(args):" in cg["wrapper"].split("\n")[cg["function_lines"][0] - 1]


def test_every_kernel_is_linked_to_its_buffers_in_parent_and_subgraphs(hops: Run, graphs: list[str]) -> None:
    """The extern calls inside a subgraph's function (cond's mm, the region's addmm) are kernels too."""
    externs = []
    for key in graphs:
        if inlined(key):
            continue
        cg = hops.stop(key, "codegen")
        links = cg["links"]
        assert "buffers" in links, (key, links.get("unavailable"))
        own = {b["name"] for b in hops.stop(key, "lowering")["buffers"]}
        for k in cg["kernels"]:
            assert k["buffers"] and set(links["kernels"][k["name"]]["buffers"]) <= own, (key, k["name"])
            assert k["name"] in cg["kernel_spans"]
            externs += [f"{key} {k['name']}"] if k["backend"] == "extern" else []
        for name, b in links["buffers"].items():  # every buffer has a kernel, or says precisely why not
            assert b.get("kernels") or any("subgraph function" in n for n in b.get("notes") or []), (key, name, b)
    assert f"{key_of(graphs, 'true_graph_0')} extern_kernels.mm#0" in externs
    assert f"{key_of(graphs, 'repeated_subgraph0')} extern_kernels.addmm#0" in externs
    flex = key_of(graphs, "sdpa_score0").partition(" › ")[0]
    assert hops.stop(flex, "lowering")["buffers"]  # flex's snapshot no longer asserts


def test_every_graph_is_timed_or_says_why(hops: Run, graphs: list[str]) -> None:
    runs = {graph_key(m): m for m in hops.of_type("run")}
    assert sorted(runs) == sorted(graphs)
    for key, m in runs.items():
        assert not m.get("error"), (key, m.get("error"))
        if inlined(key):
            assert "inline" in m["not_timed"]
            continue
        if " › " in key:  # a subgraph's eager is inside its parent's (Dynamo's graph runs the op whole);
            # its decomposed post-grad subgraph is timed, no fx re-trace of cond & co
            assert m["compiled_ms"] > 0 and m["decomposed_ms"] > 0 and "parent's eager" in m["eager_note"], key
            assert "verdicts" in m, key  # judged for contention like its parent
        else:
            assert m["compiled_ms"] > 0 and m["eager_ms"] > 0, key  # eager too: no fx re-trace of cond & co
        codegen = {k["name"] for k in hops.stop(key, "codegen")["kernels"]}
        assert {k["name"] for k in m["kernels"]} <= codegen, key  # each graph times its own kernels
    # the branch the inputs did not take is timed on the same arguments, and says so
    false, body = key_of(graphs, "false_graph_0"), key_of(graphs, "while_loop_body_graph_0")
    assert {k["name"] for k in runs[false]["kernels"]} == {k["name"] for k in hops.stop(false, "codegen")["kernels"]}
    assert "did not run" in runs[false]["inputs"]
    assert any("ran 3 times" in w for w in runs[body]["warnings"])
    assert "could not be timed" not in hops.stderr


def test_each_subgraph_has_its_own_compile_time(hops: Run, graphs: list[str]) -> None:
    """A subgraph Inductor lowers and generates on its own (cond's branches, the nested region,
    while_loop's cond and body) has its own compile time, from the events torch ran while ``V.graph`` was its
    SubgraphLowering: its lowering times exactly its own post-grad nodes (none of them counted again under the
    parent, whose higher-order op node no longer includes them), and the parent's and subgraphs' times add up
    to the compile's (session.compile_time.frame_times)."""
    from inductor_step.session import compile_time as ct  # noqa: PLC0415
    from inductor_step.session.store import Store  # noqa: PLC0415

    times = ct.graph_times(Store.of(hops.messages))
    for key in graphs:
        sub = key.partition(" › ")[2]
        if not sub or inlined(key) or sub.startswith("repeated_subgraph1"):
            continue
        g = times[key]
        assert g.stages.get("lowering") and g.stages.get("scheduling") and g.stages.get("codegen"), (key, g.stages)
        assert g.stages.get("post_grad"), (key, g.stages)  # its own post-grad passes, not its parent's
        assert not g.stages.get("dynamo") and not g.stages.get("aot"), (key, g.stages)  # the parent's frame and trace
        post_grad = {n["name"] for n in hops.stop(key, "aot")["post_grad"]["nodes"]}
        assert set(g.nodes) <= post_grad and len(g.nodes) >= len(post_grad) - 2, (key, sorted(g.nodes), post_grad)
        parent = times[key.partition(" › ")[0]]
        assert parent.stages.get("dynamo") and parent.stages.get("lowering")
        frame = ct.frame_times(times)[key.split(" ", 1)[0]]
        assert (key, g.total_ms) in frame.graphs
        assert abs(frame.total_ms - sum(ms for _k, ms in frame.graphs)) < 1e-6
    for sub in INLINED_NAMES:  # flex attention's mods: their post-grad passes are theirs, their lowering inlined
        g = times[key_of(graphs, sub)]
        assert g.stages.get("post_grad") and not g.stages.get("lowering"), (sub, g.stages)
        assert ("lowering", None, ct.INLINED_NOTE) in [(s, ms, n) for s, _label, ms, n in ct.stage_rows(g)]
    # the headless line ranks user lines as the recorded session does (it saw no links once: "no user line")
    line = next(ln for ln in hops.stdout.splitlines() if ln.startswith("compile time:"))
    assert line == ct.summary_line(Store.of(hops.messages)), line
    cond = key_of(graphs, "true_graph_0").partition(" › ")[0]
    # the parent's cond node is lowered in a moment: its branches' nodes are theirs
    cond_node = next(n for n in hops.stop(cond, "aot")["post_grad"]["nodes"] if "cond" in str(n.get("target")))
    branches = sum(times[key_of(graphs, s)].stages["lowering"] for s in ("true_graph_0", "false_graph_0"))
    assert times[cond].nodes[cond_node["name"]] < branches, (times[cond].nodes, branches)


def test_a_flex_attention_kernels_written_output_is_known_for_its_saved_inputs(hops: Run, graphs: list[str]) -> None:
    """Saved outputs: flex attention's C++ template kernel names its output ``float* output``, not
    ``out_ptr0``; ``X`` must still save it so the repro compares it (it said "output: not compared")."""
    from inductor_step.tracer.links import _params  # noqa: PLC0415
    from inductor_step.tracer.save_inputs import written_params  # noqa: PLC0415

    flex = key_of(graphs, "sdpa_score0").partition(" › ")[0]
    kernels = [k for k in hops.stop(flex, "codegen")["kernels"] if k.get("template") and k["backend"] == "cpp"]
    assert kernels, [k["name"] for k in hops.stop(flex, "codegen")["kernels"]]
    for k in kernels:
        params = _params("cpp", k["source"])
        written = written_params("cpp", k["source"], params)
        assert written and all(params[i] not in ("query", "key", "value") for i in written), (params, written)


def test_the_headless_line_of_an_inlined_subgraph_says_not_timed_once(hops: Run, graphs: list[str]) -> None:
    """``--headless --run``'s line for flex attention's score_mod read ``run  not timed: not timed on its own: ...``."""
    key = key_of(graphs, "sdpa_score0")
    line = next(ln for ln in hops.stdout.splitlines() if ln.startswith(key) and " run " in ln)
    assert "not timed on its own: Inductor lowered it inline" in line, line
    assert line.count("not timed") == 1, line
