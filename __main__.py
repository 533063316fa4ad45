"""``python -m inductor_step``: the ``inductor-step`` command (:func:`inductor_step.tui.cli.entry`)."""

from inductor_step.tui.cli import entry

entry()
