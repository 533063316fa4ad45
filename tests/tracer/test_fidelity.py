"""Fidelity against torch itself: a real model runs under ``inductor-step --headless --record``
with ``TORCH_COMPILE_DEBUG=1`` set for the agent, so torch writes its own artifacts of the very
compiles we captured (``output_code.py``, ``ir_post_fusion.txt``, ``fx_graph_transformed.py``,
``inductor_provenance_tracking_node_mappings.json``, one folder per graph).  Per graph we compare
kernels, wrapper, fused groups and their order, buffers, the post-grad graph, and for every buffer
its kernel and kernel lines, checked against the generated code's own call arguments.

The model is examples/real/nanogpt_train.py's GPT, run by tests/scripts/fidelity_nanogpt.py: one
training step (in-place layer-norm buffers, a kernel called twice, two attention fallback calls, an
embedding gradient scattered with atomic_add, a concatenation written through views, a backward
whose provenance map torch writes empty), then inference behind a graph break (Dynamo restarts the
frame: ``[1/0_1]``; buffers removed before scheduling) at two lengths (a recompile).  The
``qwen2`` tests run them on a Hugging Face Qwen2 training step (tests/scripts/fidelity_qwen2.py).  The ``gpu``
tests run the same checks on CUDA (Triton: kernel lines are ``tl.load``/``tl.store`` of the call's
pointers).

``problems(...)`` returns a count per check so the same code measures a session by hand:
``python tests/tracer/test_fidelity.py SESSION.jsonl DEBUG_DIR``.
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import re
import subprocess
import sys
from typing import Any

import pytest

from kernel_loops import innermost_loops, store_loops

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = os.path.join(ROOT, "tests", "scripts", "fidelity_nanogpt.py")
QWEN2 = os.path.join(ROOT, "tests", "scripts", "fidelity_qwen2.py")

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")


# ----------------------------------------------------------------------------- torch's artifacts

_DEF = re.compile(r"^(\w+) = async_compile\.\w+\([^\n]*?r?'''\n?(.*?)'''", re.S | re.M)
_REUSE = re.compile(r"^\s*(buf\d+) = (?:reinterpret_tensor\()?(buf\d+)\b[^\n]*; del \2\s+# reuse", re.M)
_PTR = re.compile(r"\b((?:in_out_|in_|out_)ptr\d+)\b")
_ALIAS = re.compile(r"^\s*auto (\w+) = (\w+);\s*$", re.M)  # match(): one such line
_TOP = re.compile(r"^(\w+): (\w+)\(", re.M)


class TorchGraph:
    """One graph's folder of ``TORCH_COMPILE_DEBUG`` artifacts, parsed without our code."""

    def __init__(self, folder: str):
        self.folder = folder
        self.kind = "backward" if "backward" in os.path.basename(folder) else (
            "inference" if "inference" in os.path.basename(folder) else "forward")
        self.output_code = open(os.path.join(folder, "output_code.py")).read()
        self.kernels = {m.group(1): m.group(2).strip("\n") for m in _DEF.finditer(self.output_code)}
        post = open(os.path.join(folder, "ir_post_fusion.txt")).read()
        self.order: list[str] = []
        self.group_of: dict[str, str] = {}  # buffer -> top-level scheduler node (ir_post_fusion)
        self.mutates: dict[str, str] = {}
        lines = post.split("\n")
        current = None
        for i, line in enumerate(lines):
            m = _TOP.match(line)
            if m and not (i and lines[i - 1].rstrip().endswith("] =")):
                current = m.group(1)
                self.order.append(current)
            bm = re.match(r"^    (buf\d+): \w+", line)
            if bm and current:
                self.group_of.setdefault(bm.group(1), current)
            mm = re.match(r"^\s*(buf\d+)\.mutations = \['(\w+)'", line)
            if mm:
                self.mutates[mm.group(1)] = mm.group(2)
        prov = os.path.join(folder, "inductor_provenance_tracking_node_mappings.json")
        # kernel -> post-grad nodes ("cppCodeToPost" on every backend); None where torch wrote no
        # kernel entries (it writes no file for a lazily compiled backward)
        data = json.load(open(prov)) if os.path.exists(prov) else {}
        self.provenance = next((v for k, v in data.items() if k.endswith("CodeToPost") and v), None)
        # post-grad node -> Dynamo nodes and back (torch's walk of meta["from_node"]); {} where not written
        self.post_to_pre: dict[str, list[str]] = data.get("postToPre") or {}
        self.pre_to_post: dict[str, list[str]] = data.get("preToPost") or {}
        fx = open(os.path.join(folder, "fx_graph_transformed.py")).read()
        body = fx.split("def forward", 1)[1]
        self.post_grad = re.findall(r"^        (\w+)(?:: \"[^\"]*\")? = ", body, re.M)
        # post-grad node -> (file, line) of the "# File: F:N in f, code: ..." comment above it: the
        # innermost frame of its stack trace, as torch prints it; None under "No stacktrace found"
        self.frame: dict[str, tuple[str, str] | None] = {}
        cur = None
        for line in body.split("\n"):
            fm = re.match(r"^\s*# (?:Backward of forward node: )?File: (.+?):(\d+) in ", line)
            if fm or "No stacktrace found" in line:
                cur = (fm.group(1), fm.group(2)) if fm else None
                continue
            nm = re.match(r"^        (\w+)(?:: \"[^\"]*\")? = ", line)
            if nm:
                self.frame[nm.group(1)] = cur
        self.pred: dict[str, str] = {new: old for new, old in _REUSE.findall(self.output_code)}
        # bufK = reinterpret_tensor(buf31, ...)  # alias: a view through which a kernel writes part of buf31
        self.view_of = dict(re.findall(r"^\s*(buf\d+) = reinterpret_tensor\((buf\d+)\b[^\n]*#\s*alias\s*$",
                                       self.output_code, re.M))

    def calls(self, kernel: str) -> list[list[str]]:
        """Each call of a generated kernel in ``call()``: its argument texts."""
        body = self.output_code[self.output_code.find("def call("):]
        out = []
        for m in re.finditer(r"^\s*" + re.escape(kernel) + r"(?:\.run)?\((.*)\)\s*$", body, re.M):
            out.append([a.strip() for a in re.split(r",(?![^(]*\))", m.group(1))])
        return out

    def chain(self, name: str) -> list[str]:
        """``name`` and the buffers whose storage it took (``bufB = bufA; del bufA  # reuse``)."""
        out = [name]
        while out[-1] in self.pred and len(out) < 64:
            out.append(self.pred[out[-1]])
        return out


