"""The real tracer on CPU: run the example scripts through ``inductor-step --headless`` and check
the recorded sessions.

No mocks of torch: every test drives ``python -m inductor_step --headless --record FILE SCRIPT ...`` as a
subprocess (so the agent really runs the script as ``__main__`` under ``torch.compile``) and reads
the session file back with :func:`session.format.read_session`.  Each example runs once per module
(module-scoped fixtures); the whole file takes well under a minute on a 2-core machine.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from typing import Any

import pytest

from inductor_step.session.format import FORMAT, STAGES, graph_key, read_session

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
TIMEOUT_S = 300

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")


# ----------------------------------------------------------------------------- helpers

@dataclass
class Run:
    """One headless run: the process result and the recorded session."""

    returncode: int
    stdout: str
    stderr: str
    record: str
    cwd: str
    messages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def header(self) -> dict[str, Any]:
        return self.messages[0]

    def of_type(self, t: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if m.get("type") == t]

    @property
    def stops(self) -> list[dict[str, Any]]:
        return self.of_type("stop")

    def graphs(self) -> list[str]:
        """Graph keys (``"[0/0] forward"``) in the order their first stop arrived."""
        out: list[str] = []
        for s in self.stops:
            key = graph_key(s)
            if key not in out:
                out.append(key)
        return out

    def stages_of(self, key: str) -> list[str]:
        return [s["stage"] for s in self.stops if graph_key(s) == key]

    def stop(self, key: str, stage: str) -> dict[str, Any]:
        found = [s for s in self.stops if graph_key(s) == key and s["stage"] == stage]
        assert len(found) == 1, f"expected one {stage} stop for {key}, got {len(found)}; graphs: {self.graphs()}"
        return found[0]

    def user_output(self, stream: str = "stdout") -> list[str]:
        return [m["text"] for m in self.of_type("output") if m.get("stream") == stream]


def run_cli(cli_args: list[str], cwd: str, record: str | None = None, env_extra: dict[str, str] | None = None) -> Run:
    """``python -m inductor_step ARGS`` from ``cwd`` with the repo importable; reads ``record`` if it exists.
    ``TORCH_LOGS`` and ``TORCH_TRACE`` are unset unless ``env_extra`` sets them."""
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("TORCH_LOGS", None)
    env.pop("TORCH_TRACE", None)
    env.update(env_extra or {})
    p = subprocess.run([sys.executable, "-m", "inductor_step", *cli_args], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=TIMEOUT_S)
    r = Run(p.returncode, p.stdout, p.stderr, record or "", cwd)
    if record and os.path.exists(record):
        r.messages = list(read_session(record))
    return r


def headless(tmp_path_factory: pytest.TempPathFactory, name: str, script: str, *script_args: str,
             run: bool = False) -> Run:
    cwd = tmp_path_factory.mktemp(name)
    record = str(cwd / "sessions" / f"{name}.jsonl")  # a folder that does not exist yet
    args = ["--headless", *(["--run"] if run else []), "--record", record, script, *script_args]
    r = run_cli(args, str(cwd), record)
    assert r.messages, f"no session recorded (rc={r.returncode})\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    return r


def example(name: str) -> str:
    return os.path.join(EXAMPLES, name)


def line_of(path: str, needle: str) -> int:
    """1-based number of the first line of ``path`` containing ``needle``."""
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if needle in line:
                return i
    raise AssertionError(f"{needle!r} not in {path}")


def split_user_line(user_line: str, cwd: str) -> tuple[str, int]:
    """``file:line`` (file relative to the agent's cwd or absolute) -> (absolute path, line)."""
    path, _, line = user_line.rpartition(":")
    return os.path.normpath(os.path.join(cwd, path)), int(line)


def generated(kernels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [k for k in kernels if k["backend"] != "extern"]


def check_graph_links(r: Run, key: str) -> None:
    """Cross-level consistency a user relies on when selecting a buffer in any pane."""
    lowering = r.stop(key, "lowering")
    scheduling = r.stop(key, "scheduling")
    loopbody = r.stop(key, "loopbody")
    codegen = r.stop(key, "codegen")
    buffers = {b["name"] for b in lowering["buffers"]}
    assert buffers and all(re.fullmatch(r"buf\d+", b) for b in buffers)

    after = {n["name"]: n for n in scheduling["after"]}
    members = {m for n in scheduling["after"] for m in n["members"]}
    assert {n["name"] for n in scheduling["before"]} == members, "fusion loses or invents scheduler nodes"
    assert {b for n in scheduling["after"] for b in n["buffers"]} <= buffers

    for body in loopbody["bodies"]:
        assert body["node"] in members and body["fused_node"] in after
        assert ("body" in body) != ("none" in body)

    kernels = codegen["kernels"]
    assert kernels, f"{key}: no kernels in codegen"
    for k in kernels:
        assert set(k["buffers"]) <= buffers, f"{key}: kernel {k['name']} names buffers missing from lowering"
        assert set(k["fused_nodes"]) <= set(after), f"{key}: kernel {k['name']} names unknown fused nodes"
        assert set(k["scheduler_nodes"]) <= members
        assert k["name"].split("#")[0] in codegen["wrapper"]
    for k in generated(kernels):
        assert k["backend"] == "cpp"
        assert 'extern "C"' in k["source"]
        assert k["buffers"] and k["fused_nodes"], f"{key}: generated kernel {k['name']} links to nothing"
        assert k["calls"], f"{key}: kernel {k['name']} is never called from the wrapper"
    # every fused node is computed by some kernel
    assert {f for k in kernels for f in k["fused_nodes"]} == set(after)


# ----------------------------------------------------------------------------- fixtures (one run each)

@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory, train_step_run: Any) -> Any:
    """This module's sessions, each recorded once, two side by side (a recording is mostly one Python
    thread compiling, so a 2-core machine runs two in about the time of one), the timed one first:
    {name: future of its :class:`Run`}."""
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    def script(name: str, src: str) -> str:
        return write_script(tmp_path_factory.mktemp(name), f"{name}.py", src)

    with ThreadPoolExecutor(2) as pool:
        yield {
            "train": train_step_run,  # shared with test_links (tests/conftest.py), recorded beside these
            "inference": pool.submit(headless, tmp_path_factory, "mlp_inference", example("mlp_inference.py")),
            "graph_break": pool.submit(headless, tmp_path_factory, "graph_break", example("graph_break.py")),
            "recompile": pool.submit(headless, tmp_path_factory, "recompile", example("recompile.py")),
            "raises": pool.submit(lambda: headless(tmp_path_factory, "raises", script("raises", RAISES))),
            "fullgraph": pool.submit(lambda: headless(tmp_path_factory, "fullgraph", script("fullgraph", FULLGRAPH))),
        }


@pytest.fixture(scope="module")
def inference(recorded: Any) -> Run:
    return recorded["inference"].result()


@pytest.fixture(scope="module")
def train(recorded: Any) -> Run:
    returncode, stdout, stderr, record, cwd = recorded["train"].result()
    r = Run(returncode, stdout, stderr, record, cwd, list(read_session(record)) if os.path.exists(record) else [])
    assert r.messages, f"no session recorded (rc={r.returncode})\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    return r


@pytest.fixture(scope="module")
def graph_break(recorded: Any) -> Run:
    return recorded["graph_break"].result()


@pytest.fixture(scope="module")
def recompile(recorded: Any) -> Run:
    return recorded["recompile"].result()


ALL_RUNS = ["inference", "train", "graph_break", "recompile"]


# ----------------------------------------------------------------------------- every session

@pytest.mark.parametrize("which", ALL_RUNS)
def test_header_first_and_describes_the_run(which: str, request: pytest.FixtureRequest) -> None:
    r: Run = request.getfixturevalue(which)
    h = r.header
    assert h["type"] == "header" and h["format"] == FORMAT == "inductor-step/2"
    assert h["torch"].split("+")[0] == importlib.metadata.version("torch").split("+")[0]
    assert h["device"] == "cpu"
    assert h["python"] == ".".join(map(str, sys.version_info[:3]))
    assert os.path.samefile(h["script"], os.path.join(EXAMPLES, os.path.basename(h["script"])))
    assert os.path.samefile(h["cwd"], r.cwd)
    # caches are off, and the header says so
    assert h["settings"]["inductor.fx_graph_cache"] is False
    assert any(k.endswith("enable_autograd_cache") and v is False for k, v in h["settings"].items())
    assert "cache" in h["note"].lower()
    assert sum(1 for m in r.messages if m.get("type") == "header") == 1


@pytest.mark.parametrize("which", ALL_RUNS)
def test_session_ends_cleanly(which: str, request: pytest.FixtureRequest) -> None:
    r: Run = request.getfixturevalue(which)
    assert r.returncode == 0, r.stderr
    assert not r.of_type("error"), r.of_type("error")
    done = r.of_type("done")
    assert len(done) == 1 and done[0]["returncode"] == 0
    assert done[0]["graphs"] == len(r.graphs())
    assert r.messages[-1] == {"type": "agent_exit", "returncode": 0}
    assert f"session written to {r.record}" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("which", ALL_RUNS)
def test_every_graph_passes_six_stages_in_order(which: str, request: pytest.FixtureRequest) -> None:
    r: Run = request.getfixturevalue(which)
    assert r.graphs()
    for key in r.graphs():
        assert r.stages_of(key) == list(STAGES), key
    seqs = [s["seq"] for s in r.stops]
    assert seqs == list(range(1, len(seqs) + 1))
    assert not any(s["paused"] for s in r.stops), "headless never pauses"


@pytest.mark.parametrize("which", ALL_RUNS)
def test_headless_prints_one_line_per_stop(which: str, request: pytest.FixtureRequest) -> None:
    r: Run = request.getfixturevalue(which)
    pat = re.compile(r"^(\[\d+/\d+\]) (inference|forward|backward)\s+(" + "|".join(STAGES) + r")\s")
    printed = [m.groups() for m in map(pat.match, r.stdout.splitlines()) if m]
    assert printed == [(s["compile_id"], s["graph_kind"], s["stage"]) for s in r.stops]


@pytest.mark.parametrize("which", ALL_RUNS)
def test_links_between_levels(which: str, request: pytest.FixtureRequest) -> None:
    r: Run = request.getfixturevalue(which)
    for key in r.graphs():
        check_graph_links(r, key)


# ----------------------------------------------------------------------------- inference

def test_inference_graph(inference: Run) -> None:
    assert inference.graphs() == ["[0/0] inference"]
    assert "predicted classes:" in inference.stdout  # the script's own output reaches the user
    assert any(t.startswith("predicted classes:") for t in inference.user_output())


def test_inference_dynamo_nodes_have_shapes_dtypes_and_user_lines(inference: Run) -> None:
    d = inference.stop("[0/0] inference", "dynamo")
    nodes = {n["name"]: n for n in d["graph"]["nodes"]}
    assert "class GraphModule" in d["graph"]["code"]
    assert d["graph_breaks"] == [] and d["recompile_reasons"] == []
    x = nodes["l_x_"]
    assert x["op"] == "placeholder" and x["shape"] == ["16", "32"] and x["dtype"] == "float32"
    calls = [n for n in nodes.values() if n["op"] in ("call_function", "call_method", "call_module")]
    assert calls and all(n["shape"] is not None and n["dtype"] for n in calls)
    assert nodes["argmax"]["dtype"] == "int64" and nodes["argmax"]["shape"] == ["16"]
    assert nodes["probs"]["shape"] == ["16", "10"]
    script = example("mlp_inference.py")
    for n in calls:
        path, _ = split_user_line(n["user_line"], inference.cwd)
        assert os.path.samefile(path, script), n
    # the softmax node points at the line that calls torch.softmax, not at torch internals
    path, line = split_user_line(nodes["probs"]["user_line"], inference.cwd)
    assert line == line_of(script, "torch.softmax(")
    path, line = split_user_line(nodes["relu"]["user_line"], inference.cwd)
    assert line == line_of(script, "torch.relu(")


def test_inference_aot_stage(inference: Run) -> None:
    a = inference.stop("[0/0] inference", "aot")
    assert "inference" in a["aot_graphs"] and "backward" not in a["aot_graphs"]
    targets = {n["target"] for n in a["post_grad"]["nodes"]}
    assert any(t.startswith("aten.") for t in targets), targets


def test_inference_lowering_buffers(inference: Run) -> None:
    low = inference.stop("[0/0] inference", "lowering")
    assert low["is_inference"] is True and low["is_backward"] is False
    kinds = {b["kind"] for b in low["buffers"]}
    assert {"Pointwise", "Reduction"} <= kinds, kinds
    assert any(k.startswith("Extern") for k in kinds), kinds  # the two matmuls
    red = [b for b in low["buffers"] if b["kind"] == "Reduction"]
    assert {b["reduction_type"] for b in red} >= {"max", "sum", "argmax"}
    assert all(b["reduction_ranges"] == ["10"] for b in red)
    for b in low["buffers"]:
        assert b["operation"] == "op" + b["name"][3:]
        assert b["dtype"] and b["device"] == "cpu" and b["size"]
        assert b["origins"], b  # every buffer links back to post-grad FX nodes
    post_grad = {n["name"] for n in inference.stop("[0/0] inference", "aot")["post_grad"]["nodes"]}
    assert {o for b in low["buffers"] for o in b["origins"]} <= post_grad


def test_inference_scheduling_fuses_softmax(inference: Run) -> None:
    sch = inference.stop("[0/0] inference", "scheduling")
    assert len(sch["after"]) < len(sch["before"])
    fused = [n for n in sch["after"] if len(n["members"]) > 1]
    assert fused and fused[0]["name"] == "_".join(fused[0]["members"])
    assert sch["fusion_log"], "Inductor's fusion decisions are captured"


def test_inference_loopbody(inference: Run) -> None:
    bodies = inference.stop("[0/0] inference", "loopbody")["bodies"]
    with_body = [b for b in bodies if "body" in b]
    assert with_body and all("ops.load" in b["body"] and "ops.store" in b["body"] for b in with_body)
    assert all(b["var_ranges"] for b in with_body)
    assert all("Extern" in b["type"] for b in bodies if "none" in b)


def test_inference_codegen_kernels(inference: Run) -> None:
    cg = inference.stop("[0/0] inference", "codegen")
    assert "def call(" in cg["wrapper"]
    assert cg["output_path"] and cg["output_path"].endswith(".py")
    backends = [k["backend"] for k in cg["kernels"]]
    assert backends.count("cpp") >= 2 and backends.count("extern") == 2, backends
    names = [k["name"] for k in generated(cg["kernels"])]
    assert any("softmax" in n for n in names), names
    # kernels come in call order
    positions = [cg["wrapper"].index(k["name"].split("#")[0] + "(", cg["wrapper"].index("def call("))
                 for k in cg["kernels"] if k["backend"] == "cpp"]
    assert positions == sorted(positions)


def test_inference_guards_and_provenance(inference: Run) -> None:
    guards = inference.of_type("guards")
    assert [g["compile_id"] for g in guards] == ["[0/0]"] and "GUARD" in guards[0]["text"]
    prov = inference.of_type("provenance")
    assert prov and prov[0]["graph_kind"] == "inference"
    mappings = json.loads(prov[0]["mappings"])
    assert "preToPost" in mappings and "probs" in mappings["preToPost"]


# ----------------------------------------------------------------------------- training step

def test_train_forward_and_backward(train: Run) -> None:
    assert train.graphs() == ["[0/0] forward", "[0/0] backward"]
    fwd_aot = train.stop("[0/0] forward", "aot")["aot_graphs"]
    bwd_aot = train.stop("[0/0] backward", "aot")["aot_graphs"]
    assert "forward" in fwd_aot and "joint" in fwd_aot
    assert "backward" in bwd_aot and "forward" not in bwd_aot
    assert train.stop("[0/0] backward", "lowering")["is_backward"] is True
    assert train.stop("[0/0] forward", "lowering")["is_backward"] is False
    bwd_inputs = {n["name"] for n in train.stop("[0/0] backward", "aot")["post_grad"]["nodes"]
                  if n["op"] == "placeholder"}
    assert any(n.startswith("tangents") for n in bwd_inputs)
    # the backward has no Dynamo graph of its own: it shows the frame's, with a note saying so
    bwd_dyn = train.stop("[0/0] backward", "dynamo")
    assert bwd_dyn.get("note") and "backward" in bwd_dyn["note"].lower()
    assert bwd_dyn["graph"]["nodes"] == train.stop("[0/0] forward", "dynamo")["graph"]["nodes"]
    # LayerNorm is in the forward graph
    assert any("layer_norm" in n["target"] for n in train.stop("[0/0] forward", "dynamo")["graph"]["nodes"])


def test_train_compiles_once_for_three_steps(train: Run) -> None:
    assert [f"step {i} loss" in train.stdout for i in range(3)] == [True] * 3
    assert len(train.graphs()) == 2  # later steps reuse [0/0]; no recompiles


def test_train_argv_passed_verbatim(train: Run) -> None:
    assert "argv: ['--steps', '3', '--lr', '0.05']" in train.stdout
    assert "steps=3 lr=0.05" in train.stdout
    assert train.header["argv"] == ["--steps", "3", "--lr", "0.05"]


def test_run_times_every_compiled_graph(train: Run) -> None:
    runs = train.of_type("run")
    assert [f"{r['compile_id']} {r['graph_kind']}" for r in runs] == train.graphs()
    for r in runs:
        key = f"{r['compile_id']} {r['graph_kind']}"
        assert "error" not in r, r.get("traceback")
        assert r["device"] == "cpu"
        assert r["compiled_ms"] > 0 and r["kernel_sum_ms"] > 0
        assert r["eager_ms"] is None or r["eager_ms"] > 0
        assert r["kernels"] and all(k["median_ms"] > 0 for k in r["kernels"])
        # the spread of each kernel's timed calls, on CPU too (the run pane's "median ms [p20-p80]")
        assert all(0 < k["p20_ms"] <= k["median_ms"] <= k["p80_ms"] for k in r["kernels"]), r["kernels"]
        assert abs(sum(k["share"] for k in r["kernels"]) - 1.0) < 1e-6
        timed = {k["name"] for k in r["kernels"]}
        compiled = {k["name"] for k in train.stop(key, "codegen")["kernels"]}
        assert timed == compiled, (key, timed ^ compiled)
        assert re.search(re.escape(key) + r"\s+run\s+compiled \d+\.\d+ ms", train.stdout)
        # CPU graph times come from rounds too, with what the load was, and say when they did not settle
        rounds = r["graph_rounds"]
        assert len(rounds["compiled_rounds_ms"]) >= 5 and rounds["load"]["cpus"] >= 1, rounds
        assert r["gap_cause"] in ("overhead", "kernels_alone", "unsettled")
        assert r["settled"] == (r["gap_cause"] != "unsettled") and (r["settled"] or r["warnings"]), r
        if not r["settled"]:  # the measured verdict, beside the figure
            assert re.search(re.escape(key) + r"\s+run\s+compiled .*\(NOT RELIABLE: ", train.stdout)
        assert set(r["verdicts"]) >= {"compiled", "kernels"} and r["reliable"] == (not r.get("unreliable")), r
        assert len(rounds["compiled_wait_shares"]) == len(rounds["compiled_rounds_ms"])
    status = train.of_type("run_status")
    assert status and status[-1].get("done") is True
    assert all(r["cupti"] == "CPU: not applicable" for r in runs)


def test_a_slow_spell_in_the_middle_of_the_rounds_does_not_set_the_graph_time() -> None:
    """Rounds of a launch-bound graph measured on an H200 while the box had a slow spell: the graph
    time waits for rounds that agree (tracer.timing.whole_graph_rounds) instead of taking their median."""
    from inductor_step.tracer.timing import stable_window

    spell = [1.83, 2.69, 2.64, 2.68, 1.77]
    assert stable_window(spell) is None
    assert stable_window(spell + [1.71, 1.72, 1.69]) is None  # 2.68 still in the last five
    assert stable_window(spell + [1.71, 1.72, 1.69, 1.75]) == [1.77, 1.71, 1.72, 1.69, 1.75]
    assert stable_window([3.0095, 3.0071, 3.0097, 3.0104, 3.0084]) is not None


# ----------------------------------------------------------------------------- graph break

def test_graph_break_gives_two_frames(graph_break: Run) -> None:
    assert graph_break.graphs() == ["[0/0] inference", "[1/0] inference"]
    assert "output mean" in graph_break.stdout


def test_graph_break_reason_recorded(graph_break: Run) -> None:
    script = example("graph_break.py")
    before = graph_break.stop("[0/0] inference", "dynamo")
    # the reason is recorded on the frame whose graph the break cut short
    assert len(before["graph_breaks"]) == 1
    reason = before["graph_breaks"][0]
    assert "item()" in reason
    assert f"graph_break.py:{line_of(script, '.item() >')}" in reason
    # the graph before the break ends at the value the branch needs; the one after resumes with y
    before_nodes = [n["name"] for n in before["graph"]["nodes"] if n["op"] != "output"]
    assert before_nodes[-1].startswith("max")
    after = graph_break.stop("[1/0] inference", "dynamo")
    assert after["graph_breaks"] == [] and after["recompile_reasons"] == []
    assert any(n["op"] == "placeholder" and "y" in n["name"] for n in after["graph"]["nodes"])
    assert any("tanh" in n["target"] for n in after["graph"]["nodes"])
    lines = [ln for ln in graph_break.stdout.splitlines() if "dynamo" in ln]
    assert "graph break" in lines[0] and "graph break" not in lines[1]


def test_graph_break_note_names_the_right_graph(graph_break: Run) -> None:
    from inductor_step.session.store import Store

    s = Store()
    for m in graph_break.messages:
        s.add(m)
    assert "graph break: Unsupported Tensor.item()" in s.graph_note("[0/0] inference")
    assert "resumes after a graph break" in s.graph_note("[1/0] inference")
    assert "resumes" not in s.graph_note("[0/0] inference")


# ----------------------------------------------------------------------------- recompile

def test_recompile_gives_second_compile_of_frame_zero(recompile: Run) -> None:
    assert recompile.graphs() == ["[0/0] inference", "[0/1] inference"]
    first = recompile.stop("[0/0] inference", "dynamo")
    assert first["recompile_reasons"] == []
    second = recompile.stop("[0/1] inference", "dynamo")
    assert second["recompile_reasons"], "the recompile's reason is recorded"
    reason = " ".join(second["recompile_reasons"])
    assert "8" in reason and "16" in reason, reason
    assert any("recompile" in ln for ln in recompile.stdout.splitlines() if ln.startswith("[0/1]"))
    # three calls (8, 16, 32 rows) but only two compiles: [0/1] is dynamic in the batch size
    assert recompile.stdout.count("rows=") == 3


def test_recompile_is_dynamic(recompile: Run) -> None:
    static = {n["name"]: n for n in recompile.stop("[0/0] inference", "dynamo")["graph"]["nodes"]}
    dynamic = {n["name"]: n for n in recompile.stop("[0/1] inference", "dynamo")["graph"]["nodes"]}
    assert static["l_x_"]["shape"] == ["8", "64"]
    batch, width = dynamic["l_x_"]["shape"]
    assert not batch.isdigit() and width == "64"
    # the symbol is an input of the dynamic graph
    assert any(n["op"] == "placeholder" and n["name"] == batch for n in dynamic.values())
    low = recompile.stop("[0/1] inference", "lowering")
    assert any(batch in (b.get("size") or [])[0] for b in low["buffers"] if b.get("size"))


# ----------------------------------------------------------------------------- failures

RAISES = """\
    import torch

    @torch.compile
    def f(x):
        return torch.sin(x) * 2 + 1

    print("result", f(torch.ones(8)).sum().item())
    raise RuntimeError("boom from the user's script")
"""

ARGV = """\
    import json, sys
    print("ARGV=" + json.dumps(sys.argv[1:]))
    print("NAME=" + __name__)
    sys.exit(3)
"""

FULLGRAPH = """\
    import torch

    @torch.compile(fullgraph=True)
    def f(x):
        if x.sum().item() > 0:
            return x + 1
        return x - 1

    f(torch.ones(4))
"""


def write_script(d: Any, name: str, src: str) -> str:
    p = d / name
    p.write_text(textwrap.dedent(src))
    return str(p)


@pytest.fixture(scope="module")
def raises(recorded: Any) -> Run:
    return recorded["raises"].result()


def test_script_error_exits_nonzero_and_keeps_a_valid_session(raises: Run) -> None:
    assert raises.returncode == 1
    errors = raises.of_type("error")
    assert len(errors) == 1
    e = errors[0]
    assert e["message"] == "RuntimeError: boom from the user's script"
    assert e["stage"] == "script" and "Traceback" in e["traceback"]
    assert raises.of_type("done")[0]["returncode"] == 1
    # the compile before the error was captured in full, and the file reads back
    assert raises.stages_of("[0/0] inference") == list(STAGES)
    assert list(read_session(raises.record)) == raises.messages
    assert "result 21.46" in raises.stdout  # 8 * (2 sin(1) + 1)
    assert "error in script: RuntimeError: boom from the user's script" in raises.stderr
    assert "RuntimeError: boom" in raises.stderr  # the user's own traceback reaches them


def test_argv_verbatim_exit_status_and_default_record(tmp_path: Any) -> None:
    script = write_script(tmp_path, "show_argv.py", ARGV)
    args = ["--headless", "a b", "--lr=3e-4", "-x", "--", "y", ""]
    r = run_cli(["--headless", script, *args], str(tmp_path))
    assert "ARGV=" + json.dumps(args) in r.stdout
    assert "NAME=__main__" in r.stdout
    assert r.returncode == 3, r.stderr  # the script's own exit status
    assert "never compiled a graph" in r.stderr
    # no --record: the session goes to ./inductor-step-sessions/<script>-<time>.jsonl
    sessions = os.listdir(tmp_path / "inductor-step-sessions")
    assert len(sessions) == 1 and sessions[0].startswith("show_argv-") and sessions[0].endswith(".jsonl")
    msgs = list(read_session(str(tmp_path / "inductor-step-sessions" / sessions[0])))
    assert msgs[0]["argv"] == args
    assert not [m for m in msgs if m["type"] == "stop"]
    assert [m["returncode"] for m in msgs if m["type"] == "done"] == [3]


TRACE_EVENTS = """
import torch
from torch._logging import trace_structured


@torch.compile
def f(x):
    return torch.relu(x) * 2


f(torch.randn(8))


def payload():
    print("payload built")
    return "text"


# an event the agent does not read, sent the way Inductor sends its "before_post_grad_graph"
trace_structured("artifact", metadata_fn=lambda: {"name": "before_post_grad_graph", "encoding": "string"},
                 payload_fn=payload)
"""


def test_structured_trace_events_the_agent_does_not_read_are_not_built_unless_the_user_traces(tmp_path: Any) -> None:
    script = write_script(tmp_path, "trace_events.py", TRACE_EVENTS)
    record = str(tmp_path / "alone.jsonl")
    alone = run_cli(["--headless", "--record", record, script], str(tmp_path), record)
    assert alone.returncode == 0, alone.stderr
    assert "payload built" not in alone.user_output()  # torch skipped the event: its payload never ran
    # the events the agent reads still arrive: guards, Inductor's repro, provenance, the generated code
    assert alone.of_type("guards") and alone.of_type("artifact") and alone.of_type("provenance")
    assert alone.stages_of("[0/0] inference") == list(STAGES)

    # with the user's own TORCH_TRACE on, torch builds every event for their log, ours included
    trace_dir = tmp_path / "trace"
    record = str(tmp_path / "traced.jsonl")
    traced = run_cli(["--headless", "--record", record, script], str(tmp_path), record,
                     env_extra={"TORCH_TRACE": str(trace_dir)})
    assert traced.returncode == 0, traced.stderr
    assert "payload built" in traced.user_output()
    log = "".join((trace_dir / f).read_text() for f in os.listdir(trace_dir))
    assert '"before_pre_grad_graph"' in log and '"chromium_event"' in log and '"inductor_output_code"' in log
    assert traced.stages_of("[0/0] inference") == list(STAGES)
    assert [m for m in traced.messages if m["type"] == "stop"] and traced.of_type("guards")


@pytest.fixture(scope="module")
def fullgraph(recorded: Any) -> Run:
    return recorded["fullgraph"].result()


def test_compile_failure_is_reported(fullgraph: Run) -> None:
    assert fullgraph.returncode == 1
    errors = fullgraph.of_type("error")
    assert len(errors) == 1 and "data-dependent" in errors[0]["full_message"]
    assert not fullgraph.stops
    assert fullgraph.of_type("done")[0]["returncode"] == 1


def test_dynamo_failure_is_attributed_to_dynamo(fullgraph: Run) -> None:
    assert fullgraph.of_type("error")[0]["stage"] == "dynamo"


@pytest.mark.parametrize("case", ["missing", "directory", "syntax_error", "binary"])
def test_bad_input_is_one_line_exit_2(case: str, tmp_path: Any) -> None:
    if case == "missing":
        script, expect = str(tmp_path / "nope.py"), "no such script"
    elif case == "directory":
        (tmp_path / "adir").mkdir()
        script, expect = str(tmp_path / "adir"), "is a directory"
    elif case == "syntax_error":
        script = write_script(tmp_path, "bad.py", "import torch\ndef f(:\n    pass\n")
        expect = "bad.py:2: SyntaxError"
    else:
        (tmp_path / "blob.py").write_bytes(b"\x7fELF\x00\x00\x01")
        script, expect = str(tmp_path / "blob.py"), "not a Python file"
    record = str(tmp_path / "s.jsonl")
    r = run_cli(["--headless", "--record", record, script, "--lr", "1"], str(tmp_path))
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("inductor-step:"), r.stderr
    assert expect in lines[0]
    assert "Traceback" not in r.stderr and r.stdout == ""
    assert not os.path.exists(record)
