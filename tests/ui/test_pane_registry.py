"""The pane registry: each pane's tab and id known before its code is imported, and that code left for later."""

from __future__ import annotations

import subprocess
import sys

from inductor_step.tui.panes import NUMERICS, PANES, RANKS, pane_class


def test_every_registered_pane_names_its_class_stage_and_title():
    """A spec's stage and title are its class's own: the tab bar (before the pane is loaded) and the
    pane (after) say the same."""
    for spec in [*PANES, NUMERICS, RANKS]:
        cls = pane_class(spec)
        assert (cls.stage, cls.title, getattr(cls, "HIDE_TAB", False)) == (spec.stage, spec.title, spec.hide_tab), spec
    assert len({s.stage for s in PANES}) == len(PANES)


def test_the_app_imports_no_pane_until_it_is_shown():
    """Importing the app loads the panes' shared base, not the panes themselves nor what only they use
    (the ledger, the diff, the memory plan)."""
    prog = ("import sys, inductor_step.tui.app\n"
            "print(sorted(m for m in sys.modules if m.startswith(('inductor_step.tui.panes.', "
            "'inductor_step.session.ledger', 'inductor_step.session.diff', 'inductor_step.session.memory'))))")
    out = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.strip() == "['inductor_step.tui.panes.base']", out