def torch_graphs(debug_root: str) -> list[TorchGraph]:
    return [TorchGraph(os.path.dirname(p)) for p in
            sorted(glob.glob(os.path.join(debug_root, "**", "output_code.py"), recursive=True))]


def _params(source: str) -> list[str]:
    m = re.search(r'extern "C"\s+\w*\s*void\s+kernel\((.*?)\)', source, re.S) or \
        re.search(r"^def \w+\(([^)]*)\)", source, re.M)
    if not m:
        return []
    return [re.split(r"[\s*&:]+", p.strip().split(":")[0].strip())[-1] for p in m.group(1).split(",") if p.strip()]


# ----------------------------------------------------------------------------- the comparison

def problems(stops: dict[str, dict], tg: TorchGraph) -> dict[str, list[str]]:
    """Every disagreement between our stops of one graph (stage -> stop) and torch's artifacts,
    by check."""
    out: dict[str, list[str]] = {k: [] for k in (
        "wrapper", "kernels", "order", "buffers", "post_grad", "wrong_line", "no_own_lines", "same_lines",
        "extra_kernel", "fallback_calls", "provenance_claim", "producer_first", "ghost_scheduler_node",
        "sole_outputs", "in_place_stores", "unowned_lines", "post_to_pre", "pre_to_post", "torch_line",
        "foreign_names")}
    cg = stops["codegen"]
    links = cg["links"]
    if cg["wrapper"] != tg.output_code:
        out["wrapper"].append("wrapper differs from output_code.py")
    ours = {k["name"]: k["source"] for k in cg["kernels"] if k["backend"] != "extern"}
    for name, src in tg.kernels.items():
        if ours.get(name) != src:
            out["kernels"].append(name)
    after = [n["name"] for n in stops["scheduling"]["after"]]
    if after != tg.order:
        out["order"] += [f"{i}: {a} != {b}" for i, (a, b) in enumerate(zip(after, tg.order)) if a != b] or ["length"]
    out["buffers"] += [b for b in tg.group_of if b not in links["buffers"]]
    pg = [n["name"] for n in stops["aot"]["post_grad"]["nodes"] if n["op"] == "call_function"]
    if set(pg) != set(tg.post_grad):
        out["post_grad"] += sorted(set(pg) ^ set(tg.post_grad))
    # the kernel that computes a buffer: the first generated-kernel call passing it, a buffer that
    # took its storage (buf14 = buf13; del buf13  # reuse) or a view of it (a concatenation's part)
    body = tg.output_code[tg.output_code.find("def call("):]
    call_re = re.compile(r"^\s*(" + "|".join(map(re.escape, tg.kernels)) + r")(?:\.run)?\((.*)\)\s*$", re.M) \
        if tg.kernels else None
    first_call: dict[str, str] = {}
    # a concatenation's parts may come from several calls (GPT-NeoX's rotary backward: three kernels, each
    # writing one view of buf33): each view's first call computes the whole buffer too
    part_calls: dict[str, set[str]] = {}
    for m in (call_re.finditer(body) if call_re else []):
        for name in re.findall(r"\b(buf\d+)\b", m.group(2)):
            if name in tg.view_of and name not in first_call:
                for n in tg.chain(tg.view_of[name]):
                    part_calls.setdefault(n, set()).add(m.group(1))
            for n in tg.chain(name) + tg.chain(tg.view_of.get(name, "")):
                first_call.setdefault(n, m.group(1))
    # per buffer: its lines use pointers its computing call binds to it (or to a view of it, the
    # buffer it mutates, or its in-place chain); a buffer passed to the call has lines of its own
    for bname, b in links["buffers"].items():
        gen = [k for k in b["kernels"] if k in tg.kernels]
        if bname in first_call:
            out["extra_kernel"] += [f"{bname}->{k}" for k in gen
                                    if k != first_call[bname] and k not in part_calls.get(bname, ())]
        for k in gen:
            src = tg.kernels[k]
            calls = tg.calls(k)
            ci = b["call"]["index"] if b.get("call", {}).get("kernel") == k else 0
            if ci >= len(calls):
                continue
            params = _params(src)
            bound = {p: (re.findall(r"\b((?:buf|arg|primals_|tangents_)\w*)", a) or [""])[0]
                     for p, a in zip(params, calls[ci])}
            alias = dict(_ALIAS.findall(src))  # auto out_ptr2 = in_out_ptr0: an earlier name in the chain
            triton = "tl." in src
            own = {bname, tg.mutates.get(bname, bname)} | {v for v, p in tg.view_of.items() if p == bname}
            lines = src.split("\n")
            for a, e in b["kernel_lines"].get(k) or []:
                for n in range(a, e + 1):
                    ok = False
                    for p in _PTR.findall(lines[n - 1]):
                        if p in bound:
                            x = bound[p]
                            # an in-place chain computed in this call shares its in_out_ptr (in C++ each
                            # earlier buffer also keeps an alias: auto out_ptr2 = in_out_ptr0;)
                            # or each has a loop of its own storing through the shared pointer (a
                            # softmax's exp, then its division; a GELU backward, then a group norm's)
                            ok |= x in own or (p.startswith("in_out") and bool(own & set(tg.chain(x)))
                                               and (triton or p in alias.values() or len(store_loops(lines, p)) > 1))
                        elif p in alias and alias[p] in bound:
                            ok |= bool(own & set(tg.chain(bound[alias[p]])[1:]))
                    if not ok:
                        out["wrong_line"].append(f"{bname} {k}:{n}")
            passed = set(bound.values())
            has_alias = any(a in alias and alias[a] in bound and bname in tg.chain(bound[alias[a]])[1:] for a in alias)
            if not b["kernel_lines"].get(k) and (bname in passed or has_alias):
                out["no_own_lines"].append(f"{bname} {k}")
    seen: dict[tuple, str] = {}
    for bname, b in links["buffers"].items():
        for k, r in b["kernel_lines"].items():
            if r and k in tg.kernels:
                key = (k, b.get("call", {}).get("index", 0), json.dumps(r))
                # a concatenation written one view per call: the view's lines are the whole buffer's there
                if key in seen and bname not in (tg.view_of.get(seen[key]), *tg.chain(tg.view_of.get(seen[key], ""))) \
                        and seen[key] not in (tg.view_of.get(bname), *tg.chain(tg.view_of.get(bname, ""))):
                    out["same_lines"].append(f"{seen[key]}={bname} in {k}")
                seen[key] = bname
    # fallback (and extern) calls: the provenance of their own handle only
    if tg.provenance and links.get("provenance_map") == "empty":
        out["provenance_claim"].append("torch wrote a provenance map, the links say it is empty")
    if tg.provenance:
        handles: dict[str, list[str]] = {}
        for m in re.finditer(r"# \[Provenance debug handles\] ([\w.]+):(\d+)", tg.output_code):
            handles.setdefault(m.group(1), []).append(f"{m.group(1)}:{m.group(2)}")
        for kname, k in links["kernels"].items():
            if "#" in kname and kname.startswith("torch.ops."):
                base, i = kname.split("#")
                key = handles.get(base, [])[int(i)] if int(i) < len(handles.get(base, [])) else None
                if key and set(k["post_grad_nodes"]) != set(tg.provenance.get(key, [])):
                    out["fallback_calls"].append(kname)
    elif "[Provenance debug handles]" not in tg.output_code:
        pass  # no kernel and no extern call (a graph that returns a view of its input): no entry to write
    elif links.get("provenance_map") != "empty" or any("Inductor's provenance" in n for b in links["buffers"].values()
                                                        for n in b["notes"]):
        out["provenance_claim"].append("torch wrote no provenance map, the links claim one")
    # a buffer's scheduler node exists in the scheduler (ir_post_fusion.txt names every node)
    post_text = open(os.path.join(tg.folder, "ir_post_fusion.txt")).read()
    nodes = set(re.findall(r"^(\w+): \w+\(", post_text, re.M))
    out["ghost_scheduler_node"] += [f"{b}->{d['scheduler_node']}" for b, d in links["buffers"].items()
                                    if d["scheduler_node"] and d["scheduler_node"] not in nodes]
    # the producing node first: an extern or fallback call's output comes from that op's FX node
    # (extern_kernels.addmm(..., out=buf8) -> the aten.addmm node), and its user line leads
    pgn = {n["name"]: n for n in stops["aot"]["post_grad"]["nodes"]}
    for kname, k in links["kernels"].items():
        if k["backend"] != "extern":
            continue
        op = kname.split("#")[0].split(".")[-1] if kname.startswith("extern_kernels.") else kname.split("#")[0].split(".")[-2]
        for bname in k["buffers"][:1]:
            b = links["buffers"][bname]
            if not any(f"aten.{op}." in (pgn.get(o, {}).get("target") or "") for o in b["fx_nodes"]):
                continue
            first = pgn.get(b["fx_nodes"][0], {})
            if f"aten.{op}." not in (first.get("target") or "") or (
                    first.get("user_line") and b["user_lines"][:1] != [first["user_line"]]):
                out["producer_first"].append(f"{bname} ({kname}): {b['fx_nodes'][:2]} {b['user_lines'][:1]}")
    _more_problems(stops, tg, out)
    return out


