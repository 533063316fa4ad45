"""The cross-level index (codegen stop ``links``) on real CPU compiles, checked against Inductor's
own provenance maps and against the generated kernels; then selection in the UI in each direction."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys

import pytest
from inductor_step.tui.table import Table

from inductor_step.session.format import graph_key, read_session
from inductor_step.session.prelinks import stop_links
from inductor_step.tui.app import StepApp
from inductor_step.tui.codeview import CodeView

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def record(tmp_path_factory, script: str) -> list[dict]:
    out = tmp_path_factory.mktemp("links") / "s.jsonl"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), ROOT) if p))
    subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--record", str(out), os.path.join(ROOT, script)],
                   cwd=str(out.parent), env=env, check=True, capture_output=True, timeout=600)
    return list(read_session(str(out)))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, train_step_run):
    """Both examples recorded once, side by side (a recording is mostly one Python thread compiling); train_step's
    is the test run's shared one (tests/conftest.py: ``--run --steps 3 --lr 0.05``, as test_tracer checks it)."""
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    with ThreadPoolExecutor(1) as pool:
        yield {"train_step": train_step_run,
               "attention_block": pool.submit(record, tmp_path_factory, "examples/attention_block.py")}


@pytest.fixture(scope="module")
def train(recorded):
    returncode, _, stderr, path, _ = recorded["train_step"].result()
    assert returncode == 0, stderr[-3000:]
    return list(read_session(path))


@pytest.fixture(scope="module")
def attention(recorded):
    return recorded["attention_block"].result()


def codegen_stops(msgs):
    return [m for m in msgs if m.get("type") == "stop" and m["stage"] == "codegen"]


@pytest.fixture(scope="module")
def gpu_attention():
    """examples/attention_block.py on CUDA, recorded on the device box (H200, torch 2.11, Triton)."""
    return list(read_session(os.path.join(ROOT, "tests", "fixtures", "gpu_attention.jsonl")))


@pytest.mark.parametrize("which", ["train", "attention", "gpu_attention"])
def test_every_kernel_is_reachable_from_a_buffer_and_back(which, request):
    msgs = request.getfixturevalue(which)
    stops = codegen_stops(msgs)
    assert {graph_key(s) for s in stops} >= {"[0/0] forward", "[0/0] backward"}
    for stop in stops:
        links = stop["links"]
        assert "buffers" in links, links.get("unavailable")
        kernel_names = {k["name"] for k in stop["kernels"]}
        reached = {k for b in links["buffers"].values() for k in b["kernels"]}
        assert kernel_names <= reached, f"{graph_key(stop)}: kernels no buffer reaches: {kernel_names - reached}"
        for kname, k in links["kernels"].items():
            assert k["buffers"], kname
            for b in k["buffers"]:
                assert kname in links["buffers"][b]["kernels"]


@pytest.mark.parametrize("which", ["train", "attention", "gpu_attention"])
def test_highlighted_kernel_lines_use_the_buffers_pointer(which, request):
    """A buffer's highlighted lines in a generated kernel mention the pointer its call passes."""
    for stop in codegen_stops(request.getfixturevalue(which)):
        links = stop["links"]
        kernels = {k["name"]: k for k in stop["kernels"]}
        checked = 0
        for bname, b in links["buffers"].items():
            for kname, ranges in b["kernel_lines"].items():
                k = kernels[kname]
                if k["backend"] == "extern":
                    parent_output = any(n.startswith("output ") for n in b["notes"])  # bufK = bufJ[i]
                    assert bname in k["source"] or any(bname in a for c in k["calls"] for a in c) or parent_output
                    continue
                lines = k["source"].split("\n")
                for a, e in ranges:
                    for n in range(a, e + 1):
                        assert re.search(r"\b(in_out_ptr|out_ptr|in_ptr)\d+\b", lines[n - 1]), (bname, kname, lines[n - 1])
                        checked += 1
        assert checked > 0


