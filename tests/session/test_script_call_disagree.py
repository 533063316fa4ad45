"""A graph that reads longer than the whole call that runs it: the script's-call lines say the two disagree."""

from __future__ import annotations

from inductor_step.session.script_call import script_call_lines


def _run(graph_ms: float, call_ms: float) -> dict:
    """A ``run`` message as the tracer writes it, its ``script_call`` made of the figures a new user read (BERT's
    masked-LM step beside two busy loops: the graph 284 ms, the call that runs it 0.41 ms)."""
    return {"type": "run", "compile_id": "[0/0]", "graph_kind": "forward", "compiled_ms": graph_ms,
            "script_call": {"name": "BertForMaskedLM", "graphs": ["[0/0] forward"], "calls": 3,
                            "compiled_ms": call_ms, "eager_ms": 0.9, "how": "on the script's main thread"}}


def test_a_graph_longer_than_its_call_is_said_to_disagree_and_a_plausible_one_is_not() -> None:
    lines = script_call_lines(_run(284.0, 0.41))
    said = [ln for ln in lines if "they disagree" in ln]
    assert said and "284.0000 ms, 692.7x the whole call" in said[0] and "press r to time again" in said[0], lines
    assert not any("disagree" in ln for ln in script_call_lines(_run(0.35, 0.41)))