def _more_problems(stops: dict[str, dict], tg: TorchGraph, out: dict[str, list[str]]) -> None:
    """The checks from the new-user trial on real models."""
    cg = stops["codegen"]
    links = cg["links"]
    bufs = links["buffers"]
    body = tg.output_code[tg.output_code.find("def call("):]
    # a fallback's outputs: bufK = bufJ (its single output, torch <= 2.13) or bufK = bufJ[i]: bufJ's call
    for child, parent in re.findall(r"^\s*(buf\d+) = (buf\d+)(?:\[\d+\])?\s*$", body, re.M):
        if child in bufs and parent in bufs and (not bufs[parent]["kernels"]
                                                  or not set(bufs[parent]["kernels"]) <= set(bufs[child]["kernels"])):
            out["sole_outputs"].append(f"{child} = {parent}: {bufs[child]['kernels']} vs {bufs[parent]['kernels']}")
    for name, src in tg.kernels.items():
        if "tl." in src or name not in links["kernels"]:
            continue
        entry = links["kernels"][name]
        params = _params(src)
        lines = src.split("\n")
        for ci, call in enumerate(tg.calls(name)):
            bound = {p: (re.findall(r"\b(buf\d+)", a) or [""])[0] for p, a in zip(params, call)}
            mine = {b for b, d in bufs.items() if name in d["kernels"]
                    and (len(tg.calls(name)) == 1 or d.get("call", {}).get("index") == ci)}
            owned = {n for b in mine for a, e in bufs[b]["kernel_lines"].get(name) or [] for n in range(a, e + 1)}
            # a C++ kernel stores an earlier buffer of an in-place chain through its own alias
            # (auto out_ptr0 = in_out_ptr1;): that buffer is the kernel's, its node among the fused ones
            for alias, ptr in re.findall(r"^\s*auto (out_ptr\d+) = (in_out_ptr\d+);", src, re.M):
                earlier = tg.pred.get(bound.get(ptr, ""))
                if not earlier or earlier not in bufs:
                    continue
                use = {i + 1 for i, t in enumerate(lines) if re.search(rf"\b{alias}\b", t) and not _ALIAS.match(t)}
                if earlier not in entry["buffers"] or bufs[earlier]["fused_node"] not in entry["fused_nodes"] \
                        or not use <= {n for a, e in bufs[earlier]["kernel_lines"].get(name) or []
                                       for n in range(a, e + 1)}:
                    out["in_place_stores"].append(f"{name}: {earlier} ({alias}) {entry['fused_nodes']}")
            # every line through a shared in_out pointer after its first store is some buffer's
            for ptr in [p for p in params if p.startswith("in_out_ptr")]:
                use = [i + 1 for i, t in enumerate(lines) if re.search(rf"\b{ptr}\b", t) and not _ALIAS.match(t)
                       and not re.match(r"^\s*(const\s+)?[\w:<>]+\s*\*?\s*\w+[,)]\s*$", t)]
                first = next((n for n in use if re.search(rf"\.store\({ptr}\b|\b{ptr}\[[^\]]*\]\s*=[^=]",
                                                         lines[n - 1])), None)
                # a load in the first storing loop, before a store there, reads the chain's input when an
                # earlier call computed it or it is a graph input (buf0 = convolution; del convolution  # reuse):
                # each loop version, vectorized and tail, loads it then stores over it
                loops = innermost_loops(lines)
                earliest = tg.chain(bound.get(ptr, ""))[-1]
                made_before = re.search(rf"^\s*(?!del )[^\n=]*\w+\([^\n]*\b{earliest}\b"
                                        rf"|^\s*{earliest} = (?!empty_strided|reinterpret_tensor)[\w.]+\("
                                        rf"|^\s*{earliest} = (?:reinterpret_tensor\()?\w+\b[^\n]*; del \w+\s+# reuse",
                                        body[:body.find(f"{name}(")], re.M) if earliest else None
                # (with one buffer of the chain computed here, every loop version storing it reads the input)
                single = len([b for b in tg.chain(bound.get(ptr, "")) if b in mine]) <= 1
                by_loop = store_loops(lines, ptr)
                if first and made_before:
                    use = [n for n in use if not ((single or loops[n - 1] == loops[first - 1]) and any(
                        s > n for s in by_loop.get(loops[n - 1], [])))]
                out["unowned_lines"] += [f"{name}:{n} ({ptr})" for n in use if first and n >= first and n not in owned]
    # post-grad -> Dynamo links are torch's provenance map (postToPre / preToPost), where torch wrote one
    if tg.post_to_pre:
        ours = {n["name"]: n for n in stops["aot"]["post_grad"]["nodes"] if n["op"] == "call_function"}
        out["post_to_pre"] += [f"{n}: {sorted(d.get('from_node') or [])} != {sorted(tg.post_to_pre.get(n, []))}"
                               for n, d in ours.items()
                               if set(d.get("from_node") or []) != set(tg.post_to_pre.get(n, []))]
        dyn = links["dynamo_nodes"]
        out["pre_to_post"] += [f"{n}: {sorted(dyn.get(n, {}).get('post_grad', []))} != {sorted(v)}"
                               for n, v in tg.pre_to_post.items() if set(dyn.get(n, {}).get("post_grad", [])) != set(v)]
    # every graph (a backward too, where torch writes no map): a post-grad node names Dynamo nodes only
    # (no AOT-graph names such as clone_1, alias, or an empty name)
    dyn_names = {n["name"] for n in (stops["dynamo"].get("graph") or {}).get("nodes") or []}
    out["foreign_names"] += [f"{n['name']}: {sorted(set(n.get('from_node') or []) - dyn_names)}"
                             for n in stops["aot"]["post_grad"]["nodes"] if set(n.get("from_node") or []) - dyn_names]
    # a node whose innermost frame is torch's own: torch's line, and the user's
    for n in stops["aot"]["post_grad"]["nodes"]:
        if n["name"] not in tg.frame:  # a placeholder: no line of its own in torch's file
            continue
        f = tg.frame[n["name"]]
        inner = f is not None and "/torch/" in f[0]
        shows_both = inner and str(n.get("torch_line") or "").endswith(f"{os.path.basename(f[0])}:{f[1]}") \
            and n.get("user_line") and "/torch/" not in n["user_line"]
        if inner and not shows_both or not inner and n.get("torch_line"):
            out["torch_line"].append(f"{n['name']}: torch {f}, ours {n.get('torch_line')} / {n.get('user_line')}")