@pytest.mark.parametrize("which", ["train", "attention", "gpu_attention"])
def test_links_agree_with_inductor_provenance(which, request):
    """Every kernel Inductor's provenance names (cppCodeToPost) is linked to the buffers made from
    the post-grad nodes it names."""
    msgs = request.getfixturevalue(which)
    for stop in codegen_stops(msgs):
        prov = next((m for m in msgs if m.get("type") == "provenance" and graph_key(m) == graph_key(stop)), None)
        if prov is None:
            continue
        mapping = json.loads(prov["mappings"])
        code_to_post = mapping.get("cppCodeToPost") or {}
        links = stop["links"]
        for key, post_nodes in code_to_post.items():
            base = key.split(":")[0]
            ours = [k for k in links["kernels"] if k.split("#")[0] == base]
            assert ours, f"provenance names {key}, which our links lack"
            covered = {b for k in ours for b in links["kernels"][k]["buffers"]}
            origins = {o for k in ours for b in links["kernels"][k]["buffers"] for o in links["buffers"][b]["fx_nodes"]}
            assert covered and origins & set(post_nodes), (key, post_nodes, covered)


def test_dynamo_nodes_link_to_post_grad_call_functions_as_torchs_pre_to_post(train):
    """A Dynamo node's post-grad nodes are ``call_function`` nodes only, as torch's preToPost
    (``get_graph_provenance_json``): the backward's placeholders for saved activations carry the forward node's
    ``from_node`` and were listed too (a dynamic GPT-NeoX backward, whose map torch writes: 7 Dynamo nodes differed)."""
    checked = 0
    for stop in codegen_stops(train):
        aot = next(m for m in train
                   if m.get("type") == "stop" and m["stage"] == "aot" and graph_key(m) == graph_key(stop))
        ops = {n["name"]: n["op"] for n in aot["post_grad"]["nodes"]}
        named = {n["name"] for n in aot["post_grad"]["nodes"] if n["op"] == "placeholder" and n.get("from_node")}
        for dn, d in stop["links"]["dynamo_nodes"].items():
            assert all(ops.get(p) == "call_function" for p in d["post_grad"]), (graph_key(stop), dn, d["post_grad"])
        prov = next((m for m in train if m.get("type") == "provenance" and graph_key(m) == graph_key(stop)), None)
        pre_to_post = json.loads(prov["mappings"]).get("preToPost") if prov else None
        if pre_to_post:
            assert {dn: set(d["post_grad"]) for dn, d in stop["links"]["dynamo_nodes"].items() if d["post_grad"]} == \
                {dn: set(v) for dn, v in pre_to_post.items() if v}
        # the links before codegen (session.prelinks, what the panes follow at earlier stops) say the same
        stage = {m["stage"]: m for m in train if m.get("type") == "stop" and graph_key(m) == graph_key(stop)}
        early = stop_links(stage["lowering"], stage["scheduling"], stage["loopbody"], stage["aot"], stage["dynamo"])
        assert {dn: d["post_grad"] for dn, d in early["dynamo_nodes"].items()} == \
            {dn: d["post_grad"] for dn, d in stop["links"]["dynamo_nodes"].items() if dn in early["dynamo_nodes"]}
        assert set(early["dynamo_nodes"]) <= set(stop["links"]["dynamo_nodes"])
        checked += bool(named)
    assert checked, "expected a backward whose saved-activation placeholders name forward nodes"


def test_buffers_lead_back_to_user_source_lines(attention):
    stop = next(s for s in codegen_stops(attention) if s["graph_kind"] == "forward")
    links = stop["links"]
    lines = {ul for b in links["buffers"].values() for ul in b["user_lines"]}
    assert any(ul.endswith(("attention_block.py:22", "attention_block.py:25")) for ul in lines), lines
    some = next(iter(links["user_source"].values()))
    assert re.search(r"^>\s+\d+", some, re.M)  # the line itself is marked


def test_one_cpp_kernel_can_span_several_fused_nodes(train):
    spans = [k for s in codegen_stops(train) for k in s["links"]["kernels"].values() if len(k["fused_nodes"]) > 1]
    assert spans, "expected a C++ kernel covering more than one fused node (many-to-many, not positional)"


