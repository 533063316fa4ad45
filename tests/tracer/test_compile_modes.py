"""On CPU: how each graph was compiled (torch.compile's mode, options, dynamic,
fullgraph, backend, the non-default Inductor config), template kernels and Inductor's autotuning choices,
and dynamic symbols with what they stand for, their ranges and the sizes the run stage timed at.

Two small scripts, each recorded once (``tests/scripts/modes_autotune.py``: mode="max-autotune" and a
CPP-only GEMM template under freezing; ``tests/scripts/modes_dynamic.py``: dynamic=True, fullgraph=True over
a varying sequence length, timed), checked as a person reads them: the session's data, pane 1's text, pane 6's
notes, pane 7's sizes, the report and the diff.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

import pytest

from test_tracer import ROOT, Run, headless

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")

SCRIPTS = os.path.join(ROOT, "tests", "scripts")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Both scripts recorded once, side by side (a recording is mostly one Python thread compiling)."""
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    with ThreadPoolExecutor(2) as pool:
        yield {"autotune": pool.submit(headless, tmp_path_factory, "modes_autotune",
                                       os.path.join(SCRIPTS, "modes_autotune.py")),
               "dynamic": pool.submit(headless, tmp_path_factory, "modes_dynamic",
                                      os.path.join(SCRIPTS, "modes_dynamic.py"), run=True)}


@pytest.fixture(scope="module")
def autotune(recorded: Any) -> Run:
    return recorded["autotune"].result()


@pytest.fixture(scope="module")
def dynamic(recorded: Any) -> Run:
    return recorded["dynamic"].result()


def test_max_autotune_graphs_record_mode_options_and_config_and_pane_1_shows_them(autotune: Run) -> None:
    from inductor_step.session.format import validate
    from inductor_step.session.text import dynamo_text

    assert autotune.returncode == 0, autotune.stderr[-3000:]
    assert "ok" in "".join(autotune.user_output())  # the script's own checks against eager passed
    assert autotune.graphs() == ["[0/0] inference", "[0/1] inference"]
    assert not [p for m in autotune.messages for p in validate(m)]  # the new fields as protocol.py types them
    tuned = autotune.stop("[0/0] inference", "dynamo")["compiled_with"]
    assert tuned["backend"] == "inductor" and tuned["mode"] == "max-autotune" and tuned["options"] == {}
    assert tuned["dynamic"] is None and tuned["fullgraph"] is False
    # the mode's patches and the script's global freezing=True, as the compile saw them; none of the agent's own
    assert tuned["config"]["max_autotune"] is True and tuned["config"]["freezing"] is True
    assert not {"fx_graph_cache", "trace.provenance_tracking_level", "pre_grad_custom_pass"} & set(tuned["config"])
    opts = autotune.stop("[0/1] inference", "dynamo")["compiled_with"]
    assert opts["mode"] is None and opts["options"] == {"max_autotune": True, "max_autotune_gemm_backends": "CPP"}
    assert opts["config"]["max_autotune_gemm_backends"] == "CPP"

    text = dynamo_text(autotune.stop("[0/0] inference", "dynamo"), None)
    head = text.split("class GraphModule")[0]
    assert "torch.compile(mode='max-autotune', dynamic=None, fullgraph=False), backend inductor" in head
    assert "freezing=True" in head and "max_autotune=True" in head
    # the header no longer reads as the compile's settings
    assert "before the script ran" in autotune.header["note"]


def test_autotuning_choices_are_data_beside_the_chosen_kernel(autotune: Run) -> None:
    from inductor_step.session.modes import annotate, kernel_notes

    cg = autotune.stop("[0/0] inference", "codegen")
    (sel,) = cg["autotune"]
    assert sel["benchmarked"] is True and len(sel["choices"]) >= 2
    kinds = {c["kind"] for c in sel["choices"]}
    assert {"template", "extern"} <= kinds, sel  # the C++ GEMM template against ATen/MKL
    timed = [c for c in sel["choices"] if c.get("ms") is not None]
    assert timed and all(c["ms"] > 0 for c in timed)
    assert sel["winner"] == min(timed, key=lambda c: c["ms"])["name"]
    chosen = next(k for k in cg["kernels"] if sel["buffer"] in k["buffers"])
    # pane 6: the candidates and their times in the lines right above the chosen kernel
    text, inserts = annotate(cg["wrapper"], cg["kernel_spans"], kernel_notes(cg))
    lines = text.split("\n")
    span = cg["kernel_spans"][chosen["name"]]
    at = (span.get("def") or [span.get("call")])[0]
    (where, n), = [(w, n) for w, n in inserts if w == at]
    above = "\n".join(lines[where - 1:where - 1 + n])
    assert f"winner {sel['winner']}" in above and "<- chosen" in above
    assert all(c["name"] in above for c in sel["choices"]) and " ms" in above
    assert "autotuning selection" in autotune.stdout  # the headless codegen line says so


def test_template_kernel_is_marked_with_its_epilogue_linked(autotune: Run) -> None:
    cg = autotune.stop("[0/1] inference", "codegen")
    (k,) = [k for k in cg["kernels"] if k.get("template")]
    assert k["template"] == "CppTemplateBuffer" and k["name"].startswith("cpp_fused_")
    assert k["epilogue"] and set(k["epilogue"]) | {k["template_node"]} <= set(k["scheduler_nodes"])
    after = autotune.stop("[0/1] inference", "scheduling")["after"]
    fused = next(n for n in after if k["template_node"] in n["members"])
    assert set(k["epilogue"]) <= set(fused["members"])
    links = cg["links"]
    for b in k["buffers"]:  # the template's buffer and its epilogue's both link to the kernel
        assert k["name"] in links["buffers"][b]["kernels"], (b, links["buffers"][b])
    (sel,) = cg["autotune"]
    assert sel["benchmarked"] is False and sel["note"].startswith("one candidate") and sel["buffer"] in k["buffers"]
    assert "1 cpp template" in autotune.stdout