def compare(session: list[dict], debug_root: str) -> dict[str, dict[str, list[str]]]:
    """``"[0/0] forward"`` -> :func:`problems` for every graph of a recorded session."""
    by_graph: dict[str, dict[str, dict]] = {}
    for m in session:
        if m.get("type") == "stop":
            by_graph.setdefault(f"{m['compile_id']} {m['graph_kind']}", {})[m["stage"]] = m
    tgs = torch_graphs(debug_root)
    out = {}
    for key, stops in by_graph.items():
        if "codegen" not in stops:
            continue
        tg = next((t for t in tgs if t.output_code == stops["codegen"]["wrapper"]), None)
        out[key] = problems(stops, tg) if tg else {"wrapper": ["no output_code.py of torch's is this wrapper"]}
    return out


# ----------------------------------------------------------------------------- the tests

def _record(tmp_path_factory: Any, device: str, model: str = MODEL) -> tuple[list[dict], str, str]:
    cwd = tmp_path_factory.mktemp(f"fidelity_{device}")
    rec = cwd / "s.jsonl"
    env = dict(os.environ, TORCH_COMPILE_DEBUG="1",
               PYTHONPATH=os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), ROOT])))
    proc = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--record", str(rec), model,
                           "--device", device],
                          cwd=str(cwd), env=env, check=True, capture_output=True, text=True, timeout=600)
    from inductor_step.session.format import read_session  # noqa: PLC0415

    return list(read_session(str(rec))), str(cwd / "torch_compile_debug"), proc.stderr


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    """The CPU model and (where transformers is installed) the Qwen2 model, recorded once each, side by
    side: a recording is mostly one Python thread compiling, so a 2-core machine runs two in about
    the time of one."""
    import importlib.util  # noqa: PLC0415
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    with ThreadPoolExecutor(2) as pool:
        futures = {"cpu": pool.submit(_record, tmp_path_factory, "cpu")}
        if importlib.util.find_spec("transformers") is not None:
            futures["qwen2"] = pool.submit(_record, tmp_path_factory, "cpu", QWEN2)
        yield futures


