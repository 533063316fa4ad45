"""Collectives in a compiled graph, at every level, linked like any extern call.

tests/scripts/collectives.py runs one training step of a function with ``_c10d_functional``
collectives (reduce_scatter_tensor, all_gather_into_tensor, all_reduce_, each with its
wait_tensor) in its forward and backward graphs, in one process (gloo, a world of 1), under
``inductor-step --headless --record`` with ``TORCH_COMPILE_DEBUG=1``: torch writes its own
``output_code.py``, ``ir_post_fusion.txt`` and provenance map of the very compiles we captured,
and every check is against those.  Inductor calls a collective as
``bufN = torch.ops._c10d_functional.X.default(...)`` and, for ops that return nothing (the
in-place ``all_reduce_``, every ``wait_tensor``), as a bare statement; both are extern calls whose
IR nodes are ``_CollectiveKernel`` / ``_AllReduce_Kernel`` / ``_WaitKernel`` with
``MutationOutput`` buffers for the tensors they write in place.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shlex
import signal
import subprocess
import sys
from typing import Any

import pytest
from test_tracer import ROOT, Run, line_of, run_cli, split_user_line

from inductor_step.session.format import graph_key, read_session
from inductor_step.session.store import Store

SCRIPT = os.path.join(ROOT, "tests", "scripts", "collectives.py")
_CALL = re.compile(r"^\s*(?:(buf\d+) = )?(torch\.ops\._c10d_functional\.\w+\.\w+)\(", re.M)
_HANDLE = re.compile(r"# \[Provenance debug handles\] (torch\.ops\._c10d_functional\.[\w.]+:\d+)")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    cwd = tmp_path_factory.mktemp("collectives")
    record = str(cwd / "s.jsonl")
    r = run_cli(["--headless", "--record", record, SCRIPT], str(cwd), record, {"TORCH_COMPILE_DEBUG": "1"})
    assert r.returncode == 0, r.stderr[-3000:]
    return r


class TorchArtifacts:
    """One graph's TORCH_COMPILE_DEBUG folder, read without our code: the collective calls of
    ``output_code.py`` (op, 1-based line, provenance handle) in order, and ``ir_post_fusion.txt``'s
    extern nodes (``opN.node.kernel = ...``) with their output buffers, in order."""

    def __init__(self, folder: str):
        self.output_code = open(os.path.join(folder, "output_code.py")).read()
        lines = self.output_code.split("\n")
        self.calls: list[tuple[str, int, str | None]] = []
        for i, line in enumerate(lines):
            m = _CALL.match(line)
            if m and i > self.output_code[:self.output_code.find("def call(")].count("\n"):
                handle = next((h.group(1) for back in lines[max(0, i - 3):i] for h in [_HANDLE.search(back)] if h),
                              None)
                self.calls.append((m.group(2), i + 1, handle))
        post = open(os.path.join(folder, "ir_post_fusion.txt")).read()
        self.nodes: list[tuple[str, str, list[str]]] = []  # (opN, kernel, output buffers)
        for m in re.finditer(r"^(op\d+)\.node\.kernel = (torch\.ops\._c10d_functional\.[\w.]+)$", post, re.M):
            op = m.group(1)
            block = re.search(r"^" + op + r"\.outputs = \[\n(.*?)^\]", post, re.M | re.S)
            outs = re.findall(r"^    (buf\d+): \w+$", block.group(1), re.M) if block else []
            self.nodes.append((op, m.group(2), outs))
        # torch writes none for a lazily compiled backward
        prov = os.path.join(folder, "inductor_provenance_tracking_node_mappings.json")
        data = json.load(open(prov)) if os.path.exists(prov) else {}
        self.provenance = next((v for k, v in data.items() if k.endswith("CodeToPost") and v), {})


def _torch(run: Run, key: str) -> TorchArtifacts:
    wrapper = run.stop(key, "codegen")["wrapper"]
    for p in glob.glob(os.path.join(run.cwd, "**", "output_code.py"), recursive=True):
        if open(p).read() == wrapper:
            return TorchArtifacts(os.path.dirname(p))
    raise AssertionError(f"no output_code.py of torch's is the wrapper of {key}")


def _collective_kernels(run: Run, key: str) -> list[dict[str, Any]]:
    return [k for k in run.stop(key, "codegen")["kernels"] if k["name"].startswith("torch.ops._c10d_functional.")]


GRAPHS = {
    "[0/0] forward": ["reduce_scatter_tensor", "wait_tensor", "all_gather_into_tensor", "wait_tensor",
                      "all_reduce_", "wait_tensor", "all_gather_into_tensor", "wait_tensor"],
    "[0/0] backward": ["reduce_scatter_tensor", "wait_tensor", "all_gather_into_tensor", "wait_tensor",
                       "all_reduce_", "wait_tensor"],
}


def _norm(ops: list[str]) -> list[str]:
    """Op names with the in-place all_reduce_ read as all_reduce: Inductor lowers a functional
    all_reduce in place (``_AllReduce_Kernel``) where it can take over its input's buffer, else
    out of place (``_AllReduceKernel``), and that choice is Inductor's, version by version."""
    return [o.rstrip("_") if o.startswith("all_reduce") else o for o in ops]


