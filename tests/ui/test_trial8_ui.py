"""What a new user met driving Hugging Face BERT, timm's resnet10t and nanoGPT (trial 8): ``t``'s asm view stayed on
in the next graph's pane 6, and ``r Run`` stood in the footer of a recorded session, where r cannot run anything."""

from __future__ import annotations

from conftest import DEMO, screen_lines, screen_settled


def test_t_asm_view_ends_when_another_graph_is_shown(app_driver):
    """6, t (x86 asm of the forward's first C++ kernel), then g, Down, Enter (the backward): its kernels show their
    C++ source, not "x86 asm ... not recorded" (t stayed on across graphs); t there turns asm on again."""
    seen: dict[str, str] = {}

    async def steps(app, pilot):
        for key in ("6", "t"):
            await pilot.press(key)
            await screen_settled(pilot, app)
        seen["forward"] = "\n".join(screen_lines(app)[12:])
        for key in ("g", "down", "enter", "6"):
            await pilot.press(key)
            await screen_settled(pilot, app)
        assert "backward" in screen_lines(app)[1]
        seen["backward"] = "\n".join(screen_lines(app)[12:])
        await pilot.press("t")
        await screen_settled(pilot, app)
        seen["backward t"] = "\n".join(screen_lines(app)[12:])

    app_driver(steps, size=(120, 40), path=DEMO)
    assert "x86 asm" in seen["forward"], seen["forward"]
    assert "x86 asm" not in seen["backward"], seen["backward"]
    assert "x86 asm" in seen["backward t"], seen["backward t"]
