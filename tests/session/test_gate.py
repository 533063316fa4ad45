"""`inductor-step gate BASELINE NEW`: the checks a CI log shows, exit codes, JUnit XML, limits files, bad input.

Recorded fixtures only, no torch.  Where a test needs a recording the fixtures do not have (a baseline cut
before the recompile, a run judged reliable), it writes one derived from a fixture and says how.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import pytest

from inductor_step.session.compiled import Compiled
from inductor_step.session import format as protocol
from inductor_step.cli.main import main

FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")
RECOMPILE = os.path.join(FIX, "diff_recompile.jsonl")  # [0/0] at x 8x.., then [0/1]: size 8 -> 16
CONFIG_A = os.path.join(FIX, "diff_config_a.jsonl")  # layer_norm block: op0..op3 fused in one node
CONFIG_B = os.path.join(FIX, "diff_config_b.jsonl")  # the same with max_fusion_size=1: four nodes
BREAKS = os.path.join(FIX, "graph_breaks.jsonl")  # .item() and a data-dependent branch: 2 breaks, 3 graphs


def gate(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, list[str], str]:
    """Run `inductor-step gate ARGV` as the console script does; (exit status, stdout lines, stderr)."""
    try:
        rc = main(["gate", *argv])
    except SystemExit as e:  # argparse's own errors (a missing argument) exit from parse_args
        rc = e.code
    out = capsys.readouterr()
    return rc, out.out.splitlines(), out.err


def line(lines: list[str], name: str) -> str:
    """The check line of check ``name`` (its status first)."""
    hits = [ln for ln in lines if ln[14:].startswith(f"{name}:")]
    assert len(hits) == 1, f"{name!r} not one check line in:\n" + "\n".join(lines)
    return hits[0]


def write(path: str, messages: list[dict]) -> str:
    with open(path, "wb") as f:
        for m in messages:
            f.write(protocol.encode(m))
    return path


def test_recompile_fails_the_gate_with_the_reason_then_passes_within_its_allowance(tmp_path, capsys):
    # the baseline: the same recording cut before the script's second call (no [0/1] message)
    base = write(str(tmp_path / "base.jsonl"),
                 [m for m in protocol.read_session(RECOMPILE) if m.get("compile_id") != "[0/1]"])
    rc, out, err = gate(capsys, base, RECOMPILE, "--junit", str(tmp_path / "gate.xml"))
    assert rc == 1 and not err
    assert out[0] == f"inductor-step gate: baseline {base} -> new {RECOMPILE}"
    assert "limits: max-slowdown 1.1 (default)" in "\n".join(out)
    assert "  [0/0] inference        <-> [0/0] inference        same compile id and kind" in out
    assert "  -                      <-> [0/1] inference        only in the new recording" in out
    assert line(out, "recompiles").startswith("FAIL          recompiles: 0 -> 1 (+1; allowed: 0 more)")
    i = out.index(line(out, "recompiles"))
    assert out[i + 1].strip() == "[0/1]: 0/0: tensor 'x' size mismatch at index 0. expected 8, actual 16"  # per compile id
    assert line(out, "graphs").startswith("FAIL          graphs: 1 -> 2 (+1")
    assert out[out.index(line(out, "graphs")) + 1].strip() == "only in the new recording: [0/1] inference"
    assert line(out, "kernels").startswith("FAIL          kernels: 1 -> 2 (+1")
    assert line(out, "graph breaks").startswith("ok            graph breaks: 0 -> 0, 0 new")
    assert line(out, "fusions").startswith("ok            fusions: 1 -> 2 (+1; allowed: 0 fewer)")
    # both timed before per-figure verdicts: the time is shown, not judged, and fails nothing
    t = line(out, "time [0/0] inference")
    assert t.startswith("cannot judge  time [0/0] inference: 0.0013 ms -> 0.0013 ms, baseline not judged")
    assert out[-2] == "gate: FAIL: 3 limit(s) crossed (recompiles, graphs, kernels); 3 ok, 2 cannot judge"
    assert out[-1] == f"gate: JUnit XML written to {tmp_path / 'gate.xml'}"

    # the JUnit file: one testcase per check line, failures and skips where the log says FAIL / cannot judge
    root = ET.parse(tmp_path / "gate.xml").getroot()
    suite = root.find("testsuite")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert list(cases) == ["errors", "graph breaks", "recompiles", "graphs", "kernels", "fusions",
                           "time [0/0] inference", "kernel times [0/0] inference"]
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("8", "3", "2")
    fail = cases["recompiles"].find("failure")
    assert fail.get("message").startswith("0 -> 1 (+1; allowed: 0 more)")
    assert "expected 8, actual 16" in fail.text
    assert cases["time [0/0] inference"].find("skipped") is not None
    assert cases["fusions"].find("failure") is None and cases["fusions"].find("skipped") is None
    assert cases["graphs"].find("system-out").text == line(out, "graphs")

    rc, out, _ = gate(capsys, base, RECOMPILE, "--allow-new-recompiles", "1", "--allow-more-graphs", "1",
                      "--allow-more-kernels", "1")
    assert rc == 0 and out[-1] == "gate: PASS (6 ok, 2 cannot judge)"
    assert line(out, "recompiles").startswith("ok            recompiles: 0 -> 1 (+1; allowed: 1 more)")
    assert "allow-new-recompiles 1 (option)" in out[3]


def test_a_config_that_splits_the_fused_group_fails_on_fusions(capsys):
    rc, out, _ = gate(capsys, CONFIG_A, CONFIG_B)
    assert rc == 1
    f = line(out, "fusions")
    assert f == ("FAIL          fusions: 3 -> 0 (-3; allowed: 0 fewer)  "
                 "[scheduling stops: scheduler nodes before - after fusion]")
    i = out.index(f)
    assert out[i + 1].strip() == "[0/0] inference: 3 -> 0"
    assert out[i + 2].strip().startswith("~ op0_op1_op2_op3 -> op0, op1, op2, op3: fused group split")
    # one C++ kernel either way: the kernel count does not move
    assert line(out, "kernels").startswith("ok            kernels: 1 -> 1 (+0")
    assert out[-1] == "gate: FAIL: 1 limit(s) crossed (fusions); 5 ok, 2 cannot judge"
    rc, out, _ = gate(capsys, CONFIG_A, CONFIG_A)
    assert rc == 0 and line(out, "fusions").startswith("ok            fusions: 3 -> 3")


def test_new_graph_breaks_are_listed_by_reason_and_line(capsys):
    rc, out, _ = gate(capsys, CONFIG_A, BREAKS)
    assert rc == 1
    b = line(out, "graph breaks")
    assert b.startswith("FAIL          graph breaks: 0 -> 2, 2 new (allowed 0)")
    i = out.index(b)
    assert out[i + 1].strip().startswith("new: [0/0] Unsupported Tensor.item() call with capture_scalar_outputs=False at ")
    assert out[i + 1].endswith("graph_breaks.py:6")
    assert out[i + 2].strip().startswith("new: [1/0] Data-dependent branching at ")
    rc, out, _ = gate(capsys, BREAKS, BREAKS)
    assert rc == 0 and line(out, "graph breaks").startswith("ok            graph breaks: 2 -> 2, 0 new")
    assert line(out, "times") == ("cannot judge  times: neither recording was timed (record with --headless "
                                  "--run, or r in the app)  [run messages]")


def test_a_compile_that_now_fails_is_a_new_error(capsys):
    # codegen_error.jsonl: the C++ compiler rejects the kernel; its graph has no codegen stop, so it has fewer
    # kernels -- which alone would pass
    rc, out, _ = gate(capsys, RECOMPILE, os.path.join(FIX, "codegen_error.jsonl"))
    assert rc == 1
    e = line(out, "errors")
    assert e.startswith("FAIL          errors: 0 -> 1, 1 new (allowed 0)")
    assert out[out.index(e) + 1].strip() == "new: [0/0] inference codegen: InductorError: CppCompileError: C++ compile error"
    rc, out, _ = gate(capsys, os.path.join(FIX, "codegen_error.jsonl"), os.path.join(FIX, "codegen_error.jsonl"))
    assert rc == 0 and line(out, "errors").startswith("ok            errors: 1 -> 1, 0 new")


def _timed(path: str, out: str, factor: float, reliable: bool = True) -> str:
    """diff_config_a with its run as a session timed with per-figure verdicts would carry it: per-figure verdicts
    (``reliable``, wait share 1% or 40%), its compiled time and kernel medians times ``factor``."""
    msgs = []
    for m in protocol.read_session(path):
        if m.get("type") == "run":
            m = json.loads(json.dumps(m))
            m["compiled_ms"] *= factor
            m["eager_ms"] = 1.0  # the eager reference held still: the machine did not move
            for k in m.get("kernels") or []:
                k["median_ms"] *= factor
            share = 0.01 if reliable else 0.4
            m["verdicts"] = {w: {"reliable": reliable, "wait_share": share, "source": "schedstat"}
                             for w in ("compiled", "eager", "kernels")}
            m["reliable"] = reliable
            for legacy in ("settled", "contended", "graph_rounds", "warnings"):
                m.pop(legacy, None)
            if not reliable:
                m["unreliable"] = "compiled, eager and kernels: the threads waited for a core 40% of the time"
        msgs.append(m)
    return write(out, msgs)


def test_a_slower_graph_fails_only_where_both_timings_were_judged_reliable(tmp_path, capsys):
    base = _timed(CONFIG_A, str(tmp_path / "base.jsonl"), 1.0)
    slow = _timed(CONFIG_A, str(tmp_path / "slow.jsonl"), 1.5)
    rc, out, _ = gate(capsys, base, slow, "--max-slowdown", "1.05")
    assert rc == 1
    assert line(out, "time [0/0] inference").startswith(
        "FAIL          time [0/0] inference: 59.9768 ms -> 89.9652 ms, 1.50x (allowed 1.05x)")
    k = line(out, "kernel times [0/0] inference")
    assert k.startswith("FAIL          kernel times [0/0] inference: 1 of 1 kernel(s) slower than 1.05x; slowest "
                        "cpp_fused_add_mul_native_layer_norm_relu_sum_0 ")
    assert "(1.50x)" in k and "limit 1.05x (= max-slowdown)" in k
    rc, out, _ = gate(capsys, base, slow, "--max-slowdown", "1.6")
    assert rc == 0 and line(out, "time [0/0] inference").startswith("ok            time [0/0] inference: 59.9768 ms")
    # a slowdown under --min-ms never fails
    rc, out, _ = gate(capsys, base, slow, "--max-slowdown", "1.05", "--min-ms", "100")
    assert rc == 0
    # the new run judged not reliable: said, never a failure
    noisy = _timed(CONFIG_A, str(tmp_path / "noisy.jsonl"), 1.5, reliable=False)
    rc, out, _ = gate(capsys, base, noisy, "--max-slowdown", "1.05")
    assert rc == 0
    assert line(out, "time [0/0] inference").startswith(
        "cannot judge  time [0/0] inference: 59.9768 ms -> 89.9652 ms, new NOT RELIABLE (its threads waited for "
        "a core 40% of the time)")
    assert line(out, "kernel times [0/0] inference").startswith("cannot judge  kernel times [0/0] inference: new NOT RELIABLE")


def test_limits_from_the_file_beside_the_baseline_and_options_over_it(tmp_path, capsys):
    base = write(str(tmp_path / "base.jsonl"), list(protocol.read_session(CONFIG_A)))
    (tmp_path / "base.gate.toml").write_text("# this project's limits\nallow-fewer-fusions = 3\nmax_slowdown = 1.2\n")
    rc, out, _ = gate(capsys, base, CONFIG_B)
    assert rc == 0
    assert "allow-fewer-fusions 3 (base.gate.toml)" in out[3] and "max-slowdown 1.2 (base.gate.toml)" in out[3]
    assert line(out, "fusions").startswith("ok            fusions: 3 -> 0 (-3; allowed: 3 fewer)")
    rc, out, _ = gate(capsys, base, CONFIG_B, "--allow-fewer-fusions", "2")
    assert rc == 1 and "allow-fewer-fusions 2 (option)" in out[3]
    # JSON, named explicitly
    (tmp_path / "ci.json").write_text(json.dumps({"gate": {"allow-fewer-fusions": 3}}))
    rc, out, _ = gate(capsys, CONFIG_A, CONFIG_B, "--limits", str(tmp_path / "ci.json"))
    assert rc == 0 and "allow-fewer-fusions 3 (ci.json)" in out[3]
    # a limit the gate does not know is bad input, not a silent pass
    (tmp_path / "base.gate.toml").write_text("allow-fewer-fusion = 3\n")
    rc, out, err = gate(capsys, base, CONFIG_B)
    assert (rc, out) == (2, [])
    assert err.startswith(f"inductor-step gate: {tmp_path / 'base.gate.toml'}: unknown limit 'allow-fewer-fusion' "
                          "(known: max-slowdown, ")
    assert err.count("\n") == 1


@pytest.mark.parametrize("argv, says", [
    (["missing.jsonl", CONFIG_B], "no such recording: missing.jsonl"),
    ([CONFIG_A, "NOT_A_SESSION"], "not an inductor-step session (no header line)"),
    ([CONFIG_A, os.path.join(FIX, "ranks_ddp.job.json")], "cannot compare a session"),
    ([CONFIG_A, CONFIG_B, "--max-slowdown", "0.9"], "--max-slowdown 0.9: needs a ratio of at least 1"),
    ([CONFIG_A, CONFIG_B, "--allow-more-kernels", "two"], "--allow-more-kernels two: not a number"),
    ([CONFIG_A, CONFIG_B, "--limits", "nope.toml"], "no such limits file: nope.toml"),
    ([CONFIG_A], "the following arguments are required: NEW"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, says):
    (tmp_path / "x.jsonl").write_text('{"type": "run", "compiled_ms": 1.0}\n')
    rc, out, err = gate(capsys, *[str(tmp_path / "x.jsonl") if a == "NOT_A_SESSION" else a for a in argv])
    assert (rc, out) == (2, [])
    assert says in err and err.count("\n") == 1 and err.startswith("inductor-step gate: ")


def test_job_files_are_gated_rank_by_rank(capsys):
    rc, out, _ = gate(capsys, os.path.join(FIX, "ranks_ddp.job.json"), os.path.join(FIX, "ranks_ddp.job.json"))
    assert rc == 0
    assert line(out, "rank 0 graphs").startswith("ok            rank 0 graphs: 2 -> 2")
    assert line(out, "rank 1 recompiles").startswith("ok            rank 1 recompiles: 1 -> 1")


def test_counts_of_a_recording():
    c = Compiled.load(CONFIG_A)
    assert c.graphs == ["[0/0] inference"] and c.fusions == 3
    assert [(f.name, f.members) for f in c.fused] == [("op0_op1_op2_op3", ["op0", "op1", "op2", "op3"])]
    assert c.kernel_of("buf3") == c.kernels[0] == "cpp_fused_add_mul_native_layer_norm_relu_sum_0"
    from inductor_step import session

    assert Compiled.of(session.load(CONFIG_A)).fusions == 3  # the public API's session too
    demo = Compiled.load(os.path.join(FIX, "demo.jsonl"))
    assert demo.dynamo_graphs == ["[0/0]", "[1/0]"]
    with pytest.raises(ValueError, match=r"buf0 is in 3 graphs \(\[0/0\] forward, \[0/0\] backward, \[1/0\] inference\)"):
        demo.kernel_of("buf0")
    with pytest.raises(KeyError, match="no graph has a buffer buf999"):
        demo.kernel_of("buf999")


def test_one_recompile_of_a_training_step_counts_once(capsys, tmp_path):
    """A training step recompiled for a new batch size gives [0/1] forward and [0/1] backward; the
    gate counted that one recompile twice."""
    msgs = list(protocol.read_session(os.path.join(FIX, "recompile_train.jsonl")))
    first = next(i for i, m in enumerate(msgs) if m.get("type") == "stop" and m.get("compile_id") == "[0/1]")
    base = write(str(tmp_path / "base.jsonl"), [m for m in msgs[:first]] + [m for m in msgs[first:]
                                                                           if m.get("type") in ("done", "agent_exit")])
    assert list(Compiled.load(os.path.join(FIX, "recompile_train.jsonl")).recompiles) == ["[0/1]"]
    rc, lines, _err = gate(capsys, base, os.path.join(FIX, "recompile_train.jsonl"))
    assert rc == 1
    assert "recompiles: 0 -> 1 (+1;" in line(lines, "recompiles"), lines