@pytest.mark.parametrize("key", list(GRAPHS))
def test_post_grad_graph_has_the_collectives(run: Run, key: str) -> None:
    """The aot stop's post-grad graph has each collective and its wait as FX nodes."""
    targets = [n["target"] for n in run.stop(key, "aot")["post_grad"]["nodes"]
               if str(n.get("target", "")).startswith("_c10d_functional.")]
    assert sorted(_norm([t.split(".")[1] for t in targets])) == sorted(_norm(GRAPHS[key])), targets


@pytest.mark.parametrize("key", list(GRAPHS))
def test_every_collective_call_is_an_extern_kernel_at_its_line(run: Run, key: str) -> None:
    """Each ``torch.ops._c10d_functional`` call of torch's output_code.py (with or without
    ``bufN =``) is an extern kernel of the codegen stop, named ``op#i``, at that line."""
    tg = _torch(run, key)
    assert _norm([c[0].split(".")[-2] for c in tg.calls]) == _norm(GRAPHS[key])
    cg = run.stop(key, "codegen")
    ours = _collective_kernels(run, key)
    assert [(k["name"].split("#")[0], k["call_lines"]) for k in ours] == [(op, [line]) for op, line, _ in tg.calls]
    for k in ours:
        assert k["backend"] == "extern"
        assert cg["kernel_spans"][k["name"]]["call"] == k["call_lines"][0]
        assert k["collective"] == k["name"].split("#")[0].split(".")[-2]


@pytest.mark.parametrize("key", list(GRAPHS))
def test_collective_buffers_and_scheduler_nodes_are_torchs(run: Run, key: str) -> None:
    """The i-th call of an op computes the outputs of the i-th extern node of that op in
    ir_post_fusion.txt (its ``_CollectiveKernel``/``_WaitKernel`` buffer and the ``MutationOutput``
    of the tensor it writes), linked both ways: kernel <-> buffers <-> scheduler node."""
    tg = _torch(run, key)
    cg = run.stop(key, "codegen")
    links = cg["links"]
    lowering = {b["name"]: b for b in run.stop(key, "lowering")["buffers"]}
    sched = {n["name"]: n for n in run.stop(key, "scheduling")["after"]}
    ours = _collective_kernels(run, key)
    assert len(ours) == len(tg.nodes)
    for k, (op, kernel, outs) in zip(ours, tg.nodes):
        assert k["name"].split("#")[0] == kernel
        assert k["buffers"] == outs and k["scheduler_nodes"] == [op] and k["fused_nodes"] == [op]
        assert sched[op]["type"] == "ExternKernelSchedulerNode" and sched[op]["kernel"] == kernel
        assert links["kernels"][k["name"]]["buffers"] == outs
        assert links["kernels"][k["name"]]["scheduler_nodes"] == [op]
        assert links["scheduler_nodes"][op]["kernels"] == [k["name"]]
        for b in outs:
            assert links["buffers"][b]["kernels"] == [k["name"]], (b, links["buffers"][b])
            assert links["buffers"][b]["scheduler_node"] == op
            assert not any("no kernel computes" in n for n in links["buffers"][b]["notes"])
        kinds = [lowering[b]["kind"] for b in outs]
        if kernel.endswith("wait_tensor.default"):
            assert kinds == ["_WaitKernel", "MutationOutput"]
        elif kernel.endswith("all_reduce_.default"):
            assert kinds == ["_AllReduce_Kernel", "MutationOutput"]
        elif kernel.endswith("all_reduce.default"):
            assert kinds == ["_AllReduceKernel"]
        else:
            assert kinds == ["_CollectiveKernel"]
    # no generated kernel claims a collective's buffer
    coll = {b for k in ours for b in k["buffers"]}
    for name, e in links["kernels"].items():
        if e["backend"] != "extern":
            assert not coll & set(e["buffers"]), (name, e["buffers"])


