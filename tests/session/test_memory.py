"""The memory plan on recorded sessions: the plan's statements are the wrapper's own, each buffer's bytes are its
layout's, what a forward saves pairs with its backward's inputs, and the headless line says so.  No torch."""

from __future__ import annotations

import os
import re

import pytest

from inductor_step import session
from inductor_step.session import memory as mem
from inductor_step.session.memory_saved import saved_for_backward

FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")
ITEM = {"float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4, "bool": 1, "uint8": 1, "float64": 8}
CASES = [("gpu_nanogpt.jsonl", "[0/0] forward"), ("gpu_nanogpt.jsonl", "[0/0] backward"),
         ("demo.jsonl", "[0/0] forward"), ("demo.jsonl", "[0/0] backward"), ("demo.jsonl", "[1/0] inference")]


def _call_lines(wrapper: str) -> list[tuple[int, str]]:
    """(1-based line, text) of the body of ``def call(``: a recount that owes nothing to session.memory."""
    lines = wrapper.splitlines()
    first = next(i for i, l in enumerate(lines) if re.match(r"\s*def call\(", l))
    ind = len(lines[first]) - len(lines[first].lstrip())
    out = []
    for i in range(first + 1, len(lines)):
        l = lines[i]
        if l.strip() and len(l) - len(l.lstrip()) <= ind:
            break
        out.append((i + 1, l.strip()))
    return out


@pytest.mark.parametrize("fixture,key", CASES)
def test_plan_statements_are_the_wrappers_own(fixture, key):
    s = session.load(os.path.join(FIX, fixture))
    body = _call_lines(s.graph(key).stop("codegen")["wrapper"])
    allocs = {n for n, l in body if "= empty_strided" in l}
    reuses = {n for n, l in body if l.endswith("# reuse")}
    dels = {n for n, l in body if l.startswith("del ") or "; del " in l}
    p = mem.plan(s.store, key)
    assert allocs and {b.line for b in p.buffers.values() if b.how == "allocated"} == allocs
    assert {b.line for b in p.buffers.values() if b.how == "reuse"} == reuses
    assert {ln for b in p.buffers.values() for ln, what in b.events if what.startswith("del")} == dels
    # every allocation is freed by a del, or returned, or lives to the end; the peak is the most live bytes
    assert p.peak == max(st.live for st in p.steps) and p.live_at_peak
    assert sorted(p.live_at_peak, key=lambda n: -p.buffers[n].bytes) == p.live_at_peak


@pytest.mark.parametrize("fixture,key", CASES)
def test_each_buffers_bytes_are_its_layouts(fixture, key):
    s = session.load(os.path.join(FIX, fixture))
    layouts = {b["name"]: b for b in s.graph(key).stop("lowering")["buffers"]}
    p = mem.plan(s.store, key)
    checked = 0
    for b in p.allocations():
        lay = layouts.get(b.name)
        if not lay or "MultiOutput" in lay.get("layout", "") or b.bytes == 0:
            continue
        size, stride = [int(x) for x in lay["size"]], [int(x) for x in lay["stride"]]
        extent = 0 if 0 in size else 1 + sum((a - 1) * st for a, st in zip(size, stride))
        assert b.bytes == extent * ITEM[lay["dtype"].removeprefix("torch.")], b.name
        checked += 1
    assert checked >= len(p.allocations()) // 2


def test_saved_for_backward_pairs_with_the_backwards_inputs():
    s = session.load(os.path.join(FIX, "gpu_nanogpt.jsonl"))
    sv = saved_for_backward(s.store, "[0/0] forward")
    ph = [n for n in s.graph("[0/0] backward").stop("aot")["post_grad"]["nodes"]
          if n["op"] == "placeholder" and not n["name"].startswith("tangents_")]
    assert sv.user_outputs == 2  # logits and loss come first; the rest is saved
    assert len(sv.tensors) == len([n for n in ph if n.get("shape") is not None and n.get("dtype")])
    assert [t.bytes for t in sv.tensors] == sorted((t.bytes for t in sv.tensors), reverse=True)
    recount = sum(4 * eval("*".join(t.shape) or "1") for t in sv.tensors if t.dtype == "float32")
    assert recount <= sv.total_bytes  # (views and int64 tensors aside)
    assert sv.tensors[0].fx_node == "view_49" and sv.tensors[0].buffer == "buf92"  # the logits, 8x256x8192 floats
    assert sv.tensors[0].bytes == 8 * 256 * 8192 * 4 and sv.tensors[0].user_line.endswith(":126")
    assert sv.inputs_bytes == sum(t.bytes for t in sv.tensors if t.is_input) > 0
    assert sv.recomputed and all(not t.startswith(("aten.view", "aten.permute")) for _n, t, _u in sv.recomputed)
    assert saved_for_backward(s.store, "[0/0] backward") is None


def test_headless_prints_a_memory_line_per_graph(capsys):
    from inductor_step.session.format import read_session
    from inductor_step.session.store import Store
    from inductor_step.cli.headless import print_memory

    print_memory(Store.of(list(read_session(os.path.join(FIX, "gpu_nanogpt.jsonl")))))
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("memory: [0/0] forward planned peak 344.8 MB at buf97 (triton_red_fused_")
    assert "buffers live" in out[0] and re.search(r"saved for backward [\d.]+ MB \(98 tensors", out[0])
    assert out[1].startswith("memory: [0/0] backward planned peak ")


def test_library_api_returns_the_graphs_memory():
    s = session.load(os.path.join(FIX, "demo.jsonl"))
    m = s.graph("[0/0] forward").memory()
    from inductor_step.session.memory_text import GraphMemory

    assert isinstance(m, GraphMemory) and m.plan.peak == mem.plan(s.store, "[0/0] forward").peak > 0
    assert m.saved.tensors and m.summary().startswith("[0/0] forward planned peak ")
    assert s.graph("[1/0] inference").memory().saved is None  # an inference graph saves nothing


def test_report_has_a_memory_section(tmp_path, monkeypatch):
    from inductor_step.session.report import build_report

    monkeypatch.chdir(tmp_path)
    path = os.path.join(FIX, "demo.jsonl")
    out = build_report(path, stood={"graph": "[0/0] forward", "stage": "lowering"})
    with open(os.path.join(out, "REPORT.md"), encoding="utf-8") as f:
        report = f.read()
    p = mem.plan(session.load(path).store, "[0/0] forward")
    assert "#### Memory" in report and "not measured" in report and "Inductor's estimate: not recorded" in report
    assert (f"| `[0/0] forward` | {mem.fmt_bytes(p.peak)} | {mem.fmt_bytes(p.high_water)} | `{p.peak_buffer}` "
            f"(`{p.peak_kernel}`) |") in report
    assert "- `[0/0] forward` saves " in report and "for its backward (" in report


def test_dynamic_sizes_take_the_wrappers_own_hints():
    s = session.load(os.path.join(FIX, "diff_recompile.jsonl"))  # [0/1]: x is s77 x 64, get_args() has s77 = 16
    p = mem.plan(s.store, "[0/1] inference")
    assert p.buffers["buf1"].size == [16, 64] and p.buffers["buf1"].bytes == 16 * 64 * 4
    assert p.peak == 16 * 64 * 4 + 16 * 4 and p.inputs_bytes == (16 * 64 + 64) * 4


def test_gate_fails_when_the_planned_peak_grew(capsys, tmp_path):
    from inductor_step.session import format as protocol
    from inductor_step.session.format import read_session
    from inductor_step.cli.main import main

    new = os.path.join(FIX, "diff_recompile.jsonl")
    base = str(tmp_path / "base.jsonl")  # the same session with [0/0]'s x at 4 rows instead of 8: a smaller plan
    with open(base, "wb") as f:
        for m in read_session(new):
            if m.get("type") == "stop" and m.get("stage") == "codegen" and m.get("compile_id") == "[0/0]":
                m = dict(m, wrapper=m["wrapper"].replace("empty_strided_cpu((8, ", "empty_strided_cpu((4, "))
            f.write(protocol.encode(m))
    out = []
    for argv in (["gate", base, new, "--max-memory-growth", "1.5"], ["gate", base, new]):
        try:
            rc = main(argv)
        except SystemExit as e:
            rc = e.code
        out.append((rc, capsys.readouterr().out.splitlines()))
    rc, lines = out[0]
    grew = [ln for ln in lines if ln[14:].startswith("memory [0/0] inference:")]
    assert rc == 1 and grew[0].startswith("FAIL          memory [0/0] inference: planned peak 1.0 kB -> 2.1 kB (x2.00; "
                                          "allowed: x1.5 option)")
    assert [ln for ln in lines if ln[14:].startswith("memory [0/1] inference:")][0].startswith("ok  ")
    assert not [ln for ln in out[1][1] if "memory [0/" in ln]  # not asked for: not checked


def test_diff_says_the_planned_peak_moved():
    s = session.load(os.path.join(FIX, "diff_recompile.jsonl"))  # [0/1] runs x at 16 rows, [0/0] at 8
    d = s.graph("[0/0] inference").diff(s.graph("[0/1] inference"))
    assert d.memory == "memory: planned peak 2.1 kB -> 4.2 kB (+100%) (planned from the wrappers' allocations; " \
        "not measured)"
    from inductor_step.session.diff import render

    assert f"~ {d.memory}" in render(d).splitlines()
    assert s.graph("[0/0] inference").diff(s.graph("[0/0] inference")).memory == ""