@pytest.fixture(scope="module")
def cpu(recordings):
    session, debug, stderr = recordings["cpu"].result()
    return session, debug, compare(session, debug), stderr


def _gpu_available() -> bool:
    try:
        import torch  # noqa: PLC0415

        return torch.cuda.is_available()
    except Exception:  # noqa: BLE001
        return False


@pytest.fixture(scope="module")
def gpu(tmp_path_factory):
    if not _gpu_available():
        pytest.skip("needs CUDA")
    session, debug, stderr = _record(tmp_path_factory, "cuda")
    return session, debug, compare(session, debug), stderr


def _graphs(result) -> dict[str, dict[str, list[str]]]:
    graphs = result[2]
    assert {"[0/0] forward", "[0/0] backward", "[1/0] inference", "[1/1] inference"} <= set(graphs), graphs.keys()
    return graphs


CHECKS = ["wrapper", "kernels", "order", "buffers", "post_grad", "wrong_line", "no_own_lines", "same_lines",
          "extra_kernel", "fallback_calls", "provenance_claim", "producer_first", "ghost_scheduler_node",
          "sole_outputs", "in_place_stores", "unowned_lines", "post_to_pre", "pre_to_post", "torch_line",
          "foreign_names"]


@pytest.mark.parametrize("check", CHECKS)
def test_cpu_graphs_agree_with_torchs_own_artifacts(cpu, check):
    bad = {g: p.get(check, []) for g, p in _graphs(cpu).items() if p.get(check)}
    assert not bad, f"{check}: {bad}"