@pytest.mark.parametrize("key", list(GRAPHS))
def test_wait_writes_into_its_collectives_output(run: Run, key: str) -> None:
    """A wait_tensor's MutationOutput says whose storage it writes: the tensor the collective
    before it filled (or, for the in-place all_reduce_, the tensor both write)."""
    links = run.stop(key, "codegen")["links"]
    ours = _collective_kernels(run, key)
    for prev, k in zip(ours, ours[1:]):
        if k["collective"] != "wait_tensor":
            continue
        mutation = k["buffers"][1]
        target = links["buffers"][mutation].get("storage_of")
        if prev["collective"] == "all_reduce_":
            assert target == links["buffers"][prev["buffers"][1]]["storage_of"]
        else:
            assert target == prev["buffers"][0]


@pytest.mark.parametrize("key", list(GRAPHS))
def test_collective_calls_take_torchs_provenance(run: Run, key: str) -> None:
    """A collective call's post-grad nodes are those torch's provenance map gives its own debug
    handle, and its buffers lead to those FX nodes (and back)."""
    tg = _torch(run, key)
    links = run.stop(key, "codegen")["links"]
    pg = {n["name"]: n for n in run.stop(key, "aot")["post_grad"]["nodes"]}
    for k, (_, _, handle) in zip(_collective_kernels(run, key), tg.calls):
        if not tg.provenance:
            pytest.skip("torch wrote an empty provenance map for this graph")
        nodes = tg.provenance[handle]
        assert links["kernels"][k["name"]]["post_grad_nodes"] == nodes
        op = k["collective"]
        for b in k["buffers"]:
            fx = links["buffers"][b]["fx_nodes"]
            assert any(str(pg[n]["target"]).startswith(f"_c10d_functional.{op.rstrip('_')}") for n in fx), (b, fx)
            for n in fx:
                assert b in links["fx_nodes"][n]["buffers"]


def test_user_line_of_the_all_reduce(run: Run) -> None:
    """Selecting the forward's all_reduce_ buffer leads to ``dist.all_reduce(s)`` in the script."""
    links = run.stop("[0/0] forward", "codegen")["links"]
    k = next(k for k in _collective_kernels(run, "[0/0] forward") if k["collective"].startswith("all_reduce"))
    lines = links["buffers"][k["buffers"][0]]["user_lines"]
    assert lines, links["buffers"][k["buffers"][0]]
    path, line = split_user_line(lines[0], run.cwd)
    assert (path, line) == (SCRIPT, line_of(SCRIPT, "dist.all_reduce(s)"))


# ----------------------------------------------------------------------------- two ranks, plain torchrun

@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory: pytest.TempPathFactory) -> list[list[dict]]:
    """tests/scripts/collectives.py under plain torchrun with 2 ranks (gloo), each rank's process
    ``inductor-step --headless --record rK.jsonl`` (torchrun's ``--no-python``: our agent is the
    rank's process, as ``inductor-step --nproc-per-node`` will start it)."""
    cwd = tmp_path_factory.mktemp("two_ranks")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    env.pop("TORCH_LOGS", None)
    env.pop("TORCH_TRACE", None)
    agent = f"{shlex.quote(sys.executable)} -m inductor_step --headless --record {shlex.quote(str(cwd))}/r$RANK.jsonl " \
        f"{shlex.quote(SCRIPT)}"
    p = subprocess.Popen([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                          "--no-python", "sh", "-c", agent], cwd=str(cwd), env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)  # torchrun and both ranks: nothing left behind
        out, err = p.communicate()
        raise AssertionError(f"the 2-rank job did not finish in 240 s\n{err[-3000:]}") from None
    assert p.returncode == 0, err[-3000:]
    assert "rank 0/2" in out and "rank 1/2" in out, out
    return [list(read_session(str(cwd / f"r{r}.jsonl"))) for r in (0, 1)]


def _codegen(messages: list[dict]) -> dict[str, dict]:
    return {f"{m['compile_id']} {m['graph_kind']}": m for m in messages
            if m.get("type") == "stop" and m["stage"] == "codegen"}


