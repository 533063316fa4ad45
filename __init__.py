"""inductor-step: step torch.compile stage by stage in a terminal UI.

Installed, the repository's two folders live under this one import name, so nothing clashes with
other distributions called ``tracer`` or ``tui``:

- :mod:`inductor_step.tracer`: the agent process (imports torch, never Textual);
- :mod:`inductor_step.tui`: the view (Textual, never torch).

``python -m inductor_step`` is the ``inductor-step`` command.
"""

__version__ = "0.1.0"