def test_cpu_in_place_pair_has_a_store_each(cpu):
    """nanoGPT forward: buf3 (the layer norm's variance) is computed, then buf4 in its storage
    (``buf4 = buf3; del buf3  # reuse``, ``auto out_ptr2 = in_out_ptr0;``): each has a store of its own."""
    session = cpu[0]
    cg = next(m for m in session if m.get("type") == "stop" and m["stage"] == "codegen" and m["graph_kind"] == "forward")
    src = {k["name"]: k["source"] for k in cg["kernels"]}
    reuse = dict(_REUSE.findall(cg["wrapper"]))
    pairs = 0
    for new, old in reuse.items():
        a, b = cg["links"]["buffers"].get(old), cg["links"]["buffers"].get(new)
        if not a or not b or not set(a["kernels"]) & set(b["kernels"]):
            continue
        k = (set(a["kernels"]) & set(b["kernels"])).pop()
        if k not in src or not a["kernel_lines"].get(k) and not b["kernel_lines"].get(k):
            continue
        pairs += 1
        lines = src[k].split("\n")
        for name, d in ((old, a), (new, b)):
            own = [lines[n - 1] for s, e in d["kernel_lines"][k] for n in range(s, e + 1)]
            assert any(re.search(r"\.store\(|\]\s*=|atomic_add", t) for t in own), (name, k, own)
        assert a["kernel_lines"][k] != b["kernel_lines"][k], (old, new)
    assert pairs >= 1