def test_a_buffer_a_cpp_kernel_stores_in_place_is_among_its_buffers_and_fused_nodes(train):
    """``bufB = bufA; del bufA  # reuse`` then ``kernel(..., bufB, ...)`` whose source keeps bufA's own
    pointer (``auto out_ptr0 = in_out_ptr1;``): the kernel computes bufA too (pane 6's row and the links)."""
    from inductor_step.tracer.codeparse import in_place_writes

    seen = 0
    for s in codegen_stops(train):
        owners = {b: d["fused_node"] for b, d in s["links"]["buffers"].items()}
        for k in s["kernels"]:
            for a in in_place_writes(k, s["wrapper"]):
                seen += 1
                assert a in k["buffers"] and owners[a] in k["fused_nodes"], (k["name"], a, k["fused_nodes"])
                assert owners[a] in s["links"]["kernels"][k["name"]]["fused_nodes"]
    assert seen


def test_in_place_writes_of_the_demos_mse_kernel():
    """The new-user trial's row: ``cpp_fused_add_mse_loss_mse_loss_backward_2 | buf9, buf10`` stores buf8
    through ``auto out_ptr0 = in_out_ptr1;`` (``buf10 = buf8; del buf8  # reuse``)."""
    from inductor_step.tracer.codeparse import in_place_writes, parse_wrapper

    stop = next(m for m in read_session(os.path.join(ROOT, "tests", "fixtures", "demo.jsonl"))
                if m.get("type") == "stop" and m["stage"] == "codegen" and m["graph_kind"] == "forward")
    k = next(k for k in parse_wrapper(stop["wrapper"]) if k["name"] == "cpp_fused_add_mse_loss_mse_loss_backward_2")
    assert k["writes"] == ["buf9", "buf10"] and in_place_writes(k, stop["wrapper"]) == ["buf8"]


def test_a_fallbacks_single_output_belongs_to_its_call():
    """torch <= 2.13 wraps a fallback's one tensor in a MultiOutput with no index: ``buf5 = buf4`` after
    ``buf4 = torch.ops.aten.cumsum.default(...)`` (the wrapper torch 2.11 writes for transformers' packed-
    sequence mask); buf5 is that call's output."""
    from inductor_step.tracer.codeparse import parse_wrapper
    from inductor_step.tracer.links import build_links

    wrapper = ("def call(self, args):\n"
               "        buf4 = torch.ops.aten.cumsum.default(buf3, dim=-1, dtype=torch.int64)\n"
               "        buf5 = buf4\n"
               "        buf6 = buf5; del buf5  # reuse\n"
               "        return (buf6, )\n")
    kernels = parse_wrapper(wrapper)
    for k in kernels:
        k["buffers"], k["fused_nodes"] = k.pop("writes"), []
    bufs = [{"name": b, "operation": f"op{b[3:]}", "origins": []} for b in ("buf4", "buf5")]
    links = build_links(dynamo_nodes=[], post_grad_nodes=[], buffers=bufs, fused_nodes=[], kernels=kernels,
                        wrapper=wrapper)
    call = "torch.ops.aten.cumsum.default#0"
    assert links["buffers"]["buf5"]["kernels"] == [call] and links["buffers"]["buf5"]["kernel_lines"][call] == [[1, 1]]
    assert links["kernels"][call]["buffers"] == ["buf4", "buf5"]


# ---------------------------------------------------------------- selection in the UI

DEMO = os.path.join(ROOT, "tests", "fixtures", "demo.jsonl")


def drive(size, steps):
    app = StepApp(messages=list(read_session(DEMO)), session_path="tests/fixtures/demo.jsonl", screenshots="/tmp")

    async def main():
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await steps(app, pilot)

    asyncio.run(main())
    return app


def test_select_buffer_in_lowering_then_codegen_shows_its_kernel_and_lines():
    got = {}

    async def steps(app, pilot):
        await pilot.press("3")
        for _ in range(6):
            await pilot.press("down")
        await pilot.pause()
        got["sel"] = app.view.selected
        await pilot.press("6")
        await pilot.pause()
        t = app.query_one("#table-codegen", Table)
        got["kernel"] = str(t.get_row_at(t.cursor_row)[0])
        code = app.query_one("#code-codegen", CodeView)
        got["marked"] = [code.lines[i] for i in sorted(code.marks)]
        links = app.session.links(app.view.graph)
        got["expect"] = links["buffers"][got["sel"]]["kernels"][0]

    drive((160, 50), steps)
    assert got["sel"] == "buf6"
    assert got["kernel"] == got["expect"]
    assert got["marked"] and all("ptr" in line for line in got["marked"])


