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


def test_recorded_session_footer_has_no_run_key_and_r_says_why(app_driver):
    """--open of the demo at 120x40: the footer lists q, ?, n, ... but not ``r Run`` (nothing in a recording can be
    timed: r only said so); r still answers, with why (a toast); ? lists r once."""
    seen: dict[str, object] = {}

    async def steps(app, pilot):
        await screen_settled(pilot, app)
        seen["footer"] = screen_lines(app)[-1]
        await pilot.press("r")
        await screen_settled(pilot, app)
        seen["toasts"] = [str(n.message) for n in app._notifications]

    app_driver(steps, size=(120, 40), path=DEMO, notifications=True)
    footer = str(seen["footer"])
    assert "Quit" in footer and "Next" in footer, footer
    assert "Run" not in footer, footer
    assert any("no live script to time" in t for t in seen["toasts"]), seen["toasts"]
    from inductor_step.tui.keys import BINDINGS, help_rows  # noqa: PLC0415

    assert [k for k, _ in help_rows(BINDINGS)].count("r") == 1  # ? lists r once, not once per binding