def test_report_and_diff_say_how_each_graph_was_compiled(autotune: Run, tmp_path) -> None:
    from inductor_step.session.diff import render_recompiles, session_of
    from inductor_step.session.report import REPORT_NAME, build_report

    out = build_report(autotune.record, str(tmp_path / "report"))
    report = open(os.path.join(out, REPORT_NAME), encoding="utf-8").read()
    section = report.split("#### How each graph was compiled", 1)[1].split("\n#### ", 1)[0]
    assert "`[0/0] inference` | torch.compile(mode='max-autotune'" in section
    assert "max_autotune_gemm_backends='CPP'" in section and "winner" in section and "CppTemplateBuffer" in section
    diff = render_recompiles(session_of(autotune.messages))
    assert "compiled differently: mode: 'max-autotune' -> None" in diff
    assert "compiled differently: option max_autotune_gemm_backends: default -> 'CPP'" in diff


def test_dynamic_symbols_say_what_they_stand_for_and_their_range(dynamic: Run) -> None:
    from inductor_step.session.text import buffer_text, dynamo_text

    assert dynamic.returncode == 0, dynamic.stderr[-3000:]
    assert dynamic.graphs() == ["[0/0] inference"]  # one dynamic graph for both sequence lengths
    dyn = dynamic.stop("[0/0] inference", "dynamo")
    cw = dyn["compiled_with"]
    assert cw["dynamic"] is True and cw["fullgraph"] is True and cw["options"] == {"epilogue_fusion": False}
    assert cw["config"] == {"epilogue_fusion": False}
    syms = {s["name"]: s for s in dyn["symbols"]}
    seq = next(s for s in syms.values() if s["source"] == "L['x'].size()[1]")
    assert seq["range"] == ["2", "int_oo"] and seq["hint"] == 5
    shared = next(s for s in syms.values() if len(s["sources"]) == 2)  # x's last dim is w's first
    assert set(shared["sources"]) == {"L['x'].size()[2]", "L['w'].size()[0]"}
    head = dynamo_text(dyn, None).split("class GraphModule")[0]
    assert f"{seq['name']} = L['x'].size()[1]  range [2, int_oo]  (5 at this compile)" in head
    assert "dynamic: " in dynamic.stdout and "L['x'].size()[1]" in dynamic.stdout
    # pane 3: a buffer's symbolic size names what its symbols are
    buf = dynamic.stop("[0/0] inference", "lowering")["buffers"][0]
    assert any(seq["name"] in d for d in buf["size"])
    assert f"# {seq['name']} = L['x'].size()[1]" in buffer_text(buf, dyn["symbols"])
    assert "autotune" not in dynamic.stop("[0/0] inference", "codegen")  # a lone mm is no choice


def test_run_stage_says_which_sizes_it_timed_at(dynamic: Run) -> None:
    from inductor_step.session.text import run_summary

    (run,) = dynamic.of_type("run")
    assert not run.get("error"), run
    assert run["input_sizes"] == ["2", "5", "8", "2x5x8 float32", "4", "8x4 float32"]
    dyn = dynamic.stop("[0/0] inference", "dynamo")
    ph = [n for n in dynamic.stop("[0/0] inference", "aot")["post_grad"]["nodes"] if n["op"] == "placeholder"]
    text = run_summary("[0/0] inference", run, dyn["symbols"], ph)
    seq = next(s["name"] for s in dyn["symbols"] if s["source"] == "L['x'].size()[1]")
    assert f"{seq}=5" in text and "=2x5x8 float32" in text and f"{seq} = L['x'].size()[1]" in text


def test_a_length_a_guard_made_equal_to_another_names_both_inputs() -> None:
    """Two lengths marked dynamic (``torch._dynamo.mark_dynamic``) that the code makes equal (``a.view(-1) +
    b.view(-1)``): Dynamo's ShapeEnv replaces one symbol by the other, and torch's graph writes both inputs with
    the one left.  Its line names both inputs; the replaced one's line says what the graph writes instead."""
    import re

    import torch

    from inductor_step.session.modes import symbol_line
    from inductor_step.tracer.adapter.compile_modes import dynamic_symbols

    seen: list = []

    def backend(gm, example_inputs):  # noqa: ANN001
        seen.append((dynamic_symbols(), gm.print_readable(print_output=False)))
        return gm.forward

    torch._dynamo.reset()
    a, b = torch.randn(4, 6), torch.randn(4, 6)
    torch._dynamo.mark_dynamic(a, 1)
    torch._dynamo.mark_dynamic(b, 1)
    torch.compile(lambda a, b: (a.view(-1) + b.view(-1)).sum(), backend=backend, fullgraph=True)(a, b)
    (syms, code), = seen
    replaced = next(s for s in syms if s.get("replaced_by"))
    left = next(s for s in syms if s["name"] == replaced["replaced_by"])
    # torch's own graph writes both inputs with the symbol left
    for arg in ("L_a_", "L_b_"):
        assert re.search(rf'{arg}: "f32\[4, {left["name"]}\]"', code), code
    assert set(left["sources"]) == {"L['a'].size()[1]", "L['b'].size()[1]"}, left
    assert "also L['" in symbol_line(left)
    assert symbol_line(replaced).endswith(f"the graphs write it as {left['name']}: a guard fixed it to that)")