def test_two_ranks_record_the_same_collectives(two_ranks: list[list[dict]]) -> None:
    """Each rank of a 2-process job records both graphs, with the collective calls of the world of
    1 in the same order, each linked to its buffers and scheduler node."""
    ranks = [_codegen(m) for m in two_ranks]
    assert list(ranks[0]) == list(ranks[1]) == list(GRAPHS)
    for key, ops in GRAPHS.items():
        for cg in (r[key] for r in ranks):
            ours = [k for k in cg["kernels"] if k.get("collective")]
            assert _norm([k["collective"] for k in ours]) == _norm(ops)
            for k in ours:
                assert k["buffers"] and k["scheduler_nodes"]
                assert all(cg["links"]["buffers"][b]["kernels"] == [k["name"]] for b in k["buffers"])
        # the group's size is an argument of the call: 2 here (1 in the world of 1)
        rs = next(k for k in ranks[0][key]["kernels"] if k.get("collective") == "reduce_scatter_tensor")
        assert rs["calls"][0][2] == "2", rs["calls"]
        assert ranks[0][key]["wrapper"] == ranks[1][key]["wrapper"]


# ----------------------------------------------------------------------------- examples/ddp_train.py

DDP = os.path.join(ROOT, "examples", "ddp_train.py")


@pytest.fixture(scope="module")
def ddp(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """examples/ddp_train.py in one process (a world of 1), one block: two DDP buckets; with
    ``TORCH_COMPILE_DEBUG=1`` (torch's folder of each graph is named by its AOT graph,
    ``model__1_forward_4.1``)."""
    cwd = tmp_path_factory.mktemp("ddp")
    record = str(cwd / "s.jsonl")
    r = run_cli(["--headless", "--record", record, DDP, "--n-layer", "1", "--n-embd", "192", "--n-head", "4"],
                str(cwd), record, {"TORCH_COMPILE_DEBUG": "1"})
    assert r.returncode == 0, r.stderr[-3000:]
    return r


def test_ddp_optimizer_splits_the_model_into_bucket_graphs(ddp: Run) -> None:
    """DDPOptimizer hands Inductor one submodule per bucket: the model's compile id has several
    forward and backward graphs (each with its own codegen stop)."""
    cg = [s for s in ddp.stops if s["stage"] == "codegen"]
    model_cid = next(s["compile_id"] for s in cg if s["graph_kind"] == "forward")
    forwards = [s for s in cg if s["compile_id"] == model_cid and s["graph_kind"] == "forward"]
    backwards = [s for s in cg if s["compile_id"] == model_cid and s["graph_kind"] == "backward"]
    assert len(forwards) >= 2 and len(backwards) == len(forwards), [(s["compile_id"], s["graph_kind"]) for s in cg]
    assert len({s["wrapper"] for s in forwards}) == len(forwards)


def _model_cid(run: Run) -> str:
    """The compile id of the DDP model's frame (the one compiled in parts)."""
    return next(s["compile_id"] for s in run.stops if s["stage"] == "codegen" and s["graph_kind"] == "forward")


def test_ddp_bucket_graphs_have_their_own_keys(ddp: Run) -> None:
    """Each bucket's graph is a graph of its own in the session (``protocol.graph_key``, the UI's
    graph list): ``[4/0] forward #1``, ``#2``, and their backwards, compiled last bucket first; the
    headless lines name them so."""
    keys = [graph_key(s) for s in ddp.stops if s["stage"] == "codegen"]
    assert len(keys) == len(set(keys)), keys
    cid = _model_cid(ddp)
    model = [k for k in Store.of(ddp.messages).graphs if k.startswith(cid)]
    assert model == [f"{cid} forward #1", f"{cid} forward #2", f"{cid} backward #2", f"{cid} backward #1"], model
    assert f"{cid} backward #2    codegen" in ddp.stdout
    # the other compiles keep their keys (no part)
    assert any(k.endswith(" inference") for k in keys)


def test_ddp_backward_of_a_bucket_is_its_forwards(ddp: Run) -> None:
    """``backward #k`` is the backward AOTAutograd derived with ``forward #k``: torch's own debug
    folders of the two wrappers carry the same AOT id (``model__1_forward_4.1``,
    ``model__1_backward_6.2``), and the backward's Dynamo level is its own bucket's submodule."""
    folders = {}
    for p in glob.glob(os.path.join(ddp.cwd, "**", "output_code.py"), recursive=True):
        m = re.search(r"__(\d+)_(forward|backward|inference)_\d+", os.path.basename(os.path.dirname(p)))
        assert m, p
        folders[open(p).read()] = (m.group(1), m.group(2))
    cid = _model_cid(ddp)
    for part in (1, 2):
        fwd = folders[ddp.stop(f"{cid} forward #{part}", "codegen")["wrapper"]]
        bwd = folders[ddp.stop(f"{cid} backward #{part}", "codegen")["wrapper"]]
        assert (fwd[1], bwd[1]) == ("forward", "backward") and fwd[0] == bwd[0], (part, fwd, bwd)
        assert ddp.stop(f"{cid} backward #{part}", "dynamo")["graph"] == \
            ddp.stop(f"{cid} forward #{part}", "dynamo")["graph"]
        assert ddp.stop(f"{cid} backward #{part}", "aot")["aot_graphs"]["backward"] == \
            ddp.stop(f"{cid} forward #{part}", "aot")["aot_graphs"]["backward"]
    assert folders[ddp.stop(f"{cid} forward #1", "codegen")["wrapper"]][0] != \
        folders[ddp.stop(f"{cid} forward #2", "codegen")["wrapper"]][0]


def test_ddp_parts_have_their_own_compile_time(ddp: Run) -> None:
    """Each bucket's graph has its own compile time, from the events of its own ``compile_fx``
    call (AOTAutograd to the module's load), and its backward from its own lazy compile; the frame's own
    time outside them (Dynamo's tracing, DDPOptimizer's split, the guards) is a row of its own,
    ``[4/0] frame``; together they add up to the frame's compile.  Each part lowered exactly its own
    post-grad nodes, and the C++ kernels it built are its codegen's."""
    from inductor_step.session import compile_time as ct  # noqa: PLC0415

    cid = _model_cid(ddp)
    s = Store.of(ddp.messages)
    times = ct.graph_times(s)
    parts = [f"{cid} forward #1", f"{cid} forward #2", f"{cid} backward #2", f"{cid} backward #1"]
    assert [k for k in times if k.startswith(cid + " ")] == [f"{cid} frame"] + parts
    frame = times[f"{cid} frame"]
    assert frame.stages.get("dynamo") and frame.stages.get("guards") and frame.frame["tracing_ms"] > 0
    assert not any(frame.stages.get(x) for x in ("aot", "lowering", "scheduling", "codegen")), frame.stages
    for k in parts:
        g = times[k]
        assert g.stages.get("lowering") and g.stages.get("scheduling") and g.stages.get("codegen"), (k, g.stages)
        assert not g.stages.get("dynamo") and not g.stages.get("guards"), (k, g.stages)
        assert (g.stages.get("aot", 0) > 0) == k.split(" ")[1].startswith("forward"), (k, g.stages)
        post_grad = {n["name"] for n in ddp.stop(k, "aot")["post_grad"]["nodes"] if n.get("op") != "placeholder"}
        lowered = {n for n in g.nodes if n in post_grad}
        assert lowered and len(lowered) >= len(post_grad) - 2 and set(g.nodes) <= post_grad | {
            n["name"] for n in ddp.stop(k, "aot")["post_grad"]["nodes"]}, (k, sorted(g.nodes), sorted(post_grad))
        cpp = {x["name"] for x in g.kernels if x.get("kind") == "cpp"}
        assert cpp <= {x["name"] for x in ddp.stop(k, "codegen")["kernels"]}, (k, cpp)
    whole = ct.frame_times(times)[cid]
    assert [k for k, _ in whole.graphs] == [f"{cid} frame"] + parts
    assert abs(whole.total_ms - sum(times[k].total_ms for k in [f"{cid} frame"] + parts)) < 1e-6
    # the pane's row of the frame says what it is; the report lists the sum
    row = next(r for r in ct.rankings(s)["graphs"] if r.label == f"{cid} frame")
    assert row.note.startswith(ct.FRAME_NOTE)
    assert f"- {whole.text()}" in ct.report_section(s)


def test_ddp_global_mean_all_reduce_is_linked(ddp: Run) -> None:
    """``global_mean``'s ``dist.all_reduce`` is in its post-grad graph and its wrapper, linked to
    the line of the script."""
    key = next(k for k in ddp.graphs() if k.endswith("inference"))
    targets = [n["target"] for n in ddp.stop(key, "aot")["post_grad"]["nodes"]]
    # the post-grad graph's functional all_reduce; Inductor lowers it in place (all_reduce_) into the buffer it copied
    assert "_c10d_functional.all_reduce.default" in targets and "_c10d_functional.wait_tensor.default" in targets
    cg = ddp.stop(key, "codegen")
    ar = next(k for k in cg["kernels"] if (k.get("collective") or "").startswith("all_reduce"))
    wait = next(k for k in cg["kernels"] if k.get("collective") == "wait_tensor")
    lines = cg["wrapper"].split("\n")
    assert re.match(r"(buf\d+ = )?torch\.ops\._c10d_functional\.all_reduce_?\.default\(",
                    lines[ar["call_lines"][0] - 1].strip())
    assert lines[wait["call_lines"][0] - 1].strip().startswith("torch.ops._c10d_functional.wait_tensor.default(")
    b = cg["links"]["buffers"][ar["buffers"][0]]
    assert [split_user_line(u, ddp.cwd) for u in b["user_lines"]][:1] == [(DDP, line_of(DDP, "dist.all_reduce(y)"))]


# ----------------------------------------------------------------------------- examples/fsdp2_train.py

def test_fsdp2_example_compiles_its_blocks(tmp_path_factory: pytest.TempPathFactory) -> None:
    """examples/fsdp2_train.py in one process: ``fully_shard`` blocks compile on CPU (gloo); one
    forward and one backward graph serve both blocks, with no collective in them (FSDP2's run in
    its hooks)."""
    cwd = tmp_path_factory.mktemp("fsdp2")
    record = str(cwd / "s.jsonl")
    r = run_cli(["--headless", "--record", record, os.path.join(ROOT, "examples", "fsdp2_train.py")], str(cwd), record)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "iter 1:" in "".join(r.user_output())
    cg = _codegen(r.messages)
    assert sorted(cg) == ["[0/0] backward", "[0/0] forward"]
    assert not [k for c in cg.values() for k in c["kernels"] if k.get("collective")]


def test_ddp_bucket_graphs_pair_in_diff_ranks_and_export(ddp: Run, tmp_path) -> None:
    """Two ranks that compiled alike (the session read twice): diff pairs each bucket's graph with
    its namesake, the rank comparison lists every bucket's graph (in compile-id, kind, part order)
    on both ranks, in agreement, the TORCH_TRACE export logs each bucket's AOT graphs and
    backward metrics, as torch does (one per compile_fx call under the frame's compile id), and the
    report lists each and bundles its own repro."""
    from inductor_step.session.diff import pair_graphs  # noqa: PLC0415
    from inductor_step.session.export import export_trace  # noqa: PLC0415
    from inductor_step.session.ranks import compare_ranks  # noqa: PLC0415
    from inductor_step.session.report import build_report  # noqa: PLC0415

    cid = _model_cid(ddp)
    sa, sb = Store.of(ddp.messages), Store.of(ddp.messages)
    parts = [f"{cid} forward #1", f"{cid} forward #2", f"{cid} backward #1", f"{cid} backward #2"]
    assert [(a, b) for a, b, _ in pair_graphs(sa, sb) if a in parts] == [(k, k) for k in parts[:2] + parts[:1:-1]]
    c = compare_ranks({0: sa, 1: sb})
    assert [g.key for g in c.graphs if g.key.startswith(cid)] == parts
    assert [(c.graph(k).ranks, c.graph(k).differs, c.graph(k).divergences) for k in parts] == \
        [([0, 1], {1: []}, [])] * 4
    log = open(export_trace(ddp.record, str(tmp_path))).read()
    fid, fcid = (int(x) for x in cid.strip("[]").split("/"))
    events = [json.loads(line.split("] ", 1)[1]) for line in log.splitlines() if not line.startswith("\t")]
    ours = [next(iter(e)) for e in events if e.get("frame_id") == fid and e.get("frame_compile_id") == fcid]
    assert ours.count("aot_forward_graph") == ours.count("aot_backward_graph") == 2, ours
    assert ours.count("inductor_output_code") == ours.count("aot_joint_graph") * 2 == 4
    assert ours.count("bwd_compilation_metrics") == 2
    # the report's graph table and repros: one per bucket's graph, each its own fx_graph_runnable
    out = build_report(ddp.record, str(tmp_path / "report"))
    report = open(os.path.join(out, "REPORT.md")).read()
    slug = cid.strip("[]").replace("/", "-")
    for k in parts:
        assert f"| `{k}` | dynamo → aot → lowering → scheduling → loopbody → codegen |" in report
        kind, part = k.split(" ", 1)[1].split(" #")
        repro = open(os.path.join(out, f"repro_{slug}_{kind}_{part}.py")).read()
        assert repro == next(m["payload"] for m in ddp.of_type("artifact") if graph_key(m) == k)
    assert len({open(os.path.join(out, f)).read() for f in os.listdir(out) if f.startswith(f"repro_{slug}_")}) == 4
