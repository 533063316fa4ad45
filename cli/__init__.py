"""The ``inductor-step`` command line: argument parsing, ``--headless``, signals and the subcommands' entry points.

Imports no Textual (the UI's app is imported inside the function that starts it) and no torch.
"""