def test_cpu_kernel_called_twice_links_each_buffer_to_its_call(cpu):
    session = cpu[0]
    cg = next(m for m in session if m.get("type") == "stop" and m["stage"] == "codegen" and m["graph_kind"] == "forward")
    spans = cg["kernel_spans"]
    twice = [k for k, s in spans.items() if len(s.get("calls", [])) > 1 and "def" in s]
    assert twice, spans
    for k in twice:
        by_call = {}
        for b, d in cg["links"]["buffers"].items():
            if d.get("call", {}).get("kernel") == k:
                assert d["call"]["line"] == spans[k]["calls"][d["call"]["index"]]
                by_call.setdefault(d["call"]["index"], []).append(b)
        assert sorted(by_call) == list(range(len(spans[k]["calls"]))), (k, by_call)
        wrapper = cg["wrapper"].split("\n")
        for i, bufs in by_call.items():
            call_line = wrapper[spans[k]["calls"][i] - 1]
            assert any(re.search(rf"\b{b}\b", call_line) for b in bufs), (k, i, bufs, call_line)


def test_cpu_kernel_spans_point_at_the_wrapper_lines(cpu):
    for m in cpu[0]:
        if m.get("type") == "stop" and m["stage"] == "codegen":
            lines = m["wrapper"].split("\n")
            assert set(m["kernel_spans"]) == set(m["links"]["kernels"])
            for k in m["kernels"]:
                s = m["kernel_spans"][k["name"]]
                if k["backend"] == "extern":
                    assert k["name"].split("#")[0] in lines[s["call"] - 1]
                    continue
                first, last = s["def"]
                assert lines[first - 1].startswith(f"{k['name']} = async_compile.")
                assert lines[s["body"] - 1] == k["source"].split("\n")[0]
                src_lines = k["source"].split("\n")
                assert lines[s["body"] - 1 + len(src_lines) - 1] == src_lines[-1] and s["body"] + len(src_lines) - 1 <= last
                for c in s["calls"]:
                    assert re.match(rf"\s*{re.escape(k['name'])}(\.run)?\(", lines[c - 1])


def test_cpu_stops_say_which_order_and_graph_they_show(cpu):
    for m in cpu[0]:
        if m.get("type") == "stop" and m["stage"] == "scheduling":
            assert m["order"].startswith("final")
        if m.get("type") == "stop" and m["stage"] == "aot":
            assert m["post_grad"]["when"].startswith("lowered")


def test_cpu_restarted_compiles_keep_torchs_attempt_suffix(cpu):
    """Dynamo restarts the graph-break frame's analysis; torch logs those compiles as ``[1/0_1]``
    (TORCH_COMPILE_DEBUG's "debug trace" lines): every stop of them says so."""
    session, stderr = cpu[0], cpu[3]
    torch_ids = set(re.findall(r"\[\d+/\d+_\d+\]", stderr))
    assert torch_ids, "expected a restarted compile"
    ours = {m["trace_id"] for m in session if m.get("type") == "stop" and m.get("trace_id")}
    assert ours == torch_ids
    for m in session:
        if m.get("type") == "stop" and m.get("trace_id"):
            assert m["trace_id"].startswith(m["compile_id"][:-1] + "_") and m["attempt"] >= 1


# ----------------------------------------------------------------------------- a Hugging Face model

@pytest.fixture(scope="module")
def qwen2(recordings):
    """tests/scripts/fidelity_qwen2.py recorded once: (session, torch's debug folder, compare())."""
    pytest.importorskip("transformers")
    session, debug, _ = recordings["qwen2"].result()
    return session, debug, compare(session, debug)


