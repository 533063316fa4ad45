"""Storage shared inside one kernel call, checked against torch's own ``output_code.py`` (``TORCH_COMPILE_DEBUG=1``
for the agent) on real CPU compiles of tests/scripts/reuse_chain_bn_silu.py, recorded once: in an in-place chain
(``bufB = bufA; del bufA  # reuse``) whose buffers one call computes, the store through the shared pointer is the
buffer the wrapper hands on, ``bufB``, and ``bufA`` stays in registers; a buffer and the buffer that mutates it
(``bufB.mutations = ['bufA']``), stored through one pointer in a loop each, each own their loop's store."""

from __future__ import annotations

import glob
import importlib.util
import os
import re

import pytest

from test_tracer import ROOT, run_cli

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")

SCRIPT = os.path.join(ROOT, "tests", "scripts", "reuse_chain_bn_silu.py")
_DEF = re.compile(r"^(\w+) = async_compile\.\w+\([^\n]*?r?'''\n?(.*?)'''", re.S | re.M)
_REUSE = re.compile(r"^\s*(buf\d+) = (buf\d+); del \2\s+# reuse", re.M)


def _params(src: str) -> list[str]:
    m = re.search(r'extern "C"\s+\w*\s*void\s+\w+\((.*?)\)', src, re.S)
    return [re.split(r"[\s*&]+", p.strip())[-1] for p in m.group(1).split(",") if p.strip()] if m else []


def _chains_in_torchs_code(code: str) -> list[tuple[str, str, str, int]]:
    """(kernel, bufA, bufB, store line) from torch's output code alone: after ``bufB = bufA; del bufA  # reuse``
    the next call passing bufB binds it to ``in_out_ptrN``, which the kernel stores through exactly once and
    never aliases (``auto out_ptrK = in_out_ptrN;``): that store is what the wrapper then calls bufB."""
    kernels = {m.group(1): m.group(2).strip("\n") for m in _DEF.finditer(code)}
    body = code[code.find("def call("):]
    out = []
    for m in _REUSE.finditer(body):
        new, old = m.group(1), m.group(2)
        call = re.compile(r"^\s*(" + "|".join(map(re.escape, kernels)) + r")\((.*)\)\s*$", re.M).search(body, m.end())
        args = [a.strip() for a in call.group(2).split(",")] if call else []
        if not call or new not in args:
            continue
        src = kernels[call.group(1)]
        param = dict(zip(args, _params(src))).get(new, "")
        lines = src.split("\n")
        stores = [i + 1 for i, t in enumerate(lines) if re.search(rf"\.store\({param}\b|\b{param}\[[^\]]*\]\s*=[^=]", t)]
        if param.startswith("in_out_ptr") and len(stores) == 1 and not re.search(rf"=\s*{param};", src):
            out.append((call.group(1), old, new, stores[0]))
    return out


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, dict]]:
    """The script recorded once: (torch's output_code.py, our codegen stop of the same graph) per graph."""
    cwd = tmp_path_factory.mktemp("reuse_chain")
    record = str(cwd / "reuse.jsonl")
    r = run_cli(["--headless", "--record", record, SCRIPT], str(cwd), record, env_extra={"TORCH_COMPILE_DEBUG": "1"})
    stops = [m for m in r.messages if m.get("type") == "stop" and m.get("stage") == "codegen"]
    assert stops, r.stderr[-2000:]
    codes = glob.glob(str(cwd / "torch_compile_debug" / "**" / "output_code.py"), recursive=True)
    assert codes, "torch wrote no output_code.py"
    out = []
    for path in codes:
        code = open(path, encoding="utf-8").read()
        stop = next((s for s in stops if s.get("wrapper") == code), None)
        if stop is not None:
            out.append((code, stop))
    assert len(out) == 2, f"expected the block's and the scatter's graphs, matched {len(out)} of {len(codes)}"
    return out


def test_in_place_chain_store_is_the_buffer_the_wrapper_hands_on(recorded: list[tuple[str, dict]]) -> None:
    checked = []
    for code, stop in recorded:
        links = stop["links"]
        for kernel, old, new, line in _chains_in_torchs_code(code):
            computed = links["kernels"][kernel]["buffers"]
            if old not in computed or new not in computed:
                continue  # bufA came from another call: not a chain inside this one
            mine = {n for a, e in links["buffers"][new]["kernel_lines"].get(kernel) or [] for n in range(a, e + 1)}
            theirs = {n for a, e in links["buffers"][old]["kernel_lines"].get(kernel) or [] for n in range(a, e + 1)}
            assert line in mine and line not in theirs, (kernel, old, new, line, mine, theirs)
            assert not any("registers" in n for n in links["buffers"][new]["notes"]), links["buffers"][new]["notes"]
            checked.append((kernel, old, new))
    assert checked, f"no in-place chain computed in one call found: {checked}"


def test_buffer_and_its_mutation_in_one_call_each_own_their_loops_store(recorded: list[tuple[str, dict]]) -> None:
    """A zero fill (``bufA``) and ``as_strided_scatter`` into it (``bufB``, ``bufB.mutations = ['bufA']`` in
    Inductor's scheduler) in one C++ call, both through one ``out_ptr``: the fill's store is bufA's, the scatter's
    bufB's, and a load after it reads bufB.  Both used to get every line of the pointer (Swin's backward)."""
    checked = 0
    for code, stop in recorded:
        links = stop["links"]["buffers"]
        for b, d in links.items():
            a = d.get("storage_of")
            if not a or a not in links:
                continue
            kernel = next((k for k in d["kernels"] if k in links[a]["kernels"]), None)
            src = next((k["source"] for k in stop["kernels"] if k["name"] == kernel), None)
            call = re.search(rf"^\s*{re.escape(kernel or '?')}\((.*)\)\s*$", code, re.M)
            if src is None or call is None:
                continue
            ptr = dict(zip([x.strip() for x in call.group(1).split(",")], _params(src))).get(a, "")
            lines = src.split("\n")
            store = rf"\.store\({ptr}\b|\b{ptr}\[[^\]]*\]\s*=[^=]"
            stores = [i + 1 for i, t in enumerate(lines) if re.search(store, t)]
            loads = [i + 1 for i, t in enumerate(lines) if re.search(rf"\b{ptr}\b", t) and i + 1 > stores[-1]]
            mine = {n for s, e in d["kernel_lines"][kernel] for n in range(s, e + 1)}
            theirs = {n for s, e in links[a]["kernel_lines"][kernel] for n in range(s, e + 1)}
            assert len(stores) == 2, (kernel, ptr, stores)
            assert stores[0] in theirs and stores[0] not in mine, (a, b, stores, theirs, mine)
            assert stores[1] in mine and stores[1] not in theirs, (a, b, stores, theirs, mine)
            assert set(loads) <= mine and not set(loads) & theirs, (a, b, loads, theirs, mine)
            checked += 1
    assert checked == 1, "the scatter's graph has one buffer mutated in the call that fills it"
