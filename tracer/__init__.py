"""inductor-step tracer: the agent process that runs a user's script and captures torch.compile.

Importing this package does not import torch; its torch-side modules (:mod:`inductor_step.tracer.agent`,
:mod:`inductor_step.tracer.adapter`, :mod:`inductor_step.tracer.timing`) do.
:mod:`inductor_step.session.format`, the typed session format, is standard library only and shared with the UI.
"""