@pytest.mark.parametrize("check", CHECKS)
def test_qwen2_graphs_agree_with_torchs_own_artifacts(qwen2, check):
    """Every check on a Hugging Face Qwen2 training step; what the new-user trial found there: the
    softmax's in-place pair (exp stored, then the division over it, each in a loop of its own:
    ``no_own_lines``/``unowned_lines``), post-grad -> Dynamo links against torch's postToPre and
    preToPost (no AOT-graph names; a node compilation replaced maps to its replacement:
    ``post_to_pre``/``pre_to_post``), ``constant_pad_nd``'s line inside torch/nn/functional.py
    (``torch_line``), a fallback's single output (``sole_outputs``: ``bufK = bufJ`` on torch <= 2.13)."""
    from inductor_step.session.format import validate  # noqa: PLC0415

    graphs = qwen2[2]
    assert {"[0/0] forward", "[0/0] backward"} <= set(graphs), graphs.keys()
    assert [p for m in qwen2[0] for p in validate(m)] == []  # the new fields are typed
    bad = {g: p.get(check, []) for g, p in graphs.items() if p.get(check)}
    assert not bad, f"{check}: {bad}"


def test_qwen2_restart_reason_is_torchs(qwen2):
    """The graph break after the model makes Dynamo restart the frame ([0/0_1]): each of its dynamo
    stops says why, as torch's compilation_metrics (TORCH_COMPILE_DEBUG's structured trace) does."""
    from inductor_step.session.text import stop_summary  # noqa: PLC0415

    session, debug = qwen2[0], qwen2[1]
    torch_reasons: dict[str, list[str]] = {}
    for path in glob.glob(os.path.join(debug, "tlparse", "*.log")):
        for line in open(path):
            if '{"compilation_metrics"' in line:
                m = json.loads(line[line.index("{"):])["compilation_metrics"]
                torch_reasons[f"[{m['compile_id']}]"] = sorted(m.get("restart_reasons") or [])
    stops = [m for m in session if m.get("type") == "stop" and m["stage"] == "dynamo" and m.get("attempt")]
    assert {m["graph_kind"] for m in stops} == {"forward", "backward"}
    for m in stops:
        assert any("print" in r for r in m["restart_reasons"]), m["compile_id"]
        if torch_reasons:  # torch 2.11 writes no structured trace under TORCH_COMPILE_DEBUG's folder
            assert m["restart_reasons"] == torch_reasons[m["compile_id"]], m["compile_id"]
        assert "restarted ([0/0_1]): Failed to trace builtin operator" in stop_summary(m)  # --headless says so


def test_qwen2_torch_internal_node_shows_both_lines(qwen2):
    """F.pad's ``constant_pad_nd`` (transformers' loss pads the labels): the user's line and torch's."""
    aot = next(m for m in qwen2[0] if m.get("type") == "stop" and m["stage"] == "aot" and m["graph_kind"] == "forward")
    pad = next(n for n in aot["post_grad"]["nodes"] if n["name"] == "constant_pad_nd")
    assert pad["torch_line"].endswith("torch/nn/functional.py:" + pad["torch_line"].rsplit(":", 1)[1])
    assert "transformers/loss/loss_utils.py:" in pad["user_line"]


@pytest.mark.gpu
@pytest.mark.parametrize("check", CHECKS)
def test_gpu_graphs_agree_with_torchs_own_artifacts(gpu, check):
    bad = {g: p.get(check, []) for g, p in _graphs(gpu).items() if p.get(check)}
    assert not bad, f"{check}: {bad}"


@pytest.mark.gpu
def test_gpu_kernel_lines_are_loads_and_stores_of_the_calls_pointers(gpu):
    checked = 0
    for m in gpu[0]:
        if m.get("type") != "stop" or m["stage"] != "codegen":
            continue
        src = {k["name"]: k for k in m["kernels"]}
        for b, d in m["links"]["buffers"].items():
            for k, ranges in d["kernel_lines"].items():
                if src[k]["backend"] != "triton":
                    continue
                lines = src[k]["source"].split("\n")
                for s, e in ranges:
                    for n in range(s, e + 1):
                        assert re.search(r"tl\.(load|store|atomic_\w+)\(", lines[n - 1]), (b, k, lines[n - 1])
                        checked += 1
    assert checked > 0


if __name__ == "__main__":
    from inductor_step.session.format import read_session  # noqa: E402

    result = compare(list(read_session(sys.argv[1])), sys.argv[2])
    for g, p in result.items():
        print(g, {k: len(v) for k, v in p.items()})
        for k, v in p.items():
            if v:
                print("  ", k, v[:8])
