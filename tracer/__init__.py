"""inductor-step tracer: the agent process that runs a user's script and captures torch.compile.

Importing this package does not import torch; only :mod:`tracer.agent`, :mod:`tracer.adapter`,
:mod:`tracer.capture` and :mod:`tracer.timing` do.  :mod:`tracer.protocol` is shared with the UI.
"""
