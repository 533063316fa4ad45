"""A what-if's effect agrees with its own numbers: said only where the interleaved rounds agree."""

from __future__ import annotations

import os

from conftest import wait_for

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_a_what_ifs_effect_is_withheld_when_its_rounds_disagree(app_driver):
    """The what-if's diff (g to the variant, d, 7) says no effect where the rounds' original /
    variant ratios spread wildly (here from 4.5e-05 to 1.27) or point against the medians; it printed one
    (1.03x beside medians that give 0.82x)."""
    fixture = os.path.join(HERE, "fixtures", "whatif_dynamic.jsonl")
    variant = "[0/1] inference · aggressive_fusion=True"
    seen: dict = {}

    async def steps(app, pilot):
        await pilot.press("g")
        for _ in range(app.session.graphs.index(variant)):
            await pilot.press("down")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.view.graph == variant, timeout=10, seen=lambda: app.view.graph)
        await pilot.press("d")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "DiffScreen", timeout=10)
        await pilot.press("7")
        await wait_for(pilot, lambda: "timed round by round" in app.screen.code.text, timeout=10,
                       seen=lambda: app.screen.code.text[:300])
        seen["text"] = app.screen.code.text

    app_driver(steps, path=fixture)
    text = seen["text"]
    assert "timed round by round in one process (7 rounds)" in text, text
    assert "the setting's effect cannot be judged from these rounds: they disagree" in text, text
    assert "the setting's effect 0" not in text and "the setting's effect 1" not in text


def test_the_effect_points_the_medians_way_or_is_not_said():
    """Medians 0.5947 (variant) and 0.4876 ms (original) give 0.82x: a 1.03x median of
    per-round ratios is not printed; rounds that agree print theirs."""
    from inductor_step.session.trust import interleaved_text

    agree = {"rounds": 3, "variant_ms": 0.5, "original_ms": 0.6, "eager_ms": 1.0, "speedup_vs_original": 1.2,
             "variant_rounds_ms": [0.5, 0.5, 0.52], "original_rounds_ms": [0.6, 0.61, 0.6]}
    assert "the setting's effect 1.20x (original / variant)" in interleaved_text({"interleaved": agree})
    against = dict(agree, variant_ms=0.5947, original_ms=0.4876, speedup_vs_original=1.03,
                   variant_rounds_ms=[0.5, 0.6, 0.7], original_rounds_ms=[0.6, 0.5, 0.72])
    text = interleaved_text({"interleaved": against})
    assert "effect 1.03x" not in text and "point opposite ways" in text, text