def test_select_kernel_in_codegen_selects_its_buffer_in_lowering_and_linked():
    got = {}

    async def steps(app, pilot):
        await pilot.press("6")
        t = app.query_one("#table-codegen", Table)
        t.focus()
        await pilot.press("down", "down")
        await pilot.pause()
        got["kernel"] = str(t.get_row_at(t.cursor_row)[0])
        got["sel"] = app.view.selected
        await pilot.press("3")
        await pilot.pause()
        lt = app.query_one("#table-lowering", Table)
        got["lowering_row"] = str(lt.get_row_at(lt.cursor_row)[0])
        await pilot.press("8")
        await pilot.pause()
        got["linked_info"] = app.query_one("#code-linkinfo", CodeView).text
        got["linked_kernel"] = app.query_one("#code-linkkernel", CodeView).text

    app = drive((160, 50), steps)
    links = app.session.links("[0/0] forward")
    assert got["sel"] in links["kernels"][got["kernel"]]["buffers"]
    assert got["lowering_row"] == got["sel"]
    assert f"# {got['sel']}" in got["linked_info"] and "your code:" in got["linked_info"]
    assert got["linked_kernel"]


def test_kernel_line_under_the_cursor_selects_the_buffer_it_stores():
    """Linked view: select a buffer, move into its kernel's code onto a line that stores another
    buffer of the same kernel: the selection follows the line."""
    got = {}

    async def steps(app, pilot):
        links = app.session.links("[0/0] forward")
        kernel, first, other, line = None, None, None, None
        for kname, k in links["kernels"].items():
            with_lines = [b for b in k["buffers"] if links["buffers"][b]["kernel_lines"].get(kname)]
            for a in with_lines:
                lines_a = {n for x, y in links["buffers"][a]["kernel_lines"][kname] for n in range(x, y + 1)}
                for b in with_lines:
                    only_b = [n for x, y in links["buffers"][b]["kernel_lines"][kname] for n in range(x, y + 1)
                              if n not in lines_a]
                    if b != a and only_b:
                        kernel, first, other, line = kname, a, b, only_b[0]
                        break
                if kernel:
                    break
            if kernel:
                break
        assert kernel, "the demo has a kernel storing two buffers on different lines"
        await pilot.press("8")
        table = app.query_one("#table-linked", Table)
        table.focus()
        table.move_cursor(row=table.get_row_index(first))
        await pilot.pause()
        got["before"] = app.view.selected
        kcode = app.query_one("#code-linkkernel", CodeView)
        kcode.focus()
        await pilot.pause()
        kcode.goto(line)
        await pilot.pause()
        got["after"] = app.view.selected
        got["owners"] = [b for b, d in links["buffers"].items()
                         if any(x <= line <= y for x, y in d["kernel_lines"].get(kernel, []))]
        got["first"] = first

    drive((160, 50), steps)
    assert got["before"] == got["first"]
    assert got["after"] in got["owners"] and got["after"] != got["first"]


def test_dynamo_node_selects_a_buffer_made_from_it():
    got = {}

    async def steps(app, pilot):
        await pilot.press("1")
        t = app.query_one("#table-dynamo", Table)
        t.focus()
        stop = app.session.stop_for("[0/0] forward", "dynamo")
        idx = next(i for i, n in enumerate(stop["graph"]["nodes"]) if n["name"] == "h_1")
        t.move_cursor(row=idx)
        await pilot.pause()
        got["sel"] = app.view.selected
        got["from"] = app.session.links("[0/0] forward")["dynamo_nodes"]["h_1"]["buffers"]

    drive((160, 50), steps)
    assert got["sel"] in got["from"]


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
def test_snapshot_linked_view(snap_compare, size):
    app = StepApp(messages=list(read_session(DEMO)), session_path="tests/fixtures/demo.jsonl", screenshots="/tmp")
    assert snap_compare(app, press=["3", "down", "down", "down", "down", "down", "down", "8"], terminal_size=size)
