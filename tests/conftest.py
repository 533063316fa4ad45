"""Shared test settings."""

import pytest


@pytest.fixture(autouse=True)
def _details_follow_at_once(monkeypatch):
    """Tests read the detail panes right after a key: no key-repeat debounce (users get 40 ms)."""
    from inductor_step.tui.panes.base import StagePane

    monkeypatch.setattr(StagePane, "DETAIL_DELAY_S", 0)
