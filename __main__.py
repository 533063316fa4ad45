"""``python -m inductor_step``: the ``inductor-step`` command (:func:`inductor_step.cli.main.entry`)."""

from inductor_step.cli.main import entry

entry()
